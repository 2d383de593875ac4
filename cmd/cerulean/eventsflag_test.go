package main

import (
	"io"
	"strings"
	"testing"
)

// TestEventFlags: --event-webhook repeats (and CERULEAN_EVENT_WEBHOOK
// gives a comma-separated list), --event-subscriptions names a file.
func TestEventFlags(t *testing.T) {
	f := serveFlags(io.Discard)
	if err := f.Parse(nil); err != nil || len(*f.eventWebhooks) != 0 || *f.eventSubs != "" {
		t.Fatalf("default: %v %q %v", *f.eventWebhooks, *f.eventSubs, err)
	}
	f = serveFlags(io.Discard)
	if err := f.Parse([]string{"--event-webhook", "http://127.0.0.1:1/a", "--event-webhook", "http://127.0.0.1:1/b", "--event-subscriptions", "subs.json"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(*f.eventWebhooks, " "); got != "http://127.0.0.1:1/a http://127.0.0.1:1/b" || *f.eventSubs != "subs.json" {
		t.Fatalf("webhooks %q, file %q", got, *f.eventSubs)
	}
	t.Setenv("CERULEAN_EVENT_WEBHOOK", "http://127.0.0.1:1/x,http://127.0.0.1:1/y")
	if f = serveFlags(io.Discard); len(*f.eventWebhooks) != 2 {
		t.Fatalf("CERULEAN_EVENT_WEBHOOK: %v", *f.eventWebhooks)
	}
}

package bench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestWebhookReceiver: both handshakes are answered, notifications (Event
// Grid arrays and single CloudEvents) counted with their latency.
func TestWebhookReceiver(t *testing.T) {
	r := &WebhookReceiver{}
	srv := httptest.NewServer(r)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodOptions, srv.URL, nil)
	req.Header.Set("WebHook-Request-Origin", "eventemitter.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.Header.Get("WebHook-Allowed-Origin") != "eventemitter.example" {
		t.Fatalf("CloudEvents handshake: %v %v", resp.Header, err)
	}
	post := func(kind, body string) string {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("aeg-event-type", kind)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", kind, resp.StatusCode, b)
		}
		return string(b)
	}
	got := post("SubscriptionValidation", `[{"eventType":"Microsoft.EventGrid.SubscriptionValidationEvent","data":{"validationCode":"abc"}}]`)
	if !strings.Contains(got, `"validationResponse":"abc"`) {
		t.Fatalf("validation answer %q", got)
	}
	then := time.Now().Add(-50 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	post("Notification", `[{"eventType":"Microsoft.Storage.BlobCreated","eventTime":"`+then+`"},{"eventType":"Microsoft.Storage.BlobCreated","eventTime":"`+then+`"}]`)
	post("Notification", `{"type":"Microsoft.Storage.BlobCreated","time":"`+then+`"}`)
	lat, reqs := r.Take()
	if len(lat) != 3 || reqs != 2 {
		t.Fatalf("%d events in %d requests, want 3 in 2", len(lat), reqs)
	}
	for _, l := range lat {
		if l < 50*time.Millisecond || l > 10*time.Second {
			t.Fatalf("latency %v", l)
		}
	}
}

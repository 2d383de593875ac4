package main

import (
	"io"
	"testing"
)

// TestChangeFeedFlag: the change feed is off by default and on with
// --blob-change-feed or CERULEAN_BLOB_CHANGE_FEED=true.
func TestChangeFeedFlag(t *testing.T) {
	f := serveFlags(io.Discard)
	if err := f.Parse(nil); err != nil || *f.changeFeed {
		t.Fatalf("default: %v %v, want off", *f.changeFeed, err)
	}
	f = serveFlags(io.Discard)
	if err := f.Parse([]string{"--blob-change-feed"}); err != nil || !*f.changeFeed {
		t.Fatalf("--blob-change-feed: %v %v", *f.changeFeed, err)
	}
	t.Setenv("CERULEAN_BLOB_CHANGE_FEED", "true")
	if f = serveFlags(io.Discard); !*f.changeFeed {
		t.Fatal("CERULEAN_BLOB_CHANGE_FEED=true: off")
	}
}

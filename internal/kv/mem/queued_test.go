package mem

import (
	"context"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestWritesQueued: an Update waiting for the one in progress is counted,
// and no longer once it runs.
func TestWritesQueued(t *testing.T) {
	db := New()
	ctx := context.Background()
	inside, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = db.Update(ctx, func(kv.Tx) error { close(inside); <-release; return nil })
	}()
	<-inside
	done := make(chan struct{})
	go func() {
		_ = db.Update(ctx, func(kv.Tx) error { return nil })
		close(done)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for kv.WritesQueued(db) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("WritesQueued = %d with one Update waiting", kv.WritesQueued(db))
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	<-done
	if n := kv.WritesQueued(db); n != 0 {
		t.Fatalf("WritesQueued = %d with nothing waiting", n)
	}
}

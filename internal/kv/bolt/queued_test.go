package bolt

import (
	"context"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestWritesQueued: Updates waiting while the writer runs another's fn
// are counted, and none once all have run.
func TestWritesQueued(t *testing.T) {
	db := openTest(t, Options{NoSync: true})
	ctx := context.Background()
	inside, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = db.Update(ctx, func(kv.Tx) error { close(inside); <-release; return nil })
	}()
	<-inside
	done := make(chan struct{}, 2)
	for range 2 {
		go func() {
			_ = db.Update(ctx, func(kv.Tx) error { return nil })
			done <- struct{}{}
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for kv.WritesQueued(db) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("WritesQueued = %d with two Updates waiting", kv.WritesQueued(db))
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	<-done
	<-done
	if n := kv.WritesQueued(db); n != 0 {
		t.Fatalf("WritesQueued = %d with nothing waiting", n)
	}
}

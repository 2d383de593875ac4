package extent

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestViewTrackerWaitsForOlder: waitOlder returns only once every read
// registered before it has ended, ignores reads registered after it, and
// after a wait ended by its context still waits for the reads that one
// left.
func TestViewTrackerWaitsForOlder(t *testing.T) {
	var tr viewTracker
	a := tr.register()
	returned := make(chan error, 1)
	go func() { returned <- tr.waitOlder(context.Background()) }()
	// A read registered once the wait has started its epoch.
	for tr.epoch.Load() == a {
		time.Sleep(time.Millisecond)
	}
	b := tr.register()
	select {
	case err := <-returned:
		t.Fatalf("waitOlder returned (%v) while an older read is open", err)
	case <-time.After(20 * time.Millisecond):
	}
	tr.unregister(a)
	if err := <-returned; err != nil {
		t.Fatal(err)
	}
	// b is older than the next wait: a cancelled wait leaves it, and the
	// wait after that still waits for it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := tr.waitOlder(ctx); err == nil {
		t.Fatal("waitOlder ended with b still open")
	}
	go func() { returned <- tr.waitOlder(context.Background()) }()
	select {
	case err := <-returned:
		t.Fatalf("the wait after a cancelled one returned (%v) with b still open", err)
	case <-time.After(20 * time.Millisecond):
	}
	tr.unregister(b)
	if err := <-returned; err != nil {
		t.Fatal(err)
	}
}

// TestViewTrackerConcurrent: reads registering and ending while waits
// run never leave a count behind.
func TestViewTrackerConcurrent(t *testing.T) {
	var tr viewTracker
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				tr.unregister(tr.register())
			}
		}()
	}
	for i := 0; i < 200; i++ {
		if err := tr.waitOlder(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if n := tr.active[0].Load() + tr.active[1].Load(); n != 0 {
		t.Fatalf("%d reads still counted", n)
	}
}

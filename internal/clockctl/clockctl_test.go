package clockctl

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// countingStore counts the read transactions (the reads of the record).
type countingStore struct {
	kv.Store
	views atomic.Int64
}

func (s *countingStore) View(ctx context.Context, fn func(tx kv.Tx) error) error {
	s.views.Add(1)
	return s.Store.View(ctx, fn)
}

// TestAdvanceAndShare: two front ends over one store: an advance through
// A is refused unless forwards and within MaxOffset; once it answered, B's
// next Sync sees it; B reads the record only when its copy is older than
// Fresh; shifts run with the time before the advance.
func TestAdvanceAndShare(t *testing.T) {
	ctx := context.Background()
	store := &countingStore{Store: mem.New()}
	base := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a, err := Open(ctx, store, base, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(ctx, store, base, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	var shiftedAt time.Time
	var shiftedBy time.Duration
	a.OnAdvance(func(tx kv.Tx, now time.Time, by time.Duration) error {
		shiftedAt, shiftedBy = now, by
		return nil
	})
	for _, by := range []time.Duration{0, -time.Second} {
		if _, err := a.Advance(ctx, by, "test"); !errors.Is(err, ErrNotForward) {
			t.Fatalf("advance by %v: %v, want ErrNotForward", by, err)
		}
	}
	if _, err := a.Advance(ctx, MaxOffset+time.Second, "test"); !errors.Is(err, ErrTooFar) {
		t.Fatalf("advance past MaxOffset: %v", err)
	}
	if err := b.Sync(ctx); err != nil { // b's copy is fresh: no read
		t.Fatal(err)
	}
	views := store.views.Load()
	if err := b.Sync(ctx); err != nil || store.views.Load() != views {
		t.Fatalf("a fresh copy read again: %d reads, %v", store.views.Load()-views, err)
	}
	off, err := a.Advance(ctx, time.Minute, "test")
	if err != nil || off != time.Minute || a.Offset() != time.Minute {
		t.Fatalf("advance: %v %v", off, err)
	}
	if !shiftedAt.Equal(base.Now()) || shiftedBy != time.Minute {
		t.Fatalf("shift ran at %v by %v", shiftedAt, shiftedBy)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if b.Offset() != time.Minute || !b.Now().Equal(base.Now().Add(time.Minute)) {
		t.Fatalf("B after A's advance answered: %v", b.Offset())
	}
	if got, err := Stored(ctx, store); err != nil || got != time.Minute {
		t.Fatalf("stored %v %v", got, err)
	}
	// A third front end starts from the record; an advance builds on it.
	c, err := Open(ctx, store, base, false, nil)
	if err != nil || c.Offset() != time.Minute {
		t.Fatalf("open: %v %v", c.Offset(), err)
	}
	if off, err := c.Advance(ctx, time.Second, "test"); err != nil || off != time.Minute+time.Second {
		t.Fatalf("advance on the record: %v %v", off, err)
	}
}

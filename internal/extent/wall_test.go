package extent

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// TestSweepOrphansWall: with a wall clock (SetWall, clock control), a
// chunk's age is measured on it, as the chunk store stamps it: the
// server's time being hours ahead does not make a new chunk an orphan old
// enough to remove, and the pin lease is published in wall time. Without
// SetWall the sweep at now+OrphanGrace removes the chunk (as
// TestSweepOrphans shows), which is what happened under clock control.
func TestSweepOrphansWall(t *testing.T) {
	s, _ := dtService(t)
	s.SetWall(time.Now)
	ctx := context.Background()
	w, err := s.chunks.Create(ctx) // written, never recorded
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("young")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	ahead := time.Now().Add(OrphanGrace + time.Hour) // the server's clock, advanced
	if n, err := s.SweepOrphans(ctx, ahead); err != nil || n != 0 {
		t.Fatalf("a chunk a moment old: removed %d, %v", n, err)
	}
	var until time.Time
	if err := s.store.View(ctx, func(tx kv.Tx) error {
		v, err := tx.Get(leaseKey(s.pins.owner))
		if err == nil {
			until = time.Unix(0, int64(binary.BigEndian.Uint64(v)))
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if d := time.Until(until); d > PinLease || d < PinLease-time.Minute {
		t.Fatalf("pin lease runs %v from the wall clock, want %v", d, PinLease)
	}
}

// TestShiftGrace: an item released just before the server's clock is
// advanced by two hours is not collected at once: ShiftGrace (run in the
// advance's transaction) moves its due time with the clock, so its grace
// period still runs GCGrace; items already due are not moved.
func TestShiftGrace(t *testing.T) {
	s, clk := dtService(t)
	ctx := context.Background()
	stage := func() []Part {
		t.Helper()
		body := bytes.Repeat([]byte("s"), InlineMax+1)
		st, err := s.Stage(ctx, bytes.NewReader(body), int64(len(body)), Digests{}, false)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Release()
		if err := s.store.Update(ctx, func(tx kv.Tx) error {
			if err := st.Write(tx); err != nil {
				return err
			}
			return AdjustRefs(tx, clk.Now(), nil, st.Parts)
		}); err != nil {
			t.Fatal(err)
		}
		return st.Parts
	}
	release := func(parts []Part) {
		t.Helper()
		if err := s.store.Update(ctx, func(tx kv.Tx) error { return AdjustRefs(tx, clk.Now(), parts, nil) }); err != nil {
			t.Fatal(err)
		}
	}
	old, young := stage(), stage()
	release(old)
	clk.Advance(GCGrace + time.Second) // old is due
	release(young)
	if err := s.store.Update(ctx, func(tx kv.Tx) error { return ShiftGrace(tx, clk.Now(), 2*time.Hour) }); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Hour)
	if n, err := s.Collect(ctx, clk.Now()); err != nil || n != 1 {
		t.Fatalf("right after the advance: freed %d, %v; want the one item already due", n, err)
	}
	clk.Advance(GCGrace)
	if n, err := s.Collect(ctx, clk.Now()); err != nil || n != 1 {
		t.Fatalf("GCGrace after the advance: freed %d, %v; want 1", n, err)
	}
}

// TestNewClocked: a store made for an offset clock (clock control) reads
// ages on the real clock behind it; one made for any other clock has no
// wall of its own and uses the time it is given.
func TestNewClocked(t *testing.T) {
	store, chunks, _ := testenv.Stores(t)
	base := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	ahead := base.Now().Add(5 * time.Hour) // the server's clock, advanced
	s := NewClocked(store, chunks, clock.NewOffset(base, 5*time.Hour))
	if got := s.wallNow(ahead); !got.Equal(base.Now()) {
		t.Fatalf("offset clock: wallNow = %v, want the base clock's %v", got, base.Now())
	}
	s = NewClocked(store, chunks, base)
	if got := s.wallNow(ahead); !got.Equal(ahead) {
		t.Fatalf("plain clock: wallNow = %v, want the time given, %v", got, ahead)
	}
}

package extent

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
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

package memchunk

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/chunk/chunktest"
)

func TestConformance(t *testing.T) {
	chunktest.Run(t, func(t *testing.T) chunk.Store { return New(Options{}) })
}

// TestConformanceLimited runs the suite under a limit roomy enough for it:
// the limit must not change anything below it.
func TestConformanceLimited(t *testing.T) {
	chunktest.Run(t, func(t *testing.T) chunk.Store { return New(Options{Limit: 64 << 20}) })
}

func TestLimit(t *testing.T) {
	ctx := context.Background()
	s := New(Options{Limit: 1000})
	a := chunktest.Put(t, s, chunktest.Pattern(1, 600), 100)
	if s.Used() != 600 {
		t.Fatalf("Used = %d, want 600", s.Used())
	}
	// A write past the limit fails whole, with a FullError, and writes
	// nothing; Abort gives back what the writer had.
	w, err := s.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 300)); err != nil {
		t.Fatal(err)
	}
	n, err := w.Write(make([]byte, 101))
	var full *chunk.FullError
	if n != 0 || !errors.As(err, &full) || full.Limit != 1000 {
		t.Fatalf("Write past the limit = %d, %v; want 0 and a FullError with the limit", n, err)
	}
	if w.Size() != 300 || s.Used() != 900 {
		t.Fatalf("after the failed write: Size %d, Used %d; want 300, 900", w.Size(), s.Used())
	}
	if _, err := w.Write(make([]byte, 100)); err != nil { // exactly up to the limit
		t.Fatalf("Write up to the limit: %v", err)
	}
	w.Abort()
	if s.Used() != 600 {
		t.Fatalf("Used after Abort = %d, want 600", s.Used())
	}
	// Removing a chunk frees its room.
	if err := s.Remove(ctx, a); err != nil {
		t.Fatal(err)
	}
	if s.Used() != 0 {
		t.Fatalf("Used after Remove = %d", s.Used())
	}
	b := chunktest.Put(t, s, chunktest.Pattern(2, 1000), 0)
	if !bytes.Equal(chunktest.ReadAll(t, s, b), chunktest.Pattern(2, 1000)) {
		t.Fatal("chunk differs")
	}
	// A writer whose chunk was swept neither counts nor commits.
	w, _ = s.Create(ctx)
	s.Remove(ctx, b)
	s.Remove(ctx, w.ID())
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("Write to a removed chunk succeeded")
	}
	if err := w.Commit(); err == nil {
		t.Fatal("Commit of a removed chunk succeeded")
	}
	if s.Used() != 0 {
		t.Fatalf("Used = %d, want 0", s.Used())
	}
}

// TestSegments reads across segment boundaries of chunks written in
// pieces of many sizes, including single writes larger than a segment.
func TestSegments(t *testing.T) {
	s := New(Options{})
	for _, step := range []int{1, 1000, minSegment - 1, SegmentSize - 3, SegmentSize + 7, 3 * SegmentSize} {
		data := chunktest.Pattern(uint64(step), 3*SegmentSize+12345)
		if step == 1 {
			data = data[:100_000]
		}
		id := chunktest.Put(t, s, data, step)
		r, err := s.Open(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ off, n int }{{0, len(data)}, {SegmentSize - 5, 10}, {len(data) - 3, 3}, {minSegment - 1, 2}, {7, SegmentSize * 2}} {
			if c.off+c.n > len(data) {
				continue
			}
			b := make([]byte, c.n)
			if n, err := r.ReadAt(b, int64(c.off)); n != c.n || err != nil {
				t.Fatalf("step %d: ReadAt(%d, %d) = %d, %v", step, c.off, c.n, n, err)
			}
			if !bytes.Equal(b, data[c.off:c.off+c.n]) {
				t.Fatalf("step %d: ReadAt(%d, %d): wrong bytes", step, c.off, c.n)
			}
		}
		r.Close()
	}
}

// TestModTimeFromClock: Walk reports the injected clock's time of the
// last write, which is what Sweep compares with its grace.
func TestModTimeFromClock(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s := New(Options{Now: func() time.Time { return now }})
	id := chunktest.Put(t, s, []byte("x"), 0)
	if got := chunktest.WalkAll(t, s)[id]; !got.Equal(now) {
		t.Fatalf("modTime = %v, want %v", got, now)
	}
	removed, err := chunk.Sweep(context.Background(), s, time.Hour, now.Add(2*time.Hour), func(_ context.Context, ids []string) ([]bool, error) {
		return make([]bool, len(ids)), nil
	})
	if err != nil || removed != 1 || s.Used() != 0 {
		t.Fatalf("Sweep = %d, %v; Used %d", removed, err, s.Used())
	}
}

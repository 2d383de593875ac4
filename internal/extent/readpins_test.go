package extent

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// trackedService is dtService over a store whose read transactions are
// tracked (TrackViews): the collector then needs no grace period.
func trackedService(t *testing.T) (*Store, *clock.Fake) {
	t.Helper()
	store, chunks, clk := testenv.Stores(t)
	return New(TrackViews(store), chunks), clk
}

// stageRecorded stages body and records it with a reference, returning
// its parts.
func stageRecorded(t *testing.T, s *Store, now time.Time, body []byte) []Part {
	t.Helper()
	st, err := s.Stage(context.Background(), bytes.NewReader(body), int64(len(body)), Digests{}, false)
	if err != nil {
		t.Fatal(err)
	}
	record(t, s, now, st)
	return st.Parts
}

func release(t *testing.T, s *Store, now time.Time, parts []Part) {
	t.Helper()
	if err := s.store.Update(context.Background(), func(tx kv.Tx) error { return AdjustRefs(tx, now, parts, nil) }); err != nil {
		t.Fatal(err)
	}
}

// TestCollectWithoutGrace: over a tracked store an item whose last
// reference went is freed by the next pass, at the same instant of the
// clock, chunk file included; over an untracked one it waits GCGrace.
func TestCollectWithoutGrace(t *testing.T) {
	ctx := context.Background()
	for _, tracked := range []bool{true, false} {
		store, chunks, clk := testenv.Stores(t)
		if tracked {
			store = TrackViews(store)
		}
		s := New(store, chunks)
		big := stageRecorded(t, s, clk.Now(), pattern(1, ChunkMax+10))
		small := stageRecorded(t, s, clk.Now(), pattern(2, 1000))
		release(t, s, clk.Now(), append(append([]Part(nil), big...), small...))
		n, err := s.Collect(ctx, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if tracked {
			want = len(big) + len(small)
		}
		if n != want {
			t.Fatalf("tracked=%v: freed %d at once, want %d", tracked, n, want)
		}
		if tracked {
			for _, p := range big {
				if _, err := s.chunks.Open(ctx, p.ID[1:]); !errors.Is(err, chunk.ErrNotFound) {
					t.Fatalf("chunk %s still there: %v", p.ID, err)
				}
			}
		}
	}
}

// TestCollectWaitsForOlderReaders is the race the grace period used to
// cover: a reader's transaction begins while the blob still names its
// items and pins them only later in that transaction; meanwhile the blob
// is overwritten and the collector runs. The collector must wait for the
// reader's transaction to end, find the pins, and keep the items, so the
// reader gets every byte. With the wait skipped (the control) the
// collector frees them under the reader, which then fails: the test
// sees the race it guards against.
func TestCollectWaitsForOlderReaders(t *testing.T) {
	for _, skip := range []bool{false, true} {
		s, clk := trackedService(t)
		ctx := context.Background()
		body := pattern(5, 2*ChunkMax+3)
		parts := stageRecorded(t, s, clk.Now(), body)

		skipViewWait = skip
		rp := s.NewReadPins()
		inView := make(chan struct{})
		pinNow := make(chan struct{})
		viewDone := make(chan error, 1)
		go func() {
			viewDone <- s.store.View(ctx, func(tx kv.Tx) error {
				close(inView)
				<-pinNow // the reader is slow between its snapshot and its pins
				return rp.Load(tx, parts, 0, int64(len(body)))
			})
		}()
		<-inView
		release(t, s, clk.Now(), parts) // the overwrite commits
		collected := make(chan int, 1)
		go func() {
			n, err := s.Collect(ctx, clk.Now())
			if err != nil {
				t.Error(err)
			}
			collected <- n
		}()
		select {
		case n := <-collected:
			if !skip {
				t.Fatalf("the collector did not wait for the older reader (freed %d)", n)
			}
			close(pinNow)
		case <-time.After(200 * time.Millisecond):
			if skip {
				t.Fatal("the control collector waited")
			}
			close(pinNow)
			if n := <-collected; n != 0 {
				t.Fatalf("freed %d pinned items", n)
			}
		}
		if err := <-viewDone; err != nil {
			t.Fatal(err)
		}
		r := s.OpenReader(ctx, rp, nil)
		got, err := io.ReadAll(r)
		r.Close()
		skipViewWait = false
		if skip {
			if err == nil && bytes.Equal(got, body) {
				t.Fatal("control: the read survived the free without the wait; the test does not see the race")
			}
			continue
		}
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("read after the overwrite: %d bytes, %v", len(got), err)
		}
		// The reader closed: the next pass frees everything.
		if n, err := s.Collect(ctx, clk.Now().Add(time.Nanosecond)); err != nil || n != len(parts) {
			t.Fatalf("collect after the read: freed %d, %v; want %d", n, err, len(parts))
		}
	}
}

// TestReadPinsReleasedOnClose: the pins a ReadPins took pass to the
// reader, whose Close releases them; Release after that does nothing, and
// a Load run twice (a transaction function re-run) holds one pin per item.
func TestReadPinsReleasedOnClose(t *testing.T) {
	s, clk := trackedService(t)
	ctx := context.Background()
	body := pattern(7, ChunkMax+1)
	parts := stageRecorded(t, s, clk.Now(), body)
	rp := s.NewReadPins()
	if err := s.store.View(ctx, func(tx kv.Tx) error {
		if err := rp.Load(tx, parts, 0, int64(len(body))); err != nil {
			return err
		}
		return rp.Load(tx, parts, 0, int64(len(body)))
	}); err != nil {
		t.Fatal(err)
	}
	r := s.OpenReader(ctx, rp, nil)
	rp.Release() // handed over: no effect
	release(t, s, clk.Now(), parts)
	if n, err := s.Collect(ctx, clk.Now()); err != nil || n != 0 {
		t.Fatalf("collect while reading: freed %d, %v", n, err)
	}
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read: %d bytes, %v", len(got), err)
	}
	r.Close()
	if n, err := s.Collect(ctx, clk.Now().Add(time.Nanosecond)); err != nil || n != len(parts) {
		t.Fatalf("collect after close: freed %d, %v; want %d", n, err, len(parts))
	}
}

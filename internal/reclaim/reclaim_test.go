package reclaim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

var bg = context.Background()

// rangeStep removes the records under ("data", parts[0]), batch at a time.
func rangeStep(tx kv.Tx, parts []string, _ []byte, _ time.Time, batch int) (bool, error) {
	p := kv.Key("data", parts[0])
	var keys [][]byte
	if err := tx.Scan(p, kv.PrefixEnd(p), batch, false, func(k, _ []byte) bool {
		keys = append(keys, bytes.Clone(k))
		return true
	}); err != nil {
		return false, err
	}
	for _, k := range keys {
		if err := tx.Delete(k); err != nil {
			return false, err
		}
	}
	return len(keys) < batch, nil
}

func fill(t *testing.T, s kv.Store, name string, n int) {
	t.Helper()
	err := s.Update(bg, func(tx kv.Tx) error {
		for i := 0; i < n; i++ {
			if err := tx.Put(kv.Key("data", name, fmt.Sprintf("%06d", i)), []byte("v")); err != nil {
				return err
			}
		}
		return Mark(tx, nil, "range", name)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, s kv.Store, prefix []byte) int {
	t.Helper()
	n := 0
	err := s.View(bg, func(tx kv.Tx) error {
		return tx.Scan(prefix, kv.PrefixEnd(prefix), 0, false, func(_, _ []byte) bool { n++; return true })
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDrainInBoundedSteps: a tombstone's records go in transactions of
// the batch size, the last one taking the tombstone; Pending tells the
// name is being reclaimed until then.
func TestDrainInBoundedSteps(t *testing.T) {
	s := mem.New()
	defer s.Close()
	r := New(s, clock.NewFake(time.Unix(0, 0)), nil, 100)
	r.Register("range", rangeStep)
	fill(t, s, "a", 1000)
	pending := func() bool {
		var p bool
		if err := s.View(bg, func(tx kv.Tx) (err error) { p, err = Pending(tx, "range", "a"); return err }); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if !pending() {
		t.Fatal("not pending after Mark")
	}
	steps, err := r.Drain(bg)
	if err != nil {
		t.Fatal(err)
	}
	if steps != 11 {
		t.Fatalf("%d steps for 1000 records in batches of 100, want 11", steps)
	}
	if n := count(t, s, kv.Key("data")); n != 0 || pending() {
		t.Fatalf("after Drain: %d records, pending %v", n, pending())
	}
}

// TestDrainGoesPastAFailingTombstone: a tombstone whose step fails stays
// and Drain reports the error, but the tombstones after it are reclaimed.
func TestDrainGoesPastAFailingTombstone(t *testing.T) {
	s := mem.New()
	defer s.Close()
	r := New(s, nil, nil, 100)
	bad := errors.New("corrupt record")
	r.Register("range", func(tx kv.Tx, parts []string, v []byte, now time.Time, batch int) (bool, error) {
		if parts[0] == "a" {
			return false, bad
		}
		return rangeStep(tx, parts, v, now, batch)
	})
	fill(t, s, "a", 10)
	fill(t, s, "b", 250)
	if _, err := r.Drain(bg); !errors.Is(err, bad) {
		t.Fatalf("Drain: %v, want the failing step's error", err)
	}
	if n := count(t, s, kv.Key("data", "b")); n != 0 {
		t.Fatalf("%d records of b left behind a failing tombstone", n)
	}
	if n := count(t, s, kv.Key("data", "a")); n != 10 {
		t.Fatalf("%d records of a, want all 10 kept", n)
	}
	if n := count(t, s, kv.Key("rcl")); n != 1 {
		t.Fatalf("%d tombstones, want a's", n)
	}
}

// TestRunStopsWithItsContext: Run ends promptly when its context does,
// even mid-reclaim (resting between two steps or held before one).
func TestRunStopsWithItsContext(t *testing.T) {
	s := mem.New()
	defer s.Close()
	r := New(s, nil, nil, 1)
	r.Register("range", func(tx kv.Tx, parts []string, v []byte, now time.Time, batch int) (bool, error) {
		time.Sleep(20 * time.Millisecond) // a slow step: Run rests as long after it
		return rangeStep(tx, parts, v, now, batch)
	})
	fill(t, s, "a", 1000)
	ctx, cancel := context.WithCancel(bg)
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx, time.Hour) }()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	cancel()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("Run still going a second after its context ended")
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("Run took %v to stop", d)
	}
	if n := count(t, s, kv.Key("data", "a")); n == 0 || n == 1000 {
		t.Fatalf("%d records left: the reclaim should have been midway", n)
	}
}

// TestFinishInline: a tombstone whose records fit in Inline steps is gone
// when Finish returns; a larger one keeps its tombstone, with exactly
// Inline batches removed, for the background; with a test hook watching
// the steps Finish does nothing; an unknown kind is an error.
func TestFinishInline(t *testing.T) {
	s := mem.New()
	defer s.Close()
	r := New(s, clock.NewFake(time.Unix(0, 0)), nil, 100)
	r.Register("range", rangeStep)
	pending := func(name string) bool {
		var p bool
		if err := s.View(bg, func(tx kv.Tx) (err error) { p, err = Pending(tx, "range", name); return err }); err != nil {
			t.Fatal(err)
		}
		return p
	}

	fill(t, s, "small", 99)
	if gone, err := r.Finish(bg, "range", "small"); err != nil || !gone {
		t.Fatalf("Finish of 99 records, batch 100: gone %v, %v", gone, err)
	}
	if pending("small") || count(t, s, kv.Key("data", "small")) != 0 {
		t.Fatal("small: tombstone or records left")
	}
	// Finished already (by another process, say): gone.
	if gone, err := r.Finish(bg, "range", "small"); err != nil || !gone {
		t.Fatalf("Finish of a finished tombstone: gone %v, %v", gone, err)
	}

	fill(t, s, "big", 1000)
	if gone, err := r.Finish(bg, "range", "big"); err != nil || gone {
		t.Fatalf("Finish of 1000 records: gone %v, %v; want left to the background", gone, err)
	}
	if !pending("big") {
		t.Fatal("big: tombstone gone before its records")
	}
	if n, want := count(t, s, kv.Key("data", "big")), 1000-Inline*100; n != want {
		t.Fatalf("big: %d records left after Finish, want %d", n, want)
	}

	fill(t, s, "watched", 10)
	r.SetBeforeStep(func(context.Context) error { return nil })
	if gone, err := r.Finish(bg, "range", "watched"); err != nil || gone {
		t.Fatalf("Finish under a test hook: gone %v, %v; want nothing done", gone, err)
	}
	if count(t, s, kv.Key("data", "watched")) != 10 {
		t.Fatal("Finish under a test hook removed records")
	}
	r.SetBeforeStep(nil)
	if _, err := r.Finish(bg, "nosuch", "x"); err == nil {
		t.Fatal("Finish of an unregistered kind: no error")
	}
}

// TestBatchAdapts: with the default batch, a step that holds the store
// longer than twice StepTarget halves the batch (down to MinBatch), a
// quick one doubles it (up to MaxBatch); an explicit batch never moves.
// On a store that runs writes side by side the target is
// SharedStepTarget.
func TestBatchAdapts(t *testing.T) {
	single := mem.New()
	defer single.Close()
	r := New(single, nil, nil, 0)
	if r.curBatch() != Batch {
		t.Fatalf("initial batch %d", r.curBatch())
	}
	r.tune(10*StepTarget, false)
	if r.curBatch() != Batch/2 {
		t.Fatalf("after a slow step: %d", r.curBatch())
	}
	for range 20 {
		r.tune(10*StepTarget, false)
	}
	if r.curBatch() != MinBatch {
		t.Fatalf("after many slow steps: %d, want %d", r.curBatch(), MinBatch)
	}
	r.tune(StepTarget, false)
	if r.curBatch() != MinBatch {
		t.Fatalf("a step on target moved the batch to %d", r.curBatch())
	}
	for range 20 {
		r.tune(0, false)
	}
	if r.curBatch() != MaxBatch {
		t.Fatalf("after many quick steps: %d, want %d", r.curBatch(), MaxBatch)
	}
	// With writes queued behind it, a step of StepTarget is too long:
	// the batch halves until steps take an eighth of it, and it does not
	// grow while writes keep queueing.
	r.tune(StepTarget, true)
	if r.curBatch() != MaxBatch/2 {
		t.Fatalf("a contended step on StepTarget left the batch at %d", r.curBatch())
	}
	r.tune(0, true)
	if r.curBatch() != MaxBatch/2 {
		t.Fatalf("a quick contended step grew the batch to %d", r.curBatch())
	}
	r.tune(StepTarget/8, true)
	if r.curBatch() != MaxBatch/2 {
		t.Fatalf("a contended step on its target moved the batch to %d", r.curBatch())
	}
	// A store without kv.Queued (PostgreSQL runs writes side by side):
	// a step of ten StepTargets is well within its target.
	shared := New(struct{ kv.Store }{single}, nil, nil, 0)
	shared.tune(10*StepTarget, false)
	if shared.curBatch() != Batch {
		t.Fatalf("a 10 ms step on a shared store moved the batch to %d", shared.curBatch())
	}
	shared.tune(3*SharedStepTarget, false)
	if shared.curBatch() != Batch/2 {
		t.Fatalf("a step over twice SharedStepTarget left the batch at %d", shared.curBatch())
	}
	fixed := New(nil, nil, nil, 100)
	fixed.tune(time.Hour, false)
	fixed.tune(0, false)
	if fixed.curBatch() != 100 {
		t.Fatalf("explicit batch moved to %d", fixed.curBatch())
	}
}

// TestAfterDrain: after each round Run reports how many reclaim
// transactions the round ran (the process gives memory back after a
// large one).
func TestAfterDrain(t *testing.T) {
	s := mem.New()
	defer s.Close()
	r := New(s, nil, nil, 100)
	r.Register("range", rangeStep)
	fill(t, s, "a", 1000)
	got := make(chan int, 4)
	r.SetAfterDrain(func(steps int) { got <- steps })
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	go r.Run(ctx, time.Hour)
	select {
	case n := <-got:
		if n != 11 {
			t.Fatalf("first round ran %d transactions, want 11 (1000 records in batches of 100, then the tombstone's)", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no round reported")
	}
	r.Kick()
	select {
	case n := <-got:
		if n != 0 {
			t.Fatalf("an idle round ran %d transactions", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no second round reported")
	}
}

// TestBusyRest: the Reclaimer rests as long as a step took while nobody
// else writes, and BusyRest times as long after a step during or before
// which another transaction wrote (here: one between steps 3 and 6).
func TestBusyRest(t *testing.T) {
	s := mem.New()
	defer s.Close()
	r := New(s, clock.NewFake(time.Unix(0, 0)), nil, 100)
	r.Register("range", func(tx kv.Tx, parts []string, v []byte, now time.Time, batch int) (bool, error) {
		time.Sleep(2 * time.Millisecond) // a step of a known least length
		return rangeStep(tx, parts, v, now, batch)
	})
	fill(t, s, "a", 1000)
	step := 0
	r.SetBeforeStep(func(ctx context.Context) error {
		step++
		if step >= 3 && step <= 6 {
			return s.Update(ctx, func(tx kv.Tx) error { return tx.Put(kv.Key("other", fmt.Sprint(step)), []byte("x")) })
		}
		return nil
	})
	var busy []bool
	var pauses []time.Duration
	r.onRest = func(d time.Duration, b bool) { pauses, busy = append(pauses, d), append(busy, b) }
	if _, err := r.Drain(bg); err != nil {
		t.Fatal(err)
	}
	if len(busy) != 11 {
		t.Fatalf("%d rests for 11 steps", len(busy))
	}
	for i, b := range busy {
		// Step i+1 ran after the hook's write of step i+1 (3..6).
		want := i+1 >= 3 && i+1 <= 6
		if b != want {
			t.Fatalf("step %d: busy %v, want %v (all: %v)", i+1, b, want, busy)
		}
		least := 2 * time.Millisecond
		if b {
			least *= BusyRest
		}
		if pauses[i] < least {
			t.Fatalf("step %d: rested %v, want at least %v", i+1, pauses[i], least)
		}
	}
}

package reclaim

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// TestMoveRecords: records of each range move under its To prefix in
// range order, at most limit a call, values unchanged, Each seeing every
// moved record once; keys outside the ranges stay.
func TestMoveRecords(t *testing.T) {
	s := mem.New()
	ctx := context.Background()
	if err := s.Update(ctx, func(tx kv.Tx) error {
		for i := 0; i < 7; i++ {
			if err := tx.Put(kv.Key("a", "old", fmt.Sprint(i)), []byte(fmt.Sprint("va", i))); err != nil {
				return err
			}
		}
		for i := 0; i < 3; i++ {
			if err := tx.Put(kv.Key("b", "old", fmt.Sprint(i)), []byte(fmt.Sprint("vb", i))); err != nil {
				return err
			}
		}
		return tx.Put(kv.Key("a", "older", "x"), []byte("stays"))
	}); err != nil {
		t.Fatal(err)
	}
	var seen []string
	ranges := []Range{
		{From: kv.Key("a", "old"), To: kv.Key("a", "new")},
		{From: kv.Key("b", "old"), To: kv.Key("b", "new"), Each: func(k, v []byte) error {
			seen = append(seen, string(v))
			return nil
		}},
	}
	calls := 0
	for more := true; more; calls++ {
		if err := s.Update(ctx, func(tx kv.Tx) (err error) {
			more, err = MoveRecords(tx, ranges, 4)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 3 {
		t.Fatalf("10 records in batches of 4 took %d calls", calls)
	}
	if fmt.Sprint(seen) != "[vb0 vb1 vb2]" {
		t.Fatalf("Each saw %v", seen)
	}
	if err := s.View(ctx, func(tx kv.Tx) error {
		for i := 0; i < 7; i++ {
			v, err := tx.Get(kv.Key("a", "new", fmt.Sprint(i)))
			if err != nil || string(v) != fmt.Sprint("va", i) {
				return fmt.Errorf("a/new/%d = %q, %v", i, v, err)
			}
			if _, err := tx.Get(kv.Key("a", "old", fmt.Sprint(i))); err != kv.ErrNotFound {
				return fmt.Errorf("a/old/%d left: %v", i, err)
			}
		}
		if v, err := tx.Get(kv.Key("a", "older", "x")); err != nil || string(v) != "stays" {
			return fmt.Errorf("a key outside the range moved: %q, %v", v, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestFreeVersion: the tick in 16 hex digits, moved past taken ones.
func TestFreeVersion(t *testing.T) {
	s := mem.New()
	ctx := context.Background()
	key := func(v string) []byte { return kv.Key("x", v) }
	for i, want := range []string{"00000000000000FF", "0000000000000100", "0000000000000101"} {
		if err := s.Update(ctx, func(tx kv.Tx) error {
			v, err := FreeVersion(tx, 0xFF, key)
			if err != nil {
				return err
			}
			if v != want {
				return fmt.Errorf("delete %d got version %s, want %s", i, v, want)
			}
			return tx.Put(key(v), nil)
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunJob: with a Reclaimer the job runs Inline steps in the request
// and is kicked for the rest; without one it runs to the end; Steps stops
// at an error.
func TestRunJob(t *testing.T) {
	ctx := context.Background()
	counting := func(total int, n *int) func(context.Context) (bool, error) {
		return func(context.Context) (bool, error) {
			*n++
			return *n >= total, nil
		}
	}
	r := New(mem.New(), clock.NewFake(time.Now()), nil, 0)
	n := 0
	if err := r.RunJob(ctx, counting(5, &n)); err != nil || n != Inline {
		t.Fatalf("with a reclaimer: %d steps, %v; want %d", n, err, Inline)
	}
	select {
	case <-r.wake:
	default:
		t.Fatal("an unfinished job did not kick the reclaimer")
	}
	n = 0
	var none *Reclaimer
	if err := none.RunJob(ctx, counting(5, &n)); err != nil || n != 5 {
		t.Fatalf("without a reclaimer: %d steps, %v; want 5", n, err)
	}
	boom := errors.New("boom")
	done, err := Steps(ctx, func(context.Context) (bool, error) { return false, boom }, 0)
	if done || err != boom {
		t.Fatalf("Steps over a failing step: %v, %v", done, err)
	}
}

package mem_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// The scratch transaction of kv.Twice reads its own writes over the
// store's: random puts, deletes, gets and scans (limits, both directions)
// against a model. (The conformance suite itself cannot run under Twice:
// its functions keep a model outside the transaction.)
func TestTwiceScratchModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	key := func() []byte { return []byte(fmt.Sprintf("k%02d", r.IntN(40))) }
	for round := 0; round < 50; round++ {
		base := mem.New()
		model := map[string]string{}
		_ = base.Update(context.Background(), func(tx kv.Tx) error {
			for i := 0; i < 20; i++ {
				k := key()
				model[string(k)] = "base"
				_ = tx.Put(k, []byte("base"))
			}
			return nil
		})
		s := kv.Twice(base)
		first := true
		err := s.Update(context.Background(), func(tx kv.Tx) error {
			if !first {
				return nil
			}
			first = false
			for i := 0; i < 60; i++ {
				switch k := key(); r.IntN(4) {
				case 0:
					v := fmt.Sprint(i)
					model[string(k)] = v
					_ = tx.Put(k, []byte(v))
				case 1:
					delete(model, string(k))
					_ = tx.Delete(k)
				case 2:
					v, err := tx.Get(k)
					want, ok := model[string(k)]
					if ok != (err == nil) || (ok && string(v) != want) {
						return fmt.Errorf("get %s: %q %v, want %q %v", k, v, err, want, ok)
					}
				default:
					lo, hi := key(), key()
					if bytes.Compare(lo, hi) > 0 {
						lo, hi = hi, lo
					}
					limit, reverse := r.IntN(6), r.IntN(2) == 0
					var want []string
					for k := range model {
						if k >= string(lo) && k < string(hi) {
							want = append(want, k+"="+model[k])
						}
					}
					sort.Strings(want)
					if reverse {
						slices.Reverse(want)
					}
					if limit > 0 && len(want) > limit {
						want = want[:limit]
					}
					var got []string
					if err := tx.Scan(lo, hi, limit, reverse, func(k, v []byte) bool {
						got = append(got, string(k)+"="+string(v))
						return true
					}); err != nil {
						return err
					}
					if !slices.Equal(got, want) {
						return fmt.Errorf("scan [%s,%s) limit %d reverse %v: %v, want %v", lo, hi, limit, reverse, got, want)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		// Nothing the scratch run wrote reached the store.
		_ = base.View(context.Background(), func(tx kv.Tx) error {
			return tx.Scan(nil, nil, 0, false, func(k, v []byte) bool {
				if string(v) != "base" {
					t.Fatalf("round %d: scratch write %s=%s committed", round, k, v)
				}
				return true
			})
		})
	}
}

// Code that changes state outside the transaction is caught: a counter
// bumped by fn counts two runs under Twice.
func TestTwiceRunsTwice(t *testing.T) {
	s := kv.Twice(mem.New())
	defer s.Close()
	runs := 0
	err := s.Update(context.Background(), func(tx kv.Tx) error {
		runs++
		if runs == 1 {
			// The scratch run's writes are not committed.
			return tx.Put([]byte("scratch"), []byte("1"))
		}
		return tx.Put([]byte("real"), []byte("2"))
	})
	if err != nil || runs != 2 {
		t.Fatalf("runs %d, err %v", runs, err)
	}
	_ = s.View(context.Background(), func(tx kv.Tx) error {
		if _, err := tx.Get([]byte("scratch")); err != kv.ErrNotFound {
			t.Errorf("scratch write committed: %v", err)
		}
		if v, err := tx.Get([]byte("real")); err != nil || string(v) != "2" {
			t.Errorf("real write: %q %v", v, err)
		}
		return nil
	})
}

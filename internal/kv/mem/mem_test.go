package mem

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/kvtest"
)

func TestConformance(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.Store {
		db := New()
		t.Cleanup(func() { _ = db.Close() })
		return db
	}, nil) // nothing survives a restart: no durability subtests
}

// TestModel checks the treap against a map after random writes in
// transactions of various sizes, some of them failing, with scans of random
// ranges both ways inside and outside Updates.
func TestModel(t *testing.T) {
	ctx := context.Background()
	db := New()
	defer db.Close()
	model := map[string]string{}
	r := rand.New(rand.NewPCG(1, 2))
	key := func() []byte { return fmt.Appendf(nil, "k%04d", r.IntN(2000)) }
	boom := errors.New("boom")
	for round := range 400 {
		fail := round%7 == 3
		pending := map[string]*string{}
		n := 1 + r.IntN(40)
		type op struct {
			k   []byte
			v   []byte
			del bool
		}
		var ops []op
		for range n {
			o := op{k: key()}
			if r.IntN(3) == 0 {
				o.del = true
			} else {
				o.v = fmt.Appendf(nil, "v%d", r.Uint32())
			}
			ops = append(ops, o)
		}
		err := db.Update(ctx, func(tx kv.Tx) error {
			for i, o := range ops {
				if o.del {
					tx.Delete(o.k)
				} else {
					tx.Put(o.k, o.v)
				}
				if i == len(ops)/2 {
					// A scan in the middle must see the writes so far.
					got := map[string]string{}
					tx.Scan([]byte("k"), []byte("l"), 0, false, func(k, v []byte) bool {
						got[string(k)] = string(v)
						return true
					})
					want := map[string]string{}
					for k, v := range model {
						want[k] = v
					}
					for _, p := range ops[:i+1] {
						if p.del {
							delete(want, string(p.k))
						} else {
							want[string(p.k)] = string(p.v)
						}
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("round %d: scan inside Update differs from the model", round)
					}
				}
			}
			if fail {
				return boom
			}
			return nil
		})
		if fail {
			if !errors.Is(err, boom) {
				t.Fatalf("Update = %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range ops {
			if o.del {
				pending[string(o.k)] = nil
			} else {
				v := string(o.v)
				pending[string(o.k)] = &v
			}
		}
		for k, v := range pending {
			if v == nil {
				delete(model, k)
			} else {
				model[k] = *v
			}
		}
		// Compare random ranges with the model.
		keys := make([]string, 0, len(model))
		for k := range model {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for range 3 {
			a, b := key(), key()
			if bytes.Compare(a, b) > 0 {
				a, b = b, a
			}
			limit := r.IntN(5)
			reverse := r.IntN(2) == 0
			var want []string
			for _, k := range keys {
				if k >= string(a) && k < string(b) {
					want = append(want, k+"="+model[k])
				}
			}
			if reverse {
				for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
					want[i], want[j] = want[j], want[i]
				}
			}
			if limit > 0 && len(want) > limit {
				want = want[:limit]
			}
			var got []string
			db.View(ctx, func(tx kv.Tx) error {
				return tx.Scan(a, b, limit, reverse, func(k, v []byte) bool {
					got = append(got, string(k)+"="+string(v))
					return true
				})
			})
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("round %d: Scan(%s, %s, %d, %v) = %v, want %v", round, a, b, limit, reverse, got, want)
			}
		}
	}
	if db.Len() != len(model) {
		t.Fatalf("Len = %d, want %d", db.Len(), len(model))
	}
}

// TestViewSnapshotUnderWrites: a View that started before an Update keeps
// seeing the old values while the Update commits.
func TestViewSnapshotUnderWrites(t *testing.T) {
	ctx := context.Background()
	db := New()
	defer db.Close()
	for i := range 100 {
		db.Update(ctx, func(tx kv.Tx) error { return tx.Put(fmt.Appendf(nil, "k%03d", i), []byte("old")) })
	}
	db.View(ctx, func(tx kv.Tx) error {
		if err := db.Update(ctx, func(tx kv.Tx) error {
			for i := range 100 {
				if i%2 == 0 {
					tx.Delete(fmt.Appendf(nil, "k%03d", i))
				} else {
					tx.Put(fmt.Appendf(nil, "k%03d", i), []byte("new"))
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		n := 0
		tx.Scan(nil, nil, 0, false, func(k, v []byte) bool {
			if string(v) != "old" {
				t.Fatalf("%s = %s inside an older View", k, v)
			}
			n++
			return true
		})
		if n != 100 {
			t.Fatalf("View sees %d keys, want 100", n)
		}
		return nil
	})
}

func BenchmarkPut(b *testing.B) {
	ctx := context.Background()
	db := New()
	defer db.Close()
	b.ReportAllocs()
	for i := range b.N {
		db.Update(ctx, func(tx kv.Tx) error {
			return tx.Put(fmt.Appendf(nil, "key-%09d", i*7919%1000003), []byte("value"))
		})
	}
}

// BenchmarkBigDelete: 10⁴, 10⁵ and 10⁶ adjacent keys deleted in
// transactions of 1000 (kvtest.BenchmarkBigDelete).
func BenchmarkBigDelete(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			kvtest.BenchmarkBigDelete(b, func(b *testing.B) kv.Store { return New() }, n, 1000)
		})
	}
}

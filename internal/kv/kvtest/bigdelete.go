package kvtest

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// bigDeleteKeys is how many adjacent keys testBigAdjacentDelete removes:
// enough that a store whose write path walks over the emptied part of the
// range once per deleted key (quadratic) takes many times longer per key
// than at an eighth of it.
var bigDeleteKeys = 100_000

func bigKey(prefix string, i int) []byte {
	return kv.Key(prefix, fmt.Sprintf("%09d", i))
}

// fillAdjacent writes n adjacent keys under prefix in transactions of
// batch keys and returns how long that took.
func fillAdjacent(tb testing.TB, s kv.Store, prefix string, n, batch int) time.Duration {
	tb.Helper()
	val := bytes.Repeat([]byte("v"), 64)
	start := time.Now()
	for i := 0; i < n; i += batch {
		update(tb, s, func(tx kv.Tx) error {
			for j := i; j < min(i+batch, n); j++ {
				if err := tx.Put(bigKey(prefix, j), val); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return time.Since(start)
}

// DeleteRangeBatched removes every key of [start, end) the way a
// background reclaim does: each transaction scans the first batch keys
// left from start and deletes them, so every scan starts at the edge of
// the range already emptied. It returns the number of transactions.
func DeleteRangeBatched(ctx context.Context, s kv.Store, start, end []byte, batch int) (int, error) {
	txs := 0
	for {
		var n int
		err := s.Update(ctx, func(tx kv.Tx) error {
			n = 0
			var keys [][]byte
			if err := tx.Scan(start, end, batch, false, func(k, _ []byte) bool {
				keys = append(keys, bytes.Clone(k))
				return true
			}); err != nil {
				return err
			}
			for _, k := range keys {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
			n = len(keys)
			return nil
		})
		if err != nil {
			return txs, err
		}
		txs++
		if n < batch {
			return txs, nil
		}
	}
}

// testBigAdjacentDelete deletes many adjacent keys between neighbours
// that must survive, all in one transaction and in bounded transactions that
// each scan from the start of the range, at two sizes n/8 and n, and
// checks that the cost per key does not grow with the size of the
// range: the write path must be linear in the keys changed whatever the
// shape of the deleted range (a cursor walk over the emptied pages per
// deleted key made 10⁵ adjacent deletes take tens of seconds on the
// embedded store).
func testBigAdjacentDelete(t *testing.T, su *suite) {
	if testing.Short() {
		t.Skip("big delete: not in -short")
	}
	s := su.open(t)
	put(t, s, pair{"bif", "before"}, pair{"bih", "after"})
	p := kv.Key("big")
	perKey := func(n int) (one, batched, refill time.Duration) {
		fillAdjacent(t, s, "big", n, 1000)
		start := time.Now()
		update(t, s, func(tx kv.Tx) error {
			for i := 0; i < n; i++ {
				if err := tx.Delete(bigKey("big", i)); err != nil {
					return err
				}
			}
			return nil
		})
		one = time.Since(start)
		checkBigDeleted(t, s, n)
		fillAdjacent(t, s, "big", n, 1000)
		start = time.Now()
		txs, err := DeleteRangeBatched(bg, s, p, kv.PrefixEnd(p), 1000)
		if err != nil {
			t.Fatal(err)
		}
		batched = time.Since(start)
		checkBigDeleted(t, s, n)
		if txs != n/1000+1 {
			t.Errorf("batched delete of %d keys took %d transactions, want %d", n, txs, n/1000+1)
		}
		// Deleted and written again in one transaction: each key
		// written is missing when its write looks it up, in a range of
		// emptied pages (a lookup that steps forward from an empty page
		// to the next key walks all of them).
		fillAdjacent(t, s, "big", n, 1000)
		start = time.Now()
		update(t, s, func(tx kv.Tx) error {
			for i := 0; i < n; i++ {
				if err := tx.Delete(bigKey("big", i)); err != nil {
					return err
				}
			}
			for i := 0; i < n; i++ {
				if err := tx.Put(bigKey("big", i), []byte("again")); err != nil {
					return err
				}
			}
			return nil
		})
		refill = time.Since(start)
		if got := scan(t, s, p, kv.PrefixEnd(p), 0, false); len(got) != n || string(got[n-1].v) != "again" {
			t.Fatalf("after deleting and writing again %d keys: %d keys", n, len(got))
		}
		if _, err := DeleteRangeBatched(bg, s, p, kv.PrefixEnd(p), 1000); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d keys: one transaction %v, batched %v, deleted and written again %v", n, one, batched, refill)
		return one / time.Duration(n), batched / time.Duration(n), refill / time.Duration(2*n)
	}
	n := bigDeleteKeys
	smallOne, smallBatched, smallRefill := perKey(n / 8)
	bigOne, bigBatched, bigRefill := perKey(n)
	// Linear: the same cost per key at both sizes. Quadratic: 8 times
	// it (100 µs a key and more at 10⁵ on the embedded store before its
	// fix). The bound leaves room for a noisy machine and the garbage
	// collector.
	for _, c := range []struct {
		shape      string
		small, big time.Duration
	}{{"one transaction", smallOne, bigOne}, {"batched", smallBatched, bigBatched}, {"deleted and written again", smallRefill, bigRefill}} {
		if c.big > 3*c.small+5*time.Microsecond {
			t.Errorf("%s: deleting %d adjacent keys cost %v a key, %d keys %v a key: grows with the range, not linear in the keys changed",
				c.shape, n, c.big, n/8, c.small)
		}
	}
}

func checkBigDeleted(t *testing.T, s kv.Store, n int) {
	t.Helper()
	got := scan(t, s, []byte("bif"), []byte("bii"), 0, false)
	if err := samePairs(got, []pair{{"bif", "before"}, {"bih", "after"}}); err != nil {
		t.Fatalf("after deleting %d keys: %v", n, err)
	}
	view(t, s, func(tx kv.Tx) error {
		for _, i := range []int{0, 1, n / 2, n - 1} {
			if err := wantMissing(tx, bigKey("big", i)); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchmarkBigDelete writes n adjacent keys, then times deleting them in
// transactions of batch keys, each scanning from the start of the range
// (the shape of a background reclaim). ns/op is per key deleted, so a
// linear store reports about the same figure for every n.
func BenchmarkBigDelete(b *testing.B, open func(b *testing.B) kv.Store, n, batch int) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := open(b)
		fillAdjacent(b, s, "big", n, batch)
		p := kv.Key("big")
		b.StartTimer()
		start := time.Now()
		if _, err := DeleteRangeBatched(bg, s, p, kv.PrefixEnd(p), batch); err != nil {
			b.Fatal(err)
		}
		el := time.Since(start)
		b.StopTimer()
		b.ReportMetric(float64(el.Nanoseconds())/float64(n), "ns/key")
		b.ReportMetric(el.Seconds(), "s/delete")
		_ = s.Close()
		b.StartTimer()
	}
}

// Package kvtest is the conformance suite every kv.Store backend must pass.
//
// The suite relies only on the kv contract: Update fns are deterministic and
// free of side effects outside the transaction (apart from test bookkeeping
// that tolerates re-runs), so a backend may run them more than once. It never
// uses the empty key.
package kvtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

type suite struct {
	open   func(t *testing.T) kv.Store
	reopen func(t *testing.T, s kv.Store) kv.Store
}

var bg = context.Background()

// waitTimeout bounds every wait on another goroutine so that a deadlocked
// backend fails the test instead of hanging it.
const waitTimeout = 3 * time.Minute

// domainError stands for a precondition failure returned by an Update fn.
type domainError struct{ code int }

func (e *domainError) Error() string { return "kvtest: domain error " + strconv.Itoa(e.code) }

type pair struct{ k, v string }

func (p pair) String() string { return fmt.Sprintf("%q=%q", p.k, p.v) }

func update(t testing.TB, s kv.Store, fn func(kv.Tx) error) {
	t.Helper()
	if err := s.Update(bg, fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func view(t testing.TB, s kv.Store, fn func(kv.Tx) error) {
	t.Helper()
	if err := s.View(bg, fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

func put(t testing.TB, s kv.Store, pairs ...pair) {
	t.Helper()
	update(t, s, func(tx kv.Tx) error {
		for _, p := range pairs {
			if err := tx.Put([]byte(p.k), []byte(p.v)); err != nil {
				return err
			}
		}
		return nil
	})
}

func scanTx(tx kv.Tx, start, end []byte, limit int, reverse bool) ([]pair, error) {
	var out []pair
	err := tx.Scan(start, end, limit, reverse, func(k, v []byte) bool {
		out = append(out, pair{string(k), string(v)})
		return true
	})
	return out, err
}

func scan(t testing.TB, s kv.Store, start, end []byte, limit int, reverse bool) []pair {
	t.Helper()
	var out []pair
	view(t, s, func(tx kv.Tx) error {
		var err error
		out, err = scanTx(tx, start, end, limit, reverse)
		return err
	})
	return out
}

// scanPrefix returns every pair under prefix, ascending.
func scanPrefix(t testing.TB, s kv.Store, prefix []byte) []pair {
	t.Helper()
	return scan(t, s, prefix, kv.PrefixEnd(prefix), 0, false)
}

func wantGet(tx kv.Tx, key []byte, want string) error {
	v, err := tx.Get(key)
	if err != nil {
		return fmt.Errorf("Get(%q): %v, want %q", key, err, want)
	}
	if string(v) != want {
		return fmt.Errorf("Get(%q) = %q, want %q", key, v, want)
	}
	return nil
}

func wantMissing(tx kv.Tx, key []byte) error {
	v, err := tx.Get(key)
	if !errors.Is(err, kv.ErrNotFound) {
		return fmt.Errorf("Get(%q) = %q, %v; want kv.ErrNotFound", key, v, err)
	}
	return nil
}

func samePairs(got, want []pair) error {
	if slices.Equal(got, want) {
		return nil
	}
	return fmt.Errorf("got %d pairs %v\nwant %d pairs %v", len(got), abbrev(got), len(want), abbrev(want))
}

func abbrev(ps []pair) []pair {
	out := make([]pair, 0, len(ps))
	for _, p := range ps {
		if len(p.v) > 40 {
			p.v = fmt.Sprintf("%.20s...(%d bytes)", p.v, len(p.v))
		}
		out = append(out, p)
	}
	if len(out) > 40 {
		out = out[:40]
	}
	return out
}

// wait waits for wg with a timeout.
func wait(t testing.TB, wg *sync.WaitGroup) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatalf("goroutines did not finish within %v (deadlock?)", waitTimeout)
	}
}

func testGetPutDelete(t *testing.T, su *suite) {
	s := su.open(t)
	k := kv.Key("basic", "a")
	view(t, s, func(tx kv.Tx) error { return wantMissing(tx, k) })

	update(t, s, func(tx kv.Tx) error {
		if err := tx.Put(k, []byte("v1")); err != nil {
			return err
		}
		return wantGet(tx, k, "v1")
	})
	view(t, s, func(tx kv.Tx) error { return wantGet(tx, k, "v1") })

	put(t, s, pair{string(k), "v2"})
	view(t, s, func(tx kv.Tx) error { return wantGet(tx, k, "v2") })

	other := kv.Key("basic", "b")
	put(t, s, pair{string(other), "other"})
	update(t, s, func(tx kv.Tx) error {
		if err := tx.Delete(k); err != nil {
			return err
		}
		if err := wantMissing(tx, k); err != nil {
			return err
		}
		// Deleting a missing key is not an error.
		if err := tx.Delete(k); err != nil {
			return fmt.Errorf("second Delete: %v", err)
		}
		return tx.Delete(kv.Key("basic", "never"))
	})
	view(t, s, func(tx kv.Tx) error {
		if err := wantMissing(tx, k); err != nil {
			return err
		}
		return wantGet(tx, other, "other")
	})
	// Delete then Put again in one transaction.
	update(t, s, func(tx kv.Tx) error {
		if err := tx.Delete(other); err != nil {
			return err
		}
		return tx.Put(other, []byte("again"))
	})
	view(t, s, func(tx kv.Tx) error { return wantGet(tx, other, "again") })
}

func testBuffersCopied(t *testing.T, su *suite) {
	s := su.open(t)
	key := kv.Key("buf", "k")
	val := []byte("original")
	update(t, s, func(tx kv.Tx) error {
		k := bytes.Clone(key)
		v := bytes.Clone(val)
		if err := tx.Put(k, v); err != nil {
			return err
		}
		// The caller may reuse its buffers as soon as Put returns.
		for i := range v {
			v[i] = 'X'
		}
		k[len(k)-3] ^= 0x55
		return wantGet(tx, key, "original")
	})
	view(t, s, func(tx kv.Tx) error { return wantGet(tx, key, "original") })
	got := scanPrefix(t, s, kv.Key("buf"))
	if err := samePairs(got, []pair{{string(key), "original"}}); err != nil {
		t.Fatal(err)
	}
}

// testGetThenPut: the value a Get returned may be Put under another key
// as it is (kv.Tx.Put copies first), and stays that key's value after the
// first key is overwritten and deleted, in the same transaction and after
// it; it may be Put after other writes of the transaction too.
func testGetThenPut(t *testing.T, su *suite) {
	s := su.open(t)
	a, b := kv.Key("gtp", "a"), kv.Key("gtp", "b")
	orig := bytes.Repeat([]byte("0123456789abcdef"), 256) // several pages' worth on paged stores
	update(t, s, func(tx kv.Tx) error { return tx.Put(a, orig) })
	update(t, s, func(tx kv.Tx) error {
		raw, err := tx.Get(a)
		if err != nil {
			return err
		}
		if err := tx.Put(b, raw); err != nil {
			return err
		}
		if err := tx.Put(a, bytes.Repeat([]byte("z"), len(orig))); err != nil {
			return err
		}
		if err := tx.Delete(a); err != nil {
			return err
		}
		return wantGet(tx, b, string(orig))
	})
	view(t, s, func(tx kv.Tx) error { return wantGet(tx, b, string(orig)) })

	// The value stays valid to the end of the transaction, across writes
	// of the key it came from and of others: Put under c after a was
	// overwritten and deleted stores what Get returned.
	c := kv.Key("gtp", "c")
	update(t, s, func(tx kv.Tx) error { return tx.Put(a, orig) })
	update(t, s, func(tx kv.Tx) error {
		raw, err := tx.Get(a)
		if err != nil {
			return err
		}
		for i := 0; i < 64; i++ { // enough writes to split pages on paged stores
			if err := tx.Put(kv.Key("gtp", "f", fmt.Sprint(i)), bytes.Repeat([]byte{byte(i)}, 512)); err != nil {
				return err
			}
		}
		if err := tx.Put(a, bytes.Repeat([]byte("y"), len(orig))); err != nil {
			return err
		}
		if err := tx.Delete(a); err != nil {
			return err
		}
		if err := tx.Put(c, raw); err != nil {
			return err
		}
		return wantGet(tx, c, string(orig))
	})
	view(t, s, func(tx kv.Tx) error { return wantGet(tx, c, string(orig)) })
}

func testEmptyValue(t *testing.T, su *suite) {
	s := su.open(t)
	k1, k2, k3 := kv.Key("empty", "1"), kv.Key("empty", "2"), kv.Key("empty", "3")
	update(t, s, func(tx kv.Tx) error {
		if err := tx.Put(k1, []byte{}); err != nil {
			return err
		}
		if err := tx.Put(k2, nil); err != nil {
			return err
		}
		if err := tx.Put(k3, []byte("x")); err != nil {
			return err
		}
		return tx.Put(k3, nil) // overwrite with empty
	})
	check := func(tx kv.Tx) error {
		for _, k := range [][]byte{k1, k2, k3} {
			v, err := tx.Get(k)
			if err != nil {
				return fmt.Errorf("Get(%q) of empty value: %v", k, err)
			}
			if len(v) != 0 {
				return fmt.Errorf("Get(%q) = %q, want empty", k, v)
			}
		}
		got, err := scanTx(tx, kv.Key("empty"), kv.PrefixEnd(kv.Key("empty")), 0, false)
		if err != nil {
			return err
		}
		return samePairs(got, []pair{{string(k1), ""}, {string(k2), ""}, {string(k3), ""}})
	}
	view(t, s, check)
	update(t, s, check)
}

func testReadOnlyView(t *testing.T, su *suite) {
	s := su.open(t)
	k, k2 := kv.Key("ro", "k"), kv.Key("ro", "k2")
	put(t, s, pair{string(k), "v"})
	view(t, s, func(tx kv.Tx) error {
		if err := tx.Put(k2, []byte("x")); !errors.Is(err, kv.ErrReadOnly) {
			return fmt.Errorf("tx.Put in View: %v, want kv.ErrReadOnly", err)
		}
		if err := tx.Put(k, []byte("x")); !errors.Is(err, kv.ErrReadOnly) {
			return fmt.Errorf("tx.Put in View: %v, want kv.ErrReadOnly", err)
		}
		if err := tx.Delete(k); !errors.Is(err, kv.ErrReadOnly) {
			return fmt.Errorf("tx.Delete in View: %v, want kv.ErrReadOnly", err)
		}
		return wantGet(tx, k, "v")
	})
	view(t, s, func(tx kv.Tx) error {
		if err := wantMissing(tx, k2); err != nil {
			return err
		}
		return wantGet(tx, k, "v")
	})
}

// rawKeys stresses byte order: 0x00 and 0xFF bytes, prefixes of each other.
var rawKeys = []string{
	"\x00", "\x00\x00", "\x00\x01", "\x01", "a", "a\x00", "a\x00\x00", "a\x01",
	"aa", "ab", "b", "b\x00", "b\xff", "b\xff\xff", "m", "\x7f", "\x80", "\xfe",
	"\xff", "\xff\x00", "\xff\xff\xff",
}

// expectRange computes what Scan must return over sorted pairs.
func expectRange(sorted []pair, start, end []byte, limit int, reverse bool) []pair {
	var out []pair
	for _, p := range sorted {
		if p.k >= string(start) && (end == nil || p.k < string(end)) {
			out = append(out, p)
		}
	}
	if reverse {
		slices.Reverse(out)
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	if out == nil {
		out = []pair{}
	}
	return out
}

func loadRawKeys(t *testing.T, s kv.Store) []pair {
	t.Helper()
	pairs := make([]pair, len(rawKeys))
	for i, k := range rawKeys {
		pairs[i] = pair{k, "v:" + k}
	}
	shuffled := slices.Clone(pairs)
	rand.New(rand.NewPCG(7, 7)).Shuffle(len(shuffled), func(i, j int) {
		shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
	})
	put(t, s, shuffled[:len(shuffled)/2]...)
	put(t, s, shuffled[len(shuffled)/2:]...)
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].k < pairs[j].k })
	return pairs
}

func testScanOrderAndBounds(t *testing.T, su *suite) {
	s := su.open(t)
	sorted := loadRawKeys(t, s)
	type q struct {
		start, end []byte
		limit      int
	}
	b := func(s string) []byte { return []byte(s) }
	queries := []q{
		{nil, nil, 0},
		{nil, nil, -1},
		{nil, nil, 1},
		{nil, nil, 3},
		{nil, nil, 1000},
		{b("a"), b("b"), 0},
		{b("a\x00"), b("b"), 0},
		{b("a\x00\x00\x00"), b("aa\x00"), 0}, // bounds that are not keys
		{nil, b("a\x01"), 0},
		{b("b"), nil, 0},
		{b("b"), nil, 2},
		{b("\x00"), b("\x00\x01"), 0},
		{b("\xff"), nil, 0},
		{b("\xff\xff\xff\xff"), nil, 0}, // past the last key
		{nil, b("\x00"), 0},             // before the first key
		{b("m"), b("m"), 0},             // empty range
		{b("m"), b("a"), 0},             // inverted range
		{b("a"), b("b\xff"), 4},
		{b("a"), kv.PrefixEnd(b("a")), 0},
		{b("b\xff"), kv.PrefixEnd(b("b\xff")), 0},
	}
	check := func(tx kv.Tx) error {
		for _, qq := range queries {
			for _, reverse := range []bool{false, true} {
				got, err := scanTx(tx, qq.start, qq.end, qq.limit, reverse)
				if err != nil {
					return err
				}
				if got == nil {
					got = []pair{}
				}
				want := expectRange(sorted, qq.start, qq.end, qq.limit, reverse)
				if err := samePairs(got, want); err != nil {
					return fmt.Errorf("Scan(%q, %q, limit %d, reverse %v): %v", qq.start, qq.end, qq.limit, reverse, err)
				}
			}
		}
		// Early stop: fn returning false ends the scan, which is not an error.
		for _, reverse := range []bool{false, true} {
			calls := 0
			err := tx.Scan(nil, nil, 0, reverse, func(k, v []byte) bool {
				calls++
				return calls < 3
			})
			if err != nil {
				return fmt.Errorf("stopped Scan: %v", err)
			}
			if calls != 3 {
				return fmt.Errorf("tx.Scan called fn %d times after it returned false at the 3rd, reverse %v", calls, reverse)
			}
		}
		return nil
	}
	view(t, s, check)
	update(t, s, check) // the read-write path scans the same way
}

func testScanRandomRanges(t *testing.T, su *suite) {
	s := su.open(t)
	sorted := loadRawKeys(t, s)
	r := rand.New(rand.NewPCG(11, 13))
	alphabet := []byte{0x00, 0x01, 'a', 'b', 0xfe, 0xff}
	rnd := func() []byte {
		if r.IntN(8) == 0 {
			return nil
		}
		k := make([]byte, r.IntN(4))
		for i := range k {
			k[i] = alphabet[r.IntN(len(alphabet))]
		}
		return k
	}
	view(t, s, func(tx kv.Tx) error {
		for i := 0; i < 1000; i++ {
			start, end, limit, reverse := rnd(), rnd(), r.IntN(5), r.IntN(2) == 0
			got, err := scanTx(tx, start, end, limit, reverse)
			if err != nil {
				return err
			}
			if got == nil {
				got = []pair{}
			}
			if err := samePairs(got, expectRange(sorted, start, end, limit, reverse)); err != nil {
				return fmt.Errorf("Scan(%q, %q, limit %d, reverse %v): %v", start, end, limit, reverse, err)
			}
		}
		return nil
	})
}

// testScanManyKeys scans enough data to span many pages or batches.
func testScanManyKeys(t *testing.T, su *suite) {
	s := su.open(t)
	const n = 3000
	var sorted []pair
	for i := 0; i < n; i++ {
		sorted = append(sorted, pair{string(kv.Key("many", fmt.Sprintf("%05d", i*2))), string(randomBytes(uint64(i), 100+i%200))})
	}
	for i := 0; i < n; i += 500 {
		put(t, s, sorted[i:i+500]...)
	}
	r := rand.New(rand.NewPCG(17, 19))
	bound := func() []byte {
		switch r.IntN(10) {
		case 0:
			return nil
		case 1:
			return []byte(sorted[r.IntN(n)].k) // exactly a key
		}
		return kv.Key("many", fmt.Sprintf("%05d", r.IntN(2*n+2))) // often between keys
	}
	check := func(tx kv.Tx) error {
		for i := 0; i < 200; i++ {
			start, end, reverse := bound(), bound(), r.IntN(2) == 0
			limit := 0
			if r.IntN(2) == 0 {
				limit = 1 + r.IntN(300)
			}
			got, err := scanTx(tx, start, end, limit, reverse)
			if err != nil {
				return err
			}
			if got == nil {
				got = []pair{}
			}
			if err := samePairs(got, expectRange(sorted, start, end, limit, reverse)); err != nil {
				return fmt.Errorf("Scan(%q, %q, limit %d, reverse %v): %v", start, end, limit, reverse, err)
			}
		}
		return nil
	}
	view(t, s, check)
	update(t, s, check)
}

func testScanTupleKeys(t *testing.T, su *suite) {
	s := su.open(t)
	containers := []string{"b", "c", "c\x00", "c\x00x", "c\x01", "c ", "cx", "c\xff", "d"}
	names := []string{"", "a", "a/b", "a/c", "a\x00", "a\x00b", "a0", "dir/x", "dir/y", "dir0", "\xff", "z"}
	var pairs []pair
	for _, c := range containers {
		for _, n := range names {
			pairs = append(pairs, pair{string(kv.Key("blob", "acct", c, n)), c + "|" + n})
		}
		pairs = append(pairs, pair{string(kv.Key("container", "acct", c)), c})
	}
	put(t, s, pairs...)
	// Neighbouring first components must not leak in either.
	put(t, s, pair{string(kv.Key("blob", "acct\x00")), "x"}, pair{string(kv.Key("blob", "acc")), "x"}, pair{string(kv.Key("blobs")), "x"})

	// listNames scans the blobs of container c under prefix (from start when
	// not nil) and returns their names, failing on any foreign key.
	listNames := func(c string, prefix, start []byte, reverse bool) []string {
		t.Helper()
		if start == nil {
			start = prefix
		}
		var out []string
		for _, p := range scan(t, s, start, kv.PrefixEnd(prefix), 0, reverse) {
			parts, ok := kv.Split([]byte(p.k))
			if !ok || len(parts) != 4 || !slices.Equal(parts[:3], []string{"blob", "acct", c}) {
				t.Fatalf("scan of container %q returned foreign key %q", c, p.k)
			}
			out = append(out, parts[3])
		}
		return out
	}
	sortedNames := slices.Clone(names)
	slices.Sort(sortedNames)
	for _, c := range containers {
		prefix := kv.Key("blob", "acct", c)
		got := listNames(c, prefix, nil, false)
		if !slices.Equal(got, sortedNames) {
			t.Errorf("container %q: names %q, want %q", c, got, sortedNames)
		}
		rev := listNames(c, prefix, nil, true)
		want := slices.Clone(sortedNames)
		slices.Reverse(want)
		if !slices.Equal(rev, want) {
			t.Errorf("container %q reverse: names %q, want %q", c, rev, want)
		}
	}
	// Partial last component: List Blobs with prefix=.
	for _, p := range []string{"", "a", "a/", "a\x00", "dir", "dir/", "q"} {
		prefix := kv.AppendPartial(kv.Key("blob", "acct", "c"), p)
		var want []string
		for _, n := range sortedNames {
			if len(n) >= len(p) && n[:len(p)] == p {
				want = append(want, n)
			}
		}
		if got := listNames("c", prefix, nil, false); !slices.Equal(got, want) {
			t.Errorf("prefix %q: names %q, want %q", p, got, want)
		}
	}
	// Continuing after a marker: the smallest key after K is K+0x00.
	prefix := kv.Key("blob", "acct", "c")
	marker := append(kv.Key("blob", "acct", "c", "a/b"), 0)
	got := listNames("c", prefix, marker, false)
	want := sortedNames[slices.Index(sortedNames, "a/b")+1:]
	if !slices.Equal(got, want) {
		t.Errorf("after marker a/b: names %q, want %q", got, want)
	}
	// The container records are a separate range.
	if got := scanPrefix(t, s, kv.Key("container", "acct")); len(got) != len(containers) {
		t.Errorf("container records: got %d, want %d", len(got), len(containers))
	}
}

func testScanWriteInCallback(t *testing.T, su *suite) {
	for _, reverse := range []bool{false, true} {
		t.Run(fmt.Sprintf("reverse=%v", reverse), func(t *testing.T) {
			s := su.open(t)
			var orig []pair
			for i := 0; i < 600; i++ { // enough to span pages
				orig = append(orig, pair{string(kv.Key("sm", fmt.Sprintf("k%03d", i))), strings.Repeat("v", 100)})
			}
			put(t, s, orig...)
			put(t, s, pair{string(kv.Key("sm-after")), "outside"})
			want := slices.Clone(orig)
			if reverse {
				slices.Reverse(want)
			}
			prefix := kv.Key("sm")
			update(t, s, func(tx kv.Tx) error {
				var visited []pair
				var werr error
				err := tx.Scan(prefix, kv.PrefixEnd(prefix), 0, reverse, func(k, v []byte) bool {
					visited = append(visited, pair{string(k), string(v)})
					i := len(visited) - 1
					switch i % 3 {
					case 0:
						werr = tx.Put(k, []byte("updated"))
					case 1:
						werr = tx.Delete(k)
					case 2:
						werr = tx.Put(kv.Key("sm-out", strconv.Itoa(i)), []byte("x")) // outside the range
					}
					return werr == nil
				})
				if err != nil {
					return err
				}
				if werr != nil {
					return werr
				}
				return samePairs(visited, want)
			})
			var wantAfter []pair
			for i, p := range want {
				switch i % 3 {
				case 0:
					wantAfter = append(wantAfter, pair{p.k, "updated"})
				case 2:
					wantAfter = append(wantAfter, p)
				}
			}
			sort.Slice(wantAfter, func(i, j int) bool { return wantAfter[i].k < wantAfter[j].k })
			if err := samePairs(scanPrefix(t, s, prefix), wantAfter); err != nil {
				t.Fatal(err)
			}
			if got := scanPrefix(t, s, kv.Key("sm-out")); len(got) != len(orig)/3 {
				t.Fatalf("keys written outside the range: %d, want %d", len(got), len(orig)/3)
			}
			// In a View the writes fail but the scan goes on.
			n := 0
			view(t, s, func(tx kv.Tx) error {
				return tx.Scan(prefix, kv.PrefixEnd(prefix), 0, reverse, func(k, v []byte) bool {
					n++
					return errors.Is(tx.Put(bytes.Clone(k), nil), kv.ErrReadOnly)
				})
			})
			if n != len(wantAfter) {
				t.Fatalf("View scan with rejected writes visited %d keys, want %d", n, len(wantAfter))
			}
		})
	}
}

func testReadYourWrites(t *testing.T, su *suite) {
	s := su.open(t)
	k := func(n string) []byte { return kv.Key("ryw", n) }
	ks := func(n string) string { return string(k(n)) }
	put(t, s, pair{ks("a"), "1"}, pair{ks("b"), "2"}, pair{ks("c"), "3"})
	prefix := kv.Key("ryw")
	update(t, s, func(tx kv.Tx) error {
		steps := []func() error{
			func() error { return tx.Put(k("a"), []byte("1x")) },
			func() error { return wantGet(tx, k("a"), "1x") },
			func() error { return tx.Delete(k("b")) },
			func() error { return wantMissing(tx, k("b")) },
			func() error { return tx.Put(k("d"), []byte("4")) },
			func() error { return wantGet(tx, k("d"), "4") },
			func() error {
				got, err := scanTx(tx, prefix, kv.PrefixEnd(prefix), 0, false)
				if err != nil {
					return err
				}
				return samePairs(got, []pair{{ks("a"), "1x"}, {ks("c"), "3"}, {ks("d"), "4"}})
			},
			func() error {
				got, err := scanTx(tx, prefix, kv.PrefixEnd(prefix), 2, true)
				if err != nil {
					return err
				}
				return samePairs(got, []pair{{ks("d"), "4"}, {ks("c"), "3"}})
			},
			func() error { return tx.Delete(k("d")) },
			func() error { return tx.Put(k("b"), []byte("2y")) },
			func() error { return wantMissing(tx, k("d")) },
			func() error {
				got, err := scanTx(tx, prefix, kv.PrefixEnd(prefix), 0, true)
				if err != nil {
					return err
				}
				return samePairs(got, []pair{{ks("c"), "3"}, {ks("b"), "2y"}, {ks("a"), "1x"}})
			},
		}
		for i, step := range steps {
			if err := step(); err != nil {
				return fmt.Errorf("step %d: %w", i, err)
			}
		}
		return nil
	})
	if err := samePairs(scanPrefix(t, s, prefix), []pair{{ks("a"), "1x"}, {ks("b"), "2y"}, {ks("c"), "3"}}); err != nil {
		t.Fatal(err)
	}
}

func testUncommittedInvisible(t *testing.T, su *suite) {
	s := su.open(t)
	k := kv.Key("unc", "k")
	put(t, s, pair{string(kv.Key("unc", "old")), "x"})
	inFn := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	errc := make(chan error, 1)
	go func() {
		errc <- s.Update(bg, func(tx kv.Tx) error {
			if err := tx.Put(k, []byte("new")); err != nil {
				return err
			}
			if err := tx.Delete(kv.Key("unc", "old")); err != nil {
				return err
			}
			// Hold the transaction open, the first time only (fn may be re-run).
			once.Do(func() {
				close(inFn)
				select {
				case <-release:
				case <-time.After(waitTimeout):
				}
			})
			return nil
		})
	}()
	select {
	case <-inFn:
	case err := <-errc:
		t.Fatalf("Update returned early: %v", err)
	case <-time.After(waitTimeout):
		t.Fatal("Update fn did not start")
	}
	err := s.View(bg, func(tx kv.Tx) error {
		if err := wantMissing(tx, k); err != nil {
			return fmt.Errorf("uncommitted write visible: %w", err)
		}
		return wantGet(tx, kv.Key("unc", "old"), "x")
	})
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Update did not finish")
	}
	view(t, s, func(tx kv.Tx) error {
		if err := wantMissing(tx, kv.Key("unc", "old")); err != nil {
			return err
		}
		return wantGet(tx, k, "new")
	})
}

func testErrorCommitsNothing(t *testing.T, su *suite) {
	s := su.open(t)
	k := func(n string) []byte { return kv.Key("err", n) }
	put(t, s, pair{string(k("keep")), "1"}, pair{string(k("gone")), "1"})
	before := scanPrefix(t, s, kv.Key("err"))

	derr := &domainError{412}
	err := s.Update(bg, func(tx kv.Tx) error {
		for _, step := range []func() error{
			func() error { return tx.Put(k("new1"), []byte("x")) },
			func() error { return tx.Put(k("keep"), []byte("changed")) },
			func() error { return tx.Delete(k("gone")) },
			func() error { return tx.Put(k("new2"), bytes.Repeat([]byte("y"), 100<<10)) },
			func() error { return tx.Put(k("new1"), []byte("again")) },
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return derr
	})
	if err != error(derr) {
		t.Fatalf("Update returned %v (%T), want the fn's error unchanged", err, err)
	}
	if err := samePairs(scanPrefix(t, s, kv.Key("err")), before); err != nil {
		t.Fatalf("failed Update left writes behind: %v", err)
	}

	sentinel := errors.New("kvtest: sentinel")
	err = s.Update(bg, func(tx kv.Tx) error {
		if err := tx.Put(k("new3"), []byte("x")); err != nil {
			return err
		}
		return fmt.Errorf("wrapped: %w", sentinel)
	})
	if !errors.Is(err, sentinel) || err.Error() != "wrapped: kvtest: sentinel" {
		t.Fatalf("Update returned %v, want the wrapped sentinel unchanged", err)
	}
	var de *domainError
	err = s.Update(bg, func(tx kv.Tx) error { return fmt.Errorf("ctx: %w", &domainError{409}) })
	if !errors.As(err, &de) || de.code != 409 {
		t.Fatalf("errors.As on Update error %v failed", err)
	}
	if err := samePairs(scanPrefix(t, s, kv.Key("err")), before); err != nil {
		t.Fatalf("failed Update left writes behind: %v", err)
	}
	// View returns fn's error unchanged too.
	if err := s.View(bg, func(tx kv.Tx) error { return derr }); err != error(derr) {
		t.Fatalf("View returned %v, want the fn's error unchanged", err)
	}
	// The store still works.
	put(t, s, pair{string(k("after")), "ok"})
	view(t, s, func(tx kv.Tx) error { return wantGet(tx, k("after"), "ok") })
}

func getInt(tx kv.Tx, key []byte) (int, error) {
	v, err := tx.Get(key)
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(v))
}

func putInt(tx kv.Tx, key []byte, n int) error {
	return tx.Put(key, []byte(strconv.Itoa(n)))
}

func increment(tx kv.Tx, key []byte, by int) error {
	n, err := getInt(tx, key)
	if err != nil {
		return err
	}
	return putInt(tx, key, n+by)
}

func testConcurrentFailures(t *testing.T, su *suite) {
	s := su.open(t)
	const workers, per = 16, 25
	counter := kv.Key("cf", "counter")
	var wg sync.WaitGroup
	var successes atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				id := w*per + i
				fail := id%3 == 0
				err := s.Update(bg, func(tx kv.Tx) error {
					if err := tx.Put(kv.Key("cf", "item", fmt.Sprintf("%04d", id)), []byte(strconv.Itoa(id))); err != nil {
						return err
					}
					if err := increment(tx, counter, 1); err != nil {
						return err
					}
					if fail {
						if err := tx.Put(kv.Key("cf", "junk", strconv.Itoa(id)), []byte("x")); err != nil {
							return err
						}
						if err := tx.Delete(counter); err != nil {
							return err
						}
						return &domainError{id}
					}
					return nil
				})
				var de *domainError
				switch {
				case fail && (!errors.As(err, &de) || de.code != id):
					t.Errorf("failing Update %d returned %v", id, err)
				case !fail && err != nil:
					t.Errorf("Update %d: %v", id, err)
				case !fail:
					successes.Add(1)
				}
			}
		}()
	}
	wait(t, &wg)
	view(t, s, func(tx kv.Tx) error {
		if n, err := getInt(tx, counter); err != nil || n != int(successes.Load()) {
			return fmt.Errorf("counter = %d, %v; want %d", n, err, successes.Load())
		}
		items, err := scanTx(tx, kv.Key("cf", "item"), kv.PrefixEnd(kv.Key("cf", "item")), 0, false)
		if err != nil {
			return err
		}
		var want []pair
		for id := 0; id < workers*per; id++ {
			if id%3 != 0 {
				want = append(want, pair{string(kv.Key("cf", "item", fmt.Sprintf("%04d", id))), strconv.Itoa(id)})
			}
		}
		if err := samePairs(items, want); err != nil {
			return err
		}
		junk, err := scanTx(tx, kv.Key("cf", "junk"), kv.PrefixEnd(kv.Key("cf", "junk")), 0, false)
		if err != nil {
			return err
		}
		if len(junk) != 0 {
			return fmt.Errorf("failed Updates left %d keys behind", len(junk))
		}
		return nil
	})
}

func testSnapshotIsolation(t *testing.T, su *suite) {
	s := su.open(t)
	const counters, initial = 8, 100
	const total = counters * initial
	key := func(i int) []byte { return kv.Key("si", strconv.Itoa(i)) }
	prefix := kv.Key("si")
	update(t, s, func(tx kv.Tx) error {
		for i := 0; i < counters; i++ {
			if err := putInt(tx, key(i), initial); err != nil {
				return err
			}
		}
		return nil
	})

	var writers, readers sync.WaitGroup
	stop := make(chan struct{})
	var views atomic.Int64
	for w := 0; w < 4; w++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			r := rand.New(rand.NewPCG(uint64(w), 99))
			for n := 0; n < 150; n++ {
				from, to, amount := r.IntN(counters), r.IntN(counters), 1+r.IntN(5)
				err := s.Update(bg, func(tx kv.Tx) error {
					a, err := getInt(tx, key(from))
					if err != nil {
						return err
					}
					if a < amount || from == to {
						return nil
					}
					if err := putInt(tx, key(from), a-amount); err != nil {
						return err
					}
					// Write the destination by delete+put to exercise both.
					b, err := getInt(tx, key(to))
					if err != nil {
						return err
					}
					if err := tx.Delete(key(to)); err != nil {
						return err
					}
					return putInt(tx, key(to), b+amount)
				})
				if err != nil {
					t.Errorf("transfer: %v", err)
					return
				}
			}
		}()
	}
	for rd := 0; rd < 4; rd++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				err := s.View(bg, func(tx kv.Tx) error {
					got, err := scanTx(tx, prefix, kv.PrefixEnd(prefix), 0, false)
					if err != nil {
						return err
					}
					if len(got) != counters {
						return fmt.Errorf("snapshot has %d counters, want %d: %v", len(got), counters, got)
					}
					sum := 0
					for _, p := range got {
						n, _ := strconv.Atoi(p.v)
						sum += n
					}
					if sum != total {
						return fmt.Errorf("snapshot sum %d, want %d: %v", sum, total, got)
					}
					time.Sleep(time.Millisecond) // let writers commit meanwhile
					// Reads later in the same View see the same snapshot.
					for i, p := range got {
						if err := wantGet(tx, []byte(p.k), p.v); err != nil {
							return fmt.Errorf("non-repeatable read of counter %d: %w", i, err)
						}
					}
					again, err := scanTx(tx, prefix, kv.PrefixEnd(prefix), 0, true)
					if err != nil {
						return err
					}
					slices.Reverse(again)
					if err := samePairs(again, got); err != nil {
						return fmt.Errorf("second scan differs: %w", err)
					}
					return nil
				})
				views.Add(1)
				if err != nil {
					t.Error(err)
					return
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	wait(t, &writers)
	close(stop)
	wait(t, &readers)
	if views.Load() == 0 {
		t.Fatal("no View ran")
	}
	view(t, s, func(tx kv.Tx) error {
		sum := 0
		for i := 0; i < counters; i++ {
			n, err := getInt(tx, key(i))
			if err != nil {
				return err
			}
			sum += n
		}
		if sum != total {
			return fmt.Errorf("final sum %d, want %d", sum, total)
		}
		return nil
	})
}

func testCounterNoLostUpdate(t *testing.T, su *suite) {
	s := su.open(t)
	const goroutines, per = 16, 200
	k := kv.Key("counter")
	var calls atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				err := s.Update(bg, func(tx kv.Tx) error {
					calls.Add(1)
					return increment(tx, k, 1)
				})
				if err != nil {
					t.Errorf("increment: %v", err)
					return
				}
			}
		}()
	}
	wait(t, &wg)
	view(t, s, func(tx kv.Tx) error { return wantGet(tx, k, strconv.Itoa(goroutines*per)) })
	if c := calls.Load(); c < goroutines*per {
		t.Fatalf("fn ran %d times for %d successful Updates", c, goroutines*per)
	} else if c > goroutines*per {
		t.Logf("fn ran %d times for %d Updates (retries)", c, goroutines*per)
	}
}

var errRefused = errors.New("kvtest: refused, would break the invariant")

// testWriteSkew: two doctors on call; each may go off call only if the other
// is still on call. Under snapshot isolation without conflict detection both
// can succeed and nobody is left on call.
func testWriteSkew(t *testing.T, su *suite) {
	writeSkew(t, su.open(t), "skew", 100, false)
}

// writeSkew runs rounds of two transactions that each read x and y and
// zero their own key only if x+y >= 2: serially one succeeds and one is
// refused. With prefetch the reads go through kv.Prefetch first.
func writeSkew(t *testing.T, s kv.Store, name string, rounds int, prefetch bool) {
	x, y := kv.Key(name, "x"), kv.Key(name, "y")
	offCall := func(self []byte) func(kv.Tx) error {
		return func(tx kv.Tx) error {
			if prefetch {
				if err := kv.Prefetch(tx, x, y); err != nil {
					return err
				}
			}
			a, err := getInt(tx, x)
			if err != nil {
				return err
			}
			b, err := getInt(tx, y)
			if err != nil {
				return err
			}
			if a+b < 2 {
				return errRefused
			}
			return putInt(tx, self, 0)
		}
	}
	for round := 0; round < rounds; round++ {
		put(t, s, pair{string(x), "1"}, pair{string(y), "1"})
		start := make(chan struct{})
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, self := range [][]byte{x, y} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = s.Update(bg, offCall(self))
			}()
		}
		close(start)
		wait(t, &wg)
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, errRefused):
			default:
				t.Fatalf("round %d: Update: %v", round, err)
			}
		}
		var a, b int
		view(t, s, func(tx kv.Tx) error {
			var err error
			if a, err = getInt(tx, x); err != nil {
				return err
			}
			b, err = getInt(tx, y)
			return err
		})
		if a+b != 1 || ok != 1 {
			t.Fatalf("round %d: write skew: x=%d y=%d, %d txs committed (errors %v)", round, a, b, ok, errs)
		}
	}
}

// testPrefetch: kv.Prefetch is only a hint. Gets after it return what
// they would without it: present, empty and absent keys, keys named
// twice, keys the transaction wrote before or after the prefetch, in
// Update and View, at the transaction's snapshot.
func testPrefetch(t *testing.T, su *suite) {
	s := su.open(t)
	a, b, c, d := kv.Key("pf", "a"), kv.Key("pf", "b"), kv.Key("pf", "c"), kv.Key("pf", "d")
	put(t, s, pair{string(a), "1"}, pair{string(b), ""}, pair{string(d), "4"})
	update(t, s, func(tx kv.Tx) error {
		if err := tx.Put(d, []byte("written")); err != nil {
			return err
		}
		if err := kv.Prefetch(tx, a, b, c, a, d); err != nil {
			return err
		}
		for _, err := range []error{wantGet(tx, a, "1"), wantGet(tx, b, ""), wantMissing(tx, c), wantGet(tx, d, "written")} {
			if err != nil {
				return err
			}
		}
		if err := tx.Put(c, []byte("3")); err != nil {
			return err
		}
		if err := tx.Delete(a); err != nil {
			return err
		}
		if err := kv.Prefetch(tx, a, c); err != nil {
			return err
		}
		if err := wantMissing(tx, a); err != nil {
			return err
		}
		return wantGet(tx, c, "3")
	})
	view(t, s, func(tx kv.Tx) error {
		if err := kv.Prefetch(tx, a, b, c); err != nil {
			return err
		}
		// A write committed after the transaction's first read is not
		// seen: its snapshot holds for the prefetched keys. (Before the
		// first read a backend may take the snapshot later: PostgreSQL
		// reads prefetched keys with the first read that needs the
		// database.)
		if err := wantGet(tx, b, ""); err != nil {
			return err
		}
		update(t, s, func(tx kv.Tx) error { return tx.Put(c, []byte("later")) })
		for _, err := range []error{wantMissing(tx, a), wantGet(tx, b, ""), wantGet(tx, c, "3")} {
			if err != nil {
				return err
			}
		}
		return kv.Prefetch(tx) // no keys: nothing to do
	})
	view(t, s, func(tx kv.Tx) error { return wantGet(tx, c, "later") })
}

// testPrefetchRanges: Scans of ranges named by kv.PrefetchRanges return
// exactly what they return without it, whatever the prefetch's limit and
// the scan's, with writes buffered before and after the prefetch (also
// from inside another scan's callback), and at the transaction's snapshot.
func testPrefetchRanges(t *testing.T, su *suite) {
	s := su.open(t)
	sizes := []int{0, 1, 3, 15, 16, 17, 40}
	var committed []pair
	var ranges []kv.Range
	for i, n := range sizes {
		for j := 0; j < n; j++ {
			committed = append(committed, pair{string(kv.Key("pr", strconv.Itoa(i), fmt.Sprintf("%03d", j*2))), fmt.Sprint(i, j)})
		}
		ranges = append(ranges, kv.Range{Start: kv.Key("pr", strconv.Itoa(i)), End: kv.PrefixEnd(kv.Key("pr", strconv.Itoa(i)))})
	}
	put(t, s, committed...)
	r := rand.New(rand.NewPCG(23, 29))
	for round := 0; round < 60; round++ {
		model := map[string]string{}
		for _, p := range committed {
			model[p.k] = p.v
		}
		// write buffers a random put or delete in a random range, in tx
		// and in the model.
		write := func(tx kv.Tx) error {
			k := string(kv.Key("pr", strconv.Itoa(r.IntN(len(sizes))), fmt.Sprintf("%03d", r.IntN(90))))
			if r.IntN(3) == 0 {
				delete(model, k)
				return tx.Delete([]byte(k))
			}
			v := fmt.Sprint("w", round)
			model[k] = v
			return tx.Put([]byte(k), []byte(v))
		}
		expect := func(rg kv.Range, limit int) []pair {
			var all []pair
			for k, v := range model {
				all = append(all, pair{k, v})
			}
			slices.SortFunc(all, func(a, b pair) int { return strings.Compare(a.k, b.k) })
			return expectRange(all, rg.Start, rg.End, limit, false)
		}
		pl := []int{0, 1, 2, 16, 20}[r.IntN(5)]
		err := s.Update(bg, func(tx kv.Tx) error {
			for i := r.IntN(4); i > 0; i-- {
				if err := write(tx); err != nil {
					return err
				}
			}
			// Name every range (one twice, and one unbounded, which is
			// ignored), then scan them in a random order.
			named := append(slices.Clone(ranges), ranges[0], kv.Range{Start: kv.Key("pr")})
			if err := kv.PrefetchRanges(tx, pl, named...); err != nil {
				return err
			}
			// Keys named with the ranges (read together on PostgreSQL):
			// present, absent, written in this transaction; few or many
			// (PostgreSQL reads up to 16 one by one, more as a set).
			var keys [][]byte
			for j := []int{1, 4, 24, 40}[r.IntN(4)]; j > 0; j-- {
				keys = append(keys, kv.Key("pr", strconv.Itoa(r.IntN(len(sizes))), fmt.Sprintf("%03d", r.IntN(90))))
			}
			if err := kv.Prefetch(tx, keys...); err != nil {
				return err
			}
			// And keys not named, inside the ranges (PostgreSQL answers
			// them from a range's first page where it covers them).
			for j := 0; j < 4; j++ {
				keys = append(keys, kv.Key("pr", strconv.Itoa(r.IntN(len(sizes))), fmt.Sprintf("%03d", r.IntN(90))))
			}
			for _, k := range keys {
				want, ok := model[string(k)]
				var err error
				if ok {
					err = wantGet(tx, k, want)
				} else {
					err = wantMissing(tx, k)
				}
				if err != nil {
					return fmt.Errorf("round %d: %v", round, err)
				}
			}
			for _, i := range r.Perm(len(ranges)) {
				for j := r.IntN(3); j > 0; j-- {
					if err := write(tx); err != nil {
						return err
					}
				}
				limit := []int{pl, pl, 0, 1, 5, 17, 50}[r.IntN(7)]
				if r.IntN(4) == 0 {
					// Write into another range from the callback: a
					// later scan of that range must see it.
					var got []pair
					var werr error
					want := expect(ranges[i], limit)
					other := (i + 1) % len(ranges)
					err := tx.Scan(ranges[i].Start, ranges[i].End, limit, false, func(k, v []byte) bool {
						if got == nil {
							k := string(kv.Key("pr", strconv.Itoa(other), "cb"))
							model[k] = "cb"
							werr = tx.Put([]byte(k), []byte("cb"))
						}
						got = append(got, pair{string(k), string(v)})
						return true
					})
					if err != nil {
						return err
					}
					if werr != nil {
						return werr
					}
					if err := samePairs(got, want); err != nil {
						return fmt.Errorf("round %d, range %d, prefetch limit %d, limit %d: %v", round, i, pl, limit, err)
					}
					continue
				}
				got, err := scanTx(tx, ranges[i].Start, ranges[i].End, limit, false)
				if err != nil {
					return err
				}
				if err := samePairs(got, expect(ranges[i], limit)); err != nil {
					return fmt.Errorf("round %d, range %d, prefetch limit %d, limit %d: %v", round, i, pl, limit, err)
				}
			}
			return &domainError{1} // commit nothing: every round starts from committed
		})
		var de *domainError
		if !errors.As(err, &de) {
			t.Fatal(err)
		}
	}
	// Snapshot: a write committed after the transaction's first read is
	// not seen in a prefetched range (see testPrefetch).
	view(t, s, func(tx kv.Tx) error {
		if err := kv.PrefetchRanges(tx, 16, ranges...); err != nil {
			return err
		}
		if _, err := scanTx(tx, ranges[1].Start, ranges[1].End, 16, false); err != nil {
			return err
		}
		update(t, s, func(tx kv.Tx) error { return tx.Put(kv.Key("pr", "0", "new"), []byte("x")) })
		got, err := scanTx(tx, ranges[0].Start, ranges[0].End, 16, false)
		if err != nil {
			return err
		}
		return samePairs(got, expectRange(committed, ranges[0].Start, ranges[0].End, 16, false))
	})
}

// testWriteSkewPrefetch is testWriteSkew with both keys read through one
// Prefetch: a prefetched read must conflict with a concurrent write of
// the key as a Get does.
func testWriteSkewPrefetch(t *testing.T, su *suite) {
	writeSkew(t, su.open(t), "skewpf", 50, true)
}

// testWriteSkewScan: n goroutines each set their own key to 0 only if the
// sum over a range scan is at least 2. Serially exactly n-1 succeed and the
// sum ends at 1; a range read must conflict with writes into the range.
func testWriteSkewScan(t *testing.T, su *suite) {
	s := su.open(t)
	const n = 8
	prefix := kv.Key("skewscan")
	key := func(i int) []byte { return kv.Key("skewscan", strconv.Itoa(i)) }
	for round := 0; round < 20; round++ {
		update(t, s, func(tx kv.Tx) error {
			for i := 0; i < n; i++ {
				if err := putInt(tx, key(i), 1); err != nil {
					return err
				}
			}
			return nil
		})
		start := make(chan struct{})
		var wg sync.WaitGroup
		var ok atomic.Int64
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				err := s.Update(bg, func(tx kv.Tx) error {
					sum := 0
					var perr error
					err := tx.Scan(prefix, kv.PrefixEnd(prefix), 0, false, func(k, v []byte) bool {
						m, err := strconv.Atoi(string(v))
						sum += m
						perr = err
						return err == nil
					})
					if err != nil {
						return err
					}
					if perr != nil {
						return perr
					}
					if sum < 2 {
						return errRefused
					}
					return putInt(tx, key(i), 0)
				})
				switch {
				case err == nil:
					ok.Add(1)
				case !errors.Is(err, errRefused):
					t.Errorf("Update: %v", err)
				}
			}()
		}
		close(start)
		wait(t, &wg)
		sum := 0
		for _, p := range scanPrefix(t, s, prefix) {
			m, _ := strconv.Atoi(p.v)
			sum += m
		}
		if sum != 1 || ok.Load() != n-1 {
			t.Fatalf("round %d: sum %d after %d commits, want 1 after %d", round, sum, ok.Load(), n-1)
		}
	}
}

func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	var s [32]byte
	s[0] = byte(seed)
	s[1] = byte(seed >> 8)
	rand.NewChaCha8(s).Read(b)
	return b
}

func testLargeValues(t *testing.T, su *suite) {
	s := su.open(t)
	sizes := []int{1 << 20, 1<<20 - 1, 256 << 10, 64<<10 + 1, 4096, 4095, 1}
	var want []pair
	for i, n := range sizes {
		want = append(want, pair{string(kv.Key("large", fmt.Sprintf("%02d", i))), string(randomBytes(uint64(i), n))})
	}
	update(t, s, func(tx kv.Tx) error {
		for _, p := range want {
			if err := tx.Put([]byte(p.k), []byte(p.v)); err != nil {
				return fmt.Errorf("tx.Put %d bytes: %w", len(p.v), err)
			}
		}
		for _, p := range want {
			if err := wantGet(tx, []byte(p.k), p.v); err != nil {
				return errors.New("read-your-write of a large value differs")
			}
		}
		return nil
	})
	verify := func(s kv.Store) {
		t.Helper()
		if err := samePairs(scanPrefix(t, s, kv.Key("large")), want); err != nil {
			t.Fatal(err)
		}
		view(t, s, func(tx kv.Tx) error {
			for _, p := range want {
				if err := wantGet(tx, []byte(p.k), p.v); err != nil {
					return errors.New("large value differs")
				}
			}
			return nil
		})
	}
	verify(s)

	// Several 1 MiB values in one transaction, and shrinking one.
	update(t, s, func(tx kv.Tx) error {
		for i := 0; i < 8; i++ {
			if err := tx.Put(kv.Key("large", fmt.Sprintf("m%d", i)), randomBytes(uint64(100+i), 1<<20)); err != nil {
				return err
			}
		}
		return tx.Put([]byte(want[0].k), []byte("small now"))
	})
	want[0].v = "small now"
	for i := 0; i < 8; i++ {
		want = append(want, pair{string(kv.Key("large", fmt.Sprintf("m%d", i))), string(randomBytes(uint64(100+i), 1<<20))})
	}
	sort.Slice(want, func(i, j int) bool { return want[i].k < want[j].k })
	verify(s)

	// A failed Update with a large value leaves nothing.
	derr := &domainError{1}
	if err := s.Update(bg, func(tx kv.Tx) error {
		if err := tx.Put(kv.Key("large", "zz"), randomBytes(9, 1<<20)); err != nil {
			return err
		}
		return derr
	}); err != error(derr) {
		t.Fatalf("Update = %v, want the fn's error", err)
	}
	verify(s)

	if su.reopen != nil {
		s = su.reopen(t, s)
		verify(s)
	}
}

func testDurability(t *testing.T, su *suite) {
	if su.reopen == nil {
		t.Skip("no reopen")
	}
	s := su.open(t)
	model := map[string]string{}
	r := rand.New(rand.NewPCG(5, 8))
	apply := func(rounds int) {
		for round := 0; round < rounds; round++ {
			type op struct {
				k, v string
				del  bool
			}
			var ops []op
			for i := 0; i < 10; i++ {
				k := string(kv.Key("dur", fmt.Sprintf("%03d", r.IntN(300))))
				switch r.IntN(4) {
				case 0:
					ops = append(ops, op{k: k, del: true})
				case 1:
					ops = append(ops, op{k: k, v: ""})
				default:
					ops = append(ops, op{k: k, v: string(randomBytes(r.Uint64(), r.IntN(3000)))})
				}
			}
			update(t, s, func(tx kv.Tx) error {
				for _, o := range ops {
					var err error
					if o.del {
						err = tx.Delete([]byte(o.k))
					} else {
						err = tx.Put([]byte(o.k), []byte(o.v))
					}
					if err != nil {
						return err
					}
				}
				return nil
			})
			for _, o := range ops {
				if o.del {
					delete(model, o.k)
				} else {
					model[o.k] = o.v
				}
			}
		}
	}
	verify := func() {
		t.Helper()
		var want []pair
		for k, v := range model {
			want = append(want, pair{k, v})
		}
		sort.Slice(want, func(i, j int) bool { return want[i].k < want[j].k })
		if err := samePairs(scanPrefix(t, s, kv.Key("dur")), want); err != nil {
			t.Fatal(err)
		}
	}
	apply(60)
	s = su.reopen(t, s)
	verify()
	apply(30)
	verify()
	s = su.reopen(t, s)
	verify()
	s = su.reopen(t, s) // reopen with no writes in between
	verify()
}

func testDurabilityConcurrent(t *testing.T, su *suite) {
	if su.reopen == nil {
		t.Skip("no reopen")
	}
	s := su.open(t)
	const goroutines, per = 32, 10
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				k := kv.Key("durc", fmt.Sprintf("%02d-%02d", g, i))
				if err := s.Update(bg, func(tx kv.Tx) error { return tx.Put(k, k) }); err != nil {
					t.Errorf("Update: %v", err)
					return
				}
			}
		}()
	}
	wait(t, &wg)
	s = su.reopen(t, s)
	got := scanPrefix(t, s, kv.Key("durc"))
	if len(got) != goroutines*per {
		t.Fatalf("after reopen: %d keys, want %d", len(got), goroutines*per)
	}
	for _, p := range got {
		if p.k != p.v {
			t.Fatalf("after reopen: %q=%q", p.k, p.v)
		}
	}
}

func testContextDone(t *testing.T, su *suite) {
	s := su.open(t)
	k := kv.Key("ctx", "k")
	canceled, cancel := context.WithCancel(bg)
	cancel()
	expired, cancel2 := context.WithDeadline(bg, time.Now().Add(-time.Second))
	defer cancel2()
	for _, ctx := range []context.Context{canceled, expired} {
		called := false
		err := s.Update(ctx, func(tx kv.Tx) error {
			called = true
			return tx.Put(k, []byte("x"))
		})
		if err == nil || !errors.Is(err, ctx.Err()) {
			t.Errorf("Update with done ctx: %v, want %v", err, ctx.Err())
		}
		if called {
			t.Errorf("Update ran fn with a done ctx")
		}
		called = false
		err = s.View(ctx, func(tx kv.Tx) error {
			called = true
			return nil
		})
		if err == nil || !errors.Is(err, ctx.Err()) {
			t.Errorf("View with done ctx: %v, want %v", err, ctx.Err())
		}
		if called {
			t.Errorf("View ran fn with a done ctx")
		}
	}
	view(t, s, func(tx kv.Tx) error { return wantMissing(tx, k) })
}

func testClosed(t *testing.T, su *suite) {
	s := su.open(t)
	k := kv.Key("closed", "k")
	put(t, s, pair{string(k), "v"})
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.View(bg, func(tx kv.Tx) error { return nil }); !errors.Is(err, kv.ErrClosed) {
		t.Errorf("View after Close: %v, want kv.ErrClosed", err)
	}
	called := false
	err := s.Update(bg, func(tx kv.Tx) error { called = true; return nil })
	if !errors.Is(err, kv.ErrClosed) {
		t.Errorf("Update after Close: %v, want kv.ErrClosed", err)
	}
	if called {
		t.Errorf("Update after Close ran fn")
	}
}

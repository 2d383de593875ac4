// Package chunktest is the conformance suite every chunk.Store backend must
// pass: call Run from the backend's tests with a constructor that returns an
// empty store.
package chunktest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
)

// Run runs the suite. newStore must return a new, empty store for each call;
// cleanup is the caller's business (t.Cleanup).
func Run(t *testing.T, newStore func(t *testing.T) chunk.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s chunk.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"Empty", testEmpty},
		{"UniqueIDs", testUniqueIDs},
		{"NotFound", testNotFound},
		{"UncommittedInvisible", testUncommittedInvisible},
		{"Abort", testAbort},
		{"AbortAfterCommit", testAbortAfterCommit},
		{"Remove", testRemove},
		{"WalkSeesUncommitted", testWalkSeesUncommitted},
		{"WalkStopsOnError", testWalkStopsOnError},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ConcurrentReadAt", testConcurrentReadAt},
		{"SweepRemovesDead", testSweepRemovesDead},
		{"SweepGrace", testSweepGrace},
		{"SweepLivenessErrors", testSweepLivenessErrors},
		{"SweepWithKeeps", testSweepWithKeeps},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

// Pattern returns n deterministic pseudo-random bytes derived from seed.
func Pattern(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// Put writes data as one committed chunk, in pieces of step bytes
// (step <= 0: one Write), and returns its id.
func Put(t testing.TB, s chunk.Store, data []byte, step int) string {
	t.Helper()
	w, err := s.Create(context.Background())
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	defer w.Abort()
	if step <= 0 {
		step = len(data) + 1
	}
	for off := 0; off < len(data); off += step {
		end := min(off+step, len(data))
		n, err := w.Write(data[off:end])
		if err != nil || n != end-off {
			t.Fatalf("Write: n=%d err=%v", n, err)
		}
	}
	if w.Size() != int64(len(data)) {
		t.Fatalf("Writer.Size = %d, want %d", w.Size(), len(data))
	}
	if err := w.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return w.ID()
}

// ReadAll opens id and returns its whole content, checking Size.
func ReadAll(t testing.TB, s chunk.Store, id string) []byte {
	t.Helper()
	r, err := s.Open(context.Background(), id)
	if err != nil {
		t.Fatalf("Open(%s): %v", id, err)
	}
	defer r.Close()
	b := make([]byte, r.Size())
	if n, err := r.ReadAt(b, 0); n != len(b) || (err != nil && err != io.EOF) {
		t.Fatalf("ReadAt(all): n=%d err=%v", n, err)
	}
	return b
}

// WantNotFound fails unless Open(id) reports chunk.ErrNotFound.
func WantNotFound(t testing.TB, s chunk.Store, id string) {
	t.Helper()
	r, err := s.Open(context.Background(), id)
	if err == nil {
		r.Close()
		t.Fatalf("Open(%q) succeeded, want ErrNotFound", id)
	}
	if !errors.Is(err, chunk.ErrNotFound) {
		t.Fatalf("Open(%q) = %v, want ErrNotFound", id, err)
	}
}

// WalkAll returns every id Walk reports, with its modification time.
func WalkAll(t testing.TB, s chunk.Store) map[string]time.Time {
	t.Helper()
	m := map[string]time.Time{}
	err := s.Walk(context.Background(), func(id string, mt time.Time) error {
		m[id] = mt
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return m
}

func testRoundTrip(t *testing.T, s chunk.Store) {
	const size = 3<<20 + 12345
	data := Pattern(1, size)
	id := Put(t, s, data, 100_000)
	if id == "" {
		t.Fatal("empty id")
	}
	r, err := s.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != size {
		t.Fatalf("Reader.Size = %d, want %d", r.Size(), size)
	}
	for _, c := range []struct{ off, n int }{{0, 1}, {0, 65536}, {1 << 20, 777}, {size - 10, 10}, {12345, 2 << 20}, {0, size}} {
		b := make([]byte, c.n)
		n, err := r.ReadAt(b, int64(c.off))
		if n != c.n || (err != nil && err != io.EOF) {
			t.Fatalf("ReadAt(off=%d, n=%d): n=%d err=%v", c.off, c.n, n, err)
		}
		if !bytes.Equal(b, data[c.off:c.off+c.n]) {
			t.Fatalf("ReadAt(off=%d, n=%d): wrong bytes", c.off, c.n)
		}
	}
	// Reading across the end returns the tail and io.EOF.
	b := make([]byte, 100)
	n, err := r.ReadAt(b, size-40)
	if n != 40 || err != io.EOF || !bytes.Equal(b[:40], data[size-40:]) {
		t.Fatalf("ReadAt across end: n=%d err=%v", n, err)
	}
	if n, err := r.ReadAt(b, size+5); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt past end: n=%d err=%v", n, err)
	}
}

func testEmpty(t *testing.T, s chunk.Store) {
	id := Put(t, s, nil, 0)
	r, err := s.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != 0 {
		t.Fatalf("Size = %d", r.Size())
	}
	if n, err := r.ReadAt(make([]byte, 1), 0); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt: n=%d err=%v", n, err)
	}
}

func testUniqueIDs(t *testing.T, s chunk.Store) {
	seen := map[string]bool{}
	for range 200 {
		w, err := s.Create(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if seen[w.ID()] {
			t.Fatalf("duplicate id %s", w.ID())
		}
		seen[w.ID()] = true
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
	}
}

func testNotFound(t *testing.T, s chunk.Store) {
	id := Put(t, s, []byte("x"), 0)
	for _, bad := range []string{"", "0123456789abcdef0123456789abcdef", "../../etc/passwd", id[:len(id)-1], id + "0", "/" + id} {
		WantNotFound(t, s, bad)
		if err := s.Remove(context.Background(), bad); err != nil {
			t.Fatalf("Remove(%q) = %v, want nil", bad, err)
		}
	}
	if got := ReadAll(t, s, id); string(got) != "x" {
		t.Fatalf("chunk changed: %q", got)
	}
}

func testUncommittedInvisible(t *testing.T, s chunk.Store) {
	w, err := s.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if _, err := w.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	WantNotFound(t, s, w.ID())
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := ReadAll(t, s, w.ID()); string(got) != "hello" {
		t.Fatalf("got %q", got)
	}
	if _, err := w.Write([]byte("more")); !errors.Is(err, chunk.ErrClosed) {
		t.Fatalf("Write after Commit = %v, want ErrClosed", err)
	}
	if err := w.Commit(); !errors.Is(err, chunk.ErrClosed) {
		t.Fatalf("second Commit = %v, want ErrClosed", err)
	}
}

func testAbort(t *testing.T, s chunk.Store) {
	w, err := s.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(Pattern(2, 100_000)); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	WantNotFound(t, s, w.ID())
	if _, ok := WalkAll(t, s)[w.ID()]; ok {
		t.Fatal("Walk still reports an aborted chunk")
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("second Abort = %v", err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, chunk.ErrClosed) {
		t.Fatalf("Write after Abort = %v, want ErrClosed", err)
	}
	if err := w.Commit(); !errors.Is(err, chunk.ErrClosed) {
		t.Fatalf("Commit after Abort = %v, want ErrClosed", err)
	}
	WantNotFound(t, s, w.ID())
}

func testAbortAfterCommit(t *testing.T, s chunk.Store) {
	w, err := s.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("keep"))
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort after Commit = %v, want nil", err)
	}
	if got := ReadAll(t, s, w.ID()); string(got) != "keep" {
		t.Fatalf("got %q", got)
	}
}

func testRemove(t *testing.T, s chunk.Store) {
	ctx := context.Background()
	a := Put(t, s, []byte("a"), 0)
	b := Put(t, s, []byte("b"), 0)
	if err := s.Remove(ctx, a); err != nil {
		t.Fatal(err)
	}
	WantNotFound(t, s, a)
	if err := s.Remove(ctx, a); err != nil {
		t.Fatalf("second Remove = %v", err)
	}
	if got := ReadAll(t, s, b); string(got) != "b" {
		t.Fatalf("other chunk: %q", got)
	}
	ids := WalkAll(t, s)
	if _, ok := ids[a]; ok || len(ids) != 1 {
		t.Fatalf("Walk after Remove = %v", ids)
	}
	// Removing an uncommitted chunk makes its Commit fail.
	w, err := s.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	w.Write([]byte("doomed"))
	if err := s.Remove(ctx, w.ID()); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err == nil {
		t.Fatal("Commit of a removed chunk succeeded")
	}
	WantNotFound(t, s, w.ID())
}

func testWalkSeesUncommitted(t *testing.T, s chunk.Store) {
	before := time.Now().Add(-time.Minute)
	committed := Put(t, s, []byte("done"), 0)
	w, err := s.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	w.Write([]byte("in progress"))
	empty, err := s.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Abort()
	after := time.Now().Add(time.Minute)
	got := WalkAll(t, s)
	if len(got) != 3 {
		t.Fatalf("Walk = %v, want 3 chunks", got)
	}
	for _, id := range []string{committed, w.ID(), empty.ID()} {
		mt, ok := got[id]
		if !ok {
			t.Fatalf("Walk misses %s", id)
		}
		if mt.Before(before) || mt.After(after) {
			t.Fatalf("modTime of %s = %v, want about now", id, mt)
		}
	}
}

func testWalkStopsOnError(t *testing.T, s chunk.Store) {
	for i := range 5 {
		Put(t, s, []byte{byte(i)}, 0)
	}
	stop := errors.New("stop")
	calls := 0
	err := s.Walk(context.Background(), func(string, time.Time) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("Walk = %v after %d calls, want stop after 1", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Walk(ctx, func(string, time.Time) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Walk with canceled ctx = %v", err)
	}
}

func testConcurrentWriters(t *testing.T, s chunk.Store) {
	const writers, perWriter = 8, 4
	type result struct {
		id   string
		seed uint64
		size int
	}
	var (
		mu      sync.Mutex
		results []result
		wg      sync.WaitGroup
		errs    = make(chan error, writers)
	)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				seed := uint64(g*100 + i)
				size := 70_000 + int(seed)*397
				data := Pattern(seed, size)
				w, err := s.Create(context.Background())
				if err != nil {
					errs <- err
					return
				}
				for off := 0; off < size; off += 8192 {
					if _, err := w.Write(data[off:min(off+8192, size)]); err != nil {
						w.Abort()
						errs <- err
						return
					}
				}
				if err := w.Commit(); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				results = append(results, result{w.ID(), seed, size})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(results) != writers*perWriter {
		t.Fatalf("%d chunks, want %d", len(results), writers*perWriter)
	}
	for _, r := range results {
		if !bytes.Equal(ReadAll(t, s, r.id), Pattern(r.seed, r.size)) {
			t.Fatalf("chunk %s (seed %d) corrupted", r.id, r.seed)
		}
	}
	if n := len(WalkAll(t, s)); n != writers*perWriter {
		t.Fatalf("Walk reports %d chunks", n)
	}
}

func testConcurrentReadAt(t *testing.T, s chunk.Store) {
	const size = 1 << 20
	data := Pattern(3, size)
	r, err := s.Open(context.Background(), Put(t, s, data, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			b := make([]byte, 4096)
			for i := range 64 {
				off := (g*64 + i) * 997 % (size - len(b))
				if n, err := r.ReadAt(b, int64(off)); n != len(b) || err != nil {
					t.Errorf("ReadAt: n=%d err=%v", n, err)
					return
				}
				if !bytes.Equal(b, data[off:off+len(b)]) {
					t.Errorf("ReadAt(%d): wrong bytes", off)
					return
				}
			}
		})
	}
	wg.Wait()
}

func testSweepRemovesDead(t *testing.T, s chunk.Store) {
	ctx := context.Background()
	var ids []string
	for i := range 6 {
		ids = append(ids, Put(t, s, fmt.Appendf(nil, "chunk %d", i), 0))
	}
	live := map[string]bool{ids[0]: true, ids[3]: true}
	abandoned, err := s.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer abandoned.Abort()
	abandoned.Write([]byte("never committed"))

	var asked []string
	isLive := func(_ context.Context, batch []string) ([]bool, error) {
		asked = append(asked, batch...)
		out := make([]bool, len(batch))
		for i, id := range batch {
			out[i] = live[id]
		}
		return out, nil
	}
	// Everything is older than grace when seen from two hours ahead.
	removed, err := chunk.Sweep(ctx, s, time.Hour, time.Now().Add(2*time.Hour), isLive)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 5 || len(asked) != 7 {
		t.Fatalf("Sweep removed %d after asking about %d ids, want 5 and 7", removed, len(asked))
	}
	for _, id := range ids {
		if live[id] {
			ReadAll(t, s, id)
		} else {
			WantNotFound(t, s, id)
		}
	}
	if err := abandoned.Commit(); err == nil {
		t.Fatal("Commit of a swept chunk succeeded")
	}
	if got := WalkAll(t, s); len(got) != 2 {
		t.Fatalf("after Sweep Walk = %v", got)
	}
}

func testSweepGrace(t *testing.T, s chunk.Store) {
	ctx := context.Background()
	id := Put(t, s, []byte("young"), 0)
	removed, err := chunk.Sweep(ctx, s, time.Hour, time.Now(), func(context.Context, []string) ([]bool, error) {
		t.Error("isLive called for a chunk younger than grace")
		return nil, nil
	})
	if err != nil || removed != 0 {
		t.Fatalf("Sweep = %d, %v", removed, err)
	}
	ReadAll(t, s, id)
}

func testSweepLivenessErrors(t *testing.T, s chunk.Store) {
	ctx := context.Background()
	id := Put(t, s, []byte("x"), 0)
	later := time.Now().Add(2 * time.Hour)
	boom := errors.New("kv down")
	if _, err := chunk.Sweep(ctx, s, time.Hour, later, func(context.Context, []string) ([]bool, error) {
		return nil, boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Sweep = %v, want %v", err, boom)
	}
	if _, err := chunk.Sweep(ctx, s, time.Hour, later, func(context.Context, []string) ([]bool, error) {
		return []bool{}, nil
	}); err == nil {
		t.Fatal("Sweep accepted a short isLive result")
	}
	ReadAll(t, s, id)
}

// testSweepWithKeeps: SweepWith's remove has the last word on each chunk
// isLive reported dead, and only the chunks it removed are counted.
func testSweepWithKeeps(t *testing.T, s chunk.Store) {
	ctx := context.Background()
	keep := Put(t, s, []byte("pinned by a request"), 0)
	gone := Put(t, s, []byte("orphan"), 0)
	var offered []string
	removed, err := chunk.SweepWith(ctx, s, time.Hour, time.Now().Add(2*time.Hour),
		func(_ context.Context, ids []string) ([]bool, error) { return make([]bool, len(ids)), nil },
		func(ctx context.Context, id string) (bool, error) {
			offered = append(offered, id)
			if id == keep {
				return false, nil
			}
			return true, s.Remove(ctx, id)
		})
	if err != nil || removed != 1 || len(offered) != 2 {
		t.Fatalf("SweepWith removed %d of %d offered, %v; want 1 of 2", removed, len(offered), err)
	}
	ReadAll(t, s, keep)
	WantNotFound(t, s, gone)
	boom := errors.New("remove failed")
	if _, err := chunk.SweepWith(ctx, s, time.Hour, time.Now().Add(2*time.Hour),
		func(_ context.Context, ids []string) ([]bool, error) { return make([]bool, len(ids)), nil },
		func(context.Context, string) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Fatalf("SweepWith = %v, want %v", err, boom)
	}
	ReadAll(t, s, keep)
}

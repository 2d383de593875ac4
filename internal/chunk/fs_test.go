package chunk_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/chunk/chunktest"
)

func newFS(t testing.TB) (*chunk.FS, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := chunk.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func TestFSConformance(t *testing.T) {
	chunktest.Run(t, func(t *testing.T) chunk.Store {
		s, _ := newFS(t)
		return s
	})
}

func TestFSLayout(t *testing.T) {
	s, dir := newFS(t)
	w, err := s.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	id := w.ID()
	if len(id) != 32 {
		t.Fatalf("id %q is not 128-bit hex", id)
	}
	if _, err := hex.DecodeString(id); err != nil {
		t.Fatalf("id %q: %v", id, err)
	}
	final := filepath.Join(dir, "chunks", id[:2], id)
	if _, err := os.Stat(final + ".tmp"); err != nil {
		t.Fatalf("uncommitted file: %v", err)
	}
	w.Write([]byte("data"))
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(final); err != nil || string(b) != "data" {
		t.Fatalf("committed file: %q, %v", b, err)
	}
	if _, err := os.Stat(final + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("temp file left behind: %v", err)
	}
}

func TestFSReopen(t *testing.T) {
	s, dir := newFS(t)
	data := chunktest.Pattern(7, 200_000)
	id := chunktest.Put(t, s, data, 0)
	s2, err := chunk.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(chunktest.ReadAll(t, s2, id), data) {
		t.Fatal("chunk changed across reopen")
	}
}

func TestFSReaderSurvivesRemove(t *testing.T) {
	s, _ := newFS(t)
	id := chunktest.Put(t, s, []byte("still here"), 0)
	r, err := s.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := s.Remove(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, r.Size())
	if _, err := r.ReadAt(b, 0); err != nil || string(b) != "still here" {
		t.Fatalf("ReadAt after Remove: %q, %v", b, err)
	}
}

func TestFSWalkIgnoresForeignFiles(t *testing.T) {
	s, dir := newFS(t)
	id := chunktest.Put(t, s, []byte("x"), 0)
	root := filepath.Join(dir, "chunks")
	other := "ab"
	if id[:2] == other {
		other = "cd"
	}
	for _, p := range []string{
		filepath.Join(root, "README"),
		filepath.Join(root, other, "notes.txt"),
		filepath.Join(root, other, id),          // right name, wrong shard
		filepath.Join(root, other, other+"xyz"), // not hex
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil { // shards are made on first use
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("?"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(root, "zz"), 0o755)
	os.Mkdir(filepath.Join(root, other, id[:2]+"0123456789abcdef0123456789abcd"), 0o755) // a directory named like an id
	got := chunktest.WalkAll(t, s)
	if len(got) != 1 {
		t.Fatalf("Walk = %v, want only %s", got, id)
	}
	if _, ok := got[id]; !ok {
		t.Fatalf("Walk misses %s", id)
	}
}

func TestFSCreateRecreatesShard(t *testing.T) {
	s, dir := newFS(t)
	root := filepath.Join(dir, "chunks")
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		os.Remove(filepath.Join(root, e.Name()))
	}
	id := chunktest.Put(t, s, []byte("y"), 0)
	if got := chunktest.ReadAll(t, s, id); string(got) != "y" {
		t.Fatalf("got %q", got)
	}
}

// writeRaw creates a chunk file directly (name is an id, optionally with
// ".tmp") with the given mtime.
func writeRaw(t *testing.T, dir, name string, mt time.Time) {
	t.Helper()
	p := filepath.Join(dir, "chunks", name[:2], name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil { // shards are made on first use
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
}

func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func TestSweepAges(t *testing.T) {
	s, dir := newFS(t)
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	const grace = time.Hour
	var (
		oldDead, oldLive, youngDead, edge = randomID(), randomID(), randomID(), randomID()
		oldTmp, youngTmp                  = randomID(), randomID()
	)
	writeRaw(t, dir, oldDead, now.Add(-2*grace))
	writeRaw(t, dir, oldLive, now.Add(-2*grace))
	writeRaw(t, dir, youngDead, now.Add(-grace/2))
	writeRaw(t, dir, edge, now.Add(-grace)) // exactly grace old: kept
	writeRaw(t, dir, oldTmp+".tmp", now.Add(-3*grace))
	writeRaw(t, dir, youngTmp+".tmp", now.Add(-time.Minute))

	var asked []string
	removed, err := chunk.Sweep(ctx, s, grace, now, func(_ context.Context, ids []string) ([]bool, error) {
		asked = append(asked, ids...)
		out := make([]bool, len(ids))
		for i, id := range ids {
			out[i] = id == oldLive
		}
		return out, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(asked)
	want := []string{oldDead, oldLive, oldTmp}
	sort.Strings(want)
	if removed != 2 || !equal(asked, want) {
		t.Fatalf("removed %d, asked %v; want 2, %v", removed, asked, want)
	}
	left := chunktest.WalkAll(t, s)
	for _, id := range []string{oldLive, youngDead, edge, youngTmp} {
		if _, ok := left[id]; !ok {
			t.Errorf("%s was removed", id)
		}
	}
	if len(left) != 4 {
		t.Errorf("left %d chunks, want 4", len(left))
	}
	if got := left[youngDead]; !got.Equal(now.Add(-grace / 2)) {
		t.Errorf("Walk modTime = %v, want %v", got, now.Add(-grace/2))
	}
}

func TestSweepBatches(t *testing.T) {
	s, dir := newFS(t)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 2*chunk.SweepBatch + 17
	for range n {
		writeRaw(t, dir, randomID(), now.Add(-48*time.Hour))
	}
	var calls, total int
	seen := map[string]bool{}
	removed, err := chunk.Sweep(context.Background(), s, time.Hour, now, func(_ context.Context, ids []string) ([]bool, error) {
		calls++
		total += len(ids)
		if len(ids) == 0 || len(ids) > chunk.SweepBatch {
			t.Errorf("batch of %d ids", len(ids))
		}
		out := make([]bool, len(ids))
		for i, id := range ids {
			seen[id] = true
			out[i] = i%2 == 0
		}
		return out, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 3 || total != n || len(seen) != n {
		t.Fatalf("%d calls, %d ids (%d distinct); want 3, %d", calls, total, len(seen), n)
	}
	if left := len(chunktest.WalkAll(t, s)); removed+left != n || removed < n/2-2 {
		t.Fatalf("removed %d, left %d", removed, left)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Benchmarks. Compare BenchmarkWrite8MiB with
//
//	dd if=/dev/zero of=/tmp/x bs=8M count=32 conv=fsync
//
// Each op writes and commits one 8 MiB chunk (fsync of file and directory),
// so MB/s is what a 256 MiB upload split into 8 MiB chunks achieves.
func BenchmarkWrite8MiB(b *testing.B) {
	const size = 8 << 20
	data := chunktest.Pattern(1, size)
	for _, bc := range []struct {
		name string
		step int
	}{{"write=8MiB", size}, {"write=1MiB", 1 << 20}, {"write=32KiB", 32 << 10}} {
		b.Run(bc.name, func(b *testing.B) {
			s, _ := newFS(b)
			b.SetBytes(size)
			for b.Loop() {
				w, err := s.Create(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				for off := 0; off < size; off += bc.step {
					if _, err := w.Write(data[off : off+bc.step]); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRead8MiB opens a committed 8 MiB chunk and reads it whole with
// 1 MiB ReadAt calls (from the page cache), then closes it.
func BenchmarkRead8MiB(b *testing.B) {
	const size = 8 << 20
	s, _ := newFS(b)
	id := chunktest.Put(b, s, chunktest.Pattern(1, size), 0)
	buf := make([]byte, 1<<20)
	b.SetBytes(size)
	for b.Loop() {
		r, err := s.Open(context.Background(), id)
		if err != nil {
			b.Fatal(err)
		}
		for off := int64(0); off < size; off += int64(len(buf)) {
			if _, err := r.ReadAt(buf, off); err != nil {
				b.Fatal(err)
			}
		}
		r.Close()
	}
}

// A new store makes no shard directories; the first chunk of a shard
// makes its directory, and the chunk is readable and listed.
func TestFSShardsMadeOnFirstUse(t *testing.T) {
	s, dir := newFS(t)
	ents, err := os.ReadDir(filepath.Join(dir, "chunks"))
	if err != nil || len(ents) != 0 {
		t.Fatalf("a new store has %d entries in chunks/ (%v)", len(ents), err)
	}
	ctx := context.Background()
	w, err := s.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("first")); err != nil {
		t.Fatal(err)
	}
	id := w.ID()
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	r, err := s.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	seen := 0
	if err := s.Walk(ctx, func(got string, _ time.Time) error {
		if got == id {
			seen++
		}
		return nil
	}); err != nil || seen != 1 {
		t.Fatalf("walk saw the chunk %d times (%v)", seen, err)
	}
}

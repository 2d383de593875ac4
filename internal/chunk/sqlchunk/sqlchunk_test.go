package sqlchunk

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/chunk/chunktest"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
)

var bg = context.Background()

func newStore(t testing.TB) *Store {
	t.Helper()
	dsn, _ := pgtest.Schema(t)
	ctx, cancel := context.WithTimeout(bg, 30*time.Second)
	defer cancel()
	db, err := postgres.Open(ctx, dsn, postgres.Options{MaxConns: 8})
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := New(ctx, db)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	pgtest.BaseDSN(t) // skip once, not per subtest, without a database
	chunktest.Run(t, func(t *testing.T) chunk.Store { return newStore(t) })
}

// query runs a test query against the store's database.
func query(t *testing.T, s *Store, sql string, args []any, dst ...any) {
	t.Helper()
	err := s.db.Do(bg, func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, sql, args...).Scan(dst...)
	})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// TestParts: bytes are stored in parts of at most 1 MiB, all full but the
// last, and the Writer never buffers more than one part.
func TestParts(t *testing.T) {
	s := newStore(t)
	const size = 3*PartSize + 4321
	data := chunktest.Pattern(9, size)
	for _, step := range []int{0, 1000, PartSize, PartSize + 1, 3 * PartSize} {
		id := chunktest.Put(t, s, data, step)
		var parts, full int
		var maxLen, total int64
		query(t, s, `SELECT count(*), count(*) FILTER (WHERE length(data) = 1048576), max(length(data)), sum(length(data))
FROM chunk_part WHERE id = $1`, []any{id}, &parts, &full, &maxLen, &total)
		if parts != 4 || full != 3 || maxLen != PartSize || total != size {
			t.Fatalf("step %d: %d parts (%d full), longest %d, total %d", step, parts, full, maxLen, total)
		}
		var dbSize int64
		var committed bool
		query(t, s, "SELECT size, committed FROM chunk WHERE id = $1", []any{id}, &dbSize, &committed)
		if dbSize != size || !committed {
			t.Fatalf("chunk row: size %d committed %v", dbSize, committed)
		}
		if !bytes.Equal(chunktest.ReadAll(t, s, id), data) {
			t.Fatalf("step %d: data differs", step)
		}
	}
	w, err := s.Create(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for range 5 {
		w.Write(data[:300_000])
		if c := cap(w.(*writer).buf); c > PartSize {
			t.Fatalf("Writer buffer of %d bytes", c)
		}
	}
}

// TestSequentialReads: small sequential ReadAt calls (as io.Copy through
// a SectionReader does) across part boundaries return the right bytes and
// mostly come from the read-ahead.
func TestSequentialReads(t *testing.T) {
	s := newStore(t)
	const size = 2*PartSize + 777
	data := chunktest.Pattern(4, size)
	id := chunktest.Put(t, s, data, 0)
	r, err := s.Open(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out bytes.Buffer
	buf := make([]byte, 32<<10+3)
	if _, err := io.CopyBuffer(&out, io.NewSectionReader(r, 5, size-5), buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), data[5:]) {
		t.Fatal("sequential read differs")
	}
	// Reads straddling a part boundary.
	for _, off := range []int64{PartSize - 1, PartSize - 100, 2*PartSize - 5000} {
		b := make([]byte, 10_000)
		n, err := r.ReadAt(b, off)
		want := min(int64(len(b)), size-off)
		if int64(n) != want || (err != nil && err != io.EOF) || !bytes.Equal(b[:n], data[off:off+want]) {
			t.Fatalf("ReadAt(%d): n=%d err=%v", off, n, err)
		}
	}
}

// TestRemoveRacesWriter: a Remove concurrent with a Writer's part inserts
// leaves no orphan parts, and the Writer cannot commit.
func TestRemoveRacesWriter(t *testing.T) {
	s := newStore(t)
	data := chunktest.Pattern(5, PartSize)
	for round := range 10 {
		w, err := s.Create(bg)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			for range 4 {
				if _, err := w.Write(data); err != nil {
					return
				}
			}
		})
		time.Sleep(time.Duration(round) * time.Millisecond)
		if err := s.Remove(bg, w.ID()); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if err := w.Commit(); err == nil {
			t.Fatalf("round %d: Commit of a removed chunk succeeded", round)
		}
		var parts int
		query(t, s, "SELECT count(*) FROM chunk_part WHERE id = $1", []any{w.ID()}, &parts)
		if parts != 0 {
			t.Fatalf("round %d: %d orphan parts", round, parts)
		}
	}
}

// TestReaderAfterRemove: reads of a removed chunk fail with ErrNotFound.
func TestReaderAfterRemove(t *testing.T) {
	s := newStore(t)
	id := chunktest.Put(t, s, chunktest.Pattern(6, 3*PartSize), 0)
	r, err := s.Open(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := s.Remove(bg, id); err != nil {
		t.Fatal(err)
	}
	_, err = r.ReadAt(make([]byte, 100), PartSize)
	if !errors.Is(err, chunk.ErrNotFound) {
		t.Fatalf("ReadAt after Remove: %v, want ErrNotFound", err)
	}
}

// BenchmarkWriteRead: one 8 MiB chunk written in 64 KiB writes, committed,
// then read back in 32 KiB reads.
func BenchmarkWriteRead(b *testing.B) {
	s := newStore(b)
	data := chunktest.Pattern(1, 8<<20)
	buf := make([]byte, 32<<10)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		id := chunktest.Put(b, s, data, 64<<10)
		r, err := s.Open(bg, id)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyBuffer(io.Discard, io.NewSectionReader(r, 0, r.Size()), buf); err != nil {
			b.Fatal(err)
		}
		r.Close()
		if err := s.Remove(bg, id); err != nil {
			b.Fatal(err)
		}
	}
}

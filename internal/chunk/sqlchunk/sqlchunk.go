// Package sqlchunk is a chunk.Store in the SQL database of the PostgreSQL
// kv backend (internal/kv/postgres), sharing its connection pool, so that
// several Cerulean processes share blob bytes as they share metadata.
//
// Schema (migrated by New, component "chunk" in schema_version):
//
//	chunk(id text primary key, size bigint, committed bool, modified timestamptz)
//	chunk_part(id text, seq int, data bytea, primary key (id, seq))
//
// A chunk's bytes are stored in parts of PartSize (1 MiB) bytes, the last
// one shorter. Create inserts the chunk row (uncommitted, so Walk sees it
// and Sweep reclaims it if abandoned). The Writer buffers up to one part
// and inserts each full part as it fills; Commit inserts the last part and
// marks the row committed in the same statement, so the chunk is durable
// (the database's commit) before the caller commits metadata referencing
// it. Memory per Writer is at most one part.
//
// Every part insert is one statement that also updates the chunk row
// (size, modified) and inserts nothing when the row is gone or committed:
// a Writer whose chunk was removed fails instead of leaving orphan parts.
// Remove deletes the chunk row and then its parts in one transaction; the
// row's lock orders it after an in-flight part insert. All statements are
// idempotent and retried by postgres.DB.Do on conflicts and lost
// connections. Modification times come from the Cerulean process's clock,
// as Sweep's "now" does.
//
// Open reads the size; ReadAt fetches only the byte range it needs
// (substring on the parts) in one query. Small reads read ahead, by a
// window that grows from 128 KiB to 2 MiB while reads are sequential, kept
// in the Reader (chunks are immutable). A Reader whose chunk is removed
// fails with an error wrapping chunk.ErrNotFound.
//
// Only SQL that CockroachDB and YugabyteDB accept too is used (data-
// modifying CTE, ON CONFLICT, substring on bytea); tested on PostgreSQL 15.
package sqlchunk

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres"
)

// PartSize is the size of every part but a chunk's last.
const PartSize = 1 << 20

const (
	idLen = 32 // hex digits of a 128-bit id
	// Read-ahead window of small reads (see reader.ReadAt).
	minReadAhead = 128 << 10
	maxReadAhead = 2 << 20
	walkPage     = 1000
	// abortTimeout bounds the cleanup of Abort and failed Commits, which
	// run even when the Writer's context is done.
	abortTimeout = 10 * time.Second
)

//go:embed migrations/*.sql
var migrations embed.FS

const (
	sqlCreate = `INSERT INTO chunk (id, size, committed, modified) VALUES ($1, 0, false, $2)
ON CONFLICT (id) DO NOTHING`
	// $1 id, $2 seq, $3 data, $4 size so far, $5 now.
	sqlWritePart = `WITH c AS (
    UPDATE chunk SET size = $4, modified = $5 WHERE id = $1 AND NOT committed RETURNING id
)
INSERT INTO chunk_part (id, seq, data) SELECT id, $2::int, $3::bytea FROM c
ON CONFLICT (id, seq) DO UPDATE SET data = excluded.data`
	// Not "AND NOT committed": a retried Commit must succeed again. Only
	// the Writer commits its chunk.
	sqlCommitPart = `WITH c AS (
    UPDATE chunk SET size = $4, modified = $5, committed = true WHERE id = $1 RETURNING id
)
INSERT INTO chunk_part (id, seq, data) SELECT id, $2::int, $3::bytea FROM c
ON CONFLICT (id, seq) DO UPDATE SET data = excluded.data`
	sqlCommit = `UPDATE chunk SET size = $2, modified = $3, committed = true WHERE id = $1`
	sqlOpen   = `SELECT size FROM chunk WHERE id = $1 AND committed`
	// Bytes [$2, $3) of chunk $1, from parts $4 to $5.
	sqlRead = `SELECT seq, substring(data,
    greatest($2 - seq::bigint * 1048576, 0)::int + 1,
    (least($3 - seq::bigint * 1048576, 1048576) - greatest($2 - seq::bigint * 1048576, 0))::int)
FROM chunk_part WHERE id = $1 AND seq >= $4 AND seq <= $5 ORDER BY seq`
	sqlRemoveChunk = `DELETE FROM chunk WHERE id = $1`
	sqlRemoveParts = `DELETE FROM chunk_part WHERE id = $1`
	sqlWalk        = `SELECT id, modified FROM chunk WHERE id > $1 ORDER BY id LIMIT 1000`
)

var errGone = errors.New("chunk was removed while being written")

// Store is a chunk.Store over a postgres.DB. It is safe for concurrent use.
type Store struct {
	db  *postgres.DB
	now func() time.Time
}

var _ chunk.Store = (*Store)(nil)

// New returns the chunk store in db's database, creating or migrating its
// tables. It does not own db: close db after the last use of the store.
func New(ctx context.Context, db *postgres.DB) (*Store, error) {
	if err := db.Migrate(ctx, "chunk", migrations); err != nil {
		return nil, fmt.Errorf("chunk: %w", err)
	}
	return &Store{db: db, now: time.Now}, nil
}

func validID(id string) bool {
	if len(id) != idLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func (s *Store) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	var n int64
	err := s.db.Do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		tag, err := c.Exec(ctx, sql, args...)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// Create implements chunk.Store.
func (s *Store) Create(ctx context.Context) (chunk.Writer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var b [idLen / 2]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	if _, err := s.exec(ctx, sqlCreate, id, s.now()); err != nil {
		return nil, fmt.Errorf("chunk: create: %w", err)
	}
	return &writer{s: s, ctx: ctx, id: id}, nil
}

// Open implements chunk.Store.
func (s *Store) Open(ctx context.Context, id string) (chunk.Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, fmt.Errorf("chunk: open %q: %w", id, chunk.ErrNotFound)
	}
	var size int64
	err := s.db.Do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, sqlOpen, id).Scan(&size)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("chunk: open %s: %w", id, chunk.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("chunk: open %s: %w", id, err)
	}
	return &reader{s: s, ctx: ctx, id: id, size: size}, nil
}

// Remove implements chunk.Store. The chunk row goes first: its deletion
// waits for a part insert in flight (which updates the row), and the parts
// are deleted by a later statement, which sees that insert.
func (s *Store) Remove(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !validID(id) {
		return nil // such a chunk cannot exist
	}
	err := s.db.Do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		b := &pgx.Batch{}
		b.Queue(sqlRemoveChunk, id)
		b.Queue(sqlRemoveParts, id)
		return c.SendBatch(ctx, b).Close() // one implicit transaction
	})
	if err != nil {
		return fmt.Errorf("chunk: remove %s: %w", id, err)
	}
	return nil
}

// Walk implements chunk.Store. It reads the chunk list in pages of 1000
// and calls fn outside any query, so fn may Remove.
func (s *Store) Walk(ctx context.Context, fn func(id string, modTime time.Time) error) error {
	type entry struct {
		id  string
		mod time.Time
	}
	var page []entry
	after := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := s.db.Do(ctx, func(ctx context.Context, c *pgx.Conn) error {
			page = page[:0]
			rows, err := c.Query(ctx, sqlWalk, after)
			if err != nil {
				return err
			}
			var e entry
			_, err = pgx.ForEachRow(rows, []any{&e.id, &e.mod}, func() error {
				page = append(page, e)
				return nil
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("chunk: walk: %w", err)
		}
		for _, e := range page {
			if err := fn(e.id, e.mod); err != nil {
				return err
			}
		}
		if len(page) < walkPage {
			return nil
		}
		after = page[len(page)-1].id
	}
}

// writer implements chunk.Writer.
type writer struct {
	s      *Store
	ctx    context.Context
	id     string
	buf    []byte // the part being filled, < PartSize bytes
	seq    int    // number of parts inserted
	size   int64  // bytes accepted by Write
	closed bool   // committed or aborted
	err    error  // a failed part insert: the Writer is dead
}

func (w *writer) ID() string  { return w.id }
func (w *writer) Size() int64 { return w.size }

// Write implements io.Writer: full parts are inserted as they fill.
func (w *writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, chunk.ErrClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	n := 0
	for len(p) > 0 {
		if len(w.buf) == 0 && len(p) >= PartSize {
			// A whole part straight from p, without copying.
			if err := w.insert(sqlWritePart, p[:PartSize]); err != nil {
				w.err = err
				return n, err
			}
			p = p[PartSize:]
			n += PartSize
			w.size += PartSize
			continue
		}
		k := min(len(p), PartSize-len(w.buf))
		if len(w.buf)+k > cap(w.buf) {
			// Grow by doubling, but never past one part.
			nb := make([]byte, len(w.buf), min(PartSize, max(2*cap(w.buf), len(w.buf)+k, 64<<10)))
			copy(nb, w.buf)
			w.buf = nb
		}
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		n += k
		w.size += int64(k)
		if len(w.buf) == PartSize {
			if err := w.insert(sqlWritePart, w.buf); err != nil {
				w.err = err
				return n, err
			}
			w.buf = w.buf[:0]
		}
	}
	return n, nil
}

// insert stores part as part number w.seq (sqlCommitPart: and commits).
func (w *writer) insert(sql string, part []byte) error {
	total := int64(w.seq)*PartSize + int64(len(part))
	n, err := w.s.exec(w.ctx, sql, w.id, w.seq, part, total, w.s.now())
	if err != nil {
		return fmt.Errorf("chunk: write %s: %w", w.id, err)
	}
	if n == 0 {
		return fmt.Errorf("chunk: write %s: %w", w.id, errGone)
	}
	w.seq++
	return nil
}

// Commit implements chunk.Writer.
func (w *writer) Commit() error {
	if w.closed {
		return chunk.ErrClosed
	}
	w.closed = true
	err := w.err
	if err == nil {
		if len(w.buf) > 0 {
			err = w.insert(sqlCommitPart, w.buf)
		} else {
			var n int64
			n, err = w.s.exec(w.ctx, sqlCommit, w.id, w.size, w.s.now())
			if err == nil && n == 0 {
				err = fmt.Errorf("chunk: commit %s: %w", w.id, errGone)
			}
		}
	}
	w.buf = nil
	if err != nil {
		w.remove()
		return err
	}
	return nil
}

// Abort implements chunk.Writer.
func (w *writer) Abort() error {
	if w.closed {
		return nil
	}
	w.closed = true
	w.buf = nil
	return w.remove()
}

func (w *writer) remove() error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), abortTimeout)
	defer cancel()
	return w.s.Remove(ctx, w.id)
}

// reader implements chunk.Reader.
type reader struct {
	s    *Store
	ctx  context.Context
	id   string
	size int64

	mu       sync.Mutex
	cache    []byte // bytes [cacheOff, cacheOff+len(cache)) of the chunk
	cacheOff int64
	ahead    int64 // current read-ahead window
}

func (r *reader) Size() int64 { return r.size }

func (r *reader) Close() error {
	r.mu.Lock()
	r.cache = nil
	r.mu.Unlock()
	return nil
}

// ReadAt implements io.ReaderAt.
func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("chunk: read %s: negative offset", r.id)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), r.size-off))
	var eof error
	if n < len(p) {
		eof = io.EOF
	}
	end := off + int64(n)
	r.mu.Lock()
	if off >= r.cacheOff && end <= r.cacheOff+int64(len(r.cache)) {
		copy(p, r.cache[off-r.cacheOff:end-r.cacheOff])
		r.mu.Unlock()
		return n, eof
	}
	r.mu.Unlock()

	// Reads smaller than the read-ahead window fetch the whole window and
	// keep it for the next reads. The window doubles (up to
	// maxReadAhead) while reads continue where the last fetch ended, and
	// falls back to minReadAhead on a jump: sequential streams take few
	// queries, random small reads do not fetch much more than they need.
	r.mu.Lock()
	if off == r.cacheOff+int64(len(r.cache)) && r.ahead > 0 {
		r.ahead = min(2*r.ahead, maxReadAhead)
	} else {
		r.ahead = minReadAhead
	}
	fetchEnd := min(r.size, max(end, off+r.ahead))
	r.mu.Unlock()
	if fetchEnd == end {
		if err := r.fetch(p[:n], off); err != nil {
			return 0, err
		}
		return n, eof
	}
	buf := make([]byte, fetchEnd-off)
	if err := r.fetch(buf, off); err != nil {
		return 0, err
	}
	copy(p, buf[:n])
	r.mu.Lock()
	r.cache, r.cacheOff = buf, off
	r.mu.Unlock()
	return n, eof
}

// fetch reads bytes [off, off+len(dst)) of the chunk into dst, in one
// query.
func (r *reader) fetch(dst []byte, off int64) error {
	end := off + int64(len(dst))
	first, last := off/PartSize, (end-1)/PartSize
	got := 0
	err := r.s.db.Do(r.ctx, func(ctx context.Context, c *pgx.Conn) error {
		got = 0
		rows, err := c.Query(ctx, sqlRead, r.id, off, end, first, last)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			seq, data, err := partRow(rows)
			if err != nil {
				return err
			}
			at := max(seq*PartSize, off) - off
			if at+int64(len(data)) > int64(len(dst)) {
				return fmt.Errorf("part %d of chunk %s is longer than the chunk", seq, r.id)
			}
			got += copy(dst[at:], data)
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("chunk: read %s: %w", r.id, err)
	}
	if got != len(dst) {
		return fmt.Errorf("chunk: read %s: %d of %d bytes at %d: %w", r.id, got, len(dst), off, chunk.ErrNotFound)
	}
	return nil
}

// partRow returns the seq and data of the current row of a sqlRead query.
// data is pgx's read buffer when the row came in binary format (as it does
// with prepared statements): valid until the next row, copied only once.
func partRow(rows pgx.Rows) (int64, []byte, error) {
	fds := rows.FieldDescriptions()
	raw := rows.RawValues()
	if len(fds) == 2 && len(raw) == 2 && fds[0].Format == pgx.BinaryFormatCode &&
		fds[1].Format == pgx.BinaryFormatCode && fds[0].DataTypeOID == pgtype.Int4OID &&
		len(raw[0]) == 4 && raw[1] != nil {
		return int64(int32(binary.BigEndian.Uint32(raw[0]))), raw[1], nil
	}
	var seq int64
	var data []byte
	err := rows.Scan(&seq, &data)
	return seq, data, err
}

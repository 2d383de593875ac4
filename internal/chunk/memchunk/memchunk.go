// Package memchunk is the chunk.Store of --in-memory mode: chunks live in
// the process's memory and are gone when it exits.
//
// A chunk is a list of byte segments, filled in the order written (a
// segment holds up to SegmentSize bytes, so a large chunk never needs one
// huge contiguous allocation and is never copied to grow). The store
// counts the bytes of every chunk, committed or still being written,
// against its limit: a Write that would take the total past it fails with
// a *chunk.FullError and writes nothing, so the caller's Abort (or, for a
// chunk it never commits, the sweeper) gives the room back. Remove gives
// a chunk's bytes back at once; a Reader opened before keeps the segments
// it reads (as on the FS store, where an open file outlives its unlink)
// until it is closed and dropped.
//
// Walk reports every chunk with the time of its last write, as the FS
// store reports a file's modification time, so chunk.Sweep reclaims
// chunks that no record references exactly as it does on disk.
package memchunk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
)

// SegmentSize is the largest segment a Writer allocates for a chunk's
// bytes. Segments start at minSegment and grow with the chunk.
const SegmentSize = 1 << 20

// minSegment is the smallest segment allocated, so that small writes do
// not each become a segment.
const minSegment = 32 << 10

var errGone = errors.New("chunk was removed while being written")

// Store is an in-memory chunk.Store. It is safe for concurrent use.
type Store struct {
	limit int64 // bytes; <= 0: no limit
	now   func() time.Time

	mu     sync.Mutex
	chunks map[string]*entry
	used   int64
}

var _ chunk.Store = (*Store)(nil)

type entry struct {
	size      int64 // bytes written (counted against the limit)
	mod       time.Time
	committed bool
	removed   bool
	// Set once at Commit, read-only afterwards.
	segs [][]byte
	offs []int64 // offs[i] is the chunk offset of segs[i]
}

// Options configure a Store.
type Options struct {
	// Limit is the most bytes the chunks may hold together (<= 0: no
	// limit).
	Limit int64
	// Now is the clock of modification times (nil: time.Now). chunk.Sweep
	// compares them with the "now" it is given, which callers take from
	// the same clock.
	Now func() time.Time
}

// New returns an empty store.
func New(opts Options) *Store {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Store{limit: opts.Limit, now: opts.Now, chunks: map[string]*entry{}}
}

// Used returns the bytes the store's chunks hold, committed or not.
func (s *Store) Used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// Limit returns the store's limit in bytes (<= 0: none).
func (s *Store) Limit() int64 { return s.limit }

// Create implements chunk.Store.
func (s *Store) Create(ctx context.Context) (chunk.Writer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	id := hex.EncodeToString(b[:])
	e := &entry{mod: s.now()}
	s.mu.Lock()
	s.chunks[id] = e
	s.mu.Unlock()
	return &writer{s: s, id: id, e: e}, nil
}

// Open implements chunk.Store.
func (s *Store) Open(ctx context.Context, id string) (chunk.Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	e := s.chunks[id]
	ok := e != nil && e.committed
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("chunk: open %q: %w", id, chunk.ErrNotFound)
	}
	return &reader{segs: e.segs, offs: e.offs, size: e.size}, nil
}

// Remove implements chunk.Store.
func (s *Store) Remove(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(id, nil)
	return nil
}

// removeLocked drops chunk id (only if it is still want, when want is not
// nil) and gives its bytes back.
func (s *Store) removeLocked(id string, want *entry) {
	e := s.chunks[id]
	if e == nil || (want != nil && e != want) {
		return
	}
	delete(s.chunks, id)
	e.removed = true
	s.used -= e.size
}

// Walk implements chunk.Store. It lists the chunks first and calls fn
// without holding the store's lock, so fn may call Remove.
func (s *Store) Walk(ctx context.Context, fn func(id string, modTime time.Time) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	type item struct {
		id  string
		mod time.Time
	}
	s.mu.Lock()
	items := make([]item, 0, len(s.chunks))
	for id, e := range s.chunks {
		items = append(items, item{id, e.mod})
	}
	s.mu.Unlock()
	for i, it := range items {
		if i%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := fn(it.id, it.mod); err != nil {
			return err
		}
	}
	return nil
}

type writer struct {
	s    *Store
	id   string
	e    *entry
	segs [][]byte
	size int64
	done bool
}

func (w *writer) ID() string  { return w.id }
func (w *writer) Size() int64 { return w.size }

// Write implements io.Writer. It reserves room for p first: past the
// store's limit nothing is written and the error is a *chunk.FullError.
func (w *writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, chunk.ErrClosed
	}
	if len(p) == 0 {
		return 0, nil
	}
	s := w.s
	s.mu.Lock()
	switch {
	case w.e.removed:
		s.mu.Unlock()
		return 0, fmt.Errorf("chunk: write %s: %w", w.id, errGone)
	case s.limit > 0 && s.used+int64(len(p)) > s.limit:
		s.mu.Unlock()
		return 0, &chunk.FullError{Limit: s.limit}
	}
	s.used += int64(len(p))
	w.e.size += int64(len(p))
	w.e.mod = s.now()
	s.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		if k := len(w.segs); k > 0 {
			last := w.segs[k-1]
			if room := cap(last) - len(last); room > 0 {
				m := min(room, len(p))
				w.segs[k-1] = append(last, p[:m]...)
				p = p[m:]
				continue
			}
		}
		seg := make([]byte, 0, max(minSegment, min(len(p), SegmentSize), min(int(w.size), SegmentSize)))
		w.segs = append(w.segs, seg)
	}
	w.size += int64(n)
	return n, nil
}

// Commit implements chunk.Writer: the chunk becomes visible to Open.
func (w *writer) Commit() error {
	if w.done {
		return chunk.ErrClosed
	}
	w.done = true
	// Give back a nearly empty last segment's spare capacity.
	if k := len(w.segs); k > 0 {
		if last := w.segs[k-1]; cap(last)-len(last) > 4<<10 {
			w.segs[k-1] = append([]byte(nil), last...)
		}
	}
	offs := make([]int64, len(w.segs))
	var off int64
	for i, sg := range w.segs {
		offs[i] = off
		off += int64(len(sg))
	}
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.e.removed {
		return fmt.Errorf("chunk: commit %s: %w", w.id, errGone)
	}
	w.e.segs, w.e.offs = w.segs, offs
	w.e.committed = true
	w.e.mod = s.now()
	return nil
}

// Abort implements chunk.Writer.
func (w *writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.segs = nil
	w.s.mu.Lock()
	w.s.removeLocked(w.id, w.e)
	w.s.mu.Unlock()
	return nil
}

type reader struct {
	segs [][]byte
	offs []int64
	size int64
}

func (r *reader) Size() int64  { return r.size }
func (r *reader) Close() error { return nil }

// ReadAt implements io.ReaderAt; it may be called concurrently.
func (r *reader) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("chunk: negative offset")
	}
	if off >= r.size {
		return 0, io.EOF
	}
	// The segment holding off: the last one starting at or before it.
	i := sort.Search(len(r.offs), func(i int) bool { return r.offs[i] > off }) - 1
	n := 0
	for n < len(b) && i < len(r.segs) {
		seg := r.segs[i][off+int64(n)-r.offs[i]:]
		n += copy(b[n:], seg)
		i++
	}
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

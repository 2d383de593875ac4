// Package bolt is the embedded kv.Store backend: one bbolt file, one bucket.
//
// Reads (View) are bbolt read transactions: a consistent snapshot that never
// blocks writers, run on the caller's goroutine.
//
// Writes (Update) use group commit. Callers enqueue their fn; a single writer
// goroutine takes the queued requests, opens one bbolt read-write
// transaction, runs the fns one after the other (so the group is trivially
// serializable: each fn sees the writes of the fns before it) and commits
// once, sharing one fsync among the whole group. Only then does it answer
// every caller. A fn that returns an error (or panics) has its own writes
// undone from an undo log, while the rest of the group still commits. If the
// commit fails, every caller in the group gets an error wrapping
// kv.ErrUnavailable.
//
// Consequences for callers, beyond the kv contract:
//   - Update fns run on the writer goroutine, not the caller's. They must
//     not call Update or Close (that deadlocks) and should not block: a slow
//     fn delays every other writer. t.FailNow inside a fn is caught (the group is
//     aborted with kv.ErrUnavailable) but is still a bug.
//   - Do not call Update from inside a View fn: if the file has to grow past
//     the mapped size, the commit waits for open read transactions.
//   - Slices returned by Get or passed to Scan callbacks point into the
//     memory map or the transaction's own buffers. They are valid until fn
//     returns and must not be modified; copy them to keep them. Put copies
//     both key and value, so callers may reuse their buffers at once.
//   - Put and Delete inside a Scan callback are allowed: the scan re-seeks
//     after the callback mutates the transaction, and continues strictly after
//     the key it just visited. Keys inserted ahead of the cursor are visited,
//     keys deleted ahead of it are not.
//   - The empty key is not supported (bbolt cannot store it).
package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

var _ kv.Store = (*DB)(nil)

var bucketName = []byte("kv")

// Defaults for Options fields left zero.
const (
	DefaultMaxBatchOps   = 256
	DefaultMaxBatchBytes = 8 << 20
	DefaultLockTimeout   = 10 * time.Second
)

// defaultInitialMmapSize reserves address space only: the file grows with
// the data.
func defaultInitialMmapSize() int {
	if strconv.IntSize == 64 {
		return 1 << 30
	}
	return 64 << 20
}

var (
	errTxDone   = errors.New("kv/bolt: transaction used after its fn returned")
	errEmptyKey = errors.New("kv/bolt: empty key")
	errGoexit   = errors.New("kv/bolt: Update fn called runtime.Goexit (t.FailNow?)")
)

// Options configures Open. The zero value is a good default.
type Options struct {
	// NoSync skips fsync on commit. For tests only: a crash (not a clean
	// Close) may lose acknowledged writes or corrupt the file.
	NoSync bool
	// InitialMmapSize is the initial size of the memory map in bytes (0: 1
	// GiB on 64-bit platforms). It reserves address space, not disk. While
	// the data fits, a commit never has to wait for open read transactions
	// to remap the file.
	InitialMmapSize int
	// MaxBatchOps caps how many Update fns share one commit (0:
	// DefaultMaxBatchOps).
	MaxBatchOps int
	// MaxBatchBytes closes a group once its fns have written this many key
	// and value bytes (0: DefaultMaxBatchBytes). A single fn may exceed it.
	MaxBatchBytes int
	// LockTimeout bounds the wait for the file lock held by another process
	// (0: DefaultLockTimeout; negative: wait forever).
	LockTimeout time.Duration
}

// DB is a kv.Store over one bbolt file. It is safe for concurrent use.
type DB struct {
	bdb      *bbolt.DB
	maxOps   int
	maxBytes int

	gate *kv.Gate // counts in-flight View/Update calls; closed by Close

	qmu   sync.Mutex
	queue []*request // guarded by qmu

	wake chan struct{} // cap 1: queue may be non-empty
	stop chan struct{} // closed by Close once no call is in flight
	wg   sync.WaitGroup

	// Owned by the writer goroutine.
	pending []*request // taken from queue, not yet run
	cur     *group     // group being run, nil between groups

	commits atomic.Uint64 // number of group commits (for tests and benchmarks)

	// commitHook, when set (tests only), runs before each commit; an error
	// makes the commit fail.
	commitHook func() error
}

// Open opens or creates the database file at path.
func Open(path string, opts Options) (*DB, error) {
	bo := &bbolt.Options{
		Timeout:         opts.LockTimeout,
		NoFreelistSync:  true,
		FreelistType:    bbolt.FreelistMapType,
		InitialMmapSize: opts.InitialMmapSize,
		NoSync:          opts.NoSync,
	}
	switch {
	case bo.Timeout == 0:
		bo.Timeout = DefaultLockTimeout
	case bo.Timeout < 0:
		bo.Timeout = 0
	}
	if bo.InitialMmapSize <= 0 {
		bo.InitialMmapSize = defaultInitialMmapSize()
	}
	bdb, err := bbolt.Open(path, 0o600, bo)
	if err != nil {
		return nil, fmt.Errorf("kv/bolt: open %s: %w", path, err)
	}
	err = bdb.Update(func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketName)
		return err
	})
	if err != nil {
		bdb.Close()
		return nil, fmt.Errorf("kv/bolt: open %s: %w", path, err)
	}
	db := &DB{
		bdb:      bdb,
		maxOps:   opts.MaxBatchOps,
		maxBytes: opts.MaxBatchBytes,
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
	}
	if db.maxOps <= 0 {
		db.maxOps = DefaultMaxBatchOps
	}
	if db.maxBytes <= 0 {
		db.maxBytes = DefaultMaxBatchBytes
	}
	db.gate = kv.NewGate()
	db.wg.Add(1)
	go db.writeLoop()
	return db, nil
}

func unavailable(err error) error {
	return fmt.Errorf("%w: %w", kv.ErrUnavailable, err)
}

// View implements kv.Store.
func (db *DB) View(ctx context.Context, fn func(kv.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !db.gate.Enter() {
		return kv.ErrClosed
	}
	defer db.gate.Leave()
	btx, err := db.bdb.Begin(false)
	if err != nil {
		return unavailable(err)
	}
	defer btx.Rollback()
	t := &tx{b: btx.Bucket(bucketName)}
	defer func() { t.done = true }()
	return fn(t)
}

// Update implements kv.Store. fn runs on the writer goroutine, exactly once
// unless ctx is done before it starts (then it does not run at all and
// Update returns ctx.Err()).
func (db *DB) Update(ctx context.Context, fn func(kv.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !db.gate.Enter() {
		return kv.ErrClosed
	}
	defer db.gate.Leave()
	r := &request{ctx: ctx, fn: fn, done: make(chan struct{})}
	db.qmu.Lock()
	db.queue = append(db.queue, r)
	db.qmu.Unlock()
	select {
	case db.wake <- struct{}{}:
	default:
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		if r.state.CompareAndSwap(stateQueued, stateCancelled) {
			return ctx.Err()
		}
		// The writer has claimed it: its outcome is decided by the commit.
		<-r.done
		return r.err
	}
}

// Close stops accepting transactions, waits for in-flight ones (queued
// Updates are run and committed), and closes the file. Later calls to View,
// Update and Close return kv.ErrClosed.
func (db *DB) Close() error {
	if !db.gate.Close() {
		return kv.ErrClosed
	}
	<-db.gate.Drained()
	close(db.stop)
	db.wg.Wait()
	if err := db.bdb.Close(); err != nil {
		return unavailable(err)
	}
	return nil
}

const (
	stateQueued uint32 = iota
	stateClaimed
	stateCancelled
)

type request struct {
	ctx   context.Context
	fn    func(kv.Tx) error
	state atomic.Uint32
	err   error         // written by the writer before done is closed
	done  chan struct{} // closed when err is final
}

func (r *request) claim() bool { return r.state.CompareAndSwap(stateQueued, stateClaimed) }

func (r *request) finish(err error) {
	r.err = err
	close(r.done)
}

type group struct {
	btx     *bbolt.Tx
	members []*request // fns that ran (or are running) in btx
	dirty   bool       // some member's writes are still in btx
}

// abort rolls back the group and fails every member.
func (db *DB) abort(cause error) {
	g := db.cur
	if g == nil {
		return
	}
	db.cur = nil
	_ = g.btx.Rollback()
	err := unavailable(cause)
	for _, r := range g.members {
		r.finish(err)
	}
}

func (db *DB) writeLoop() {
	normal := false
	defer func() {
		if !normal {
			// An Update fn called runtime.Goexit on this goroutine (a
			// panic would have been recovered in runFn). Fail its group and
			// carry on in a fresh goroutine, which inherits the wg count.
			db.abort(errGoexit)
			go db.writeLoop()
			return
		}
		db.wg.Done()
	}()
	for {
		if len(db.pending) == 0 {
			db.qmu.Lock()
			db.pending, db.queue = db.queue, nil
			db.qmu.Unlock()
		}
		if len(db.pending) > 0 {
			db.runGroup()
			continue
		}
		select {
		case <-db.wake:
		case <-db.stop:
			// Close waited for every call to return, so only requests
			// abandoned by cancelled callers can be left; skip them.
			db.qmu.Lock()
			n := len(db.queue)
			db.qmu.Unlock()
			if n == 0 {
				normal = true
				return
			}
		}
	}
}

// runGroup runs pending requests in one read-write transaction and commits.
func (db *DB) runGroup() {
	btx, err := db.bdb.Begin(true)
	if err != nil {
		err = unavailable(err)
		for _, r := range db.pending {
			if r.claim() {
				r.finish(err)
			}
		}
		db.pending = nil
		return
	}
	g := &group{btx: btx}
	db.cur = g
	b := btx.Bucket(bucketName)
	written := 0
	for len(db.pending) > 0 && len(g.members) < db.maxOps && written < db.maxBytes {
		r := db.pending[0]
		db.pending[0] = nil
		db.pending = db.pending[1:]
		if !r.claim() {
			continue // caller gave up
		}
		if err := r.ctx.Err(); err != nil {
			r.finish(err)
			continue
		}
		g.members = append(g.members, r)
		t := &tx{b: b, writable: true}
		r.err = runFn(t, r.fn)
		if t.poisoned {
			db.abort(r.err)
			return
		}
		if r.err == nil && len(t.undo) > 0 {
			g.dirty = true
		}
		written += t.written
	}
	if len(db.pending) == 0 {
		db.pending = nil // drop the backing array
	}
	db.cur = nil
	var cerr error
	if !g.dirty {
		_ = btx.Rollback() // nothing to make durable
	} else {
		if db.commitHook != nil {
			if cerr = db.commitHook(); cerr != nil {
				_ = btx.Rollback()
			}
		}
		if cerr == nil {
			cerr = btx.Commit()
		}
		db.commits.Add(1)
	}
	if cerr != nil {
		// Even fns that failed saw uncommitted state: do not trust their
		// results either.
		cerr = unavailable(fmt.Errorf("commit: %w", cerr))
		for _, r := range g.members {
			r.err = cerr
		}
	}
	for _, r := range g.members {
		close(r.done)
	}
}

// runFn runs fn on t. If fn fails or panics, its writes are undone; if that
// is impossible, t is marked poisoned and the whole group must be aborted.
func runFn(t *tx, fn func(kv.Tx) error) (err error) {
	normal := false
	defer func() {
		t.done = true
		if normal {
			return
		}
		p := recover()
		if p == nil {
			return // runtime.Goexit: writeLoop aborts the group
		}
		err = fmt.Errorf("kv/bolt: panic in Update fn: %v\n%s", p, debug.Stack())
		if t.inBackend {
			t.poisoned = true // bbolt's state may be half-updated
			return
		}
		if uerr := t.rollback(); uerr != nil {
			t.poisoned = true
		}
	}()
	err = fn(t)
	normal = true
	if err != nil {
		if uerr := t.rollback(); uerr != nil {
			t.poisoned = true
			err = uerr
		}
	}
	return err
}

type undoRec struct {
	key     []byte
	val     []byte // previous value (a copy); valid if existed
	existed bool
}

// tx implements kv.Tx over a bbolt bucket. In Update, several tx values
// share one bbolt transaction in turn; each keeps the undo log of its own
// writes.
type tx struct {
	b         *bbolt.Bucket
	writable  bool
	done      bool
	undo      []undoRec
	mutations int // bumped by every Put/Delete; Scan re-seeks when it changes
	written   int // key+value bytes put
	inBackend bool
	poisoned  bool
}

var emptyValue = []byte{}

func (t *tx) check(write bool) error {
	if t.done {
		return errTxDone
	}
	if write && !t.writable {
		return kv.ErrReadOnly
	}
	return nil
}

func (t *tx) lookup(key []byte) ([]byte, bool) {
	if len(key) == 0 {
		return nil, false
	}
	k, v := t.b.Cursor().Seek(key)
	if k == nil || !bytes.Equal(k, key) {
		return nil, false
	}
	if v == nil {
		v = emptyValue
	}
	return v, true
}

// Get implements kv.Tx.
func (t *tx) Get(key []byte) ([]byte, error) {
	if err := t.check(false); err != nil {
		return nil, err
	}
	v, ok := t.lookup(key)
	if !ok {
		return nil, kv.ErrNotFound
	}
	return v, nil
}

// Put implements kv.Tx. Key and value are copied.
func (t *tx) Put(key, value []byte) error {
	if err := t.check(true); err != nil {
		return err
	}
	if len(key) == 0 {
		return errEmptyKey
	}
	if len(key) > bbolt.MaxKeySize || int64(len(value)) > bbolt.MaxValueSize {
		return fmt.Errorf("kv/bolt: key of %d bytes or value of %d bytes too large", len(key), len(value))
	}
	rec := undoRec{key: bytes.Clone(key)}
	if old, ok := t.lookup(key); ok {
		rec.val, rec.existed = bytes.Clone(old), true
	}
	v := make([]byte, len(value)) // bbolt keeps the slice until commit
	copy(v, value)
	t.inBackend = true
	err := t.b.Put(rec.key, v)
	t.inBackend = false
	if err != nil {
		return fmt.Errorf("kv/bolt: put: %w", err)
	}
	t.undo = append(t.undo, rec)
	t.mutations++
	t.written += len(key) + len(value)
	return nil
}

// Delete implements kv.Tx.
func (t *tx) Delete(key []byte) error {
	if err := t.check(true); err != nil {
		return err
	}
	old, ok := t.lookup(key)
	if !ok {
		return nil
	}
	rec := undoRec{key: bytes.Clone(key), val: bytes.Clone(old), existed: true}
	t.inBackend = true
	err := t.b.Delete(rec.key)
	t.inBackend = false
	if err != nil {
		return fmt.Errorf("kv/bolt: delete: %w", err)
	}
	t.undo = append(t.undo, rec)
	t.mutations++
	t.written += len(key)
	return nil
}

// rollback undoes this tx's writes, newest first.
func (t *tx) rollback() error {
	for i := len(t.undo) - 1; i >= 0; i-- {
		r := t.undo[i]
		var err error
		if r.existed {
			err = t.b.Put(r.key, r.val)
		} else {
			err = t.b.Delete(r.key)
		}
		if err != nil {
			return unavailable(fmt.Errorf("undo: %w", err))
		}
	}
	t.undo = nil
	return nil
}

// Scan implements kv.Tx. fn may call Put and Delete (see the package doc).
func (t *tx) Scan(start, end []byte, limit int, reverse bool, fn func(key, value []byte) bool) error {
	if err := t.check(false); err != nil {
		return err
	}
	if end != nil && bytes.Compare(start, end) >= 0 {
		return nil
	}
	c := t.b.Cursor()
	var k, v []byte
	// seekFirst positions c on the first key to visit: the smallest key
	// >= from (ascending) or the largest key < from (descending, from nil
	// meaning no bound).
	seekFirst := func(from []byte) {
		if !reverse {
			k, v = c.Seek(from)
			return
		}
		if from == nil {
			k, v = c.Last()
			return
		}
		if k, _ = c.Seek(from); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	}
	if reverse {
		seekFirst(end)
	} else {
		seekFirst(start)
	}
	for n := 0; k != nil; {
		if reverse {
			if bytes.Compare(k, start) < 0 {
				return nil
			}
		} else if end != nil && bytes.Compare(k, end) >= 0 {
			return nil
		}
		if v == nil {
			v = emptyValue
		}
		m := t.mutations
		if !fn(k, v) {
			return nil
		}
		if n++; limit > 0 && n >= limit {
			return nil
		}
		if t.mutations == m {
			if reverse {
				k, v = c.Prev()
			} else {
				k, v = c.Next()
			}
			continue
		}
		// fn wrote: the cursor may be stale. Re-seek past the visited key.
		last := bytes.Clone(k)
		c = t.b.Cursor()
		seekFirst(last)
		if !reverse && k != nil && bytes.Equal(k, last) {
			k, v = c.Next()
		}
	}
	return nil
}

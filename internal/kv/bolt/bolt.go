// Package bolt is the embedded kv.Store backend: one bbolt file, one bucket,
// with a write-ahead log in front of it.
//
// Writes (Update) use group commit. Callers enqueue their fn; a single writer
// goroutine takes the queued requests and runs the fns one after the other
// (so a group is trivially serializable: each fn sees the writes of the fns
// before it) in one long-lived bbolt read-write transaction that holds every
// group since the last checkpoint. A fn that returns an error (or panics)
// has its own writes undone from an undo log, while the rest of the group
// goes on. The group's net writes are then appended to the log (wal.go) as
// one record, and the writer moves on to the next group at once: a second
// goroutine, the syncer, fdatasyncs the log (one fdatasync for every record
// written meanwhile) and only then publishes the group's writes to readers
// and answers its callers, in order. The log write is sequential and one
// fdatasync covers many groups, where a bbolt commit writes every dirty page
// of the B+tree and fdatasyncs twice.
//
// A checkpoint (every few thousand writes, when the log fills, when idle and
// on Close) waits for the syncer, commits the bbolt transaction (with
// bbolt's own fsyncs) together with the sequence number of the last group
// it holds, and starts the log again from its beginning. Open replays the
// records after the last checkpoint. If the log cannot be written or
// synced, the groups not yet answered fail with kv.ErrUnavailable, and the
// next group first rebuilds the transaction from the published (durable)
// groups and checkpoints it.
//
// Reads (View) run on the caller's goroutine over a bbolt read transaction
// (the state of the last checkpoint) plus the published groups since, held
// in memory as immutable sorted layers (overlay.go): a consistent snapshot
// of exactly the acknowledged writes, which never blocks writers.
//
// Consequences for callers, beyond the kv contract:
//   - Update fns run on the writer goroutine, not the caller's. They must
//     not call Update or Close (that deadlocks) and should not block: a slow
//     fn delays every other writer. t.FailNow inside a fn is caught (the group is
//     aborted with kv.ErrUnavailable) but is still a bug.
//   - Do not call Update from inside a View fn: if the file has to grow past
//     the mapped size, the checkpoint waits for open read transactions.
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
	cryptorand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	berrors "go.etcd.io/bbolt/errors"

	bbolt "go.etcd.io/bbolt"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/vfs"
)

var _ kv.Store = (*DB)(nil)

var (
	bucketName = []byte("kv")
	// walBucket holds appliedKey, the sequence number of the last log
	// record the committed bbolt state contains, and logIDKey, the
	// database's random log id.
	walBucket  = []byte("wal")
	appliedKey = []byte("applied")
	logIDKey   = []byte("id")
	// formatKey records the log's record format (walFormat); databases
	// from before it have none and an older log.
	formatKey = []byte("format")
)

// Defaults for Options fields left zero.
const (
	DefaultMaxBatchOps   = 256
	DefaultMaxBatchBytes = 8 << 20
	DefaultLockTimeout   = 10 * time.Second
)

// Checkpoint triggers: writes held in memory since the last checkpoint, a
// quiet spell, and an age bound. A checkpoint also happens when the log
// is half full.
var (
	checkpointEntries = 8192                  // a variable so tests can checkpoint often
	checkpointIdle    = 50 * time.Millisecond // and keep records in the log
)

const (
	checkpointBytes = 32 << 20
	checkpointAge   = 2 * time.Second
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
	// NoSync skips fsync (log and bbolt). For tests only: a crash (not a
	// clean Close) may lose acknowledged writes or corrupt the file.
	NoSync bool
	// InitialMmapSize is the initial size of the memory map in bytes (0: 1
	// GiB on 64-bit platforms). It reserves address space, not disk. While
	// the data fits, a checkpoint never has to wait for open read
	// transactions to remap the file.
	InitialMmapSize int
	// MaxBatchOps caps how many Update fns share one group (0:
	// DefaultMaxBatchOps).
	MaxBatchOps int
	// MaxBatchBytes closes a group once its fns have written this many key
	// and value bytes (0: DefaultMaxBatchBytes). A single fn may exceed it.
	MaxBatchBytes int
	// LockTimeout bounds the wait for the file lock held by another process
	// (0: DefaultLockTimeout; negative: wait forever).
	LockTimeout time.Duration
	// LogSize is the size the write-ahead log file grows to (0: 64 MiB,
	// or 4 MiB with NoSync). A new log starts at 1 MiB (or LogSize, if
	// smaller) and doubles at a checkpoint forced by the log filling up
	// (wal.go). An existing log keeps at least its size.
	LogSize int64
	// FS is the filesystem the database file and its log are opened on
	// (nil: the operating system's). Tests put a fault-injecting one here.
	FS vfs.FS
}

// DB is a kv.Store over one bbolt file and its log. It is safe for
// concurrent use.
type DB struct {
	walBuf   []byte // writeRecords' buffer for batches of several records (syncer only)
	bdb      *bbolt.DB
	wal      *wal
	noSync   bool
	maxOps   int
	maxBytes int

	gate *kv.Gate // counts in-flight View/Update calls; closed by Close

	qmu   sync.Mutex
	queue []*request // guarded by qmu

	wake chan struct{} // cap 1: queue may be non-empty
	stop chan struct{} // closed by Close once no call is in flight
	wg   sync.WaitGroup

	// Owned by the writer goroutine.
	pending   []*request    // taken from queue, not yet run
	npending  atomic.Int64  // len(pending), for WritesQueued
	writes    atomic.Uint64 // Update calls made (Writes)
	cur       *group        // group being run, nil between groups
	wtx       *bbolt.Tx     // holds every group since the last checkpoint; nil: none open
	seq       uint64        // sequence number of the last log record written
	dirty     bool          // wtx holds writes not yet checkpointed
	wdeleted  bool          // wtx deleted keys: its tree may hold emptied leaves until it commits (getSeek)
	held      int           // entries written since the last checkpoint
	heldBytes int           // their bytes
	lastCkpt  time.Time
	rebuild   bool  // wtx is in an unknown state: rebuild it before the next group
	growLog   int64 // > 0: the log filled up; the next checkpoint grows it to hold this many bytes

	syncq chan *syncItem // writer → syncer, in group order

	rs atomic.Pointer[readState] // what View sees; stored by the syncer and, between groups, the writer

	// ckpt is closed, and replaced, each time a checkpoint stores a new
	// read state: View waits on it when its snapshot and the bbolt
	// transaction it opened disagree.
	ckptMu sync.Mutex
	ckpt   chan struct{}

	emu     sync.Mutex
	syncErr error // sticky log failure; guarded by emu

	commits atomic.Uint64 // group commits: log records (for tests and benchmarks)

	// commitHook, when set (tests only), runs before each log fdatasync and
	// each checkpoint; an error makes it fail.
	commitHook func() error
}

// Open opens or creates the database file at path and its log at
// path+".wal", replaying the log records written after the last
// checkpoint.
func Open(path string, opts Options) (*DB, error) {
	fsys := vfs.Or(opts.FS)
	// A file created here needs its directory synced too, or a crash
	// right after the first start can lose the file itself.
	created := false
	for _, p := range []string{path, path + ".wal"} {
		if _, err := fsys.Stat(p); errors.Is(err, fs.ErrNotExist) {
			created = true
		} else if err != nil {
			return nil, fmt.Errorf("kv/bolt: open %s: %w", p, err)
		}
	}
	bo := &bbolt.Options{
		OpenFile:        fsys.OpenOSFile,
		Timeout:         opts.LockTimeout,
		NoFreelistSync:  true,
		FreelistType:    bbolt.FreelistMapType,
		InitialMmapSize: opts.InitialMmapSize,
		NoSync:          opts.NoSync,
		// Nothing reads bbolt's Stats; collecting them costs atomic
		// adds on shared counters in every transaction and cursor.
		NoStatistics: true,
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
		return nil, fmt.Errorf("kv/bolt: open %s: %w", path, lockErr(err))
	}
	if opts.LogSize <= 0 {
		opts.LogSize = walDefaultSize
		if opts.NoSync {
			opts.LogSize = walTestSize // tests open many stores
		}
	}
	// A new log is zero-filled in the background on the operating
	// system's filesystem; a filesystem given in Options (tests that
	// inject faults at each write) sees the fill inline, in a fixed order.
	w, err := openWAL(fsys, path+".wal", min(opts.LogSize, walInitialSize), !opts.NoSync, opts.FS == nil)
	if err != nil {
		bdb.Close()
		return nil, fmt.Errorf("kv/bolt: open %s.wal: %w", path, err)
	}
	w.max, w.durable = max(opts.LogSize, w.size), !opts.NoSync
	if created && !opts.NoSync {
		if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
			w.close()
			bdb.Close()
			return nil, fmt.Errorf("kv/bolt: open %s: sync directory: %w", path, err)
		}
	}
	db := &DB{
		bdb:      bdb,
		wal:      w,
		noSync:   opts.NoSync,
		maxOps:   opts.MaxBatchOps,
		maxBytes: opts.MaxBatchBytes,
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		syncq:    make(chan *syncItem, 4096),
		lastCkpt: time.Now(),
		ckpt:     make(chan struct{}),
	}
	if err := db.recoverLog(); err != nil {
		w.close()
		bdb.Close()
		return nil, fmt.Errorf("kv/bolt: open %s: %w", path, err)
	}
	if db.maxOps <= 0 {
		db.maxOps = DefaultMaxBatchOps
	}
	if db.maxBytes <= 0 {
		db.maxBytes = DefaultMaxBatchBytes
	}
	db.gate = kv.NewGate()
	db.wg.Add(2)
	go db.writeLoop()
	go db.syncLoop()
	return db, nil
}

// recoverLog creates the buckets, replays the log records after the last
// checkpoint into bbolt and commits them, and sets the read state.
func (db *DB) recoverLog() error {
	btx, err := db.bdb.Begin(true)
	if err != nil {
		return err
	}
	defer btx.Rollback()
	b, err := btx.CreateBucketIfNotExists(bucketName)
	if err != nil {
		return err
	}
	// A log is replayed only into the database it belongs to: one that
	// has recorded a checkpoint. Next to a new (or pre-log) database file,
	// whatever the log holds is left behind, and overwritten.
	wb := btx.Bucket(walBucket)
	var applied, last uint64
	if wb == nil {
		if wb, err = btx.CreateBucket(walBucket); err != nil {
			return err
		}
		id := make([]byte, 16)
		_, _ = cryptorand.Read(id)
		if err := wb.Put(logIDKey, id); err != nil {
			return err
		}
		db.wal.id = id
	} else {
		db.wal.id = bytes.Clone(wb.Get(logIDKey))
		if v := wb.Get(appliedKey); len(v) == 8 {
			applied = binary.BigEndian.Uint64(v)
		}
		switch v := wb.Get(formatKey); {
		case v == nil:
			db.wal.hdr = walHeaderV1 // written before the synced field
		case len(v) != 1 || v[0] != walFormat:
			return fmt.Errorf("kv/bolt: unknown log format %x", v)
		}
		last, err = db.wal.replay(applied, func(_ uint64, es []entry) error {
			return applyEntries(b, es)
		})
		if err != nil {
			return err
		}
	}
	if err := wb.Put(appliedKey, binary.BigEndian.AppendUint64(nil, last)); err != nil {
		return err
	}
	// The log starts again from offset 0, in the current format.
	if err := wb.Put(formatKey, []byte{walFormat}); err != nil {
		return err
	}
	id := btx.ID()
	if err := btx.Commit(); err != nil {
		return err
	}
	db.seq = last
	db.wal.off, db.wal.hdr, db.wal.synced = 0, walHeader, last
	db.rs.Store(&readState{txid: id})
	return nil
}

// applyEntries writes es into b. Values are copied: bbolt keeps the
// slices until the commit and es may point into a buffer reused later.
func applyEntries(b *bbolt.Bucket, es []entry) error {
	for _, e := range es {
		var err error
		if e.del {
			err = b.Delete(e.key)
		} else {
			err = b.Put(bytes.Clone(e.key), append(make([]byte, 0, len(e.val)), e.val...))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func unavailable(err error) error {
	return fmt.Errorf("%w: %w", kv.ErrUnavailable, err)
}

// View implements kv.Store.
func (db *DB) View(ctx context.Context, fn func(kv.Tx) error) error {
	if err := db.gate.Admit(ctx); err != nil {
		return err
	}
	defer db.gate.Leave()
	btx, rs, err := db.snapshot(ctx)
	if err != nil {
		return err
	}
	defer btx.Rollback()
	t := &tx{b: btx.Bucket(bucketName)}
	if len(rs.layers) > 0 {
		t.ov = rs
	}
	defer func() { t.done = true }()
	return fn(t)
}

// snapshotWait bounds how long View waits for its snapshot to settle
// before it reports the store unavailable.
var snapshotWait = 5 * time.Second

// snapshot opens a bbolt read transaction and returns it with the read
// state that belongs to it: the layers must sit on the bbolt state the
// transaction sees, and a checkpoint between the two loads moves both
// on. On a mismatch it waits for the checkpoint's read state rather
// than spinning, and gives up when ctx is done or after snapshotWait
// (a checkpoint whose commit became visible but was never answered).
func (db *DB) snapshot(ctx context.Context) (*bbolt.Tx, *readState, error) {
	var timeout <-chan time.Time
	for {
		rs := db.rs.Load()
		btx, err := db.bdb.Begin(false)
		if err != nil {
			return nil, nil, unavailable(err)
		}
		if btx.ID() == rs.txid {
			return btx, rs, nil
		}
		_ = btx.Rollback()
		// storeCheckpoint stores the read state before it closes the
		// channel: a channel taken after that store comes with a new
		// read state, so no checkpoint is missed.
		next := db.nextCheckpoint()
		if db.rs.Load() != rs {
			continue
		}
		if timeout == nil {
			t := time.NewTimer(snapshotWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-next:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-timeout:
			return nil, nil, unavailable(errors.New("no consistent snapshot: the last checkpoint did not complete"))
		}
	}
}

// nextCheckpoint returns a channel closed by the next checkpoint.
func (db *DB) nextCheckpoint() <-chan struct{} {
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	return db.ckpt
}

// storeCheckpoint publishes the read state of a checkpoint.
func (db *DB) storeCheckpoint(rs *readState) {
	db.rs.Store(rs)
	db.ckptMu.Lock()
	close(db.ckpt)
	db.ckpt = make(chan struct{})
	db.ckptMu.Unlock()
}

// Update implements kv.Store. fn runs on the writer goroutine, exactly once
// unless ctx is done before it starts (then it does not run at all and
// Update returns ctx.Err()).
func (db *DB) Update(ctx context.Context, fn func(kv.Tx) error) error {
	if err := db.gate.Admit(ctx); err != nil {
		return err
	}
	defer db.gate.Leave()
	db.writes.Add(1)
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

// WritesQueued implements kv.Queued: the Update calls waiting for the
// writer, queued or taken into the group it runs but not started.
func (db *DB) WritesQueued() int {
	db.qmu.Lock()
	n := len(db.queue)
	db.qmu.Unlock()
	return n + int(db.npending.Load())
}

// Writes implements kv.Counted: the Update calls made so far.
func (db *DB) Writes() uint64 { return db.writes.Load() }

// Close stops accepting transactions, waits for in-flight ones (queued
// Updates are run and committed), checkpoints and closes the files. Later
// calls to View, Update and Close return kv.ErrClosed.
func (db *DB) Close() error {
	if !db.gate.Close() {
		return kv.ErrClosed
	}
	<-db.gate.Drained()
	close(db.stop)
	db.wg.Wait()
	err := db.wal.close()
	if cerr := db.bdb.Close(); cerr != nil {
		err = cerr
	}
	if err != nil {
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
	err   error         // written before done is closed
	done  chan struct{} // closed when err is final
}

func (r *request) claim() bool { return r.state.CompareAndSwap(stateQueued, stateClaimed) }

func (r *request) finish(err error) {
	r.err = err
	close(r.done)
}

type group struct {
	members []*request // fns that ran (or are running) in the group
}

// syncItem is a group handed to the syncer, or a barrier.
type syncItem struct {
	members []*request
	seq     uint64        // the group's sequence number, if rec is set
	l       *layer        // the group's writes; nil if none
	rec     []byte        // its log record (nil if none), to write at off
	off     int64         //
	barrier chan struct{} // closed once every earlier item is done
}

func (db *DB) getSyncErr() error {
	db.emu.Lock()
	defer db.emu.Unlock()
	return db.syncErr
}

func (db *DB) setSyncErr(err error) {
	db.emu.Lock()
	db.syncErr = err
	db.emu.Unlock()
}

// syncLoop makes the log durable and answers groups, in order.
func (db *DB) syncLoop() {
	defer db.wg.Done()
	var batch []*syncItem
	for it := range db.syncq {
		batch = append(batch[:0], it)
	more:
		for {
			select {
			case x, ok := <-db.syncq:
				if !ok {
					break more
				}
				batch = append(batch, x)
			default:
				break more
			}
		}
		need := false
		for _, x := range batch {
			need = need || x.rec != nil
		}
		err := db.getSyncErr()
		if err == nil && need {
			err = db.writeRecords(batch)
			if err == nil && db.commitHook != nil {
				err = db.commitHook()
			}
			if err == nil && !db.noSync {
				err = db.wal.sync()
				if err == nil {
					for _, x := range batch {
						if x.rec != nil {
							db.wal.synced = x.seq
						}
					}
				}
			}
			if err != nil {
				err = unavailable(fmt.Errorf("commit: %w", err))
				db.setSyncErr(err)
			}
		}
		for _, x := range batch {
			if x.barrier != nil {
				close(x.barrier)
				continue
			}
			if err == nil && x.l != nil {
				db.rs.Store(db.rs.Load().with(x.l))
			}
			for _, r := range x.members {
				if err != nil {
					// Even fns that failed saw state that is now lost: do
					// not trust their results either.
					r.err = err
				}
				close(r.done)
			}
		}
	}
}

// writeRecords writes the log records of a batch, which follow each
// other in the log (a checkpoint, which starts the log again, waits for
// the syncer first), with one write.
func (db *DB) writeRecords(batch []*syncItem) error {
	var buf []byte
	var off int64
	n := 0
	for _, x := range batch {
		if x.rec == nil {
			continue
		}
		if n == 0 {
			off, buf = x.off, x.rec // one record: written as it is
		} else {
			if n == 1 {
				buf = append(db.walBuf[:0], buf...)
			}
			buf = append(buf, x.rec...)
		}
		n++
	}
	if n == 0 {
		return nil
	}
	if n > 1 && cap(buf) <= maxWALBuf {
		db.walBuf = buf // reused by the next batch (only the syncer writes)
	}
	return db.wal.write(buf, off)
}

// maxWALBuf bounds the buffer writeRecords keeps for the next batch.
const maxWALBuf = 1 << 20

// barrier waits until the syncer has handled every group sent so far.
func (db *DB) barrier() {
	ch := make(chan struct{})
	db.syncq <- &syncItem{barrier: ch}
	<-ch
}

// abortGroup fails every member of the current group; the transaction is
// rebuilt before the next one.
func (db *DB) abortGroup(cause error) {
	g := db.cur
	if g == nil {
		return
	}
	db.cur = nil
	db.rebuild = true
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
			db.abortGroup(errGoexit)
			go db.writeLoop()
			return
		}
		db.wg.Done()
	}()
	idle := time.NewTimer(time.Hour)
	idle.Stop()
	for {
		if len(db.pending) == 0 {
			db.qmu.Lock()
			db.pending, db.queue = db.queue, nil
			db.qmu.Unlock()
			db.npending.Store(int64(len(db.pending)))
		}
		if len(db.pending) > 0 {
			db.runGroup()
			continue
		}
		if db.dirty {
			idle.Reset(checkpointIdle)
		}
		select {
		case <-db.wake:
		case <-idle.C:
			// prepare first: after a failed checkpoint the transaction
			// has to be rebuilt before it can be committed.
			if db.dirty && db.prepare() == nil {
				_ = db.checkpoint()
			}
		case <-db.stop:
			// Close waited for every call to return, so only requests
			// abandoned by cancelled callers can be left; skip them.
			db.qmu.Lock()
			n := len(db.queue)
			db.qmu.Unlock()
			if n == 0 {
				idle.Stop()
				if err := db.prepare(); err == nil {
					_ = db.checkpoint()
				}
				if db.wtx != nil {
					_ = db.wtx.Rollback()
					db.wtx = nil
				}
				close(db.syncq)
				normal = true
				return
			}
		}
		idle.Stop()
	}
}

// prepare readies the write transaction: after a log failure or an
// aborted group it rolls back and rebuilds it from the published groups
// and checkpoints, so that the log starts clean.
func (db *DB) prepare() error {
	if db.rebuild || db.getSyncErr() != nil {
		db.barrier()
		if db.wtx != nil {
			_ = db.wtx.Rollback()
			db.wtx = nil
		}
		btx, err := db.bdb.Begin(true)
		if err != nil {
			return unavailable(err)
		}
		b := btx.Bucket(bucketName)
		for _, l := range db.rs.Load().layers {
			if err := applyEntries(b, l.es); err != nil {
				_ = btx.Rollback()
				return unavailable(err)
			}
		}
		db.wtx, db.dirty, db.wdeleted = btx, true, true // applyEntries may delete
		db.setSyncErr(nil)
		if err := db.checkpoint(); err != nil {
			db.setSyncErr(err) // fail groups until a rebuild succeeds
			return err
		}
		db.rebuild = false
	}
	if db.wtx == nil {
		btx, err := db.bdb.Begin(true)
		if err != nil {
			return unavailable(err)
		}
		db.wtx, db.wdeleted = btx, false
	}
	return nil
}

// checkpoint commits the write transaction into bbolt, durably, and
// starts the log from its beginning.
func (db *DB) checkpoint() error {
	db.barrier()
	if err := db.getSyncErr(); err != nil {
		return err
	}
	if db.wtx == nil || !db.dirty {
		return nil
	}
	var err error
	if db.commitHook != nil {
		err = db.commitHook()
	}
	if err == nil {
		err = db.wtx.Bucket(walBucket).Put(appliedKey, binary.BigEndian.AppendUint64(nil, db.seq))
	}
	id := db.wtx.ID()
	if err == nil {
		err = db.wtx.Commit()
		if err != nil {
			db.visibleCommit(id)
		}
	} else {
		_ = db.wtx.Rollback()
	}
	db.wtx = nil
	if err != nil {
		// The published groups are durable in the log, which is kept:
		// rebuild the transaction from them before the next group.
		db.rebuild = true
		return unavailable(fmt.Errorf("checkpoint: %w", err))
	}
	db.storeCheckpoint(&readState{txid: id})
	db.wal.off = 0
	db.dirty, db.held, db.heldBytes = false, 0, 0
	db.lastCkpt = time.Now()
	if need := db.growLog; need > 0 {
		db.growLog = 0
		// A log that cannot grow stays as it is: it still works, with
		// more checkpoints.
		_, _ = db.wal.grow(need)
	}
	return nil
}

// visibleCommit handles a bbolt commit that failed after writing its meta
// page (its final fdatasync failed): new read transactions then see
// transaction id, which holds exactly the published groups (checkpoint
// runs after a barrier, with no failed group), so readers get it with
// the same layers instead of waiting for a checkpoint that may not come
// while the disk fails. bbolt's rollback rebuilt its free list from that
// same visible tree (NoFreelistSync: it scans the pages reachable from
// the newest meta page), so later writes do not reuse its pages; and the
// log, not reset, still holds the groups should the meta page be lost.
func (db *DB) visibleCommit(id int) {
	rtx, err := db.bdb.Begin(false)
	if err != nil {
		return
	}
	seen := rtx.ID()
	_ = rtx.Rollback()
	if seen == id {
		cur := db.rs.Load()
		db.storeCheckpoint(&readState{txid: id, layers: cur.layers, entries: cur.entries})
	}
}

// runGroup runs pending requests in the write transaction, logs their
// writes and hands the group to the syncer.
func (db *DB) runGroup() {
	if err := db.prepare(); err != nil {
		for _, r := range db.pending {
			if r.claim() {
				r.finish(err)
			}
		}
		db.pending = nil
		db.npending.Store(0)
		return
	}
	g := &group{}
	db.cur = g
	b := db.wtx.Bucket(bucketName)
	written := 0
	var net netWrites
	for len(db.pending) > 0 && len(g.members) < db.maxOps && written < db.maxBytes {
		r := db.pending[0]
		db.pending[0] = nil
		db.pending = db.pending[1:]
		db.npending.Store(int64(len(db.pending)))
		if !r.claim() {
			continue // caller gave up
		}
		if err := r.ctx.Err(); err != nil {
			r.finish(err)
			continue
		}
		g.members = append(g.members, r)
		t := &tx{b: b, writable: true, wdel: &db.wdeleted}
		r.err = runFn(t, r.fn)
		if t.poisoned {
			db.abortGroup(r.err)
			return
		}
		if r.err == nil {
			net.add(t.undo)
		}
		written += t.written
	}
	if len(db.pending) == 0 {
		db.pending = nil // drop the backing array
	}
	db.cur = nil
	it := &syncItem{members: g.members}
	if len(net.es) > 0 {
		es := net.sorted()
		db.seq++
		rec := encodeRecord(db.seq, es)
		off, fits := db.wal.reserve(len(rec))
		if !fits {
			// A record too big for the rest of the log: checkpoint this
			// group with the earlier ones.
			db.seq--
			db.dirty = true
			db.growLog = max(db.growLog, int64(2*len(rec)))
			db.commits.Add(1)
			if err := db.checkpoint(); err != nil {
				for _, r := range g.members {
					r.err = err
				}
			}
			for _, r := range g.members {
				close(r.done)
			}
			return
		}
		it.l, it.rec, it.off, it.seq = &layer{es: es}, rec, off, db.seq
		db.dirty = true
		db.held += len(es)
		db.heldBytes += len(rec)
		db.commits.Add(1)
	}
	db.syncq <- it
	if db.wal.off >= db.wal.size/2 {
		db.growLog = max(db.growLog, 2*db.wal.size)
	}
	if db.held >= checkpointEntries || db.heldBytes >= checkpointBytes || db.wal.off >= db.wal.size/2 ||
		(db.dirty && time.Since(db.lastCkpt) >= checkpointAge) {
		_ = db.checkpoint()
	}
}

// netWrites collects a group's net writes: the last put value or delete
// of each key the group's successful fns wrote, taken from their undo
// logs (which hold the values as given to bbolt), so no key is looked up
// again.
type netWrites struct {
	es  []entry
	idx map[string]int // key -> index in es
}

// add records the writes of one fn, in the order it made them.
func (n *netWrites) add(undo []undoRec) {
	if n.idx == nil && len(undo) > 0 {
		n.idx = make(map[string]int, len(undo))
	}
	for _, u := range undo {
		e := entry{key: u.key, val: u.nv, del: u.del}
		if i, ok := n.idx[string(u.key)]; ok {
			n.es[i] = e
			continue
		}
		n.idx[string(u.key)] = len(n.es)
		n.es = append(n.es, e)
	}
}

// sorted returns the net writes in key order.
func (n *netWrites) sorted() []entry {
	sort.Slice(n.es, func(i, j int) bool { return bytes.Compare(n.es[i].key, n.es[j].key) < 0 })
	return n.es
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
	val     []byte // previous value; valid if existed
	existed bool
	nv      []byte // the value written (the copy bbolt holds); nil for a delete
	del     bool   // the write was a delete
}

// tx implements kv.Tx over a bbolt bucket. In Update, several tx values
// share one bbolt transaction in turn; each keeps the undo log of its own
// writes.
type tx struct {
	b         *bbolt.Bucket
	cur       *bbolt.Cursor // the cursor of its lookups (getSeek)
	ov        *readState    // View only: published groups over b
	wdel      *bool         // Update only: the writer's DB.wdeleted
	writable  bool
	done      bool
	undo      []undoRec
	mutations int // bumped by every Put/Delete; Scan re-seeks when it changes
	written   int // key+value bytes put
	inBackend bool
	poisoned  bool
}

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
	if t.ov != nil {
		if e, ok := t.ov.get(key); ok {
			if e.del {
				return nil, false
			}
			return e.val, true
		}
	}
	if t.wdel == nil || !*t.wdel {
		return t.getSeek(key)
	}
	return getExact(t.b, key)
}

// getSeek is getExact with one cursor for all of the transaction's
// lookups, so a lookup after the first allocates nothing (Bucket.Get
// makes a cursor, and grows its stack, each time: three to four
// allocations). Seek is safe where no leaf is empty: in a View, whose
// tree is committed (bbolt's commit removes emptied leaves), and in the
// writer's transaction until it deletes a key (DB.wdeleted); there the
// step forward Seek takes from the end of a leaf goes to the next key,
// not over a run of empty leaves (see getExact).
func (t *tx) getSeek(key []byte) ([]byte, bool) {
	if t.cur == nil {
		t.cur = t.b.Cursor()
	}
	k, v := t.cur.Seek(key)
	// A nested bucket's value is nil; this store creates none.
	if v == nil || !bytes.Equal(k, key) {
		return nil, false
	}
	if len(v) == 0 {
		v = emptyValue
	}
	return v, true
}

// getExact is an exact lookup of key in b. It must not be written with
// Cursor.Seek: Seek, landing at the end of a leaf, steps forward to the
// next key, and in a write transaction the leaves a long run of deletes
// emptied stay in the tree (bbolt rebalances at commit), so a Seek per
// deleted key walks over all of them each time: quadratic in the size of
// the deleted range (10⁵ adjacent deletes took tens of seconds).
// Bucket.Get descends to the one leaf that may hold key and stops there.
// bbolt returns a nil value only for a missing key (or a nested bucket,
// which this store never creates); an empty value is a non-nil empty
// slice, normalised to emptyValue all the same.
func getExact(b *bbolt.Bucket, key []byte) ([]byte, bool) {
	v := b.Get(key)
	if v == nil {
		return nil, false
	}
	if len(v) == 0 {
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
		// Not copied: old is a page of the memory map or a value an
		// earlier Put copied, and neither changes before the undo log
		// is dropped (when fn returns; the map is replaced only by a
		// checkpoint, between groups, and bbolt copies the values its
		// nodes hold out of the map before it unmaps it).
		rec.val, rec.existed = old, true
	}
	v := make([]byte, len(value)) // bbolt keeps the slice until commit
	copy(v, value)
	rec.nv = v
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
	rec := undoRec{key: bytes.Clone(key), val: old, existed: true, del: true} // not copied: see Put
	*t.wdel = true
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
			*t.wdel = true
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
	if t.ov != nil {
		t.ov.scanMerged(t.b, start, end, limit, reverse, fn)
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

// ErrLocked is returned (wrapped) by Open and Compact when another
// process holds the database's file lock beyond Options.LockTimeout.
var ErrLocked = errors.New("the database is open in another process")

// lockErr turns bbolt's lock timeout into ErrLocked.
func lockErr(err error) error {
	if errors.Is(err, berrors.ErrTimeout) {
		return fmt.Errorf("%w (%v)", ErrLocked, err)
	}
	return err
}

// Package mem is the in-memory kv.Store backend behind `cerulean serve
// --in-memory`: nothing is written to disk and everything is lost when the
// process exits.
//
// The data is a persistent (immutable, path-copying) treap ordered by key.
// A View loads the current root with one atomic read and works on it
// undisturbed: a consistent snapshot that never blocks and is never
// blocked. Update takes the one writer lock, so transactions are trivially
// serializable (each sees every commit before it), and writes a private
// version of the tree: a Put or Delete copies the O(log n) nodes on the
// path to its key, the rest is shared with the published tree. Commit
// publishes the new root with one atomic store; a fn that fails (or
// panics) leaves the published root untouched, so nothing of it is
// visible. Update never runs fn more than once.
//
// Nodes copied by the running Update are not visible to anyone else yet,
// so further writes to them by the same Update change them in place
// instead of copying them again (each Update owns a generation number and
// only mutates nodes of its own generation): a transaction that writes
// many neighbouring keys allocates little more than its new entries. A
// Scan inside an Update starts a new generation, so writes made from its
// callback copy instead of mutating the tree it is walking: a Scan sees
// the transaction's state as of its start.
//
// Update fns run on the caller's goroutine while holding the writer lock:
// they must not call Update themselves (that deadlocks) and should not
// block. A View may call Update.
//
// Slices returned by Get and passed to Scan callbacks are the stored ones:
// valid for ever (values are never modified in place), but callers must
// not modify them, as the kv contract says. Put copies key and value.
package mem

import (
	"bytes"
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// DB is an in-memory kv.Store. The zero value is not usable; call New.
type DB struct {
	root atomic.Pointer[node] // published tree (nil: empty)
	mu   sync.Mutex           // the writer lock
	gate *kv.Gate
	gens atomic.Uint64 // last generation handed out
	// queued counts the Update calls waiting for mu (WritesQueued).
	queued atomic.Int64
	writes atomic.Uint64 // Update calls made (Writes)
}

var _ kv.Store = (*DB)(nil)

// New returns an empty store.
func New() *DB { return &DB{gate: kv.NewGate()} }

// node is one entry of the treap. Nodes reachable from a published root
// are never modified.
type node struct {
	key, val    []byte
	prio        uint64
	left, right *node
	gen         uint64 // the Update that created this copy
}

// View implements kv.Store.
func (db *DB) View(ctx context.Context, fn func(tx kv.Tx) error) error {
	if err := db.gate.Admit(ctx); err != nil {
		return err
	}
	defer db.gate.Leave()
	return fn(&tx{db: db, root: db.root.Load(), readOnly: true})
}

// Update implements kv.Store.
func (db *DB) Update(ctx context.Context, fn func(tx kv.Tx) error) error {
	if err := db.gate.Admit(ctx); err != nil {
		return err
	}
	defer db.gate.Leave()
	db.writes.Add(1)
	db.queued.Add(1)
	db.mu.Lock()
	db.queued.Add(-1)
	defer db.mu.Unlock()
	// The context may have ended while waiting for the lock.
	if err := ctx.Err(); err != nil {
		return err
	}
	t := &tx{db: db, root: db.root.Load(), gen: db.gens.Add(1)}
	if err := fn(t); err != nil {
		return err
	}
	db.root.Store(t.root)
	return nil
}

// WritesQueued implements kv.Queued: the Update calls waiting for the
// one in progress.
func (db *DB) WritesQueued() int { return int(db.queued.Load()) }

// Writes implements kv.Counted: the Update calls made so far.
func (db *DB) Writes() uint64 { return db.writes.Load() }

// Close implements kv.Store: calls in flight finish first, later ones get
// kv.ErrClosed. The data is dropped with the last reference to the store.
func (db *DB) Close() error {
	if !db.gate.Close() {
		return kv.ErrClosed
	}
	<-db.gate.Drained()
	db.root.Store(nil)
	return nil
}

// Len returns the number of keys (for tests and diagnostics; O(n)).
func (db *DB) Len() int {
	n := 0
	var walk func(*node)
	walk = func(x *node) {
		for x != nil {
			n++
			walk(x.left)
			x = x.right
		}
	}
	walk(db.root.Load())
	return n
}

type tx struct {
	db       *DB
	root     *node
	gen      uint64
	readOnly bool
}

// Get implements kv.Tx.
func (t *tx) Get(key []byte) ([]byte, error) {
	x := t.root
	for x != nil {
		switch c := bytes.Compare(key, x.key); {
		case c < 0:
			x = x.left
		case c > 0:
			x = x.right
		default:
			return x.val, nil
		}
	}
	return nil, kv.ErrNotFound
}

// Put implements kv.Tx.
func (t *tx) Put(key, value []byte) error {
	if t.readOnly {
		return kv.ErrReadOnly
	}
	// One allocation for both copies; v is never nil (an empty value is a
	// value), and the capacity limits keep an append to one from reaching
	// the other.
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	t.root = t.insert(t.root, buf[:len(key):len(key)], buf[len(key):len(buf):len(buf)])
	return nil
}

// Delete implements kv.Tx.
func (t *tx) Delete(key []byte) error {
	if t.readOnly {
		return kv.ErrReadOnly
	}
	t.root = t.remove(t.root, key)
	return nil
}

// own returns x itself when this transaction created it, else a copy of
// it that this transaction owns.
func (t *tx) own(x *node) *node {
	if x.gen == t.gen {
		return x
	}
	c := *x
	c.gen = t.gen
	return &c
}

// insert returns root with key set to val. Priorities are random, so the
// expected depth is O(log n) whatever the order of the keys.
func (t *tx) insert(x *node, key, val []byte) *node {
	if x == nil {
		return &node{key: key, val: val, prio: rand.Uint64(), gen: t.gen}
	}
	switch c := bytes.Compare(key, x.key); {
	case c < 0:
		l := t.insert(x.left, key, val)
		x = t.own(x)
		x.left = l
		if l.prio > x.prio { // rotate right; l is owned
			x.left, l.right = l.right, x
			return l
		}
	case c > 0:
		r := t.insert(x.right, key, val)
		x = t.own(x)
		x.right = r
		if r.prio > x.prio { // rotate left; r is owned
			x.right, r.left = r.left, x
			return r
		}
	default:
		x = t.own(x)
		x.val = val
	}
	return x
}

// remove returns root without key (root itself when key is absent).
func (t *tx) remove(x *node, key []byte) *node {
	if x == nil {
		return nil
	}
	switch c := bytes.Compare(key, x.key); {
	case c < 0:
		l := t.remove(x.left, key)
		if l == x.left {
			return x
		}
		x = t.own(x)
		x.left = l
	case c > 0:
		r := t.remove(x.right, key)
		if r == x.right {
			return x
		}
		x = t.own(x)
		x.right = r
	default:
		return t.merge(x.left, x.right)
	}
	return x
}

// merge joins two treaps whose keys are all in order (every key of a below
// every key of b).
func (t *tx) merge(a, b *node) *node {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.prio > b.prio:
		r := t.merge(a.right, b)
		a = t.own(a)
		a.right = r
		return a
	default:
		l := t.merge(a, b.left)
		b = t.own(b)
		b.left = l
		return b
	}
}

// Scan implements kv.Tx. It walks the tree as it was when Scan began;
// writes made by fn (in an Update) do not disturb it.
func (t *tx) Scan(start, end []byte, limit int, reverse bool, fn func(key, value []byte) bool) error {
	if !t.readOnly {
		// Freeze the nodes this transaction owns: later writes copy them.
		t.gen = t.db.gens.Add(1)
	}
	if end != nil && bytes.Compare(start, end) >= 0 {
		return nil
	}
	n := 0
	// An explicit stack of the nodes whose key and far subtree are still
	// to be visited: O(depth) memory, no recursion.
	var stack [64]*node
	st := stack[:0]
	x := t.root
	if !reverse {
		// Descend to the first key >= start.
		for x != nil {
			if bytes.Compare(x.key, start) >= 0 {
				st = append(st, x)
				x = x.left
			} else {
				x = x.right
			}
		}
		for len(st) > 0 {
			x = st[len(st)-1]
			st = st[:len(st)-1]
			if end != nil && bytes.Compare(x.key, end) >= 0 {
				return nil
			}
			if !fn(x.key, x.val) {
				return nil
			}
			if n++; limit > 0 && n >= limit {
				return nil
			}
			for y := x.right; y != nil; y = y.left {
				st = append(st, y)
			}
		}
		return nil
	}
	// Descend to the last key < end (or the last key).
	for x != nil {
		if end == nil || bytes.Compare(x.key, end) < 0 {
			st = append(st, x)
			x = x.right
		} else {
			x = x.left
		}
	}
	for len(st) > 0 {
		x = st[len(st)-1]
		st = st[:len(st)-1]
		if bytes.Compare(x.key, start) < 0 {
			return nil
		}
		if !fn(x.key, x.val) {
			return nil
		}
		if n++; limit > 0 && n >= limit {
			return nil
		}
		for y := x.left; y != nil; y = y.right {
			st = append(st, y)
		}
	}
	return nil
}

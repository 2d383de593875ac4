package kv

import (
	"context"
	"errors"
)

// ErrNotFound is returned by Tx.Get when the key does not exist.
var ErrNotFound = errors.New("kv: key not found")

// ErrClosed is returned by a Store after Close.
var ErrClosed error = storeError("kv: store closed")

// ErrUnavailable wraps backend faults (lost connection, I/O errors) that a
// front end should report as 503 ServerBusy.
var ErrUnavailable error = storeError("kv: store unavailable")

// storeError is a fault of the store rather than of the request: its
// Unavailable method lets a front end recognise one (errors.As with an
// interface{ Unavailable() bool }) without importing this package, so
// the HTTP front end stays off the store's contract.
type storeError string

func (e storeError) Error() string { return string(e) }

// Unavailable reports that the store, not the request, failed.
func (storeError) Unavailable() bool { return true }

// Store is a transactional ordered key-value store.
type Store interface {
	// View runs fn in a read-only transaction over a consistent snapshot.
	// Writes inside fn return ErrReadOnly.
	View(ctx context.Context, fn func(tx Tx) error) error
	// Update runs fn in a serializable read-write transaction. The backend
	// may run fn more than once (conflict retry, group commit): fn must have
	// no side effects outside tx and must be deterministic for a given store
	// state. When fn returns an error, none of its writes are committed and
	// the error is returned unchanged (so callers can errors.As it).
	Update(ctx context.Context, fn func(tx Tx) error) error
	// Close releases the store. In-flight transactions finish first.
	Close() error
}

// ErrReadOnly is returned by writes inside View.
var ErrReadOnly = errors.New("kv: write in read-only transaction")

// Tx is a transaction. Slices returned by Get and passed to Scan callbacks
// are valid only until the transaction ends and must not be modified;
// copy them to keep them.
type Tx interface {
	// Get returns the value of key or ErrNotFound.
	Get(key []byte) ([]byte, error)
	// Put sets key to value. Empty values are allowed. Put copies key
	// and value before it changes anything: the caller may reuse them
	// once it returns, and may pass a value any Get of this transaction
	// returned, even after later writes (of that key too).
	Put(key, value []byte) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(key []byte) error
	// Scan visits keys k with start <= k < end in ascending order (or
	// descending when reverse), at most limit of them (limit <= 0: no
	// limit). A nil end means "no upper bound". fn returns false to stop.
	Scan(start, end []byte, limit int, reverse bool, fn func(key, value []byte) bool) error
}

// Prefetcher is implemented by the transactions of backends where every
// read is a round trip to a server (PostgreSQL): keys named by Prefetch
// are read together, in one round trip (PostgreSQL defers it to the
// transaction's next read and includes noted ranges), so that the
// transaction's later Gets of them are answered from memory, at the same
// snapshot. It is only a hint: the
// result of every Get is the same with or without it.
type Prefetcher interface {
	Prefetch(keys ...[]byte) error
}

// Range is a bounded ascending key range, Start <= k < End.
type Range struct{ Start, End []byte }

// RangePrefetcher is implemented by the transactions of backends where
// every read is a round trip to a server (PostgreSQL): PrefetchRanges reads
// the first rows of several ranges in one round trip, so that the
// transaction's later Scan(r.Start, r.End, limit, false, fn) of each is
// answered from memory, at the same snapshot, until it needs more rows
// than were read. Like Prefetch it is only a hint: every Scan returns the
// same with or without it.
type RangePrefetcher interface {
	PrefetchRanges(limit int, ranges ...Range) error
}

// PrefetchRanges reads the heads of ranges in one round trip where tx
// supports it (see RangePrefetcher) and does nothing otherwise: a caller
// about to Scan several independent ranges with the same limit names them
// first. Ranges with a nil End are ignored.
func PrefetchRanges(tx Tx, limit int, ranges ...Range) error {
	if p, ok := tx.(RangePrefetcher); ok {
		return p.PrefetchRanges(limit, ranges...)
	}
	return nil
}

// Prefetch reads keys in one round trip where tx supports it (see
// Prefetcher) and does nothing otherwise: a caller about to Get several
// independent keys names them first.
func Prefetch(tx Tx, keys ...[]byte) error {
	if p, ok := tx.(Prefetcher); ok {
		return p.Prefetch(keys...)
	}
	return nil
}

// Prefetches reports whether tx reads ahead (Prefetcher): a caller that
// builds keys only to name them to Prefetch can skip building them on
// the stores that would ignore them.
func Prefetches(tx Tx) bool {
	_, ok := tx.(Prefetcher)
	return ok
}

// Queued is implemented by stores that run write transactions one after
// the other (the embedded and in-memory stores): WritesQueued is how
// many Update calls are waiting for the writer now. Background jobs
// (internal/reclaim) shorten their transactions while others wait.
type Queued interface {
	WritesQueued() int
}

// Counted is implemented by stores that count their Update calls since
// they opened (this process's, on PostgreSQL): background jobs
// (internal/reclaim) rest longer while others write.
type Counted interface {
	Writes() uint64
}

// find is the first of s and the stores it wraps (an Unwrap() Store
// method) that is a T, and whether there is one: PostgreSQL, which runs
// writes side by side, is no Queued.
func find[T any](s Store) (T, bool) {
	for s != nil {
		if t, ok := s.(T); ok {
			return t, true
		}
		u, ok := s.(interface{ Unwrap() Store })
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	var zero T
	return zero, false
}

// SingleWriter reports whether s runs write transactions one after the
// other (Queued), so that a long one holds up every other write.
func SingleWriter(s Store) bool {
	_, ok := find[Queued](s)
	return ok
}

// WritesQueued returns the writes waiting for s's writer (Queued); 0
// when s cannot tell.
func WritesQueued(s Store) int {
	if q, ok := find[Queued](s); ok {
		return q.WritesQueued()
	}
	return 0
}

// Writes returns the Update calls made on s so far (Counted), looking
// through wrappers as WritesQueued does; 0 when s cannot tell.
func Writes(s Store) uint64 {
	if c, ok := find[Counted](s); ok {
		return c.Writes()
	}
	return 0
}

package queue

import (
	"bytes"
	"math"
	"math/bits"
	"slices"
	"sync"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// How Get Messages picks messages.
//
// A message is visible when now >= visibleAt and now < expiry. Within a
// shard of the visibility index, messages are ordered by (visibleAt, seq),
// so the visible ones are a prefix of the shard's range ending at now,
// oldest first. Dequeuing a message is one transaction that reads its
// index entry and record and moves it: the old index entry is deleted and
// a new one is written at visibleAt = now + visibilitytimeout, with
// DequeueCount and the receipt generation bumped. Two consumers can
// therefore never both receive a message inside its visibility window:
// whichever transaction commits second either sees the message moved (and
// skips it) or, on a backend that runs transactions concurrently,
// conflicts on the index entry and record it also read and wrote, and is
// retried.
//
// Why shards. On a backend that detects conflicts from read and write
// sets (PostgreSQL SERIALIZABLE tracks index reads by page), consumers
// that all scan the head of one index range conflict with each other
// whatever they pick there: each reads the entries the others delete.
// So the index is split into 16 shards by the message id's first hex
// digit, and a consumer that is not alone takes its messages from one
// shard (figures in this package's documentation, doc.go):
//
//   - A call that starts while no other Get Messages on its queue is in
//     flight in this process merges the heads of all shards and takes the
//     n oldest visible messages: strict insertion order for a lone
//     consumer.
//   - Otherwise the call, in slot k of the loadTracker, starts at shard
//     (k + the process's random offset) mod 16 and takes what it needs
//     from that shard, moving on to the next shards only if it is short.
//     Concurrent consumers in one process thus read and write disjoint
//     shards, and consumers in different processes mostly do too (their
//     offsets differ).
//
// Order is then best effort under concurrency, as on Azure: messages come
// out oldest first within a shard, and at most 15 shards' worth of newer
// messages can overtake an older one. The slot is only a hint computed
// before the transaction (so a retried fn makes the same choice); it has
// no effect on correctness.
//
// Entries of expired messages met on the way are deleted (index entry and
// record); they are never returned. A call visits at most maxScanPerCall
// index entries, so a long run of expired messages is cleared over a few
// calls (or by CollectGarbage) rather than in one huge transaction.

const (
	// maxScanPerCall bounds the index entries one Get Messages visits
	// (visible candidates plus expired entries, which it deletes).
	maxScanPerCall = 4096
	// maxScanBatch bounds one read of the index while skipping expired
	// entries.
	maxScanBatch = 256
)

// loadTracker hands out per-queue slots to concurrent Get Messages calls,
// and the queue's turn.
type loadTracker struct {
	mu   sync.Mutex
	busy map[string]*queueLoad
}

// queueLoad is one queue's Get Messages calls in flight.
type queueLoad struct {
	mask uint64 // slots in use
	// turn is held by the call whose transaction runs, on a store that
	// checks serializability (GetMessages).
	turn chan struct{}
}

// acquire returns the lowest free slot of key, whether another call on
// key is in flight, and key's turn; the slot is 64 (not recorded) when 64
// calls are in flight already.
func (l *loadTracker) acquire(key string) (slot int, shared bool, turn chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.busy == nil {
		l.busy = map[string]*queueLoad{}
	}
	q := l.busy[key]
	if q == nil {
		q = &queueLoad{turn: make(chan struct{}, 1)}
		l.busy[key] = q
	}
	mask := q.mask
	slot = bits.TrailingZeros64(^mask)
	if slot < 64 {
		q.mask = mask | 1<<slot
	}
	return slot, mask != 0, q.turn
}

// release frees a slot returned by acquire.
func (l *loadTracker) release(key string, slot int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.busy[key]
	if q == nil {
		return
	}
	if slot < 64 {
		q.mask &^= 1 << slot
	}
	if q.mask == 0 {
		delete(l.busy, key)
	}
}

// candidate is a visible index entry.
type candidate struct {
	key []byte
	id  string
}

// shardScan collects the visible and expired index entries of one queue
// incarnation, shard by shard, within the maxScanPerCall budget.
type shardScan struct {
	tx      kv.Tx
	prefix  []byte // visPrefix of the incarnation
	now     int64
	visited int
	cands   []candidate
	expired []candidate
	buf     []byte // the shard ranges' keys, built in place (shardRange)
}

// shardRange returns the range of shard's entries visible at s.now:
// shardPrefix and visEnd, built in s.buf (valid until the next call).
func (s *shardScan) shardRange(shard int) (start, end []byte) {
	b := append(s.buf[:0], s.prefix...)
	b = kv.AppendComponent(b, hexDigits[shard:shard+1])
	n := len(b)
	if s.now == math.MaxInt64 {
		s.buf = b
		return b[:n:n], kv.PrefixEnd(b)
	}
	b = append(b, b[:n]...)
	b = appendOrderedInt(b, s.now+1)
	s.buf = b
	return b[:n:n], b[n:]
}

// scan adds up to limit visible entries of shard to s.cands, oldest first,
// and the expired entries it passes to s.expired. It reads the index in
// batches no larger than it needs (limit, then doubling when expired
// entries are in the way), because a backend that tracks reads for
// conflicts charges every row it fetched, not only those looked at.
func (s *shardScan) scan(shard, limit int) error {
	start, end := s.shardRange(shard)
	found, batch := 0, limit
	for found < limit && s.visited < maxScanPerCall {
		batch = min(batch, maxScanPerCall-s.visited)
		rows := 0
		var last []byte
		var derr error
		err := s.tx.Scan(start, end, batch, false, func(k, v []byte) bool {
			rows++
			s.visited++
			last = k
			var exp int64
			var id string
			if exp, id, derr = parseIndexValue(k, v); derr != nil {
				return false
			}
			c := candidate{key: append([]byte(nil), k...), id: id}
			if s.now >= exp {
				s.expired = append(s.expired, c)
				return true
			}
			s.cands = append(s.cands, c)
			found++
			return found < limit
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return err
		}
		if rows < batch || found >= limit {
			return nil
		}
		start = append(append([]byte(nil), last...), 0) // the first key after last
		batch = min(2*batch, maxScanBatch)
	}
	return nil
}

// oldest scans the head of every shard and keeps the n oldest visible
// entries overall. Keys of different shards compare by (visibleAt, seq,
// id) once the equal-length shard prefix is cut off.
func (s *shardScan) oldest(n int) error {
	// The first read of every shard's head is one round trip on
	// PostgreSQL instead of sixteen (scan's first Scan of a shard asks
	// for exactly these: its range, limit n).
	if _, ok := s.tx.(kv.RangePrefetcher); ok { // the ranges are built only for a store that reads ahead
		heads := make([]kv.Range, numShards)
		for sh := range heads {
			sp := shardPrefix(s.prefix, sh)
			heads[sh] = kv.Range{Start: sp, End: visEnd(sp, s.now)}
		}
		if err := kv.PrefetchRanges(s.tx, n, heads...); err != nil {
			return err
		}
	}
	for sh := 0; sh < numShards && s.visited < maxScanPerCall; sh++ {
		if err := s.scan(sh, n); err != nil {
			return err
		}
	}
	cut := len(shardPrefix(s.prefix, 0))
	slices.SortFunc(s.cands, func(a, b candidate) int { return bytes.Compare(a.key[cut:], b.key[cut:]) })
	s.cands = s.cands[:min(n, len(s.cands))]
	return nil
}

// from takes up to n visible entries starting at shard first, moving to
// the following shards while short.
func (s *shardScan) from(first, n int) error {
	for i := 0; i < numShards && len(s.cands) < n && s.visited < maxScanPerCall; i++ {
		if err := s.scan((first+i)%numShards, n-len(s.cands)); err != nil {
			return err
		}
	}
	return nil
}

// dequeue takes up to n visible messages of the queue incarnation inc at
// time now, makes them invisible until now+vt, bumps their dequeue count
// and receipt generation, and returns them (updated). first < 0 takes
// the oldest messages of the whole queue; first >= 0 starts at that shard
// (see above). It must run inside an Update; it is deterministic for a
// given store state and arguments.
func dequeue(tx kv.Tx, acct, name, inc string, now int64, n, first int, vt time.Duration) ([]*message, error) {
	sc := &shardScan{tx: tx, prefix: visPrefix(acct, name, inc), now: now}
	var err error
	if first < 0 {
		err = sc.oldest(n)
	} else {
		err = sc.from(first, n)
	}
	if err != nil {
		return nil, err
	}
	for _, c := range sc.expired {
		if err := tx.Delete(c.key); err != nil {
			return nil, err
		}
		if err := tx.Delete(msgKey(acct, name, inc, c.id)); err != nil {
			return nil, err
		}
	}
	var out []*message
	for _, c := range sc.cands {
		m, ok, err := loadMessage(tx, acct, name, inc, c.id)
		if err != nil {
			return nil, err
		}
		if err := tx.Delete(c.key); err != nil {
			return nil, err
		}
		if !ok {
			// A dangling index entry (cannot happen through this
			// package's writes): dropped above.
			continue
		}
		m.VisibleAt = now + int64(vt)
		m.Dequeues++
		m.Gen++
		if err := writeMessage(tx, acct, name, inc, m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// peek returns up to n visible, unexpired messages, oldest first, without
// changing anything.
func peek(tx kv.Tx, acct, name, inc string, now int64, n int) ([]*message, error) {
	sc := &shardScan{tx: tx, prefix: visPrefix(acct, name, inc), now: now}
	if err := sc.oldest(n); err != nil {
		return nil, err
	}
	out := make([]*message, 0, len(sc.cands))
	for _, c := range sc.cands {
		m, ok, err := loadMessage(tx, acct, name, inc, c.id)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, m)
		}
	}
	return out, nil
}

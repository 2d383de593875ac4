package extent

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Pins keep data items and chunk files alive while a request uses them
// without a committed record naming them:
//
//   - A write pins each chunk from its creation until the transaction
//     that records it has committed (or the request gave up): an upload
//     may stream for longer than OrphanGrace, and without the pin the
//     orphan sweeper would remove its first chunks before the record
//     naming them exists (Azure: an acknowledged write is durable).
//   - A read pins the data items of the range it serves (chunks, and
//     inline items it has not read yet), from the moment it resolved the
//     parts (just after its read transaction, well within GCGrace of it)
//     until its body is closed, so a download still
//     streaming long after the blob or file was overwritten or deleted
//     finishes with the bytes of the version it started on (Get Blob's
//     snapshot isolation), on every chunk store, however long it takes.
//
// The collector (Collect) keeps a pinned data item, re-queued for a later
// pass, and the sweeper (SweepOrphans) never removes a pinned chunk.
//
// The Blob and File services each build an extent.Store over the one
// chunk store of the process, and only Blob's runs the collector, so the
// pins live in a table shared by every Store over the same chunk store.
//
// On PostgreSQL several processes share the kv and chunk stores, and any
// of them may collect or sweep. Each pin table therefore publishes its
// pins in the kv store at the start of every collector and sweeper pass
// (publishPins):
//
//	("xo", owner)     -> lease expiry (Unix nanoseconds, big endian)
//	("xp", owner, id) -> empty: data item id is pinned by owner
//
// and the collector and sweeper honour the published pins of every other
// owner whose lease has not expired. A pin is published at most one
// collector interval after it is taken: a write's chunk is young then (the
// sweeper only considers chunks older than OrphanGrace), and a read's items
// were released at most that long before (the collector frees them only
// GCGrace after their release), so the interval must stay well below
// GCGrace. The lease (PinLease) is renewed at every pass; the pins of a
// process that stopped are ignored once it lapses, and reclaimed.
type pinTable struct {
	// gate orders creating a chunk and pinning it (read-locked, so
	// uploads create chunks concurrently) before the sweeper's last check
	// of a candidate and its removal (write-locked, one chunk at a time):
	// a chunk the sweeper's Walk saw a moment after its creation, before
	// its writer pinned it, is never removed.
	gate sync.RWMutex
	mu   sync.Mutex
	n    map[string]int // data item id ("c" + chunk id for chunks) -> pin count

	owner     string     // this table's name in the published pins
	pubMu     sync.Mutex // one publishPins at a time
	published map[string]bool
}

// PinLease is how long the pins a process published stay in force without
// being published again (every collector pass does).
const PinLease = time.Hour

// reclaimBatch bounds the records of lapsed owners one pass deletes.
const reclaimBatch = 4096

// pinTables holds one table per chunk store the process opened, for as
// long as the process runs (a few hundred bytes each).
var pinTables sync.Map // chunk.Store -> *pinTable

func newPinTable() *pinTable {
	var b [12]byte
	rand.Read(b[:])
	return &pinTable{n: map[string]int{}, owner: hex.EncodeToString(b[:])}
}

func pinsFor(chunks chunk.Store) *pinTable {
	if pt, ok := pinTables.Load(chunks); ok {
		return pt.(*pinTable)
	}
	pt, _ := pinTables.LoadOrStore(chunks, newPinTable())
	return pt.(*pinTable)
}

func leaseKey(owner string) []byte   { return kv.Key("xo", owner) }
func pinKey(owner, id string) []byte { return kv.Key("xp", owner, id) }

func (pt *pinTable) snapshot() map[string]bool {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	out := make(map[string]bool, len(pt.n))
	for id := range pt.n {
		out[id] = true
	}
	return out
}

// publishPins brings this process's published pins up to date, renews
// its lease until now+PinLease and reclaims the records of owners whose
// lease lapsed.
func (s *Store) publishPins(ctx context.Context, now time.Time) error {
	now = s.wallNow(now)
	pt := s.pins
	pt.pubMu.Lock()
	defer pt.pubMu.Unlock()
	cur := pt.snapshot()
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		pub := pt.published
		if _, err := tx.Get(leaseKey(pt.owner)); errors.Is(err, kv.ErrNotFound) {
			pub = nil // never published, or reclaimed after a lapse
		} else if err != nil {
			return err
		}
		for id := range cur {
			if !pub[id] {
				if err := tx.Put(pinKey(pt.owner, id), nil); err != nil {
					return err
				}
			}
		}
		for id := range pub {
			if !cur[id] {
				if err := tx.Delete(pinKey(pt.owner, id)); err != nil {
					return err
				}
			}
		}
		if err := tx.Put(leaseKey(pt.owner), binary.BigEndian.AppendUint64(nil, uint64(now.Add(PinLease).UnixNano()))); err != nil {
			return err
		}
		return reclaimLapsed(tx, now, pt.owner)
	})
	if err != nil {
		return err
	}
	pt.published = cur
	return nil
}

// owners returns the owners other than self whose lease runs past now
// (live) and those whose lease has lapsed.
func owners(tx kv.Tx, now time.Time, self string) (live, lapsed []string, err error) {
	pre := kv.Key("xo")
	err = tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, v []byte) bool {
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 2 || parts[1] == self {
			return true
		}
		if len(v) == 8 && int64(binary.BigEndian.Uint64(v)) > now.UnixNano() {
			live = append(live, parts[1])
		} else {
			lapsed = append(lapsed, parts[1])
		}
		return true
	})
	return live, lapsed, err
}

// reclaimLapsed deletes the pins of owners whose lease lapsed, and their
// lease once none is left.
func reclaimLapsed(tx kv.Tx, now time.Time, self string) error {
	_, lapsed, err := owners(tx, now, self)
	if err != nil {
		return err
	}
	budget := reclaimBatch
	for _, o := range lapsed {
		pre := kv.Key("xp", o)
		var keys [][]byte
		err := tx.Scan(pre, kv.PrefixEnd(pre), budget+1, false, func(k, _ []byte) bool {
			keys = append(keys, append([]byte(nil), k...))
			return true
		})
		if err != nil {
			return err
		}
		done := len(keys) <= budget
		if !done {
			keys = keys[:budget]
		}
		for _, k := range keys {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		budget -= len(keys)
		if !done {
			return nil // the rest next pass
		}
		if err := tx.Delete(leaseKey(o)); err != nil {
			return err
		}
	}
	return nil
}

// pinChecker answers whether chunks are pinned, here or by another
// process, as of one transaction.
type pinChecker struct {
	pt    *pinTable
	tx    kv.Tx
	peers []string
}

func (s *Store) pinChecker(tx kv.Tx, now time.Time) (*pinChecker, error) {
	live, _, err := owners(tx, s.wallNow(now), s.pins.owner)
	if err != nil {
		return nil, err
	}
	return &pinChecker{pt: s.pins, tx: tx, peers: live}, nil
}

// pinned reports whether chunk id is pinned by this process or published
// as pinned by a live other one.
func (c *pinChecker) pinned(id string) (bool, error) {
	if c.pt.pinned(id) {
		return true, nil
	}
	return c.pinnedElsewhere(id)
}

func (c *pinChecker) pinnedElsewhere(id string) (bool, error) {
	for _, o := range c.peers {
		_, err := c.tx.Get(pinKey(o, id))
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, kv.ErrNotFound) {
			return false, err
		}
	}
	return false, nil
}

func (pt *pinTable) pin(ids []string) {
	if len(ids) == 0 {
		return
	}
	pt.mu.Lock()
	for _, id := range ids {
		pt.n[id]++
	}
	pt.mu.Unlock()
}

func (pt *pinTable) unpin(ids []string) {
	if len(ids) == 0 {
		return
	}
	pt.mu.Lock()
	for _, id := range ids {
		if pt.n[id] <= 1 {
			delete(pt.n, id)
		} else {
			pt.n[id]--
		}
	}
	pt.mu.Unlock()
}

func (pt *pinTable) pinned(id string) bool {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return pt.n[id] > 0
}

// createPinned creates a chunk and pins it before the sweeper can decide
// on it.
func (s *Store) createPinned(ctx context.Context) (chunk.Writer, error) {
	s.pins.gate.RLock()
	defer s.pins.gate.RUnlock()
	w, err := s.chunks.Create(ctx)
	if err != nil {
		return nil, err
	}
	s.pins.pin([]string{"c" + w.ID()})
	return w, nil
}

// removeUnpinned removes chunk id unless it is pinned now or, read after
// the pins, recorded; it reports whether it removed it. The record is
// read again here because the sweeper's decision may predate the chunk's
// writer: a chunk listed a moment after its creation, before its pin,
// looked unpinned and unrecorded; its writer may since have recorded it
// and released the pin. The gate keeps new chunks from being created
// meanwhile (they would be pinned anyway).
func (s *Store) removeUnpinned(ctx context.Context, id string) (bool, error) {
	s.pins.gate.Lock()
	defer s.pins.gate.Unlock()
	if s.pins.pinned("c" + id) {
		return false, nil
	}
	recorded := false
	if err := s.store.View(ctx, func(tx kv.Tx) error {
		_, err := tx.Get(dataKey("c" + id))
		switch {
		case err == nil:
			recorded = true
		case !errors.Is(err, kv.ErrNotFound):
			return err
		}
		return nil
	}); err != nil || recorded {
		return false, err
	}
	return true, s.chunks.Remove(ctx, id)
}

// itemIDs returns the data item ids of the parts (sorted by Off)
// overlapping [off, off+n), each once, but those in have (inline items
// already read).
func itemIDs(parts []Part, off, n int64, have map[string][]byte) []string {
	var ids []string
	var seen map[string]bool
	for _, p := range parts {
		if p.Off >= off+n {
			break
		}
		if p.End() <= off || p.ID == "" || seen[p.ID] {
			continue
		}
		if _, ok := have[p.ID]; ok {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[p.ID] = true
		ids = append(ids, p.ID)
	}
	return ids
}

// Release ends the pins of a staged body's chunks. Call it once the
// transaction that records them has committed, or when the request gives
// up on them (they are then orphans the sweeper removes after
// OrphanGrace); `defer st.Release()` right after Stage is the usual
// pattern. Releasing twice, or a nil Staged, is harmless.
func (st *Staged) Release() {
	if st == nil || st.pins == nil {
		return
	}
	st.pins.unpin(st.pinned)
	st.pinned = nil
}

// Finish ends a staged body's request, through either door (REST or
// SMB). recorded says whether a record may refer to its items: the
// transaction that was to record them committed, or ran to its commit
// and failed there (the outcome is then unknown). Pass false when that
// transaction never ran or its function returned an error, whatever the
// error (kv.Store.Update commits nothing then): a refused write. Then no
// record can refer to the chunks this request created, and they are
// removed at once rather than left to the sweeper for OrphanGrace; that
// gives a refused upload's room back (the in-memory store's
// --extent-memory-limit, disk space). When recorded, the chunks are only
// unpinned and the collector and the sweeper decide. Recording computes
// recorded; the usual pattern is
//
//	recorded := false
//	defer func() { st.Finish(ctx, recorded) }()
//	...
//	err = store.Update(ctx, extent.Recording(&recorded, func(tx kv.Tx) error { ... st.Write(tx) ... }))
//
// Finish on a nil Staged does nothing; a second Finish (or one after
// Release) removes nothing.
func (st *Staged) Finish(ctx context.Context, recorded bool) {
	if st == nil {
		return
	}
	var ids []string
	if !recorded {
		for _, p := range st.pinned {
			if id, ok := strings.CutPrefix(p, "c"); ok {
				ids = append(ids, id)
			}
		}
	}
	st.Release()
	ctx = context.WithoutCancel(ctx) // a client gone mid-request still frees its room
	for _, id := range ids {
		_ = st.chunks.Remove(ctx, id) // one left behind is the sweeper's
	}
}

// Recording wraps fn, the function that records staged items (Staged.Write)
// and the records referring to them, so that *recorded tells Finish
// afterwards whether they may be recorded: true when fn's last run
// returned nil, false when it returned an error or never ran. fn is the
// function of a kv.Store.Update, or a function such an Update calls
// whose error it returns unchanged; a store may run it more than once
// (retries, kv.Twice), and the last run is the one that counts.
func Recording(recorded *bool, fn func(tx kv.Tx) error) func(tx kv.Tx) error {
	return func(tx kv.Tx) error {
		err := fn(tx)
		*recorded = err == nil
		return err
	}
}

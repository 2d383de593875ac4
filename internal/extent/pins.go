package extent

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// PinLease is how long the pins a process published stay in force without
// being published again (every collector pass does).
const PinLease = time.Hour

// reclaimBatch bounds the records of lapsed owners one pass deletes.
const reclaimBatch = 4096

func leaseKey(owner string) []byte   { return kv.Key("xo", owner) }
func pinKey(owner, id string) []byte { return kv.Key("xp", owner, id) }

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
	if len(ids) > 0 {
		ctx = context.WithoutCancel(ctx) // a client gone mid-request still frees its room
	}
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

package extent

import (
	"context"
	"sync"

	"github.com/cerulean-storage/cerulean/internal/chunk"
)

// Pins keep chunk files alive while a request uses them without a
// committed record naming them:
//
//   - A write pins each chunk from its creation until the transaction
//     that records it has committed (or the request gave up): an upload
//     may stream for longer than OrphanGrace, and without the pin the
//     orphan sweeper would remove its first chunks before the record
//     naming them exists (Azure: an acknowledged write is durable).
//   - A read pins the chunks of the range it serves, from the moment it
//     resolved the parts (just after its read transaction, well within
//     GCGrace of it) until its body is closed, so a download still
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
type pinTable struct {
	// gate orders creating a chunk and pinning it (read-locked, so
	// uploads create chunks concurrently) before the sweeper's last check
	// of a candidate and its removal (write-locked, one chunk at a time):
	// a chunk the sweeper's Walk saw a moment after its creation, before
	// its writer pinned it, is never removed.
	gate sync.RWMutex
	mu   sync.Mutex
	n    map[string]int // chunk id (without the "c") -> pin count
}

var pinTables sync.Map // chunk.Store -> *pinTable

func pinsFor(chunks chunk.Store) *pinTable {
	if pt, ok := pinTables.Load(chunks); ok {
		return pt.(*pinTable)
	}
	pt, _ := pinTables.LoadOrStore(chunks, &pinTable{n: map[string]int{}})
	return pt.(*pinTable)
}

func (pt *pinTable) pin(ids []string) {
	pt.mu.Lock()
	for _, id := range ids {
		pt.n[id]++
	}
	pt.mu.Unlock()
}

func (pt *pinTable) unpin(ids []string) {
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
	s.pins.pin([]string{w.ID()})
	return w, nil
}

// removeUnpinned removes chunk id unless it is pinned now; it reports
// whether it removed it.
func (s *Store) removeUnpinned(ctx context.Context, id string) (bool, error) {
	s.pins.gate.Lock()
	defer s.pins.gate.Unlock()
	if s.pins.pinned(id) {
		return false, nil
	}
	return true, s.chunks.Remove(ctx, id)
}

// chunkIDs returns the chunk ids (without the "c") of the parts
// overlapping [off, off+n), each once.
func chunkIDs(parts []Part, off, n int64) []string {
	var ids []string
	seen := map[string]bool{}
	for _, p := range parts {
		if p.End() <= off || p.Off >= off+n || p.ID == "" || isInline(p.ID) || seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		ids = append(ids, p.ID[1:])
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

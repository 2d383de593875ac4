// The data-item layer's store and the values every file of it passes: a
// part of content, a staged body, the digests sent with it, the table of
// pinned chunk files.

package extent

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

const (
	InlineMax = 64 << 10 // bodies up to this size are stored in the kv store
	ChunkMax  = 8 << 20  // larger bodies are split into chunks of at most this size
	// GCGrace is how long a data item whose reference count dropped to
	// zero stays readable before the collector frees it.
	GCGrace = 10 * time.Minute
)

// Store is the data-item layer over a kv store and a chunk store. It keeps
// no state of its own.
type Store struct {
	store  kv.Store
	chunks chunk.Store
	pins   *pinTable // shared by every Store over chunks (pins.go)
	wall   func() time.Time
}

// SetWall gives the store the wall clock behind the server's (clock.Wall):
// the ages of chunk files, which the chunk stores stamp with the wall
// clock, and the leases of published pins, which measure how long a
// process may go without publishing, are then real times, which an
// advance of the server's clock (--clock-control) does not shorten. Unset,
// they use the time the collector and the sweeper are given.
func (s *Store) SetWall(now func() time.Time) { s.wall = now }

// wallNow is the wall clock's time, or now without one.
func (s *Store) wallNow(now time.Time) time.Time {
	if s.wall != nil {
		return s.wall()
	}
	return now
}

// Part is one extent of a blob's content: bytes [Off, Off+Len) of the blob
// are bytes [DOff, DOff+Len) of data item ID.
//
// A small Put Blob body is embedded in the part itself (Data set, ID
// empty): the record then holds its bytes, so a small write is one key and
// a small read one lookup, with no reference counting. Embedded bytes are
// copied, not shared, by snapshots and copies.
type Part struct {
	Off  int64  `json:"o"`
	Len  int64  `json:"l"`
	ID   string `json:"i,omitempty"`
	DOff int64  `json:"d,omitempty"`
	Data []byte `json:"b,omitempty"`
}

// End returns the offset just past the part.
func (p Part) End() int64 { return p.Off + p.Len }

func isInline(id string) bool { return len(id) > 0 && id[0] == 'i' }

func dataKey(id string) []byte { return kv.Key("x", id) }

func newInlineID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "i" + hex.EncodeToString(b)
}

// Staged holds a request body that has been read: small bodies in memory
// (written to the kv store inside the transaction), larger ones already
// durable in the chunk store.
type Staged struct {
	Parts  []Part
	inline map[string][]byte
	Size   int64
	MD5    []byte // set when MD5 was computed
	CRC64  []byte // set when CRC64 was computed (8 bytes, little endian)

	pins   *pinTable
	pinned []string // chunk ids pinned until Release
	chunks chunk.Store
}

// Digests are the transactional digests of a body: what a client sent
// with it (REST Content-MD5 and x-ms-content-crc64, parsed by the front
// end; a nil field was not sent), or what was computed for a staged body
// (Staged.Digests).
type Digests struct {
	MD5   []byte // 16 bytes
	CRC64 []byte // 8 bytes, little endian, as x-ms-content-crc64 carries it
	// MD5Text and CRC64Text are the values as the client spelled them,
	// which a mismatch reports (Base64 admits more than one spelling of
	// the same bytes); "" reports the bytes' canonical Base64.
	MD5Text, CRC64Text string
}

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

func (pt *pinTable) snapshot() map[string]bool {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	out := make(map[string]bool, len(pt.n))
	for id := range pt.n {
		out[id] = true
	}
	return out
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

// pinTables holds one table per chunk store the process opened, for as
// long as the process runs (a few hundred bytes each).
var pinTables sync.Map // chunk.Store -> *pinTable

package extent

import (
	"context"
	"io"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Reclaiming without a grace period.
//
// A data item whose last reference goes is queued under ("g", due, id),
// and the collector frees it unless a reader has pinned it. The race to
// close is a reader whose read transaction began before the reference
// went, so it resolved parts naming the item, and which pins it only
// after the collector looked. Two rules close it on a store only this
// process uses (the embedded and in-memory stores):
//
//   - A content read pins the items of its range inside its read
//     transaction (ReadPins.Load), before the transaction ends.
//   - Every read transaction is registered from before its snapshot is
//     taken until it ends (TrackViews), and the collector, after it has
//     read which items are due and before it decides on them, waits for
//     every read transaction registered before that moment to end
//     (viewTracker.waitOlder).
//
// A reader whose snapshot still names an item began before the item's
// last reference went, so before the collector read the item as due;
// the collector waits for that reader's transaction to end, by which
// time the reader has pinned the item, and keeps it. A reader that began
// later cannot see the item. So the collector frees an item as soon as
// no record names it and no reader pins it, with no grace period, and
// disk and memory follow the live data. On PostgreSQL other processes'
// read transactions are not seen here, so a shared store keeps the grace
// period (GCGrace) and the published pins (pins.go).

// trackedStore is a kv.Store whose read transactions are registered with
// a viewTracker (TrackViews).
type trackedStore struct {
	kv.Store
	t *viewTracker
}

// TrackViews returns store with its read transactions registered, for
// the collector to wait on: give the result to every service and
// extent.Store over this store, and only for a store no other process
// uses (see above). An extent.Store built over it collects without a
// grace period.
func TrackViews(store kv.Store) kv.Store {
	if ts, ok := store.(*trackedStore); ok {
		return ts
	}
	return &trackedStore{Store: store, t: &viewTracker{}}
}

// View registers the transaction before the snapshot is taken and
// unregisters it when fn has returned.
func (s *trackedStore) View(ctx context.Context, fn func(kv.Tx) error) error {
	e := s.t.register()
	defer s.t.unregister(e)
	return s.Store.View(ctx, fn)
}

// Unwrap returns the store under the tracking.
func (s *trackedStore) Unwrap() kv.Store { return s.Store }

// viewTracker counts the read transactions in progress by epoch, with
// atomics only, so a read pays two atomic additions and no lock: a read
// counts itself in the slot of the epoch's parity, and waitOlder, which
// runs one at a time, starts the next epoch (new reads count in the
// other slot) and waits for the old slot to empty. Every epoch before
// the old one was emptied by the waitOlder that ended it.
type viewTracker struct {
	epoch  atomic.Uint64
	active [2]atomic.Int64
	wait   sync.Mutex // one waitOlder at a time
	// pending: the last waitOlder ended with its context before the
	// slot it watched emptied (guarded by wait).
	pending bool
}

func (t *viewTracker) register() uint64 {
	for {
		e := t.epoch.Load()
		t.active[e&1].Add(1)
		if t.epoch.Load() == e {
			return e
		}
		// The epoch moved on between the two loads: a waitOlder may
		// already watch this slot; count in the new epoch's instead.
		t.active[e&1].Add(-1)
	}
}

func (t *viewTracker) unregister(e uint64) { t.active[e&1].Add(-1) }

// waitOlder starts a new epoch and waits until every read transaction
// registered before it has ended (or ctx is done). Read transactions are
// short (a content read's ends once its parts are resolved and pinned),
// so this waits microseconds to milliseconds; it polls rather than
// making every View's end signal.
func (t *viewTracker) waitOlder(ctx context.Context) error {
	t.wait.Lock()
	defer t.wait.Unlock()
	if t.pending {
		// The last wait ended with its context: reads of the epoch
		// before this one may still count in its slot, which the
		// epoch started below would share.
		if err := t.drain(ctx, (t.epoch.Load()-1)&1); err != nil {
			return err
		}
		t.pending = false
	}
	old := t.epoch.Add(1) - 1
	if err := t.drain(ctx, old&1); err != nil {
		t.pending = true
		return err
	}
	return nil
}

// drain waits until slot counts no read.
func (t *viewTracker) drain(ctx context.Context, slot uint64) error {
	delay := 50 * time.Microsecond
	for t.active[slot].Load() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		time.Sleep(delay)
		delay = min(2*delay, 5*time.Millisecond)
	}
	return nil
}

// tracker returns the viewTracker of the store s was built over, if any.
func trackerOf(store kv.Store) *viewTracker {
	if ts, ok := store.(*trackedStore); ok {
		return ts.t
	}
	return nil
}

// ReadPins is what a content read takes inside its read transaction: the
// inline items of its range it read there, and pins on every other data
// item of the range, so the bytes it resolved stay readable however long
// the body streams (pins.go) and however soon the collector runs. Make
// one per read (Store.NewReadPins), Load it inside the read transaction,
// then open the reader with it (OpenReader, OpenBodyFrom), which takes
// the pins over; Release it instead when the read is abandoned.
type ReadPins struct {
	s      *Store
	inline map[string][]byte
	ids    []string // pinned, until handed to a reader or released
	parts  []Part
	off, n int64
}

// NewReadPins returns an empty ReadPins of s.
func (s *Store) NewReadPins() *ReadPins { return &ReadPins{s: s} }

// Load reads the inline items of parts overlapping [off, off+n) when they
// are small in total (as Prefetch) and pins the other data items of the
// range, inside tx. A transaction function may run more than once: each
// Load drops what the previous one took.
func (rp *ReadPins) Load(tx kv.Tx, parts []Part, off, n int64) error {
	rp.drop()
	inline, err := Prefetch(tx, parts, off, n)
	if err != nil {
		return err
	}
	i := sort.Search(len(parts), func(i int) bool { return parts[i].End() > off })
	ids := itemIDs(parts[i:], off, n, inline)
	rp.s.pins.pin(ids)
	rp.inline, rp.ids, rp.parts, rp.off, rp.n = inline, ids, parts, off, n
	return nil
}

// Inline returns the inline items Load read.
func (rp *ReadPins) Inline() map[string][]byte { return rp.inline }

func (rp *ReadPins) drop() {
	rp.s.pins.unpin(rp.ids)
	rp.ids, rp.inline = nil, nil
}

// Release drops the pins of a read that will not be opened. Safe to call
// after the pins were handed to a reader (it then does nothing).
func (rp *ReadPins) Release() { rp.drop() }

// take hands the pins over to a reader.
func (rp *ReadPins) take() []string {
	ids := rp.ids
	rp.ids = nil
	return ids
}

// OpenReader opens bytes [off, off+n) of parts, which rp was loaded with
// (the same parts and range), encrypted with c (nil: in the clear). The
// reader takes rp's pins over and releases them on Close.
func (s *Store) OpenReader(ctx context.Context, rp *ReadPins, c *Cipher) io.ReadCloser {
	parts, off, n := rp.parts, rp.off, rp.n
	i := sort.Search(len(parts), func(i int) bool { return parts[i].End() > off })
	return &contentReader{s: s, ctx: ctx, parts: parts[i:], pos: off, end: off + n, inline: rp.inline, pinned: rp.take(), cipher: c}
}

// OpenBodyFrom is OpenBodySealed over a loaded ReadPins (see OpenBody).
func (s *Store) OpenBodyFrom(ctx context.Context, rp *ReadPins, wantMD5 bool, c *Cipher) (*Body, error) {
	return s.openBody(s.OpenReader(ctx, rp, c), rp.n, wantMD5)
}

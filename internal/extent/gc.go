package extent

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// OrphanGrace is how old an unreferenced chunk file must be before the
// sweeper removes it. A chunk of a request still running is pinned (see
// pins.go) and never removed, however long the upload takes; the grace
// only delays the removal of the chunks of requests that ended without
// recording them (a failed precondition, a crash).
const OrphanGrace = 6 * time.Hour

// skipViewWait, set by a test, makes Collect skip the wait for older
// read transactions: the control that shows the wait is what keeps a
// slow reader's items.
var skipViewWait bool

// Collect removes data items whose reference count dropped to zero more
// than GCGrace before now, or, over a store whose read transactions are
// tracked (TrackViews: a store only this process uses), every such item
// at once, without a grace period (readpins.go says why that is safe).
// An item a reader has pinned (a download that started before the item
// was released and is still streaming) is kept and queued again for
// GCGrace later. It runs in the background, never inside a request. It
// returns how many data items it freed.
func (s *Store) Collect(ctx context.Context, now time.Time) (int, error) {
	if err := s.publishPins(ctx, now); err != nil {
		return 0, err
	}
	tracker := trackerOf(s.store)
	limit, requeue := now, now.Add(GCGrace)
	if tracker != nil {
		// Everything queued; a pinned item goes just past the limit, for
		// the next pass.
		limit = now.Add(GCGrace)
		requeue = limit.Add(time.Nanosecond)
	}
	freed := 0
	for {
		var due [][]byte
		var ids []string
		start := kv.Key("g")
		end := kv.AppendPartial(kv.Key("g"), fmt.Sprintf("%020d", limit.UnixNano()+1))
		err := s.store.View(ctx, func(tx kv.Tx) error {
			return tx.Scan(start, end, 512, false, func(k, _ []byte) bool {
				parts, ok := kv.Split(k)
				if ok && len(parts) == 3 {
					due = append(due, append([]byte(nil), k...))
					ids = append(ids, parts[2])
				}
				return true
			})
		})
		if err != nil || len(due) == 0 {
			return freed, err
		}
		if tracker != nil && !skipViewWait {
			// A reader that can still see one of these items began before
			// the scan above: once its transaction ended it has pinned
			// what it reads, which the update below checks.
			if err := tracker.waitOlder(ctx); err != nil {
				return freed, err
			}
		}
		var chunks []string
		var kept int
		err = s.store.Update(ctx, func(tx kv.Tx) error {
			chunks, kept = chunks[:0], 0
			pins, err := s.pinChecker(tx, now)
			if err != nil {
				return err
			}
			for i, k := range due {
				if err := tx.Delete(k); err != nil {
					return err
				}
				v, err := tx.Get(dataKey(ids[i]))
				if err == kv.ErrNotFound {
					continue
				}
				if err != nil {
					return err
				}
				if binary.BigEndian.Uint32(v) != 0 {
					continue // referenced again is impossible, but be safe
				}
				pinned, err := pins.pinned(ids[i])
				if err != nil {
					return err
				}
				if pinned {
					kept++
					if err := tx.Put(gcKey(requeue, ids[i]), nil); err != nil {
						return err
					}
					continue
				}
				if err := tx.Delete(dataKey(ids[i])); err != nil {
					return err
				}
				if !isInline(ids[i]) {
					chunks = append(chunks, ids[i][1:])
				}
			}
			return nil
		})
		if err != nil {
			return freed, err
		}
		for _, id := range chunks {
			if err := s.chunks.Remove(ctx, id); err != nil {
				return freed, err
			}
		}
		freed += len(due) - kept
	}
}

// SweepOrphans removes chunk files older than OrphanGrace at now that no
// data item record names and no request has pinned (an upload still
// streaming, a staged body not yet recorded, a download).
func (s *Store) SweepOrphans(ctx context.Context, now time.Time) (int, error) {
	if err := s.publishPins(ctx, now); err != nil {
		return 0, err
	}
	// The chunk stores stamp chunks with the wall clock's time.
	return chunk.SweepWith(ctx, s.chunks, OrphanGrace, s.wallNow(now), func(ctx context.Context, ids []string) ([]bool, error) {
		// Pins first, the records in a transaction begun after: a writer
		// releases its pins only once the transaction recording its chunks
		// has committed, so a chunk found unpinned here is either recorded
		// in the view below or unknown to every request.
		live := make([]bool, len(ids))
		for i, id := range ids {
			live[i] = s.pins.pinned("c" + id)
		}
		err := s.store.View(ctx, func(tx kv.Tx) error {
			pins, err := s.pinChecker(tx, now)
			if err != nil {
				return err
			}
			for i, id := range ids {
				if live[i] {
					continue
				}
				if live[i], err = pins.pinnedElsewhere("c" + id); err != nil {
					return err
				}
				if live[i] {
					continue
				}
				_, err := tx.Get(dataKey("c" + id))
				if err == nil {
					live[i] = true
				} else if err != kv.ErrNotFound {
					return err
				}
			}
			return nil
		})
		return live, err
	}, s.removeUnpinned)
}

package queue

import (
	"context"
	"errors"
	"fmt"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
)

// Space reclamation. Nothing here is needed for correctness: a deleted or
// cleared incarnation is unreachable the moment its transaction commits,
// and expired messages are never returned or counted. These functions only
// give the space back, in bounded transactions so that no single commit
// grows with the size of a queue.

// purgeBatch is the number of keys one purge transaction deletes.
const purgeBatch = 1000

// purgeNow starts the purge of an incarnation right after Delete Queue
// or Clear Messages committed. With a background reclaimer
// (SetReclaimer, as the server runs) the request returns at once and
// the reclaimer purges it in bounded transactions (PurgeStep), as Azure
// does ("the queue is later removed from the Queue service during
// garbage collection", Delete Queue); without one it purges before the
// response is sent, finishing even if the client hangs up. A failure
// (store closing, crash) leaves the graveyard entry for the next round;
// the request itself has succeeded.
//
// With a reclaimer, a small incarnation (up to purgeBatch keys) is still
// purged before the answer, in reclaim.Inline transactions, so that a
// queue deleted and created again at once works as clients written
// against other emulators expect; only larger ones wait for the
// background.
func (s *Service) purgeNow(ctx context.Context, id QueueID, inc string) {
	ctx = context.WithoutCancel(ctx)
	if s.reclaimer != nil {
		done := false
		var err error
		if s.reclaimer.InlineAllowed() {
			_, done, err = s.purgeUpTo(ctx, id.Account, id.Name, inc, reclaim.Inline)
		}
		if err != nil {
			s.log.Warn("queue purge deferred", "account", id.Account, "queue", id.Name, "err", err)
		}
		if !done {
			s.reclaimer.Kick()
		}
		return
	}
	if _, err := s.purge(ctx, id.Account, id.Name, inc); err != nil {
		s.log.Warn("queue purge deferred", "account", id.Account, "queue", id.Name, "err", err)
	}
}

// SetReclaimer makes Delete Queue and Clear Messages return without
// purging: r purges their graveyard entries in the background, one
// PurgeStep at a time.
func (s *Service) SetReclaimer(r *reclaim.Reclaimer) {
	s.reclaimer = r
	r.AddSweep(s.PurgeStep)
}

// PurgeStep runs one bounded transaction of the purge of the first
// graveyard entry (at most purgeBatch keys, the entry itself with the
// last of them); false when there is none.
func (s *Service) PurgeStep(ctx context.Context) (bool, error) {
	var did bool
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		did = false
		var grave []byte
		p := graveyardPrefix()
		if err := tx.Scan(p, kv.PrefixEnd(p), 1, false, func(k, _ []byte) bool {
			grave = append([]byte(nil), k...)
			return false
		}); err != nil || grave == nil {
			return err
		}
		parts, ok := kv.Split(grave)
		if !ok || len(parts) != 4 {
			return fmt.Errorf("queue: malformed graveyard key %q", grave)
		}
		did = true
		acct, name, inc := parts[1], parts[2], parts[3]
		keys := 0
		for _, prefix := range [][]byte{msgPrefix(acct, name, inc), visPrefix(acct, name, inc)} {
			var found [][]byte
			if err := tx.Scan(prefix, kv.PrefixEnd(prefix), purgeBatch-keys, false, func(k, _ []byte) bool {
				found = append(found, append([]byte(nil), k...))
				return true
			}); err != nil {
				return err
			}
			for _, k := range found {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
			if keys += len(found); keys >= purgeBatch {
				return nil
			}
		}
		return tx.Delete(grave)
	})
	return did, err
}

// purge deletes every message key of one incarnation, purgeBatch keys per
// transaction, then its graveyard entry. It returns the number of
// messages deleted.
func (s *Service) purge(ctx context.Context, acct, name, inc string) (int, error) {
	total, _, err := s.purgeUpTo(ctx, acct, name, inc, 0)
	return total, err
}

// purgeUpTo is purge in at most maxTx transactions (0: as many as it
// takes); done reports whether the incarnation is purged.
func (s *Service) purgeUpTo(ctx context.Context, acct, name, inc string, maxTx int) (total int, done bool, err error) {
	for n := 1; ; n++ {
		keys, msgs := 0, 0
		err := s.store.Update(ctx, func(tx kv.Tx) error {
			keys, msgs = 0, 0
			for i, prefix := range [][]byte{msgPrefix(acct, name, inc), visPrefix(acct, name, inc)} {
				var found [][]byte
				err := tx.Scan(prefix, kv.PrefixEnd(prefix), purgeBatch-keys, false, func(k, _ []byte) bool {
					found = append(found, append([]byte(nil), k...))
					return true
				})
				if err != nil {
					return err
				}
				for _, k := range found {
					if err := tx.Delete(k); err != nil {
						return err
					}
				}
				keys += len(found)
				if i == 0 {
					msgs = len(found)
				}
				if keys >= purgeBatch {
					return nil
				}
			}
			// Nothing is left once these deletes commit.
			return tx.Delete(graveKey(acct, name, inc))
		})
		if err != nil {
			return total, false, err
		}
		total += msgs
		if keys < purgeBatch {
			return total, true, nil
		}
		if n == maxTx {
			return total, false, nil
		}
	}
}

// CollectGarbage reclaims space: it finishes purges of deleted queues and
// cleared incarnations left behind by an interrupted request (unless a
// background reclaimer purges them), and deletes expired messages. It returns the number of messages removed. It is safe
// to run concurrently with requests and from several processes; a caller
// typically runs it every minute next to the Blob collector.
func (s *Service) CollectGarbage(ctx context.Context) (int, error) {
	total := 0
	// Graveyard entries: qg / acct / queue / inc. The background
	// reclaimer, when there is one, purges them, paced.
	var graves [][]string
	err := s.store.View(ctx, func(tx kv.Tx) error {
		if s.reclaimer != nil {
			return nil
		}
		p := graveyardPrefix()
		return tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, _ []byte) bool {
			if parts, ok := kv.Split(k); ok && len(parts) == 4 {
				graves = append(graves, parts[1:])
			}
			return true
		})
	})
	if err != nil {
		return 0, err
	}
	for _, g := range graves {
		n, err := s.purge(ctx, g[0], g[1], g[2])
		total += n
		if err != nil {
			return total, err
		}
	}
	// Expired messages of live queues.
	type live struct{ acct, name, inc string }
	var queues []live
	err = s.store.View(ctx, func(tx kv.Tx) error {
		p := kv.Key("q")
		var decodeErr error
		err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, v []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 3 {
				return true
			}
			var q queueRec
			if err := json.Unmarshal(v, &q); err != nil {
				decodeErr = err
				return false
			}
			queues = append(queues, live{parts[1], parts[2], q.Inc})
			return true
		})
		return errors.Join(err, decodeErr)
	})
	if err != nil {
		return total, err
	}
	for _, q := range queues {
		n, err := s.removeExpired(ctx, q.acct, q.name, q.inc)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// removeExpired deletes the expired messages of one queue incarnation,
// purgeBatch at a time. Expiry never changes, so a message found expired
// in a snapshot is still expired in the deleting transaction; it may have
// moved in the index meanwhile, which is why each is re-read by id.
func (s *Service) removeExpired(ctx context.Context, acct, name, inc string) (int, error) {
	total := 0
	prefix := visPrefix(acct, name, inc)
	start := prefix
	end := kv.PrefixEnd(prefix)
	for {
		now := s.clock.Now().UnixNano()
		var ids []string
		var next []byte
		err := s.store.View(ctx, func(tx kv.Tx) error {
			var derr error
			err := tx.Scan(start, end, 0, false, func(k, v []byte) bool {
				exp, id, err := parseIndexValue(k, v)
				if err != nil {
					derr = err
					return false
				}
				if now >= exp {
					ids = append(ids, id)
				}
				if len(ids) >= purgeBatch {
					next = append(append([]byte(nil), k...), 0)
					return false
				}
				return true
			})
			return errors.Join(err, derr)
		})
		if err != nil || len(ids) == 0 {
			return total, err
		}
		n := 0
		err = s.store.Update(ctx, func(tx kv.Tx) error {
			n = 0
			for _, id := range ids {
				m, ok, err := loadMessage(tx, acct, name, inc, id)
				if err != nil {
					return err
				}
				if !ok || !m.expired(now) {
					continue
				}
				if err := removeMessage(tx, acct, name, inc, m); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		total += n
		if err != nil || next == nil {
			return total, err
		}
		start = next
	}
}

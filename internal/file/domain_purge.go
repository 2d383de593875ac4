package file

import (
	"context"
	"fmt"
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// Deleting a share is two steps. One transaction checks the request and
// replaces the share record (and, with x-ms-delete-snapshots, its
// snapshots' records) by a tombstone ("fsd", account, share, snapshot):
// from then on the share is gone for every operation, since they all load
// the share record in their own transaction. Then the share's entries, ID
// index, permissions and handle records are purged in bounded
// transactions, releasing data references so the collector frees the
// bytes; the last one removes the tombstone. With the server's background
// reclaimer (SetReclaimer) the request returns after the first step and
// the reclaimer purges (PurgeStep), as Azure does (Delete Share: "the
// share and any files contained within it are later deleted during
// garbage collection"), Create Share of the name answering 409
// ShareBeingDeleted meanwhile; without one the request purges before it
// answers. A purge cut short (the process stopped) is finished by the
// reclaimer at start, or by the next Create Share of the name or
// PurgeDeletedShares.

// PurgeStep runs one bounded transaction of the purge of the first
// tombstone (at most purgeBatch records, the tombstone with the last of
// them); false when there is none.
func (s *Service) PurgeStep(ctx context.Context) (bool, error) {
	var did bool
	now := s.clock.Now()
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		did = false
		var key []byte
		pre := kv.Key("fsd")
		if err := tx.Scan(pre, kv.PrefixEnd(pre), 1, false, func(k, _ []byte) bool {
			key = append([]byte(nil), k...)
			return false
		}); err != nil || key == nil {
			return err
		}
		parts, ok := kv.Split(key)
		if !ok || len(parts) != 4 {
			return fmt.Errorf("file: malformed share tombstone %q", key)
		}
		did = true
		more, err := purgeRecords(tx, parts[1], parts[2], parts[3], now, purgeBatch)
		if err != nil || more {
			return err
		}
		return tx.Delete(key)
	})
	return did, err
}

// purgeBatch bounds the records one purge transaction removes.
const purgeBatch = 256

func tombstoneKey(acct, sh, snap string) []byte { return kv.Key("fsd", acct, sh, snap) }
func tombstonesPrefix(acct, sh string) []byte   { return kv.Key("fsd", acct, sh) }

type tombstone struct {
	Deleted time.Time `json:"t"`
}

// hasTombstones reports whether a deletion of share sh (or of one of its
// snapshots) is still being purged.
func hasTombstones(tx kv.Tx, acct, sh string) (bool, error) {
	pre := tombstonesPrefix(acct, sh)
	found := false
	err := tx.Scan(pre, kv.PrefixEnd(pre), 1, false, func(_, _ []byte) bool {
		found = true
		return false
	})
	return found, err
}

// snapshotsOf returns the snapshot timestamps of share sh, and whether any
// of them has an active lease at now.
func snapshotsOf(tx kv.Tx, acct, sh string, now time.Time) (snaps []string, leased bool, err error) {
	pre := shareVersionsPrefix(acct, sh)
	var derr error
	err = tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, v []byte) bool {
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 4 || parts[3] == "" {
			return true
		}
		snaps = append(snaps, parts[3])
		var rec struct {
			Lease lease.Lease `json:"l"`
		}
		if derr = json.Unmarshal(v, &rec); derr != nil {
			return false
		}
		leased = leased || rec.Lease.Active(now)
		return true
	})
	if err == nil {
		err = derr
	}
	return snaps, leased, err
}

// purgeShare purges every pending deletion of share sh.
func (s *Service) purgeShare(ctx context.Context, acct, sh string) error {
	var snaps []string
	err := s.store.View(ctx, func(tx kv.Tx) error {
		snaps = snaps[:0]
		pre := tombstonesPrefix(acct, sh)
		return tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, _ []byte) bool {
			if parts, ok := kv.Split(k); ok && len(parts) == 4 {
				snaps = append(snaps, parts[3])
			}
			return true
		})
	})
	if err != nil {
		return err
	}
	for _, snap := range snaps {
		if err := s.purgeVersion(ctx, acct, sh, snap); err != nil {
			return err
		}
	}
	return nil
}

// purgeVersion removes the records of one deleted version of share sh
// (snap "" is the share itself) in transactions of at most purgeBatch
// records, then its tombstone.
func (s *Service) purgeVersion(ctx context.Context, acct, sh, snap string) error {
	_, err := s.purgeVersionUpTo(ctx, acct, sh, snap, 0)
	return err
}

// purgeVersionUpTo is purgeVersion in at most maxTx transactions (0: as
// many as it takes); it reports whether the version is purged.
func (s *Service) purgeVersionUpTo(ctx context.Context, acct, sh, snap string, maxTx int) (bool, error) {
	for n := 1; ; n++ {
		done := false
		err := s.store.Update(ctx, func(tx kv.Tx) error {
			done = false
			if _, err := tx.Get(tombstoneKey(acct, sh, snap)); err == kv.ErrNotFound {
				done = true // purged by someone else
				return nil
			} else if err != nil {
				return err
			}
			more, err := purgeRecords(tx, acct, sh, snap, s.clock.Now(), purgeBatch)
			if err != nil || more {
				return err
			}
			done = true
			return tx.Delete(tombstoneKey(acct, sh, snap))
		})
		if err != nil || done || n == maxTx {
			return done && err == nil, err
		}
	}
}

// purgeRecords deletes up to limit records of a deleted share version:
// entries (releasing their data references), ID index records and, for
// the share itself, its permissions and handle records. It reports
// whether more remain.
func purgeRecords(tx kv.Tx, acct, sh, snap string, now time.Time, limit int) (more bool, err error) {
	n := 0
	var parts []extent.Part
	var derr error
	pre := entriesPrefix(acct, sh, snap)
	var keys [][]byte
	err = tx.Scan(pre, kv.PrefixEnd(pre), limit+1, false, func(k, v []byte) bool {
		if len(keys) == limit {
			more = true
			return false
		}
		keys = append(keys, append([]byte(nil), k...))
		var e struct {
			Parts []extent.Part `json:"x"`
		}
		if derr = json.Unmarshal(v, &e); derr != nil {
			return false
		}
		parts = append(parts, e.Parts...)
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return false, err
	}
	if err := extent.AdjustRefs(tx, now, parts, nil); err != nil {
		return false, err
	}
	n = len(keys)
	prefixes := [][]byte{idsPrefix(acct, sh, snap)}
	if snap == "" {
		prefixes = append(prefixes, permsPrefix(acct, sh))
	}
	for _, pre := range prefixes {
		if more {
			break
		}
		err := tx.Scan(pre, kv.PrefixEnd(pre), limit-n+1, false, func(k, _ []byte) bool {
			if n == limit {
				more = true
				return false
			}
			keys = append(keys, append([]byte(nil), k...))
			n++
			return true
		})
		if err != nil {
			return false, err
		}
	}
	for _, k := range keys {
		if err := tx.Delete(k); err != nil {
			return false, err
		}
	}
	if more || snap != "" {
		return more, nil
	}
	if n >= limit {
		return true, nil // the handles, if any, in the next transaction
	}
	return handle.PurgeShare(tx, acct, sh, limit-n)
}

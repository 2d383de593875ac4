package blob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/svcprops"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Blob soft delete (DeleteRetentionPolicy), as Azure's "Soft delete for
// blobs" describes it for accounts without versioning:
//
//   - Delete Blob soft-deletes the blob or snapshot (with
//     x-ms-delete-snapshots, the blob and/or its snapshots): the record
//     moves from "b" to "bd" with its deletion time and expiry (deletion
//     time + the retention days in force then), keeping the references of
//     its parts, and reads answer 404 BlobNotFound.
//   - Put Blob, Put Block List and Copy Blob over a live blob keep the
//     replaced state as a soft-deleted snapshot.
//   - A write that creates a blob whose previous blob is soft-deleted
//     turns that blob into a soft-deleted snapshot of the new one when the
//     types match, and permanently deletes the name's soft-deleted data
//     when they differ.
//   - Undelete Blob restores the soft-deleted blob and all its soft-deleted
//     snapshots.
//   - Expired records are invisible at once (every decision uses the
//     request's time) and purged by the collector (purgeExpired), which
//     releases their data references.

// retained reports whether the record marked d is still retained at now.
func (d *deletion) retained(now time.Time) bool { return d != nil && now.Before(d.Expires) }

// remainingDays is List Blobs' RemainingRetentionDays: whole days left,
// not counting the day in progress (the service reports 6 for a blob
// deleted a moment ago under a 7-day policy).
func (d *deletion) remainingDays(now time.Time) int {
	left := d.Expires.Sub(now)
	if left <= 0 {
		return 0
	}
	const day = 24 * time.Hour
	return int((left+day-1)/day) - 1
}

// retention is the account's DeleteRetentionPolicy.
type retention struct {
	on        bool // soft delete enabled
	days      int
	permanent bool // AllowPermanentDelete
}

func loadRetention(tx kv.Tx, acct string) (retention, error) {
	rp, err := svcprops.LoadDeleteRetention(tx, servicePropsKey(acct))
	if err != nil {
		return retention{}, err
	}
	var out retention
	if rp != nil {
		if rp.Days != nil {
			out.days = *rp.Days
		}
		out.on = rp.Enabled && out.days > 0
		out.permanent = rp.AllowPermanentDelete != nil && *rp.AllowPermanentDelete
	}
	return out, nil
}

// DeleteRetention is how long a path of acct deleted now is kept as a
// soft-deleted path: the retention days of the Blob service's
// DeleteRetentionPolicy, 0 when soft delete is off. It reads the policy
// in tx, the transaction of the delete.
func DeleteRetention(tx kv.Tx, acct string) (time.Duration, error) {
	p, err := loadRetention(tx, acct)
	if err != nil || !p.on {
		return 0, err
	}
	return time.Duration(p.days) * 24 * time.Hour, nil
}

// mark returns the deletion of a record soft-deleted at now.
func (p retention) mark(now time.Time) deletion {
	return deletion{At: now, Expires: now.Add(time.Duration(p.days) * 24 * time.Hour)}
}

// putDeleted stores b as the soft-deleted record (name, snap) marked d and
// indexes its expiry. The record keeps the references of its parts; it
// holds no lease (Undelete returns the blob unleased).
func putDeleted(tx kv.Tx, acct, c, name, snap string, b *blobRec, d deletion) error {
	key := deletedKey(acct, c, name, snap)
	if _, err := tx.Get(key); err == nil {
		return fmt.Errorf("soft-deleted record %q already exists", key)
	} else if err != kv.ErrNotFound {
		return err
	}
	rec := *b
	rec.Lease = lease.Lease{}
	rec.Del = &d
	if err := kv.PutJSON(tx, key, &rec); err != nil {
		return err
	}
	return tx.Put(expiryKey(d.Expires, acct, c, name, snap), nil)
}

// dropDeleted removes a soft-deleted record and its expiry entry; the
// caller releases or moves the references of its parts.
func dropDeleted(tx kv.Tx, acct, c, name, snap string, b *blobRec) error {
	if err := tx.Delete(deletedKey(acct, c, name, snap)); err != nil {
		return err
	}
	if b.Del == nil {
		return nil
	}
	return tx.Delete(expiryKey(b.Del.Expires, acct, c, name, snap))
}

// deletedEntry is one soft-deleted record of a blob name.
type deletedEntry struct {
	snap string // "" for the base blob
	rec  *blobRec
}

// findDeleted returns the soft-deleted records of one blob name, the base
// blob first, then the snapshots oldest first, expired ones included.
func findDeleted(tx kv.Tx, acct, c, name string) ([]deletedEntry, error) {
	prefix := deletedVersionsPrefix(acct, c, name)
	var out []deletedEntry
	var derr error
	err := tx.Scan(prefix, kv.PrefixEnd(prefix), 0, false, func(k, v []byte) bool {
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 5 {
			return true
		}
		var b blobRec
		if derr = kv.DecodeJSON(k, v, &b); derr != nil {
			return false
		}
		if b.Del == nil { // never written so; treat as due now
			b.Del = &deletion{}
		}
		out = append(out, deletedEntry{snap: parts[4], rec: &b})
		return true
	})
	if err == nil {
		err = derr
	}
	return out, err
}

// newSnapshotTime returns the snapshot time to use for a snapshot of the
// blob taken at t: unique among its live and soft-deleted snapshots (two
// in one instant, or after the clock was set back, get times 100 ns apart).
func newSnapshotTime(tx kv.Tx, acct, c, name string, t time.Time) (string, error) {
	for {
		snap := wire.FormatISO7(t)
		used := false
		for _, k := range [][]byte{BlobKey(acct, c, name, snap), deletedKey(acct, c, name, snap)} {
			if _, err := tx.Get(k); err == nil {
				used = true
			} else if err != kv.ErrNotFound {
				return "", err
			}
		}
		if !used {
			return snap, nil
		}
		t = t.Add(100)
	}
}

// settleDeletedBase runs before a write creates the base blob of r's name
// while none is live (Put Blob, Put Block List, Copy Blob, Put Block). A
// soft-deleted base blob of the same type becomes a soft-deleted snapshot
// of the new blob, keeping its deletion and expiry times; if the types
// differ, all soft-deleted data of the name is permanently deleted.
func (s *Service) settleDeletedBase(tx kv.Tx, ref BlobRef, now time.Time, typ string) error {
	var d blobRec
	ok, err := kv.GetJSON(tx, deletedKey(ref.Account, ref.Container, ref.Blob, ""), &d)
	if err != nil || !ok {
		return err
	}
	if d.Del == nil {
		d.Del = &deletion{}
	}
	if d.Type == typ {
		snap, err := newSnapshotTime(tx, ref.Account, ref.Container, ref.Blob, now)
		if err != nil {
			return err
		}
		if err := dropDeleted(tx, ref.Account, ref.Container, ref.Blob, "", &d); err != nil {
			return err
		}
		return putDeleted(tx, ref.Account, ref.Container, ref.Blob, snap, &d, *d.Del)
	}
	entries, err := findDeleted(tx, ref.Account, ref.Container, ref.Blob)
	if err != nil {
		return err
	}
	var release []extent.Part
	for _, e := range entries {
		if err := dropDeleted(tx, ref.Account, ref.Container, ref.Blob, e.snap, e.rec); err != nil {
			return err
		}
		release = append(release, e.rec.Parts...)
	}
	return extent.AdjustRefs(tx, now, release, nil)
}

// beforeOverwrite prepares a write that replaces the base blob of r's
// name (Put Blob, Put Block List, Copy Blob) with a blob of type typ, and
// returns the parts whose references the write releases. With soft delete
// on, a live blob being replaced is kept as a soft-deleted snapshot (its
// references move to it); with no live blob, a soft-deleted one is
// settled first. With versioning on, the replaced blob becomes a version
// and nb gets its version id (stampVersion).
func (s *Service) beforeOverwrite(tx kv.Tx, ref BlobRef, now time.Time, old, nb *blobRec) ([]extent.Part, error) {
	if old == nil {
		if err := s.settleDeletedBase(tx, ref, now, nb.Type); err != nil {
			return nil, err
		}
	}
	// With versioning on, the replaced blob is kept as a version (with
	// its references) instead of a soft-deleted snapshot.
	if kept, err := s.stampVersion(tx, ref, now, old, nb); err != nil || kept || old == nil {
		return nil, err
	}
	pol, err := loadRetention(tx, ref.Account)
	if err != nil || !pol.on {
		return old.Parts, err
	}
	snap, err := newSnapshotTime(tx, ref.Account, ref.Container, ref.Blob, now)
	if err != nil {
		return nil, err
	}
	return nil, putDeleted(tx, ref.Account, ref.Container, ref.Blob, snap, old, pol.mark(now))
}

// errPermanentDelete is the 409 Delete Blob answers to deletetype=permanent
// when the feature is off or the target is not a soft-deleted snapshot.
func errPermanentDelete(msg string) error {
	return azerr.Newf(azerr.InvalidOperation, "%s", msg).WithStatus(409)
}

// deletePermanently is Delete Blob with deletetype=permanent: it removes a
// soft-deleted snapshot for good, when the account's policy allows it.
func deletePermanently(tx kv.Tx, ref BlobRef, now time.Time, pol retention, check func(*blobRec) error) error {
	if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
		return err
	}
	if !pol.permanent {
		return errPermanentDelete("Permanent delete is not enabled for this account (DeleteRetentionPolicy AllowPermanentDelete).")
	}
	var d blobRec
	ok, err := kv.GetJSON(tx, deletedKey(ref.Account, ref.Container, ref.Blob, ref.Snapshot), &d)
	if err != nil {
		return err
	}
	if ok && d.Del.retained(now) {
		if err := check(&d); err != nil {
			return err
		}
		if err := dropDeleted(tx, ref.Account, ref.Container, ref.Blob, ref.Snapshot, &d); err != nil {
			return err
		}
		return extent.AdjustRefs(tx, now, d.Parts, nil)
	}
	live, err := findBlob(tx, ref.Account, ref.Container, ref.Blob, ref.Snapshot)
	if err != nil {
		return err
	}
	if live != nil {
		return errPermanentDelete("The specified snapshot is not soft-deleted.")
	}
	return azerr.New(azerr.BlobNotFound)
}

// purgeExpired permanently deletes the soft-deleted blobs and snapshots
// whose retention has ended, releasing their data references (the items
// then go through the collector's grace period). It runs from
// CollectGarbage, never inside a request, and returns how many records it
// purged.
func (s *Service) purgeExpired(ctx context.Context) (int, error) {
	now := s.clock.Now()
	start := kv.Key("bx")
	end := kv.AppendPartial(kv.Key("bx"), fmt.Sprintf("%020d", now.UnixNano()+1))
	purged := 0
	for {
		var due [][]byte
		err := s.store.View(ctx, func(tx kv.Tx) error {
			due = due[:0]
			return tx.Scan(start, end, 256, false, func(k, _ []byte) bool {
				due = append(due, append([]byte(nil), k...))
				return true
			})
		})
		if err != nil || len(due) == 0 {
			return purged, err
		}
		n := 0
		err = s.store.Update(ctx, func(tx kv.Tx) error {
			n = 0
			for _, k := range due {
				if err := tx.Delete(k); err != nil {
					return err
				}
				parts, ok := kv.Split(k)
				if !ok || len(parts) != 6 {
					continue
				}
				acct, c, name, snap := parts[2], parts[3], parts[4], parts[5]
				if vid, ok := strings.CutPrefix(snap, versionExpiryMark); ok {
					purged, err := purgeVersion(tx, acct, c, name, vid, now)
					if err != nil {
						return err
					}
					if purged {
						n++
					}
					continue
				}
				var b blobRec
				found, err := kv.GetJSON(tx, deletedKey(acct, c, name, snap), &b)
				if err != nil {
					return err
				}
				if !found || b.Del.retained(now) {
					continue // undeleted, or a newer record under the same key
				}
				if err := tx.Delete(deletedKey(acct, c, name, snap)); err != nil {
					return err
				}
				if err := extent.AdjustRefs(tx, now, b.Parts, nil); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if err != nil {
			return purged, err
		}
		purged += n
	}
}

func versionsOfPrefix(acct, c, name string) []byte { return kv.Key("bv", acct, c, name) }

// lastVersionID returns the greatest version id stored for the name
// ("" when none).
func lastVersionID(tx kv.Tx, acct, c, name string) (string, error) {
	prefix := versionsOfPrefix(acct, c, name)
	last := ""
	err := tx.Scan(prefix, kv.PrefixEnd(prefix), 1, true, func(k, _ []byte) bool {
		if parts, ok := kv.Split(k); ok && len(parts) == 5 {
			last = parts[4]
		}
		return false
	})
	return last, err
}

// nextVersionID returns the version id of a version made at t: t in the
// snapshot format, or 100 ns after after when that is not greater (two
// writes in one clock tick, or a clock set back), so ids strictly
// increase per blob.
func nextVersionID(t time.Time, after string) string {
	id := wire.FormatISO7(t)
	if id > after {
		return id
	}
	last, err := wire.ParseSnapshot(after)
	if err != nil { // never stored so; still keep the order
		return after + "0"
	}
	return wire.FormatISO7(last.Add(100))
}

// newVersionID returns the id of a version of ref's name made at t,
// greater than cur (the base blob's current id, "" for none) and every
// stored version's.
func newVersionID(tx kv.Tx, ref BlobRef, t time.Time, cur string) (string, error) {
	last, err := lastVersionID(tx, ref.Account, ref.Container, ref.Blob)
	if err != nil {
		return "", err
	}
	if cur > last {
		last = cur
	}
	return nextVersionID(t, last), nil
}

// putVersion stores b as the previous version b.VersionID of ref's name
// (giving a blob written before versioning was on an id of its own
// first). The caller moves or adds the references of its parts. b must
// be the record read from the base blob's key in tx, unchanged, as every
// caller has it: when it has an id and no lease, the version is the
// stored bytes it was read from (b.raw, or the key read again), copied
// rather than encoded again (a small blob's record embeds its data, so
// encoding it is most of what a version costs to write).
func putVersion(tx kv.Tx, ref BlobRef, b *blobRec) error {
	if b.VersionID != "" && b.Del == nil && b.Lease == (lease.Lease{}) {
		raw := b.raw
		if raw == nil {
			var err error
			raw, err = tx.Get(BlobKey(ref.Account, ref.Container, ref.Blob, ""))
			if err != nil && !errors.Is(err, kv.ErrNotFound) {
				return err
			}
		}
		if raw != nil {
			// Put copies what it is given before it changes
			// anything, and a value Get returned stays valid to the
			// end of the transaction (kv.Tx; kvtest's GetThenPut), so
			// the stored bytes go in as they are.
			return tx.Put(versionKey(ref.Account, ref.Container, ref.Blob, b.VersionID), raw)
		}
	}
	v := *b
	if v.VersionID == "" {
		id, err := newVersionID(tx, ref, v.Modified, "")
		if err != nil {
			return err
		}
		v.VersionID = id
		b.VersionID = id
	}
	v.Lease = lease.Lease{}
	v.Del = nil
	return kv.PutJSON(tx, versionKey(ref.Account, ref.Container, ref.Blob, v.VersionID), &v)
}

// stampVersion runs as a write replaces the base blob old (nil: none)
// with nb: with versioning on, old becomes a previous version, keeping
// its references, and nb gets a new version id. It reports whether it
// kept old (the caller then releases none of old's references).
func (s *Service) stampVersion(tx kv.Tx, ref BlobRef, now time.Time, old, nb *blobRec) (bool, error) {
	if !s.versioningOn(ref.Account) {
		nb.VersionID = ""
		return false, nil
	}
	if old != nil {
		if err := putVersion(tx, ref, old); err != nil {
			return false, err
		}
		// The current version's id is the greatest of the name's: no
		// scan of the versions is needed.
		nb.VersionID = nextVersionID(now, old.VersionID)
		return true, nil
	}
	id, err := newVersionID(tx, ref, now, "")
	if err != nil {
		return false, err
	}
	nb.VersionID = id
	return false, nil
}

// versionExpiryMark starts the last component of the expiry index entry
// ("bx") of a soft-deleted version, before its id: purgeExpired then
// purges the version record (purgeVersion).
const versionExpiryMark = "v:"

// purgeVersion permanently deletes the soft-deleted version vid whose
// retention has ended at now, releasing its references; it reports
// whether it did (not when the version was undeleted meanwhile).
func purgeVersion(tx kv.Tx, acct, c, name, vid string, now time.Time) (bool, error) {
	var b blobRec
	ok, err := kv.GetJSON(tx, versionKey(acct, c, name, vid), &b)
	if err != nil || !ok || b.Del == nil || b.Del.retained(now) {
		return false, err
	}
	if err := tx.Delete(versionKey(acct, c, name, vid)); err != nil {
		return false, err
	}
	return true, extent.AdjustRefs(tx, now, b.Parts, nil)
}

package blob

import (
	"errors"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Blob versioning, as Azure's "Blob versioning" describes it, for flat
// accounts with versioning on (SetVersioning):
//
//   - The base blob's record carries the id of the current version
//     (blobRec.VersionID): the time of the write that made it, formatted
//     as a snapshot time (7 fractional digits), strictly increasing per
//     blob name (newVersionID).
//   - A write that replaces the blob's content or metadata (Put Blob, Put
//     Block List, Copy Blob, Put Blob From URL, Set Blob Metadata) keeps
//     the replaced state as a previous version under
//     "bv / account / container / blob / versionid"; the version holds
//     references to the same data items, so no byte is copied. Put Block,
//     Put Page, Append Block, Set Blob Properties, Set Blob Tags, Set
//     Blob Tier and leases change the current version in place.
//   - Delete Blob of the base blob moves the current version to "bv": the
//     blob then has no current version, its versions stay. Delete Blob
//     with a version id removes that version and releases its references.
//   - With versioning on, an overwrite keeps a version instead of a
//     soft-deleted snapshot (soft delete then protects snapshots and
//     versions deleted explicitly).

// SetVersioning says which accounts keep blob versions (nil: none). A
// hierarchical account never does (versioningOn).
func (s *Service) SetVersioning(on func(account string) bool) { s.versioning = on }

// versioningOn reports whether acct keeps versions.
func (s *Service) versioningOn(acct string) bool {
	return s.versioning != nil && s.versioning(acct) && s.nsOf(acct) == nil
}

// VersioningOn reports whether account keeps blob versions (the front
// end answers x-ms-is-current-version and refuses versionid= where it
// does not).
func (s *Service) VersioningOn(account string) bool { return s.versioningOn(account) }

func versionKey(acct, c, name, vid string) []byte   { return kv.Key("bv", acct, c, name, vid) }
func versionsOfPrefix(acct, c, name string) []byte  { return kv.Key("bv", acct, c, name) }
func containerVersionsPrefix(acct, c string) []byte { return kv.Key("bv", acct, c) }

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

// versionOnUpdate runs inside a write that changes the current blob b in
// place and creates a version (Set Blob Metadata): the state before the
// change becomes a previous version sharing b's data items (one more
// reference each), and b gets a new version id.
func (s *Service) versionOnUpdate(tx kv.Tx, ref BlobRef, now time.Time, b *blobRec) error {
	if !s.versioningOn(ref.Account) {
		return nil
	}
	if err := putVersion(tx, ref, b); err != nil {
		return err
	}
	if err := extent.AdjustRefs(tx, now, nil, b.Parts); err != nil {
		return err
	}
	b.VersionID = nextVersionID(now, b.VersionID) // the greatest id, as in stampVersion
	return nil
}

// findVersion returns version vid of the name (the base blob when it is
// the current version), or nil. current reports which.
func findVersion(tx kv.Tx, acct, c, name, vid string) (b *blobRec, current bool, err error) {
	base, err := findBlob(tx, acct, c, name, "")
	if err != nil {
		return nil, false, err
	}
	if base != nil && base.VersionID == vid {
		return base, true, nil
	}
	if _, err := tx.Get(ContainerKey(acct, c)); err != nil {
		if err == kv.ErrNotFound {
			return nil, false, nil
		}
		return nil, false, err
	}
	var v blobRec
	ok, err := kv.GetJSON(tx, versionKey(acct, c, name, vid), &v)
	if err != nil || !ok || v.Del != nil { // a soft-deleted version is not found
		return nil, false, err
	}
	v.prev = true
	return &v, false, nil
}

// loadVersion is loadBlob for a ref with a version id.
func loadVersion(tx kv.Tx, ref BlobRef) (*blobRec, error) {
	b, _, err := findVersion(tx, ref.Account, ref.Container, ref.Blob, ref.VersionID)
	if err != nil {
		return nil, err
	}
	if b == nil {
		if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
			return nil, err
		}
		return nil, azerr.New(azerr.BlobNotFound)
	}
	return b, nil
}

// deleteVersion is Delete Blob of a previous version. With soft delete
// on, the version is soft-deleted where it is (its record marked, its
// expiry indexed under versionExpiryMark), keeping its references, and
// it reports true; otherwise its record goes and its references are
// released. Deleting the current version by its id is deleting the base
// blob (the caller's ordinary path).
func deleteVersion(tx kv.Tx, ref BlobRef, a Access, now time.Time) (bool, error) {
	b, err := loadVersion(tx, ref)
	if err != nil {
		return false, err
	}
	if err := a.checkConds(b, ref.Container); err != nil {
		return false, err
	}
	if err := b.deleteProtected(now); err != nil {
		return false, err
	}
	// A previous version is a blob of the container: its container-level
	// WORM settings hold for it too (containerworm.go).
	if err := wormRefuse(tx, ref, b, wormDelete, now); err != nil {
		return false, err
	}
	key := versionKey(ref.Account, ref.Container, ref.Blob, ref.VersionID)
	pol, err := loadRetention(tx, ref.Account)
	if err != nil {
		return false, err
	}
	if pol.on {
		d := pol.mark(now)
		b.Del = &d
		if err := kv.PutJSON(tx, key, b); err != nil {
			return false, err
		}
		return true, tx.Put(expiryKey(d.Expires, ref.Account, ref.Container, ref.Blob, versionExpiryMark+ref.VersionID), nil)
	}
	if err := tx.Delete(key); err != nil {
		return false, err
	}
	return false, extent.AdjustRefs(tx, now, b.Parts, nil)
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

// undeleteVersions is Undelete Blob's part for versions: the name's
// soft-deleted versions still retained are previous versions again
// (Azure's "Soft delete for blobs", with versioning: Undelete Blob
// restores soft-deleted versions). It returns how many it restored.
func undeleteVersions(tx kv.Tx, ref BlobRef, now time.Time) (int, error) {
	prefix := versionsOfPrefix(ref.Account, ref.Container, ref.Blob)
	type dead struct {
		key []byte
		rec blobRec
	}
	var found []dead
	var derr error
	err := tx.Scan(prefix, kv.PrefixEnd(prefix), 0, false, func(k, v []byte) bool {
		var b blobRec
		if derr = kv.DecodeJSON(k, v, &b); derr != nil {
			return false
		}
		if b.Del.retained(now) {
			found = append(found, dead{append([]byte(nil), k...), b})
		}
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return 0, err
	}
	for _, f := range found {
		b := f.rec
		if err := tx.Delete(expiryKey(b.Del.Expires, ref.Account, ref.Container, ref.Blob, versionExpiryMark+b.VersionID)); err != nil {
			return 0, err
		}
		b.Del = nil
		if err := kv.PutJSON(tx, f.key, &b); err != nil {
			return 0, err
		}
	}
	return len(found), nil
}

// isCurrentVersion reports whether ref's version id names the base blob's
// current version.
func isCurrentVersion(tx kv.Tx, ref BlobRef) (bool, error) {
	_, cur, err := findVersion(tx, ref.Account, ref.Container, ref.Blob, ref.VersionID)
	return cur, err
}

// findRef is findBlob for ref, a version when ref names one (a copy's
// source).
func findRef(tx kv.Tx, ref BlobRef) (*blobRec, error) {
	if ref.VersionID != "" {
		b, _, err := findVersion(tx, ref.Account, ref.Container, ref.Blob, ref.VersionID)
		return b, err
	}
	return findBlob(tx, ref.Account, ref.Container, ref.Blob, ref.Snapshot)
}

// resumeVersions sets where the versions pass of a listing resumes after
// a marker of kind mkind at snap: after the marker's version ("v"), after
// all the name's versions when the marker is its base blob ("b" with no
// snapshot), or at its first version when the marker is a snapshot,
// which lists before the versions.
func resumeVersions(sc *blobScan, ref ContainerRef, mkind, mname, msnap string) {
	switch {
	case mkind == "v":
		// Start at the marker's version itself, not at the name's first:
		// a blob's earlier versions are not read again page after page.
		if from := versionKey(ref.Account, ref.Container, mname, msnap); string(from) > string(sc.start) {
			sc.start = from
		}
		sc.resumeSnap = msnap
	case mkind == "b" && msnap != "":
		sc.resume = false
	}
}

// putRec writes b back where it was read from ref: a previous version
// under "bv", else the base blob or snapshot (Set Blob Tags and Set Blob
// Tier, which may address a version).
func putRec(tx kv.Tx, ref BlobRef, b *blobRec) error {
	if b.prev {
		return kv.PutJSON(tx, versionKey(ref.Account, ref.Container, ref.Blob, b.VersionID), b)
	}
	return kv.PutJSON(tx, BlobKey(ref.Account, ref.Container, ref.Blob, ref.Snapshot), b)
}

// collectVersionsOnly lists, for include=deletedwithversions, each name
// of the container's versions (from the marker on) that has no live base
// blob, once, with its latest version's record; names containing the
// delimiter after the prefix fold into one prefix entry each. It visits
// one version per name.
func collectVersionsOnly(tx kv.Tx, ref ContainerRef, prefix, delim, mkind, mname string, limit int) ([]listEntry, error) {
	base := containerVersionsPrefix(ref.Account, ref.Container)
	rangeStart := kv.AppendPartial(append([]byte(nil), base...), prefix)
	end := kv.PrefixEnd(rangeStart)
	from := rangeStart
	switch mkind {
	case "b", "v":
		from = versionsOfPrefix(ref.Account, ref.Container, mname)
	case "p":
		from = kv.AppendPartial(append([]byte(nil), base...), mname)
	}
	if string(from) < string(rangeStart) {
		from = rangeStart
	}
	var out []listEntry
	for len(out) < limit {
		var name string
		err := tx.Scan(from, end, 1, false, func(k, _ []byte) bool {
			if parts, ok := kv.Split(k); ok && len(parts) == 5 {
				name = parts[3]
			}
			return false
		})
		if err != nil || name == "" {
			return out, err
		}
		if delim != "" && strings.HasPrefix(name, prefix) {
			if i := strings.Index(name[len(prefix):], delim); i >= 0 {
				p := name[:len(prefix)+i+len(delim)]
				out = append(out, listEntry{name: p, prefix: true})
				from = kv.PrefixEnd(kv.AppendPartial(append([]byte(nil), base...), p))
				continue
			}
		}
		vp := versionsOfPrefix(ref.Account, ref.Container, name)
		from = kv.PrefixEnd(vp)
		if _, err := tx.Get(BlobKey(ref.Account, ref.Container, name, "")); err == nil {
			continue // a live blob: listed by the blobs' own pass
		} else if err != kv.ErrNotFound {
			return nil, err
		}
		var latest *blobRec
		var derr error
		err = tx.Scan(vp, kv.PrefixEnd(vp), 0, true, func(k, v []byte) bool {
			var b blobRec
			if derr = kv.DecodeJSON(k, v, &b); derr != nil {
				return false
			}
			if b.Del != nil {
				return true // a soft-deleted version does not make the name listed
			}
			latest = &b
			return false
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return nil, err
		}
		if latest != nil {
			out = append(out, listEntry{name: name, rec: latest, versionsOnly: true})
		}
	}
	return out, nil
}

// deleteVersionPermanently is Delete Blob with deletetype=permanent of a
// version: a soft-deleted version goes for good, its references
// released, when the account's policy allows permanent delete.
func deleteVersionPermanently(tx kv.Tx, ref BlobRef, a Access, now time.Time) error {
	if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
		return err
	}
	pol, err := loadRetention(tx, ref.Account)
	if err != nil {
		return err
	}
	if !pol.permanent {
		return errPermanentDelete("Permanent delete is not enabled for this account (DeleteRetentionPolicy AllowPermanentDelete).")
	}
	key := versionKey(ref.Account, ref.Container, ref.Blob, ref.VersionID)
	var b blobRec
	ok, err := kv.GetJSON(tx, key, &b)
	if err != nil {
		return err
	}
	switch {
	case ok && b.Del.retained(now):
		if err := a.checkConds(&b, ref.Container); err != nil {
			return err
		}
		if err := tx.Delete(key); err != nil {
			return err
		}
		if err := tx.Delete(expiryKey(b.Del.Expires, ref.Account, ref.Container, ref.Blob, versionExpiryMark+ref.VersionID)); err != nil {
			return err
		}
		return extent.AdjustRefs(tx, now, b.Parts, nil)
	case ok && b.Del == nil:
		return errPermanentDelete("The specified version is not soft-deleted.")
	}
	if cur, err := isCurrentVersion(tx, ref); err != nil {
		return err
	} else if cur {
		return errPermanentDelete("The specified version is not soft-deleted.")
	}
	return azerr.New(azerr.BlobNotFound)
}

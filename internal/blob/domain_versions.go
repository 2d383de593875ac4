package blob

import (
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
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

// VersioningOn reports whether account keeps blob versions (the front
// end answers x-ms-is-current-version and refuses versionid= where it
// does not).
func (s *Service) VersioningOn(account string) bool { return s.versioningOn(account) }

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

// collectVersionsOnly lists, for include=deletedwithversions, each name
// of the container's versions (from the marker on) that has no live base
// blob, once, with its latest version's record; names containing the
// delimiter after the prefix fold into one prefix entry each. It visits
// one version per name.
func collectVersionsOnly(tx kv.Tx, ref ContainerRef, prefix, delim, mkind, mname string, limit int) ([]listEntry, error) {
	base := containerVersionsPrefix(ref.Account, ref.Container)
	from, end := resumeRange(base, prefix, mkind, mname, "",
		func(name string) []byte { return versionsOfPrefix(ref.Account, ref.Container, name) })
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

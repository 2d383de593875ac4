// The stored items below every operation: a new item's record and id,
// its removal, the replacement of its content, and the arithmetic of its
// written ranges. They read and write records only; the checks that decide
// whether an operation may run are the callers' (domain.go).

package file

import (
	"time"

	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// freshID returns a file ID not yet used in the live share. IDs are
// random 64-bit values, so the loop practically never runs twice; the
// check keeps a collision from silently overwriting the ID index.
func freshID(tx kv.Tx, acct, sh string) (uint64, error) {
	for {
		id := newID()
		_, err := tx.Get(idKey(acct, sh, "", id))
		if err == kv.ErrNotFound {
			return id, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// removeItem is the effect of every delete — REST Delete File and Delete
// Directory, the last close of a delete-pending item (Opens.Close, the
// reaper), a file replaced by a rename: e's record and ID index go, and a
// file's data references are released at now.
func removeItem(tx kv.Tx, now time.Time, acct, sh string, e *Entry) error {
	if !e.Dir {
		if err := extent.AdjustRefs(tx, now, e.Parts, nil); err != nil {
			return err
		}
	}
	return deleteEntry(tx, acct, sh, "", e)
}

// newItem returns the record of a new item named name in directory parent,
// created at now, with a fresh file ID: the SMB times now, the parent's
// permission, attrs plus Archive for a file and Directory for a directory,
// and a file's default content type (Create File's documented
// application/octet-stream). The caller stores it.
func newItem(tx kv.Tx, acct, sh string, parent *Entry, name string, dir bool, attrs Attributes, now time.Time) (*Entry, error) {
	id, err := freshID(tx, acct, sh)
	if err != nil {
		return nil, err
	}
	e := &Entry{Name: name, ID: id, Parent: parent.ID, Dir: dir, Created: now}
	e.SMB = SMBProps{Created: now, LastWrite: now, Changed: now, PermKey: parent.SMB.PermKey}
	if dir {
		e.SMB.Attrs = attrs | AttrDirectory
	} else {
		e.SMB.Attrs = attrs | AttrArchive
		e.Props.ContentType = "application/octet-stream"
	}
	return e, nil
}

// replaceContent empties file e for a replacement of its content, the one
// effect of Create File over an existing file (Create File,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-file)
// and of an overwriting or superseding SMB open (MS-FSA 2.1.5.1.2): it
// releases e's data references, leaves e empty without a Content-MD5
// (inferred: it described the old content) and makes a broken lease
// available (lease.OnWrite). Each caller has passed its door's checks
// before: admit with opCreateFile for REST, admitOpen and the sharing
// check for SMB, whose lease and read-only rules are leaseAtOpen and
// readOnlyAtOpen beside admit's. The caller sets the rest of e and
// stores it.
func replaceContent(tx kv.Tx, now time.Time, e *Entry) error {
	if err := extent.AdjustRefs(tx, now, e.Parts, nil); err != nil {
		return err
	}
	e.Parts, e.Size = nil, 0
	e.Props.ContentMD5 = nil
	e.Lease = lease.OnWrite(e.Lease, now)
	return nil
}

// overQuota reports whether a file of size bytes is larger than its
// share's quota.
func overQuota(sh *Share, size int64) bool {
	return sh.Quota > 0 && size > int64(sh.Quota)<<30
}

// rangeWritten stamps a content write of e: last-write and change times.
func rangeWritten(e *Entry, now time.Time, preserve bool) {
	if !preserve {
		e.SMB.LastWrite = now
	}
	e.SMB.Changed = now
}

// clearRange clears bytes [off, off+n) of parts: whole pages become holes,
// written bytes of partly covered pages are replaced by zeros taken from
// the staged zero item (written to tx only when used).
func clearRange(tx kv.Tx, parts []extent.Part, off, n int64, zeros *extent.Staged) ([]extent.Part, error) {
	end := off + n
	a := (off + pageSize - 1) / pageSize * pageSize // first whole page
	b := end / pageSize * pageSize                  // end of the last whole page
	var partial [][2]int64
	if a < b {
		parts = extent.Splice(parts, a, b-a, nil)
		partial = append(partial, [2]int64{off, a}, [2]int64{b, end})
	} else {
		partial = append(partial, [2]int64{off, end})
	}
	used := false
	for _, seg := range partial {
		for _, sp := range extent.Spans(parts, seg[0], seg[1]) {
			z := zeros.Parts[0]
			z.Off, z.Len = sp.Off, sp.End-sp.Off
			parts = extent.Splice(parts, sp.Off, sp.End-sp.Off, &z)
			used = true
		}
	}
	if used {
		if err := zeros.Write(tx); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// pageSize is the allocation unit of a file's ranges.
const pageSize = 512

package file

import (
	"context"
	"fmt"
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Metadata operations of the SMB view: basic information, disposition,
// rename and directory enumeration.

// Times is a set of the SMB timestamps of a file or directory.
type Times uint8

// Timestamps.
const (
	TimeCreated Times = 1 << iota
	TimeLastAccess
	TimeLastWrite
	TimeChanged
)

// BasicInfo is FileBasicInformation as the VFS takes it. The SMB server
// converts FILETIMEs: 0 ("do not change") becomes the zero time.Time,
// which leaves the time as it is; -1 and -2 ("do not change, and stop /
// resume automatic updates through this handle", MS-FSCC 2.4.7) become
// Freeze and Thaw.
type BasicInfo struct {
	Created time.Time
	// LastAccess is kept for SMB only (REST neither shows nor changes it).
	LastAccess time.Time
	LastWrite  time.Time
	Changed    time.Time
	// Attributes replace the file's (AttrNormal: none); 0 leaves them.
	Attributes Attributes
	// Freeze and Thaw are the times whose automatic updates by later
	// operations through the same open stop (FILETIME -1) or resume
	// (FILETIME -2). A time given is frozen too (see Open.Frozen).
	Freeze, Thaw Times
}

// SetBasic sets the times and attributes of o's file or directory
// (FileBasicInformation, MS-FSA 2.1.5.15.2) and returns its new
// information. Setting anything stamps the change time with now unless
// Changed is given or o has frozen it, and makes a new ETag and
// Last-Modified (as Set File Properties does). The times given, and
// those in Freeze, are frozen on o (Thaw undoes it): operations through
// o no longer stamp them. o needs FILE_WRITE_ATTRIBUTES
// (ErrAccessDenied). AttrDirectory on a file, or AttrTemporary on a
// directory, is ErrInvalidParameter; attributes Azure Files does not
// keep are dropped, and the share root's hidden and system attributes
// cannot change (both MS-FSA 2.1.5.15.2). It is the domain's
// SetProperties (domain.setProperties), as REST Set File Properties is.
func (v *VFS) SetBasic(ctx context.Context, o *Open, b BasicInfo) (Info, error) {
	c := smbCaller(o)
	if err := opSetBasic.precheck(&c); err != nil {
		return Info{}, err
	}
	if !o.Dir && b.Attributes&AttrDirectory != 0 || o.Dir && b.Attributes&AttrTemporary != 0 {
		return Info{}, fmt.Errorf("%w: attributes %v", ErrInvalidParameter, b.Attributes)
	}
	given := b.given()
	freeze, thaw := (given|b.Freeze)&^b.Thaw, b.Thaw&^given
	out, err := v.s.dom().setProperties(ctx, &c, &propsIn{op: &opSetBasic, basic: &b, frozen: o.Frozen()&^thaw | freeze})
	if err != nil {
		return Info{}, err
	}
	o.freeze(freeze, thaw)
	return infoOf(out.e, out.pending), nil
}

// given returns the times b sets.
func (b *BasicInfo) given() Times {
	given := Times(0)
	for _, t := range []struct {
		at   time.Time
		time Times
	}{{b.Created, TimeCreated}, {b.LastAccess, TimeLastAccess}, {b.LastWrite, TimeLastWrite}, {b.Changed, TimeChanged}} {
		if !t.at.IsZero() {
			given |= t.time
		}
	}
	return given
}

// applyBasic applies b to e at now (see SetBasic); frozen are the times
// frozen on the open after b. It reports whether anything changed.
func applyBasic(e *Entry, b *BasicInfo, frozen Times, now time.Time) bool {
	for _, t := range []struct {
		dst *time.Time
		src time.Time
	}{{&e.SMB.Created, b.Created}, {&e.SMB.LastAccess, b.LastAccess}, {&e.SMB.LastWrite, b.LastWrite}, {&e.SMB.Changed, b.Changed}} {
		if !t.src.IsZero() {
			*t.dst = t.src.UTC()
		}
	}
	changed := b.given() != 0
	if b.Attributes != 0 {
		a := b.Attributes & storableAttrs
		if e.Dir {
			a |= AttrDirectory
		}
		if e.ID == RootID {
			const fixed = AttrHidden | AttrSystem
			a = a&^fixed | e.SMB.Attrs&fixed
		}
		e.SMB.Attrs = a
		changed = true
	}
	if !changed {
		return false
	}
	if frozen&TimeChanged == 0 {
		e.SMB.Changed = now
	}
	return true
}

// SetDisposition sets or clears the delete-pending state of o's file or
// directory (FileDispositionInformation): the item is deleted when its
// last handle closes, and until then new opens get ErrDeletePending and
// REST gets 409 (and does not list it). o needs DELETE
// (ErrAccessDenied); a read-only file is ErrCannotDelete, a directory
// with entries ErrDirectoryNotEmpty, the share root ErrAccessDenied.
// Clearing never fails on these grounds. It is the domain's Delete
// (domain.delete), as REST Delete File is.
func (v *VFS) SetDisposition(ctx context.Context, o *Open, deletePending bool) error {
	c := smbCaller(o)
	return v.s.dom().delete(ctx, &c, &deleteIn{pending: deletePending})
}

// Rename moves o's file or directory to newPath in the same share
// (FileRenameInformation), keeping its file ID (so its handles, and REST's
// view by ID, follow it). Rules (MS-FSA 2.1.5.15.11, and smbtorture's
// smb2.rename tests against smbd): o needs DELETE (ErrAccessDenied); a
// directory with open items below it cannot move (ErrAccessDenied); the share
// root cannot move (ErrAccessDenied); a directory cannot move into itself
// (ErrInvalidParameter). An existing target (another item) needs
// replaceIfExists (ErrExists) and is replaced only if it is a file that is
// not read-only and has no open (ErrAccessDenied) and no active REST lease
// (ErrSharingViolation); its data references are released in the same
// transaction. The open handles of the target's directory must allow the
// rename (ErrSharingViolation, see renameTargetDirNeed). A case-only change
// of the name is allowed. The item's change time, ETag and Last-Modified are
// stamped. It is the domain's Rename (domain.rename), as REST Rename File
// and Rename Directory are.
func (v *VFS) Rename(ctx context.Context, o *Open, newPath []string, replaceIfExists bool) error {
	c := smbCaller(o)
	if err := opRename.precheck(&c); err != nil {
		return err
	}
	if len(newPath) == 0 {
		return fmt.Errorf("%w: the share root is not a rename target", ErrAccessDenied)
	}
	if err := checkPath(newPath); err != nil {
		return err
	}
	_, err := v.s.dom().rename(ctx, &c, &renameIn{dst: newPath, replace: replaceIfExists})
	return err
}

// renameTargetDirNeed is what a rename needs from the open handles of
// the directory it moves the item into (the source's own directory for
// an in-place rename). Windows performs a rename by opening that
// directory as the target of the rename (IO_OPEN_TARGET_DIRECTORY) for
// FILE_ADD_FILE, or FILE_ADD_SUBDIRECTORY for a directory, sharing read
// and write but not delete, so the MS-FSA sharing check (2.1.5.1.2.2)
// of that transient open against the directory's opens decides:
// an open of the directory holding DELETE access, or one that does not
// share write while holding data access, makes the rename fail with
// STATUS_SHARING_VIOLATION (smb2.rename share_delete_and_delete_access,
// no_share_delete_but_delete_access, no_share_delete_no_delete_access;
// an open sharing everything without DELETE does not:
// share_delete_no_delete_access). smbd checks only the first case
// (any open of the target directory with DELETE access).
// A delete-pending target directory fails the rename with
// ErrDeletePending, as the open would.
var renameTargetDirNeed = handle.Need{Access: handle.Write, Share: handle.ShareRead | handle.ShareWrite}

// checkRenameOpens applies the open-table rule of a rename of the
// directory src through o: no item below it may be open. (The other rule,
// every other open of the item shares delete (MS-FSA 2.1.5.15.11), holds
// by construction: o has DELETE access, so the sharing check admitted
// only opens that share delete, besides attribute-only opens, which
// MS-FSA exempts.)
func checkRenameOpens(tx kv.Tx, now time.Time, o *Open, src *Entry) error {
	if !src.Dir {
		return nil
	}
	var conflict error
	// smb2.rename.rename_dir_openfile: a directory with an open item
	// below it cannot be renamed. The check walks up from every live
	// handle of the share, with a cache, so it costs the share's handles
	// times the depth at most.
	below := map[uint64]bool{RootID: false, src.ID: true}
	var isBelow func(id uint64) (bool, error)
	isBelow = func(id uint64) (bool, error) {
		if b, ok := below[id]; ok {
			return b, nil
		}
		e, err := loadByID(tx, o.Account, o.Share, "", id)
		if err != nil || e == nil {
			return false, err
		}
		b, err := isBelow(e.Parent)
		below[id] = b
		return b, err
	}
	err := handle.List(tx, now, o.Account, o.Share, handle.Position{}, func(h handle.Handle) bool {
		id, err := handleFileID(h)
		if err != nil {
			conflict = err
			return false
		}
		if id == src.ID {
			return true
		}
		b, err := isBelow(id)
		if err != nil {
			conflict = err
			return false
		}
		if b {
			conflict = fmt.Errorf("%w: %s has an open item below it", ErrAccessDenied, src.Name)
			return false
		}
		return true
	})
	return firstErr(err, conflict)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// dirOpen checks that o is a directory open that may list: ErrNotDirectory,
// ErrAccessDenied (FILE_LIST_DIRECTORY).
func dirOpen(o *Open) error {
	if !o.Dir {
		return ErrNotDirectory
	}
	if !o.has(AccessReadData) {
		return fmt.Errorf("%w: listing needs FILE_LIST_DIRECTORY", ErrAccessDenied)
	}
	return nil
}

// ReadDir returns the entries of o's directory whose names sort after after
// ("" from the first), at most limit of them (limit <= 0: all), in the order
// of their case-folded names (the order of REST listings). The caller pages
// by passing the last Name it got. Delete-pending entries are listed (with
// DeletePending set), as smbd and Windows do (their classic delete-pending
// semantics, MS-FSA 2.1.5.15.3); REST listings hide them. "." and ".." are
// the server's (see Info and ParentInfo). ErrNotDirectory, ErrAccessDenied,
// ErrFileClosed.
func (v *VFS) ReadDir(ctx context.Context, o *Open, after string, limit int) ([]Info, error) {
	if err := dirOpen(o); err != nil {
		return nil, err
	}
	var out []Info
	err := v.s.store.View(ctx, func(tx kv.Tx) error {
		out = out[:0]
		if _, _, err := v.live(tx, v.s.clock.Now(), o); err != nil {
			return err
		}
		pre := childrenPrefix(o.Account, o.Share, "", o.FileID)
		start, end := pre, kv.PrefixEnd(pre)
		if after != "" {
			start = append(entryKey(o.Account, o.Share, "", o.FileID, fold(after)), 0)
		}
		var es []*Entry
		var derr error
		err := tx.Scan(start, end, 0, false, func(k, val []byte) bool {
			var e Entry
			if derr = json.Unmarshal(val, &e); derr != nil {
				derr = fmt.Errorf("decoding %q: %w", k, derr)
				return false
			}
			if e.ID == RootID {
				return true // the root's own record sorts among its children
			}
			es = append(es, &e)
			return limit <= 0 || len(es) < limit
		})
		if err != nil || derr != nil {
			return firstErr(err, derr)
		}
		pending, err := handle.DeletePendingIn(tx, o.Account, o.Share)
		if err != nil {
			return err
		}
		for _, e := range es {
			out = append(out, infoOf(e, pending[FormatID(e.ID)]))
		}
		return nil
	})
	return out, err
}

// Lookup returns the entry named name (any case) of o's directory:
// ErrNotFound when there is none (an SMB QUERY_DIRECTORY with a pattern
// without wildcards). ErrNotDirectory, ErrAccessDenied, ErrFileClosed.
func (v *VFS) Lookup(ctx context.Context, o *Open, name string) (Info, error) {
	if err := dirOpen(o); err != nil {
		return Info{}, err
	}
	var in Info
	err := v.s.store.View(ctx, func(tx kv.Tx) error {
		if _, _, err := v.live(tx, v.s.clock.Now(), o); err != nil {
			return err
		}
		if ValidName(name) != nil {
			return fmt.Errorf("%w: %q", ErrNotFound, name)
		}
		e, err := loadEntry(tx, o.Account, o.Share, "", o.FileID, fold(name))
		if err != nil {
			return err
		}
		if e == nil || e.ID == RootID {
			return fmt.Errorf("%w: %q", ErrNotFound, name)
		}
		pending, err := handle.IsDeletePending(tx, o.Account, o.Share, FormatID(e.ID))
		in = infoOf(e, pending)
		return err
	})
	return in, err
}

// ParentInfo returns the information of the directory holding o's item
// (".." of a listing); for the share root, the root's own.
func (v *VFS) ParentInfo(ctx context.Context, o *Open) (Info, error) {
	var in Info
	err := v.s.store.View(ctx, func(tx kv.Tx) error {
		_, e, err := v.live(tx, v.s.clock.Now(), o)
		if err != nil {
			return err
		}
		if e.ID != RootID {
			p, err := loadByID(tx, o.Account, o.Share, "", e.Parent)
			if err != nil {
				return err
			}
			if p == nil {
				return fmt.Errorf("file: entry %d has no parent %d", e.ID, e.Parent)
			}
			e = p
		}
		pending, err := handle.IsDeletePending(tx, o.Account, o.Share, FormatID(e.ID))
		in = infoOf(e, pending)
		return err
	})
	return in, err
}

package file

import (
	"context"
	"fmt"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Metadata operations of the SMB view: basic information, disposition,
// rename and directory enumeration.

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
func (v *Opens) SetBasic(ctx context.Context, o *Open, b BasicInfo) (Info, error) {
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

// SetDisposition sets or clears the delete-pending state of o's file or
// directory (FileDispositionInformation): the item is deleted when its
// last handle closes, and until then new opens get ErrDeletePending and
// REST gets 409 (and does not list it). o needs DELETE
// (ErrAccessDenied); a read-only file is ErrCannotDelete, a directory
// with entries ErrDirectoryNotEmpty, the share root ErrAccessDenied.
// Clearing never fails on these grounds. It is the domain's Delete
// (domain.delete), as REST Delete File is.
func (v *Opens) SetDisposition(ctx context.Context, o *Open, deletePending bool) error {
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
func (v *Opens) Rename(ctx context.Context, o *Open, newPath []string, replaceIfExists bool) error {
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
func (v *Opens) ReadDir(ctx context.Context, o *Open, after string, limit int) ([]Info, error) {
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
func (v *Opens) Lookup(ctx context.Context, o *Open, name string) (Info, error) {
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
func (v *Opens) ParentInfo(ctx context.Context, o *Open) (Info, error) {
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

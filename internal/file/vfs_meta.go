package file

import (
	"context"
	"fmt"
	"strconv"
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Metadata operations of the SMB view: basic information, disposition,
// rename and directory enumeration.

// BasicInfo is FileBasicInformation as the VFS takes it. The SMB server
// converts FILETIMEs: 0 ("do not change") and -1 / -2 ("do not change,
// and stop / resume automatic updates", MS-FSCC 2.4.7) all become the
// zero time.Time, which leaves the time as it is; the service keeps no
// per-handle update suspension [I].
type BasicInfo struct {
	Created    time.Time
	LastAccess time.Time // accepted and ignored: no access time is kept [I]
	LastWrite  time.Time
	Changed    time.Time
	// Attributes replace the file's (AttrNormal: none); 0 leaves them.
	Attributes Attributes
}

// SetBasic sets the times and attributes of o's file or directory
// (FileBasicInformation) and returns its new information. Setting
// anything stamps the change time with now unless Changed is given, and
// makes a new ETag and Last-Modified (as Set File Properties does). o
// needs FILE_WRITE_ATTRIBUTES (ErrAccessDenied). AttrDirectory on a
// file, or AttrTemporary on a directory, is ErrInvalidParameter (MS-FSA
// 2.1.5.15.2); attributes Azure Files does not keep are dropped.
func (v *VFS) SetBasic(ctx context.Context, o *Open, b BasicInfo) (Info, error) {
	if !o.has(AccessWriteAttributes) {
		return Info{}, fmt.Errorf("%w: setting basic information needs FILE_WRITE_ATTRIBUTES", ErrAccessDenied)
	}
	if !o.Dir && b.Attributes&AttrDirectory != 0 || o.Dir && b.Attributes&AttrTemporary != 0 {
		return Info{}, fmt.Errorf("%w: attributes %v", ErrInvalidParameter, b.Attributes)
	}
	var stored *entry
	pending := false
	err := v.update(ctx, o, func(tx kv.Tx, now time.Time, _ *share, e *entry) (err error) {
		stored = e // update stamps and stores this record after fn
		if pending, err = handle.IsDeletePending(tx, o.Account, o.Share, o.fileID()); err != nil {
			return err
		}
		changed := false
		for _, t := range []struct {
			dst *time.Time
			src time.Time
		}{{&e.SMB.Created, b.Created}, {&e.SMB.LastWrite, b.LastWrite}, {&e.SMB.Changed, b.Changed}} {
			if !t.src.IsZero() {
				*t.dst = t.src.UTC()
				changed = true
			}
		}
		if b.Attributes != 0 {
			a := b.Attributes & storableAttrs
			if e.Dir {
				a |= AttrDirectory
			}
			e.SMB.Attrs = a
			changed = true
		}
		if !changed {
			return errUnchanged
		}
		if b.Changed.IsZero() {
			e.SMB.Changed = now
		}
		return nil
	})
	if err != nil {
		return Info{}, err
	}
	return infoOf(stored, pending), nil
}

// SetDisposition sets or clears the delete-pending state of o's file or
// directory (FileDispositionInformation): the item is deleted when its
// last handle closes, and until then new opens get ErrDeletePending and
// REST gets 409 (and does not list it). o needs DELETE
// (ErrAccessDenied); a read-only file is ErrCannotDelete, a directory
// with entries ErrDirectoryNotEmpty, the share root ErrAccessDenied.
// Clearing never fails on these grounds.
func (v *VFS) SetDisposition(ctx context.Context, o *Open, deletePending bool) error {
	if !o.has(AccessDelete) {
		return fmt.Errorf("%w: a delete disposition needs DELETE access", ErrAccessDenied)
	}
	return v.s.store.Update(ctx, func(tx kv.Tx) error {
		now := v.s.clock.Now()
		_, e, err := v.live(tx, now, o)
		if err != nil {
			return err
		}
		if deletePending {
			switch {
			case e.ID == rootID:
				// smbd: the root of a share cannot be deleted.
				return fmt.Errorf("%w: the share root cannot be deleted", ErrAccessDenied)
			case !e.Dir && e.SMB.Attrs&AttrReadOnly != 0:
				return fmt.Errorf("%w: the file is read-only", ErrCannotDelete)
			case e.Dir:
				busy, err := hasChildren(tx, o.Account, o.Share, "", e.ID)
				if err != nil {
					return err
				}
				if busy {
					return ErrDirectoryNotEmpty
				}
			}
		}
		return vfsHandleErr(handle.SetDeletePending(tx, now, o.Account, o.Share, o.fileID(), o.HandleID, deletePending))
	})
}

// Rename moves o's file or directory to newPath in the same share
// (FileRenameInformation), keeping its file ID (so its handles, and
// REST's view by ID, follow it). Rules (MS-FSA 2.1.5.15.11; the digest
// §5.3): o needs DELETE (ErrAccessDenied); a directory with open items
// below it cannot move (ErrAccessDenied); the share root cannot
// move (ErrAccessDenied); a directory cannot move into itself
// (ErrInvalidParameter). An existing target (another item) needs
// replaceIfExists (ErrExists) and is replaced only if it is a file that
// is not read-only and has no open (ErrAccessDenied) and no active REST
// lease (ErrSharingViolation); its data references are released in the
// same transaction. A case-only change of the name is allowed. The
// item's change time, ETag and Last-Modified are stamped.
func (v *VFS) Rename(ctx context.Context, o *Open, newPath []string, replaceIfExists bool) error {
	if !o.has(AccessDelete) {
		return fmt.Errorf("%w: a rename needs DELETE access", ErrAccessDenied)
	}
	if len(newPath) == 0 {
		return fmt.Errorf("%w: the share root is not a rename target", ErrAccessDenied)
	}
	if err := checkPath(newPath); err != nil {
		return err
	}
	return v.s.store.Update(ctx, func(tx kv.Tx) error {
		now := v.s.clock.Now()
		acct, sh := o.Account, o.Share
		_, src, err := v.live(tx, now, o)
		if err != nil {
			return err
		}
		if src.ID == rootID {
			return fmt.Errorf("%w: the share root cannot be renamed", ErrAccessDenied)
		}
		if err := v.checkRenameOpens(tx, now, o, src); err != nil {
			return err
		}
		dp, dst, err := walkSMB(tx, acct, sh, newPath)
		if err != nil {
			return err
		}
		if src.Dir {
			if err := checkNotBelow(tx, acct, sh, dp, src.ID); err != nil {
				if azerr.Has(err, azerr.InvalidInput) {
					return fmt.Errorf("%w: a directory cannot move into itself", ErrInvalidParameter)
				}
				return err
			}
		}
		if dst != nil && dst.ID != src.ID {
			if err := replaceTarget(tx, now, acct, sh, dst, replaceIfExists); err != nil {
				return err
			}
		}
		if err := deleteEntry(tx, acct, sh, "", src); err != nil {
			return err
		}
		src.Name, src.Parent = newPath[len(newPath)-1], dp.ID
		src.SMB.Changed = now
		touch(src, now)
		return putEntry(tx, acct, sh, "", src)
	})
}

// checkRenameOpens applies the open-table rule of a rename of the
// directory src through o: no item below it may be open. (The other rule
// of the digest §5.3, every other open of the item shares delete, holds
// by construction: o has DELETE access, so the sharing check admitted
// only opens that share delete, besides attribute-only opens, which
// MS-FSA exempts.)
func (v *VFS) checkRenameOpens(tx kv.Tx, now time.Time, o *Open, src *entry) error {
	if !src.Dir {
		return nil
	}
	var conflict error
	// smb2.rename.rename_dir_openfile: a directory with an open item
	// below it cannot be renamed. The check walks up from every live
	// handle of the share, with a cache, so it costs the share's handles
	// times the depth at most.
	below := map[uint64]bool{rootID: false, src.ID: true}
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
		id, perr := strconv.ParseUint(h.FileID, 10, 64)
		if perr != nil || id == src.ID {
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

// replaceTarget deletes the existing target dst of a rename, if the rules
// allow it.
func replaceTarget(tx kv.Tx, now time.Time, acct, sh string, dst *entry, replace bool) error {
	switch {
	case !replace:
		return fmt.Errorf("%w: %s", ErrExists, dst.Name)
	case dst.Dir:
		return fmt.Errorf("%w: a directory cannot be replaced", ErrAccessDenied)
	case dst.SMB.Attrs&AttrReadOnly != 0:
		return fmt.Errorf("%w: %s is read-only", ErrAccessDenied, dst.Name)
	case dst.Lease.Active(now):
		return fmt.Errorf("%w: %s is leased", ErrSharingViolation, dst.Name)
	}
	fid := FormatID(dst.ID)
	open, err := handle.HasOpen(tx, now, acct, sh, fid)
	if err != nil {
		return err
	}
	pending, err := handle.IsDeletePending(tx, acct, sh, fid)
	if err != nil {
		return err
	}
	if open || pending {
		return fmt.Errorf("%w: %s is open", ErrAccessDenied, dst.Name)
	}
	if err := extent.AdjustRefs(tx, now, dst.Parts, nil); err != nil {
		return err
	}
	return deleteEntry(tx, acct, sh, "", dst)
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

// ReadDir returns the entries of o's directory whose names sort after
// after ("" from the first), at most limit of them (limit <= 0: all), in
// the order of their case-folded names (the order of REST listings). The
// caller pages by passing the last Name it got. Delete-pending entries
// are listed (with DeletePending set), as smbd and Windows do (digest
// §5.2); REST listings hide them. "." and ".." are the server's (see
// Info and ParentInfo). ErrNotDirectory, ErrAccessDenied, ErrFileClosed.
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
		var es []*entry
		var derr error
		err := tx.Scan(start, end, 0, false, func(k, val []byte) bool {
			var e entry
			if derr = json.Unmarshal(val, &e); derr != nil {
				derr = fmt.Errorf("decoding %q: %w", k, derr)
				return false
			}
			if e.ID == rootID {
				return true // the root's own record sorts among its children
			}
			es = append(es, &e)
			return limit <= 0 || len(es) < limit
		})
		if err != nil || derr != nil {
			return firstErr(err, derr)
		}
		for _, e := range es {
			pending, err := handle.IsDeletePending(tx, o.Account, o.Share, FormatID(e.ID))
			if err != nil {
				return err
			}
			out = append(out, infoOf(e, pending))
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
		if validName(name) != nil {
			return fmt.Errorf("%w: %q", ErrNotFound, name)
		}
		e, err := loadEntry(tx, o.Account, o.Share, "", o.FileID, fold(name))
		if err != nil {
			return err
		}
		if e == nil || e.ID == rootID {
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
		if e.ID != rootID {
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

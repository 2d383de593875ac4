package file

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// checkPath validates the components of an SMB path: the REST naming
// rules (see validName; no trailing-dot trimming: SMB clients send names
// as they mean them (inferred)), the whole path at most 2,048 characters and
// 250 levels.
func checkPath(comps []string) error {
	if len(comps) > maxPathDepth {
		return fmt.Errorf("%w: more than %d levels", ErrInvalidName, maxPathDepth)
	}
	n := 0
	for _, c := range comps {
		n += len(c) + 1
		if validName(c) != nil {
			return fmt.Errorf("%w: %q", ErrInvalidName, c)
		}
	}
	if n > maxPathLen+1 {
		return fmt.Errorf("%w: path longer than %d characters", ErrInvalidName, maxPathLen)
	}
	return nil
}

// walkSMB resolves comps like walk, with SMB errors.
func walkSMB(tx kv.Tx, acct, sh string, comps []string) (parent, e *entry, err error) {
	parent, e, err = walk(tx, acct, sh, "", comps)
	if azerr.Has(err, azerr.ParentNotFound) {
		return nil, nil, fmt.Errorf("%w: %s", ErrPathNotFound, strings.Join(comps, `\`))
	}
	return parent, e, err
}

// handleErr maps errors of package handle to VFS errors.
func vfsHandleErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, handle.ErrSharingViolation):
		return refuse(byShareMode, fmt.Errorf("%w (%v)", ErrSharingViolation, err))
	case errors.Is(err, handle.ErrDeletePending):
		return refuse(byDeletePending, ErrDeletePending)
	case errors.Is(err, handle.ErrNoHandle):
		return ErrFileClosed
	case errors.Is(err, handle.ErrAccessDenied):
		return fmt.Errorf("%w (%v)", ErrAccessDenied, err)
	}
	return err
}

// validOptions is FILE_VALID_OPTION_FLAGS and validAttrs
// FILE_ATTRIBUTE_VALID_FLAGS (ntifs.h).
const (
	validOptions uint32     = 0x00FFFFFF
	validAttrs   Attributes = 0x00007FB7
)

// Open opens or creates a file or directory (SMB2 CREATE), checking in
// this order (MS-FSA 2.1.5.1; MS-SMB2 3.3.5.9; the sharing
// check is MS-FSA 2.1.5.1.2.2): the request's
// parameters, the path, the disposition against what exists, the kind
// (directory options), delete-pending, the access and read-only checks,
// then the sharing check against every live open of the file (and a REST
// lease: ErrSharingViolation for Write or Delete access), and only then
// the overwrite or supersede truncation. A create applies the REST
// defaults: a new random file ID, the parent's permission, now for the
// SMB times, Archive for files (plus the requested attributes), a new
// ETag and Last-Modified. Errors: ErrShareNotFound, ErrInvalidName,
// ErrInvalidParameter, ErrAccessDenied, ErrPathNotFound, ErrNotFound,
// ErrExists, ErrIsDirectory, ErrNotDirectory, ErrDeletePending,
// ErrCannotDelete, ErrSharingViolation, ErrOwnerNotLive.
func (v *VFS) Open(ctx context.Context, r OpenRequest) (*Open, error) {
	if r.Disposition > DispOverwriteIf {
		return nil, fmt.Errorf("%w: disposition %d", ErrInvalidParameter, r.Disposition)
	}
	if r.ShareAccess&^uint32(handle.ShareAll) != 0 {
		return nil, fmt.Errorf("%w: share access %#x", ErrInvalidParameter, r.ShareAccess)
	}
	wantDir, wantFile := r.Options&OptDirectoryFile != 0, r.Options&OptNonDirectoryFile != 0
	doc := r.Options&OptDeleteOnClose != 0
	switch {
	case wantDir && wantFile:
		return nil, fmt.Errorf("%w: both FILE_DIRECTORY_FILE and FILE_NON_DIRECTORY_FILE", ErrInvalidParameter)
	case wantDir && r.Disposition != DispOpen && r.Disposition != DispCreate && r.Disposition != DispOpenIf:
		return nil, fmt.Errorf("%w: disposition %d with FILE_DIRECTORY_FILE", ErrInvalidParameter, r.Disposition)
	}
	// MS-FSA 2.1.5.1 phase 1: no access at all, or reserved bits, is
	// STATUS_ACCESS_DENIED.
	if r.DesiredAccess == 0 || r.DesiredAccess&accessReserved != 0 {
		return nil, fmt.Errorf("%w: desired access %#x", ErrAccessDenied, r.DesiredAccess)
	}
	// Then the I/O manager's parameter checks (Windows; the order is
	// smb2.create.gentest's): create options outside
	// FILE_VALID_OPTION_FLAGS and attributes outside
	// FILE_ATTRIBUTE_VALID_FLAGS (VOLUME, DEVICE, INTEGRITY_STREAM and
	// the high bits) are STATUS_INVALID_PARAMETER.
	if r.Options&^validOptions != 0 || r.Attributes&^validAttrs != 0 {
		return nil, fmt.Errorf("%w: create options %#x, attributes %#x", ErrInvalidParameter, r.Options, uint32(r.Attributes))
	}
	// Delete-on-close needs DELETE, else STATUS_INVALID_PARAMETER (MS-SMB2
	// 3.3.5.9; smbd agrees).
	if doc && MapAccess(r.DesiredAccess, false)&AccessDelete == 0 {
		return nil, fmt.Errorf("%w: FILE_DELETE_ON_CLOSE without DELETE access", ErrInvalidParameter)
	}
	if err := checkPath(r.Path); err != nil {
		return nil, err
	}
	attrs := r.Attributes & storableAttrs
	var o *Open
	err := v.s.store.Update(ctx, func(tx kv.Tx) error {
		o = nil
		now := v.s.clock.Now()
		if r.Account != "" && r.Share != "" {
			if err := prefetchPath(tx, r.Account, r.Share, "", r.Path, true); err != nil {
				return err
			}
		}
		if _, err := smbShare(tx, r.Account, r.Share); err != nil {
			return err
		}
		parent, e, err := walkSMB(tx, r.Account, r.Share, r.Path)
		if err != nil {
			return err
		}
		if e != nil {
			o, err = v.openExisting(tx, now, &r, parent, e, attrs)
		} else {
			o, err = v.create(tx, now, &r, parent, attrs)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// openExisting is Open when the path exists.
func (v *VFS) openExisting(tx kv.Tx, now time.Time, r *OpenRequest, parent, e *entry, attrs Attributes) (*Open, error) {
	doc := r.Options&OptDeleteOnClose != 0
	if r.Disposition == DispCreate {
		return nil, fmt.Errorf("%w: %s", ErrExists, e.Name)
	}
	if e.Dir {
		if r.Options&OptNonDirectoryFile != 0 {
			return nil, ErrIsDirectory
		}
		// smbd's open_directory refuses the truncating dispositions.
		if r.Disposition != DispOpen && r.Disposition != DispOpenIf {
			return nil, fmt.Errorf("%w: disposition %d on a directory", ErrInvalidParameter, r.Disposition)
		}
	} else if r.Options&OptDirectoryFile != 0 {
		return nil, ErrNotDirectory
	}
	fid := FormatID(e.ID)
	pending, err := handle.IsDeletePending(tx, r.Account, r.Share, fid)
	if err != nil {
		return nil, err
	}
	if pending {
		return nil, ErrDeletePending
	}
	readOnly := !e.Dir && e.SMB.Attrs&AttrReadOnly != 0
	explicit := MapAccess(r.DesiredAccess&^AccessMaximumAllowed, false)
	truncate := r.Disposition == DispSupersede || r.Disposition == DispOverwrite || r.Disposition == DispOverwriteIf
	// The read-only attribute's open-time rules (MS-FSA 2.1.5.1.2.1); the
	// domain's readOnly has the rest (see domain.go).
	switch {
	case readOnly && explicit&accessWrite != 0:
		return nil, refuse(byReadOnly, fmt.Errorf("%w: the file is read-only", ErrAccessDenied))
	case readOnly && doc:
		return nil, refuse(byReadOnly, fmt.Errorf("%w: the file is read-only", ErrCannotDelete))
	case readOnly && truncate:
		return nil, refuse(byReadOnly, fmt.Errorf("%w: overwriting a read-only file", ErrAccessDenied))
	case e.ID == rootID && doc:
		return nil, fmt.Errorf("%w: the share root cannot be deleted", ErrAccessDenied)
	case truncate && doc && attrs&AttrReadOnly != 0:
		// Overwriting with the read-only attribute and delete-on-close:
		// as a create with both (inferred).
		return nil, fmt.Errorf("%w: delete-on-close with the read-only attribute", ErrCannotDelete)
	}
	if truncate && r.Disposition != DispSupersede {
		// MS-FSA: an overwrite must restate the hidden and system
		// attributes of the file it replaces (CreateFile's documented
		// ERROR_ACCESS_DENIED).
		for _, a := range []Attributes{AttrHidden, AttrSystem} {
			if e.SMB.Attrs&a != 0 && attrs&a == 0 {
				return nil, fmt.Errorf("%w: overwrite must keep the %v attribute", ErrAccessDenied, a)
			}
		}
	}
	leased := !e.Dir && e.Lease.Active(now)
	if truncate && leased {
		// A REST lease acts as an open with Write and Delete access sharing
		// only Read (Managing file locks,
		// https://learn.microsoft.com/en-us/rest/api/storageservices/managing-file-locks,
		// "Lease File" row): it denies truncation (inferred).
		return nil, refuse(byLease, fmt.Errorf("%w: the file is leased", ErrSharingViolation))
	}
	granted := MapAccess(r.DesiredAccess, readOnly)
	h, err := handle.Open(tx, now, v.handleRequest(r, parent, e, granted, doc, leased))
	if err != nil {
		return nil, vfsHandleErr(err)
	}
	action := ActionOpened
	if truncate {
		action = ActionOverwritten
		if r.Disposition == DispSupersede {
			action = ActionSuperseded
		}
		if err := extent.AdjustRefs(tx, now, e.Parts, nil); err != nil {
			return nil, err
		}
		e.Parts, e.Size = nil, 0
		e.Props.ContentMD5 = nil // Inferred: it described the old content
		// Overwrite and supersede replace the attributes (MS-FSA:
		// FileAttributes | ARCHIVE) and stamp a content write, which is
		// also an access.
		e.SMB.Attrs = attrs | AttrArchive
		e.SMB.LastWrite, e.SMB.Changed, e.SMB.LastAccess = now, now, time.Time{}
		e.Lease = lease.OnWrite(e.Lease, now)
		touch(e, now)
		if err := putEntry(tx, r.Account, r.Share, "", e); err != nil {
			return nil, err
		}
	}
	return v.newOpen(r, e, h, granted, doc, action), nil
}

// create is Open when the path does not exist.
func (v *VFS) create(tx kv.Tx, now time.Time, r *OpenRequest, parent *entry, attrs Attributes) (*Open, error) {
	doc := r.Options&OptDeleteOnClose != 0
	if r.Disposition == DispOpen || r.Disposition == DispOverwrite {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, strings.Join(r.Path, `\`))
	}
	if doc && attrs&AttrReadOnly != 0 {
		// smb2.delete-on-close-perms.READONLY: creating a read-only file
		// with delete-on-close is STATUS_CANNOT_DELETE (MS-FSA 2.1.5.1.1).
		return nil, fmt.Errorf("%w: delete-on-close with the read-only attribute", ErrCannotDelete)
	}
	// An empty path is the root, which exists: parent is set here.
	if parent.ID != rootID {
		pending, err := handle.IsDeletePending(tx, r.Account, r.Share, FormatID(parent.ID))
		if err != nil {
			return nil, err
		}
		if pending {
			return nil, fmt.Errorf("%w: the directory is delete-pending", ErrDeletePending)
		}
	}
	e, err := newItem(tx, r.Account, r.Share, parent, r.Path[len(r.Path)-1], r.Options&OptDirectoryFile != 0, attrs, now)
	if err != nil {
		return nil, err
	}
	touch(e, now)
	if err := putEntry(tx, r.Account, r.Share, "", e); err != nil {
		return nil, err
	}
	granted := MapAccess(r.DesiredAccess, false)
	h, err := handle.Open(tx, now, v.handleRequest(r, parent, e, granted, doc, false))
	if err != nil {
		return nil, vfsHandleErr(err)
	}
	return v.newOpen(r, e, h, granted, doc, ActionCreated), nil
}

func (v *VFS) handleRequest(r *OpenRequest, parent, e *entry, granted uint32, doc, leased bool) handle.OpenRequest {
	req := handle.OpenRequest{
		Account: r.Account, Share: r.Share, FileID: FormatID(e.ID),
		Path: strings.Join(r.Path, "/"), SessionID: r.SessionID, ClientIP: r.ClientAddr,
		Access: handle.AccessFromNT(granted), ShareAccess: handle.ShareFromNT(r.ShareAccess),
		DeleteOnClose: doc, Owner: v.owner, Leased: leased,
	}
	if parent != nil {
		req.ParentID = FormatID(parent.ID)
	}
	return req
}

func (v *VFS) newOpen(r *OpenRequest, e *entry, h handle.Handle, granted uint32, doc bool, action CreateAction) *Open {
	num, _ := handle.ParseHandleID(h.HandleID)
	return &Open{
		Account: r.Account, Share: r.Share, FileID: e.ID, HandleID: h.HandleID, HandleNum: num,
		Dir: e.Dir, GrantedAccess: granted, ShareAccess: r.ShareAccess, DeleteOnClose: doc,
		Action: action, Info: infoOf(e, false),
	}
}

// live checks, inside tx, that o's share exists and its handle is live,
// and loads o's entry by file ID: ErrShareNotFound, ErrFileClosed.
func (v *VFS) live(tx kv.Tx, now time.Time, o *Open) (*share, *entry, error) {
	return liveOpen(tx, now, o)
}

// liveOpen is VFS.live.
func liveOpen(tx kv.Tx, now time.Time, o *Open) (*share, *entry, error) {
	sh, err := smbShare(tx, o.Account, o.Share)
	if err != nil {
		return nil, nil, err
	}
	if _, err := handle.Get(tx, now, o.Account, o.Share, o.fileID(), o.HandleID); err != nil {
		return nil, nil, vfsHandleErr(err)
	}
	e, err := loadByID(tx, o.Account, o.Share, "", o.FileID)
	if err != nil {
		return nil, nil, err
	}
	if e == nil {
		return nil, nil, fmt.Errorf("%w: file %d no longer exists", ErrFileClosed, o.FileID)
	}
	return sh, e, nil
}

// Info returns the file's current information through o.
func (v *VFS) Info(ctx context.Context, o *Open) (Info, error) {
	var in Info
	err := v.s.store.View(ctx, func(tx kv.Tx) error {
		_, e, err := v.live(tx, v.s.clock.Now(), o)
		if err != nil {
			return err
		}
		pending, err := handle.IsDeletePending(tx, o.Account, o.Share, o.fileID())
		in = infoOf(e, pending)
		return err
	})
	return in, err
}

// Path returns the current share-relative path of o's file as
// components (empty for the root): it follows renames by either
// protocol.
func (v *VFS) Path(ctx context.Context, o *Open) ([]string, error) {
	var out []string
	err := v.s.store.View(ctx, func(tx kv.Tx) error {
		out = nil
		_, e, err := v.live(tx, v.s.clock.Now(), o)
		if err != nil {
			return err
		}
		for e.ID != rootID {
			out = append(out, e.Name)
			next, err := loadByID(tx, o.Account, o.Share, "", e.Parent)
			if err != nil {
				return err
			}
			if next == nil {
				return fmt.Errorf("file: entry %d has no parent %d", e.ID, e.Parent)
			}
			e = next
		}
		return nil
	})
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, err
}

// Close closes o (SMB2 CLOSE) and returns the file's information at the
// close. When o was opened with delete-on-close the file becomes
// delete-pending; when the file is delete-pending and this was its last
// live handle, it is deleted (its data references released) in the same
// transaction, and Info.DeletePending is true. A delete-pending
// directory that gained entries meanwhile is not deleted: Close then
// returns its Info and ErrDirectoryNotEmpty, and the handle is closed
// all the same. ErrFileClosed: o was no longer open.
func (v *VFS) Close(ctx context.Context, o *Open) (Info, error) {
	var in Info
	notEmpty := false
	err := v.s.store.Update(ctx, func(tx kv.Tx) error {
		notEmpty = false
		now := v.s.clock.Now()
		res, err := handle.Close(tx, now, o.Account, o.Share, o.fileID(), o.HandleID)
		if err != nil {
			return vfsHandleErr(err)
		}
		e, err := loadByID(tx, o.Account, o.Share, "", o.FileID)
		if err != nil {
			return err
		}
		if e != nil {
			pending, err := handle.IsDeletePending(tx, o.Account, o.Share, o.fileID())
			if err != nil {
				return err
			}
			in = infoOf(e, pending)
		}
		for _, f := range res.Delete {
			if f.FileID == o.fileID() && e != nil {
				in.DeletePending = true
				if e.Dir {
					if notEmpty, err = hasChildren(tx, o.Account, o.Share, "", e.ID); err != nil {
						return err
					}
				}
			}
			if err := deleteClosedEntry(tx, f.Account, f.Share, f.FileID, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && notEmpty {
		in.DeletePending = false
		err = ErrDirectoryNotEmpty
	}
	return in, err
}

// CloseSession closes every handle of an SMB session (logoff, or a lost
// connection), applying delete-on-close and deleting the files whose last
// handle it closed. It returns how many handles it closed.
func (v *VFS) CloseSession(ctx context.Context, sessionID string) (int, error) {
	n := 0
	err := v.s.store.Update(ctx, func(tx kv.Tx) error {
		now := v.s.clock.Now()
		res, err := handle.CloseSession(tx, now, sessionID)
		if err != nil {
			return vfsHandleErr(err)
		}
		n = len(res.Handles)
		for _, f := range res.Delete {
			if err := deleteClosedEntry(tx, f.Account, f.Share, f.FileID, now); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

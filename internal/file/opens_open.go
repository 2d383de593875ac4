package file

import (
	"context"
	"fmt"
	"time"

	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// checkPath validates the components of an SMB path: the REST naming
// rules (see ValidName; no trailing-dot trimming: SMB clients send names
// as they mean them (inferred)), the whole path at most 2,048 characters and
// 250 levels.
func checkPath(comps []string) error {
	if len(comps) > MaxPathDepth {
		return fmt.Errorf("%w: more than %d levels", ErrInvalidName, MaxPathDepth)
	}
	n := 0
	for _, c := range comps {
		n += len(c) + 1
		if ValidName(c) != nil {
			return fmt.Errorf("%w: %q", ErrInvalidName, c)
		}
	}
	if n > MaxPathLen+1 {
		return fmt.Errorf("%w: path longer than %d characters", ErrInvalidName, MaxPathLen)
	}
	return nil
}

// validOptions is FILE_VALID_OPTION_FLAGS and validAttrs
// FILE_ATTRIBUTE_VALID_FLAGS (ntifs.h).
const (
	validOptions uint32     = 0x00FFFFFF
	validAttrs   Attributes = 0x00007FB7
)

// Open opens or creates a file or directory (SMB2 CREATE). It checks
// the request's parameters and the path (MS-FSA 2.1.5.1 phase 1;
// MS-SMB2 3.3.5.9), and the domain's open (domain_open.go) decides the
// rest in one transaction, in this order: the disposition against what
// exists, the kind (directory options), delete-pending, the access and
// read-only checks, a REST lease, then the sharing check against every
// live open of the file (MS-FSA 2.1.5.1.2.2; a REST lease counts as an
// open: ErrSharingViolation for Write or Delete access), and only then
// the overwrite or supersede truncation. A create applies the REST
// defaults: a new random file ID, the parent's permission, now for the
// SMB times, Archive for files (plus the requested attributes), a new
// ETag and Last-Modified. Errors: ErrShareNotFound, ErrInvalidName,
// ErrInvalidParameter, ErrAccessDenied, ErrPathNotFound, ErrNotFound,
// ErrExists, ErrIsDirectory, ErrNotDirectory, ErrDeletePending,
// ErrCannotDelete, ErrSharingViolation, ErrOwnerNotLive.
func (v *Opens) Open(ctx context.Context, r OpenRequest) (*Open, error) {
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
	return v.s.dom().open(ctx, &openIn{OpenRequest: r, attrs: r.Attributes & storableAttrs, owner: v.owner})
}

// live checks, inside tx, that o's share exists and its handle is live,
// and loads o's entry by file ID: ErrShareNotFound, ErrFileClosed.
func (v *Opens) live(tx kv.Tx, now time.Time, o *Open) (*Share, *Entry, error) {
	return liveOpen(tx, now, o)
}

// Info returns the file's current information through o.
func (v *Opens) Info(ctx context.Context, o *Open) (Info, error) {
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
func (v *Opens) Path(ctx context.Context, o *Open) ([]string, error) {
	var out []string
	err := v.s.store.View(ctx, func(tx kv.Tx) error {
		out = nil
		_, e, err := v.live(tx, v.s.clock.Now(), o)
		if err != nil {
			return err
		}
		for e.ID != RootID {
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
func (v *Opens) Close(ctx context.Context, o *Open) (Info, error) {
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
func (v *Opens) CloseSession(ctx context.Context, sessionID string) (int, error) {
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

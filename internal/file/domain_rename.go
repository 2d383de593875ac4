package file

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// renameIn is a Rename. A REST caller names the source by path (src, of
// the kind dir) and the destination is its own path; an SMB caller's
// source is its open and the destination is dst.
type renameIn struct {
	src []string
	dir bool
	dst []string
	// replace replaces an existing destination file
	// (x-ms-file-rename-replace-if-exists, FileRenameInformation's
	// ReplaceIfExists); ignoreRO replaces a read-only one (REST
	// x-ms-file-rename-ignore-readonly).
	replace, ignoreRO bool
	// srcLease and dstLease are a REST caller's lease IDs of the source
	// and of a replaced destination.
	srcLease, dstLease string
	// smb, meta (nil: preserve) and contentType (nil: preserve) are the
	// properties a REST rename sets on the item.
	smb         *SMBRequest
	meta        map[string]string
	contentType *string
}

// opRename is what an SMB open needs to rename its item.
var opRename = fileOp{access: AccessDelete, what: "a rename"}

// rename moves c's source to its destination in the same share in one
// transaction, keeping its file ID (so its handles, leases and the view
// by ID follow it), and returns the moved item. A directory's children
// are keyed by its file ID and follow it untouched. Renaming an item onto
// its own path (or a case variant of it) changes only its name's case.
//
// The checks, in order, and what each door answers:
//
//   - the source: REST: missing or of the other kind, 404
//     ResourceNotFound; SMB: the open must be live, and the share root
//     cannot move (ByShareRoot: ErrAccessDenied); a directory with an
//     open item below it cannot move (ErrAccessDenied,
//     smb2.rename.rename_dir_openfile);
//   - the destination's parent (ByParent): REST 404 ParentNotFound, SMB
//     ErrPathNotFound; the root as destination: REST 409
//     ResourceAlreadyExists;
//   - REST: the source's lease (412 as for a write, ByLease); SMB: the
//     open handles of the destination's directory (ErrSharingViolation,
//     see renameTargetDirNeed);
//   - a directory moved into its own subtree (BySubtree): REST 400
//     InvalidInput, SMB ErrInvalidParameter;
//   - REST: the share modes of the source's opens (409 SharingViolation);
//     an SMB open with DELETE access was admitted only by opens sharing
//     delete (MS-FSA 2.1.5.15.11);
//   - an existing destination (replaceTarget).
func (d domain) rename(ctx context.Context, c *caller, in *renameIn) (*Entry, error) {
	smb := c.open != nil
	if smb {
		if err := opRename.precheck(c); err != nil {
			return nil, err
		}
	}
	var m Entry
	err := d.s.store.Update(ctx, func(tx kv.Tx) error {
		now := d.now(c)
		acct, sh := c.acct, c.share
		var src *Entry
		dst := c.path
		if smb {
			var err error
			if _, src, err = liveOpen(tx, now, c.open); err != nil {
				return err
			}
			if src.ID == RootID {
				return refused(ByShareRoot, "the share root cannot be renamed")
			}
			if err := checkRenameOpens(tx, now, c.open, src); err != nil {
				return err
			}
			dst = in.dst
		} else {
			if _, err := loadShare(tx, acct, sh, ""); err != nil {
				return err
			}
			_, e, err := walk(tx, acct, sh, "", in.src)
			if azerr.Has(err, azerr.ParentNotFound) {
				// The source does not exist; ParentNotFound is about the
				// destination (inferred).
				return azerr.New(azerr.ResourceNotFound)
			}
			if err != nil {
				return err
			}
			if e == nil || e.Dir != in.dir {
				return azerr.New(azerr.ResourceNotFound)
			}
			src = e
		}
		dp, old, err := walk(tx, acct, sh, "", dst)
		if azerr.Has(err, azerr.ParentNotFound) {
			return refused(ByParent, strings.Join(dst, "/"))
		}
		if err != nil {
			return err
		}
		if dp == nil {
			// The destination is the share root, which exists.
			return azerr.New(azerr.ResourceAlreadyExists)
		}
		if smb {
			if err := handle.CheckREST(tx, now, acct, sh, FormatID(dp.ID), renameTargetDirNeed); err != nil {
				return vfsHandleErr(err)
			}
		} else if err := lease.CheckWrite(src.Lease, in.srcLease, lease.File, now); err != nil {
			return refuse(ByLease, err)
		}
		if src.Dir {
			if err := checkNotBelow(tx, acct, sh, dp, src.ID); err != nil {
				return err
			}
		}
		if !smb {
			op := handle.OpRenameFile
			if src.Dir {
				op = handle.OpRenameDirectory
			}
			if err := handlesAt(tx, now, acct, sh, "", src, op); err != nil {
				return err
			}
		}
		if old != nil && old.ID != src.ID {
			if err := d.replaceTarget(tx, now, c, in, old); err != nil {
				return err
			}
		}
		if err := deleteEntry(tx, acct, sh, "", src); err != nil {
			return err
		}
		m = *src
		m.Name, m.Parent = dst[len(dst)-1], dp.ID
		if smb {
			c.open.stamp(&m, now, TimeChanged)
		} else {
			if err := in.smb.apply(tx, acct, sh, &m, dp.SMB.PermKey, now); err != nil {
				return err
			}
			if in.meta != nil {
				m.Meta = in.meta
			}
			if in.contentType != nil {
				m.Props.ContentType = *in.contentType
			}
			m.Lease = lease.OnWrite(m.Lease, now)
		}
		touch(&m, now)
		return putEntry(tx, acct, sh, "", &m)
	})
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// replaceTarget deletes the existing destination old of a rename by c,
// releasing its data references, if the rules allow it. Without replace:
// REST 409 ResourceAlreadyExists (azfile TestDirectoryRenameIgnoreReadOnly),
// SMB ErrExists. A directory is never replaced: REST 409
// ResourceAlreadyExists (microsoft/AzureStorageExplorer#6593, maintainer:
// "the Rest rename API does not support overwriting a directory"; the code
// is inferred), SMB ErrAccessDenied. A read-only file: REST 409
// ReadOnlyAttribute unless ignoreRO (the same azfile test), SMB
// ErrAccessDenied (ByReadOnly). A leased file: REST needs the destination
// lease ID (azfile TestDirectoryRenameDestLease), SMB ErrSharingViolation
// (ByLease). Open handles: REST as the renameReplace row of the handle
// table (ByShareMode), SMB: none may be open or delete-pending
// (ErrAccessDenied, MS-FSA 2.1.5.15.11).
func (d domain) replaceTarget(tx kv.Tx, now time.Time, c *caller, in *renameIn, old *Entry) error {
	acct, sh := c.acct, c.share
	switch {
	case !in.replace:
		return refused(ByExists, old.Name)
	case old.Dir:
		return refused(ByReplaceDir, "a directory cannot be replaced")
	case old.SMB.Attrs&AttrReadOnly != 0 && !in.ignoreRO:
		return refused(ByReadOnly, old.Name+" is read-only")
	}
	if c.open == nil {
		if err := lease.CheckWrite(old.Lease, in.dstLease, lease.File, now); err != nil {
			return refuse(ByLease, err)
		}
		if err := handlesAt(tx, now, acct, sh, "", old, handle.OpRenameReplace); err != nil {
			return err
		}
	} else {
		if old.Lease.Active(now) {
			return refuse(ByLease, fmt.Errorf("%w: %s is leased", ErrSharingViolation, old.Name))
		}
		fid := FormatID(old.ID)
		open, err := handle.HasOpen(tx, now, acct, sh, fid)
		if err != nil {
			return err
		}
		pending, err := handle.IsDeletePending(tx, acct, sh, fid)
		if err != nil {
			return err
		}
		if open || pending {
			return refuse(ByShareMode, fmt.Errorf("%w: %s is open", ErrAccessDenied, old.Name))
		}
	}
	return removeItem(tx, now, acct, sh, old)
}

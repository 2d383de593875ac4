package file

import (
	"context"
	"errors"
	"fmt"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// deleteIn is a Delete.
type deleteIn struct {
	// dir: a REST caller deletes a directory (Delete Directory), not a
	// file. An SMB caller's item is whatever its open is.
	dir bool
	// pending is an SMB caller's disposition: set (true) or clear the
	// item's delete-pending state (FileDispositionInformation). A REST
	// caller deletes at once.
	pending bool
}

// delete deletes c's item in one transaction. A REST caller deletes it
// now (Delete File: its data references are released; Delete
// Directory); an SMB caller sets or clears its delete-pending state, and
// the item is deleted when its last handle closes (Opens.Close). Deleting
// is refused, in order, for the share root (REST: 400 InvalidURI; SMB:
// ErrAccessDenied, as smbd), by the checks of admit (opDeleteFile,
// opDeleteDirectory), for a read-only file (REST: 409 ReadOnlyAttribute;
// SMB: ErrCannotDelete, MS-FSA 2.1.5.15.3) and for a directory with
// entries (REST: 409 DirectoryNotEmpty; SMB: ErrDirectoryNotEmpty).
// Clearing a disposition is never refused on these grounds.
func (d domain) delete(ctx context.Context, c *caller, in *deleteIn) error {
	if err := opDeleteFile.precheck(c); err != nil {
		return err
	}
	return d.s.store.Update(ctx, func(tx kv.Tx) error {
		now := d.now(c)
		t, err := d.load(tx, now, c, in.dir)
		if err != nil {
			return err
		}
		e := t.e
		smb := c.open != nil
		if smb && !in.pending {
			return vfsHandleErr(handle.SetDeletePending(tx, now, c.acct, c.share, c.open.fileID(), c.open.HandleID, false))
		}
		if e.ID == RootID {
			return refused(ByShareRoot, "the share root cannot be deleted")
		}
		op := &opDeleteFile
		if e.Dir {
			op = &opDeleteDirectory
		}
		if err := d.admit(tx, now, c, e, op); err != nil {
			return err
		}
		if e.Dir {
			busy, err := hasChildren(tx, c.acct, c.share, "", e.ID)
			if err != nil {
				return err
			}
			if busy {
				return refused(ByNotEmpty, "")
			}
		}
		if smb {
			return vfsHandleErr(handle.SetDeletePending(tx, now, c.acct, c.share, c.open.fileID(), c.open.HandleID, true))
		}
		return removeItem(tx, now, c.acct, c.share, e)
	})
}

// propsIn is a SetProperties: what is not set stays.
type propsIn struct {
	// op is the operation (opSetProperties, opSetFileMetadata,
	// opSetDirectoryProperties, opSetDirectoryMetadata for REST;
	// opSetEndOfFile, opSetAllocation, opSetBasic for SMB).
	op *fileOp
	// dir: a REST caller's item is a directory (else a file). An SMB
	// caller's item is whatever its open is.
	dir bool
	// resize sets the end of file to size; with alloc (SMB
	// FileAllocationInformation), only a smaller size changes anything
	// (the service allocates nothing ahead; MS-FSA 2.1.5.15.1).
	resize, alloc bool
	size          int64
	// props replace the HTTP properties of a file; nil keeps them.
	props *Props
	// smb are the SMB properties of a REST Set File/Directory Properties.
	smb *SMBRequest
	// setMeta replaces the metadata with meta (nil clears it) and stamps
	// the change time (Set File/Directory Metadata).
	setMeta bool
	meta    map[string]string
	// basic is an SMB FileBasicInformation (times and attributes, see
	// applyBasic); frozen are the times frozen on the open after it.
	basic  *BasicInfo
	frozen Times
}

// propsOut is what SetProperties stored (or, when nothing changed, found):
// the item, and for basic its delete-pending state.
type propsOut struct {
	e       *Entry
	pending bool
}

// errUnchanged, returned inside a domain transaction, ends it without a
// write and without error.
var errUnchanged = errors.New("file: unchanged")

// setProperties changes c's item in one transaction — its size (resize),
// HTTP properties, SMB properties or basic information, metadata — and
// returns it. The checks of admit come first, then those of resize. A
// change stamps a new ETag and Last-Modified; an SMB SetAllocation or
// SetBasic that changes nothing writes nothing.
func (d domain) setProperties(ctx context.Context, c *caller, in *propsIn) (propsOut, error) {
	var out propsOut
	if err := in.op.precheck(c); err != nil {
		return out, err
	}
	if in.resize && in.size < 0 {
		return out, fmt.Errorf("%w: size %d", ErrInvalidParameter, in.size)
	}
	err := d.s.store.Update(ctx, func(tx kv.Tx) error {
		out = propsOut{}
		now := d.now(c)
		t, err := d.load(tx, now, c, in.dir)
		if err != nil {
			return err
		}
		e := t.e
		if err := d.admit(tx, now, c, e, in.op); err != nil {
			return err
		}
		out.e = e
		if in.resize {
			if in.alloc && in.size >= e.Size {
				return errUnchanged
			}
			if err := d.resize(tx, now, c, t.share, e, in.size); err != nil {
				return err
			}
		}
		if in.props != nil {
			e.Props = *in.props
		}
		if in.smb != nil {
			// "inherit" is the parent's permission; for the root, its own.
			parentKey := e.SMB.PermKey
			if t.parent != nil {
				parentKey = t.parent.SMB.PermKey
			}
			if err := in.smb.apply(tx, c.acct, c.share, e, parentKey, now); err != nil {
				return err
			}
		}
		if in.setMeta {
			e.Meta = in.meta
			e.SMB.Changed = now
		}
		if in.basic != nil {
			if out.pending, err = handle.IsDeletePending(tx, c.acct, c.share, FormatID(e.ID)); err != nil {
				return err
			}
			if !applyBasic(e, in.basic, in.frozen, now) {
				return errUnchanged
			}
		}
		return d.store(tx, now, c, e)
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	return out, err
}

// createIn is a Create by a REST caller at its path. (An SMB client creates
// through the domain's open, whose transaction also opens the handle; it
// makes the record with newItem too.)
type createIn struct {
	// dir: Create Directory; else Create File of size bytes with props,
	// and data (nil: none) written at offset 0.
	dir   bool
	size  int64
	props Props
	data  *extent.Staged
	meta  map[string]string
	smb   *SMBRequest
	// noReplace, when not nil, is the answer for an existing file, which
	// Create File otherwise replaces (a SAS that grants create but not
	// write: 403 AuthorizationPermissionMismatch).
	noReplace error
	// recorded is set by create: whether data may be recorded, for
	// data.Finish (extent.Recording); false after a refused create.
	recorded bool
}

// create creates c's item in one transaction and returns it. Create File
// checks the share's quota first (checkSize); an existing directory is
// 409 ResourceTypeMismatch for Create File and ResourceAlreadyExists for
// Create Directory, an existing file ResourceTypeMismatch for Create
// Directory (microsoft/vscode-azurestorage#848). Create File over an
// existing file replaces it (replaceContent, the effect of an overwriting
// SMB open) after the checks of admit (opCreateFile: its
// lease, the read-only attribute, the share modes of its opens): same file
// ID, creation time and active lease; new content, properties and metadata
// (Create File,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-file).
func (d domain) create(ctx context.Context, c *caller, in *createIn) (*Entry, error) {
	var e *Entry
	err := d.s.store.Update(ctx, extent.Recording(&in.recorded, func(tx kv.Tx) error {
		now := d.now(c)
		t, err := resolvePath(tx, c.acct, c.share, c.snap, c.path)
		if err != nil {
			return err
		}
		if !in.dir {
			if err := d.checkSize(t.share, in.size); err != nil {
				return err
			}
		}
		old := t.e
		switch {
		case old != nil && old.Dir != in.dir:
			return azerr.New(azerr.ResourceTypeMismatch)
		case old != nil && in.dir:
			// Includes the share root, which always exists (inferred).
			return azerr.New(azerr.ResourceAlreadyExists)
		case old != nil:
			if in.noReplace != nil {
				return in.noReplace
			}
			if err := d.admit(tx, now, c, old, &opCreateFile); err != nil {
				return err
			}
			if err := replaceContent(tx, now, old); err != nil {
				return err
			}
			e = &Entry{Name: old.Name, ID: old.ID, Parent: old.Parent, Created: old.Created, Lease: old.Lease}
		default:
			if e, err = newItem(tx, c.acct, c.share, t.parent, c.path[len(c.path)-1], in.dir, 0, now); err != nil {
				return err
			}
		}
		if !in.dir {
			e.Size, e.Props = in.size, in.props
		}
		e.Meta = in.meta
		if err := in.smb.apply(tx, c.acct, c.share, e, t.parent.SMB.PermKey, now); err != nil {
			return err
		}
		if in.data != nil {
			if err := in.data.Write(tx); err != nil {
				return err
			}
			e.Parts = in.data.Parts
			if err := extent.AdjustRefs(tx, now, nil, e.Parts); err != nil {
				return err
			}
		}
		touch(e, now)
		return putEntry(tx, c.acct, c.share, "", e)
	}))
	return e, err
}

package file

import (
	"context"
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
// the item is deleted when its last handle closes (VFS.Close). Deleting
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
		if e.ID == rootID {
			if smb {
				return fmt.Errorf("%w: the share root cannot be deleted", ErrAccessDenied)
			}
			return azerr.New(azerr.InvalidURI)
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
				if smb {
					return ErrDirectoryNotEmpty
				}
				return azerr.New(azerr.DirectoryNotEmpty)
			}
		}
		if smb {
			return vfsHandleErr(handle.SetDeletePending(tx, now, c.acct, c.share, c.open.fileID(), c.open.HandleID, true))
		}
		if err := extent.AdjustRefs(tx, now, e.Parts, nil); err != nil {
			return err
		}
		return deleteEntry(tx, c.acct, c.share, "", e)
	})
}

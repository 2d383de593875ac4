package blob

import (
	"context"
	"errors"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/hns/upn"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Blob operations on a hierarchical account that keep the flat
// account's rules with the facts the path's node holds.

// undeleteLatestPath is Undelete Blob without x-ms-undelete-source on a
// hierarchical account. The Undelete Blob reference gives that header
// (blobPath?deletionid=<id>) to such accounts to name one soft-deleted
// path, because a path name may have been deleted several times and only
// one deletion can be restored at the name. Without it the request means
// what Undelete Blob means on a flat account, "restore the soft-deleted
// blob": here the most recent retained deletion of the name, which is
// the blob a flat account would restore (older deletions of a flat blob
// are its soft-deleted snapshots; a path has none). So:
//
//   - a live path is left as it is, 200, as a live blob with nothing
//     soft-deleted;
//   - else the latest retained deletion is restored as Path Undelete
//     restores it (ns.Undelete: a directory with its content; 404
//     BlobNotFound when its parent directory is gone, restore that
//     first);
//   - else 404 BlobNotFound, as on a flat account.
func (s *Service) undeleteLatestPath(ctx context.Context, hns *ns.Namespace, in UndeleteBlobInput) error {
	ref, c, now := in.Ref, in.Caller, s.now(in.Call)
	return s.store.Update(ctx, func(tx kv.Tx) error {
		if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
			return err
		}
		n, err := hns.Lookup(tx, blobFS(ref), ref.Blob, c)
		switch {
		case err == nil && !n.Expired(now):
			return nil
		case err != nil && !errors.Is(err, ns.ErrPathNotFound):
			return blobErr(err)
		}
		id, err := hns.LatestDeletion(tx, blobFS(ref), ref.Blob)
		if err != nil {
			return blobErr(err)
		}
		if id == "" {
			return azerr.New(azerr.BlobNotFound)
		}
		_, err = hns.Undelete(tx, blobFS(ref), ref.Blob, id, c)
		return blobErr(err)
	})
}

// deletedPaths reads the soft-deleted paths of a listing in order
// (ns.ScanDeleted) a batch at a time, for List Blobs with include=deleted
// to merge with the live paths ScanBlobs passes it: from is the path and
// after the deletion id the next batch starts after ("" for all the
// deletions of from).
type deletedPaths struct {
	hns         *ns.Namespace
	tx          kv.Tx
	fs          ns.FS
	prefix      string
	from, after string
	buf         []ns.DeletedPath
	i           int
	done        bool
}

const deletedBatch = 64

// peek is the next soft-deleted path, nil when there is none.
func (d *deletedPaths) peek() (*ns.DeletedPath, error) {
	if d.i < len(d.buf) {
		return &d.buf[d.i], nil
	}
	if d.done {
		return nil, nil
	}
	d.buf, d.i = d.buf[:0], 0
	err := d.hns.ScanDeleted(d.tx, d.fs, d.prefix, d.from, d.after, func(p ns.DeletedPath) bool {
		d.buf = append(d.buf, p)
		return len(d.buf) < deletedBatch
	})
	if err != nil {
		return nil, err
	}
	if len(d.buf) < deletedBatch {
		d.done = true
	}
	if len(d.buf) == 0 {
		return nil, nil
	}
	last := d.buf[len(d.buf)-1]
	d.from, d.after = last.Path, last.DeletionID
	return &d.buf[0], nil
}

// next passes the path peek returned.
func (d *deletedPaths) next() { d.i++ }

// skip passes every path before name (a folded prefix followed by 0xff).
func (d *deletedPaths) skip(name string) {
	for d.i < len(d.buf) && d.buf[d.i].Path < name {
		d.i++
	}
	if d.i == len(d.buf) && !d.done && d.from < name {
		d.from, d.after, d.buf, d.i = name, "", d.buf[:0], 0
	}
}

// namePath turns the ids of pp's owner, group and ACL entries into the
// user principal names the directory learned from bearer tokens
// (internal/hns/upn), in the read's transaction; other ids stay.
func namePath(tx kv.Tx, pp *PathProperties) error {
	names := upn.NewNames(tx)
	var err error
	if pp.Owner, err = names.Of(pp.Owner); err != nil {
		return err
	}
	if pp.Group, err = names.Of(pp.Group); err != nil {
		return err
	}
	if pp.ACL == "" {
		return nil
	}
	entries, err := acl.ParseStored(pp.ACL) // a stored ACL: no request limits
	if err != nil {
		return err
	}
	for i, e := range entries {
		if e.ID != "" {
			if entries[i].ID, err = names.Of(e.ID); err != nil {
				return err
			}
		}
	}
	pp.ACL = acl.Format(acl.ACL{Entries: entries})
	return nil
}

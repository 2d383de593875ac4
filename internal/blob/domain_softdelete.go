package blob

import (
	"context"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// UndeletedPath is what UndeletePath restored.
type UndeletedPath struct {
	Dir     bool
	Created time.Time
}

// UndeletePath restores the soft-deleted path of ref deleted with
// deletion id id on a hierarchical account (ns.Undelete, through the
// Blob view's errors: 404 ContainerNotFound, 404 BlobNotFound when that
// deletion is not retained or the parent is missing, 409
// BlobAlreadyExists when the path exists again) and reports what it
// restored. A restored file brings back no snapshots: a file deleted
// with snapshots is never kept (deletePath, after the hierarchical
// namespace table of "Soft delete for blobs"), nor is a rename's
// destination that has some. A restored directory brings back the
// snapshots of the files below it, which stay keyed by their node ids
// while it is soft-deleted.
func (s *Service) UndeletePath(ctx context.Context, in UndeleteBlobInput) (out UndeletedPath, err error) {
	hns := s.nsOf(in.Ref.Account)
	if hns == nil {
		return out, azerr.New(azerr.HierarchicalNamespaceNotEnabled)
	}
	err = s.store.Update(ctx, func(tx kv.Tx) error {
		if _, err := loadContainer(tx, in.Ref.Account, in.Ref.Container); err != nil {
			return err
		}
		n, err := hns.Undelete(tx, blobFS(in.Ref), in.Ref.Blob, in.DeletionID, in.Caller)
		if err != nil {
			return blobErr(err)
		}
		out = UndeletedPath{Dir: n.Dir, Created: n.Created}
		return nil
	})
	return out, err
}

// UndeleteBlob is Undelete Blob
// (https://learn.microsoft.com/en-us/rest/api/storageservices/undelete-blob):
// the soft-deleted blob and snapshots of the name still retained are
// live again (see softdelete.go); 404 BlobNotFound when there is neither
// a live blob nor anything to restore. On a hierarchical account it
// restores the latest retained deletion of the path (undeleteLatestPath).
func (s *Service) UndeleteBlob(ctx context.Context, in UndeleteBlobInput) error {
	if hns := s.nsOf(in.Ref.Account); hns != nil {
		return s.undeleteLatestPath(ctx, hns, in)
	}
	now := s.now(in.Call)
	ref := in.Ref
	err := s.store.Update(ctx, s.changing(in.Call, apiUndeleteBlob, ref, func(tx kv.Tx) error {
		if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
			return err
		}
		live, err := findBlob(tx, ref.Account, ref.Container, ref.Blob, "")
		if err != nil {
			return err
		}
		entries, err := findDeleted(tx, ref.Account, ref.Container, ref.Blob)
		if err != nil {
			return err
		}
		restored := 0
		for _, e := range entries {
			if !e.rec.Del.retained(now) {
				continue // expired: the collector purges it
			}
			if err := dropDeleted(tx, ref.Account, ref.Container, ref.Blob, e.snap, e.rec); err != nil {
				return err
			}
			rec := *e.rec
			rec.Del = nil
			snap := e.snap
			if snap == "" && live != nil {
				// A write over a soft-deleted blob settles it first, so
				// this does not happen; should it, keep the data as a
				// snapshot of the live blob rather than overwrite it.
				if snap, err = newSnapshotTime(tx, ref.Account, ref.Container, ref.Blob, now); err != nil {
					return err
				}
			}
			if err := kv.PutJSON(tx, BlobKey(ref.Account, ref.Container, ref.Blob, snap), &rec); err != nil {
				return err
			}
			restored++
		}
		versions, err := undeleteVersions(tx, ref, now)
		if err != nil {
			return err
		}
		restored += versions
		if live == nil && restored == 0 {
			return azerr.New(azerr.BlobNotFound)
		}
		return nil
	}))
	return err
}

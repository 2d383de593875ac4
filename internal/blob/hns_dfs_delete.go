package blob

import (
	"context"

	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// DeletePathInput is Path - Delete of a path in FS.
type DeletePathInput struct {
	// Call is the request (its ids are recorded for events).
	Call Call
	// FS is the path's filesystem.
	FS ns.FS
	// Delete is the path, recursion, conditions, lease and caller
	// (ns.Delete); its Retain, Vet and DeletionID are set here.
	Delete ns.DeleteInput
}

// DeletePathOutput is the outcome of a delete.
type DeletePathOutput struct {
	// DeletionID is the soft-deleted path's deletion id for Path -
	// Undelete, "" when the path is gone for good.
	DeletionID string
}

// DeletePath makes the path and everything under it unreachable in one
// transaction (ns.Delete detaches the subtree; the collector reclaims
// it), soft-deleted when the account's delete retention policy is on. A
// file with snapshots refuses (409 SnapshotsPresent, RefuseSnapshots); a
// directory goes with the snapshots of the files below it.
func (s *Service) DeletePath(ctx context.Context, in DeletePathInput) (DeletePathOutput, error) {
	var deletionID string
	d := in.Delete
	d.DeletionID = &deletionID
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		retain, err := DeleteRetention(tx, in.FS.Account)
		if err != nil {
			return err
		}
		d.Retain = retain
		refuse := RefuseSnapshots(tx, in.FS.Account, "file")
		d.Vet = func(n *ns.Node) error {
			// Container-level WORM (hns_worm.go); a directory deleted
			// without recursive is left to the namespace's own rule.
			if !n.Dir || d.Recursive {
				w, err := pathWORM(tx, in.FS)
				if err != nil {
					return err
				}
				if err := w.refusePathDelete(tx, s.hns, in.FS, n, s.clock.Now()); err != nil {
					return err
				}
			}
			return refuse(n)
		}
		n, err := s.hns.Delete(tx, in.FS, d)
		if err != nil {
			return err
		}
		return s.dfsDeleted(tx, in.Call, in.FS, d.Path, n, d.Recursive)
	})
	if err != nil {
		return DeletePathOutput{}, err
	}
	return DeletePathOutput{DeletionID: deletionID}, nil
}

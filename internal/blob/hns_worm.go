package blob

import (
	"time"

	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Container-level WORM on a hierarchical account (containerworm.go has
// the rules and their sources): the filesystem is the container, and its
// policy and legal hold live in the same container record, so the
// namespace's writes read them with wormOf as the Blob API's do. A file
// is a blob (pathRec: its creation time is the node's, which a rename
// keeps; an append blob file's last write is the node's modified time);
// a directory is not, and is protected through the files below it.

// refuseRename is the WORM rule of a rename: "If hierarchical namespace
// is enabled, you can't rename or move a blob when the blob is in the
// immutable state. Both the blob name and the directory structure
// provide essential container-level data that can't be modified once the
// immutable policy is in place" (container-level WORM page,
// Availability). The source, a file or a directory holding one, is
// refused while a file would be refused a delete (its retention active or
// a legal hold on: "in the immutable state"), with that refusal's code;
// a file it replaces at the destination is an overwrite, refused while
// the destination's container has a policy or hold.
func (s *Service) refuseRename(tx kv.Tx, srcFS, dstFS ns.FS, moved, replaced *ns.Node, now time.Time) error {
	w, err := pathWORM(tx, srcFS)
	if err != nil {
		return err
	}
	// The moved node keeps its id, so its subtree is read under it
	// wherever it now is (in dstFS).
	if err := w.refuseSubtree(tx, s.hns, dstFS, moved, wormDelete, now); err != nil {
		return err
	}
	if replaced == nil {
		return nil
	}
	return pathWORMRefuse(tx, dstFS, replaced, wormWrite, now)
}

// refusePathSnapshotsDelete is the WORM rule of Delete Blob with
// x-ms-delete-snapshots on the file n: its snapshots, and the file with
// include, each as Delete Blob of it (as on a flat account).
func (s *Service) refusePathSnapshotsDelete(tx kv.Tx, ref BlobRef, n *ns.Node, include bool, now time.Time) error {
	if n.Dir {
		return nil
	}
	w, err := pathWORM(tx, blobFS(ref))
	if err != nil || w.empty() {
		return err
	}
	if include {
		if err := w.refusePath(n, wormDelete, now); err != nil {
			return err
		}
	}
	if len(n.Ref) == 0 {
		return nil
	}
	snaps, err := scanPathSnapshots(tx, ref.Account, n.ID, 0)
	if err != nil {
		return err
	}
	for i := range snaps {
		if err := w.refuse(&snaps[i].rec.Rec, wormDelete, now); err != nil {
			return err
		}
	}
	return nil
}

// refuseExpiry refuses an expiry at (zero: none) of the file n that
// would delete it while Delete Blob of it is refused: the delete rule
// read at the expiry (or now, if that has passed). Neither the
// container-level WORM page nor Set Blob Expiry's reference says how the
// two meet; a file expiring is deleted, so the expiry is refused with the
// delete's code (inferred).
func refuseExpiry(tx kv.Tx, fs ns.FS, n *ns.Node, at, now time.Time) error {
	if at.IsZero() {
		return nil
	}
	return pathWORMRefuse(tx, fs, n, wormDelete, later(at, now))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

package blob

import (
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
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

// pathWORM reads the WORM settings of fs's container.
func pathWORM(tx kv.Tx, fs ns.FS) (*containerWORM, error) {
	return wormOf(tx, fs.Account, fs.Filesystem)
}

// refusePath is refuse of op on the file n (nil, or a directory: none).
func (w *containerWORM) refusePath(n *ns.Node, op wormOp, now time.Time) error {
	if w.empty() || n == nil || n.Dir {
		return nil
	}
	b, _ := pathRec(n)
	return w.refuse(b, op, now)
}

// pathWORMRefuse is refusePath of the settings of fs's container.
func pathWORMRefuse(tx kv.Tx, fs ns.FS, n *ns.Node, op wormOp, now time.Time) error {
	if n == nil || n.Dir {
		return nil
	}
	w, err := pathWORM(tx, fs)
	if err != nil {
		return err
	}
	return w.refusePath(n, op, now)
}

// refuseSubtree refuses op on the directory n when a file below it
// refuses it (the first refusal found); a file is refusePath.
func (w *containerWORM) refuseSubtree(tx kv.Tx, hns *ns.Namespace, fs ns.FS, n *ns.Node, op wormOp, now time.Time) error {
	if w.empty() {
		return nil
	}
	if !n.Dir {
		return w.refusePath(n, op, now)
	}
	return hns.EachFile(tx, fs, n, func(f *ns.Node) error { return w.refusePath(f, op, now) })
}

// refusePathDelete is the WORM rule of Path - Delete of n: a file as
// Delete Blob; a directory deleted recursively with a protected file
// below it is refused whole (the file's code), and one that is not empty
// is refused anyway: "If there's a policy set on a container with
// hierarchical namespace enabled, a directory must be empty before it
// can be deleted" (container-level WORM page, Deletion), answered as a
// delete of a non-empty directory without recursive is, 409
// DirectoryNotEmpty (no public source names the code of this refusal:
// inferred).
func (w *containerWORM) refusePathDelete(tx kv.Tx, hns *ns.Namespace, fs ns.FS, n *ns.Node, now time.Time) error {
	if w.empty() {
		return nil
	}
	if err := w.refuseSubtree(tx, hns, fs, n, wormDelete, now); err != nil || !n.Dir {
		return err
	}
	empty, err := hns.Empty(tx, fs, n)
	if err != nil {
		return err
	}
	if !empty {
		return azerr.New(azerr.DirectoryNotEmpty)
	}
	return nil
}

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

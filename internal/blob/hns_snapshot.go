package blob

import (
	"context"
	"errors"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Snapshots of files of a hierarchical account (Snapshot Blob through
// the Blob API: "Blob Storage feature support in Azure Storage
// accounts" lists blob snapshots for accounts with a hierarchical
// namespace).
//
// A snapshot is one record, ("dls", account, node id, snapshot time),
// the only place that holds what it froze: the content's extent parts
// (one extent reference each, shared with the file's data items as a
// flat snapshot shares its blob's), the size, content headers,
// metadata (or the x-ms-meta-* given to Snapshot Blob), ETag,
// Last-Modified, creation time and tier of the file as it was, and the
// owner, group and ACL it had. It is keyed by the file's node id, not its
// name: Azure's Blob snapshot model ties a snapshot to its base blob, and
// a node id never changes while the file lives (a rename moves the node,
// never its records), so a rename of the file or of any directory above
// it rewrites one entry as before and the snapshots follow the file.
// Every operation on a snapshot walks the namespace to the live file
// first: once the file is deleted (or its directory or filesystem), its
// snapshots are unreachable in the same transaction, and the collector
// releases them with its content (Reclaim).

// hasPathSnapshots reports whether file n has a snapshot. A file without
// a content reference has none (Snapshot Blob gives it one).
func hasPathSnapshots(tx kv.Tx, acct string, n *ns.Node) (bool, error) {
	if n.Dir || len(n.Ref) == 0 {
		return false, nil
	}
	p := pathSnapPrefix(acct, n.ID)
	found := false
	err := tx.Scan(p, kv.PrefixEnd(p), 1, false, func(_, _ []byte) bool { found = true; return false })
	return found, err
}

// RefuseSnapshots is the ns.DeleteInput.Vet of a delete of a path of
// acct that must not remove a file with snapshots: 409 SnapshotsPresent,
// as Azure answers Path - Delete of such a file on the dfs endpoint
// ("This operation is not permitted because the file has snapshots.",
// shown in "ADLS Gen2 and File Snapshots", keepsecure.ca) and Delete
// Blob without x-ms-delete-snapshots on the Blob endpoint. A directory
// is not vetted: a recursive delete of one takes the snapshots of the
// files below with them (Azure lets the parent folder and the container
// go, same source).
func RefuseSnapshots(tx kv.Tx, acct, noun string) func(*ns.Node) error {
	return func(n *ns.Node) error {
		has, err := hasPathSnapshots(tx, acct, n)
		if err != nil {
			return err
		}
		if has {
			return azerr.Newf(azerr.SnapshotsPresent, "This operation is not permitted because the %s has snapshots.", noun)
		}
		return nil
	}
}

// newPathSnapTime is the snapshot time of a new snapshot of file id at
// t: two snapshots in one instant get times 100 ns apart, as on a flat
// account.
func newPathSnapTime(tx kv.Tx, acct string, id []byte, t time.Time) (string, error) {
	for {
		snap := wire.FormatISO7(t)
		if _, err := tx.Get(pathSnapKey(acct, id, snap)); errors.Is(err, kv.ErrNotFound) {
			return snap, nil
		} else if err != nil {
			return "", err
		}
		t = t.Add(100)
	}
}

// errDirSnapshot is Snapshot Blob of a directory: a directory is not a
// blob with content but the namespace's folder (the Blob view shows it
// as an empty hdi_isfolder marker), so there is nothing to freeze; 409
// PathConflict, the code the Blob view gives other content operations on
// a directory (Set Blob Tier, Set Blob Expiry).
func errDirSnapshot() error {
	return azerr.Newf(ns.ErrPathConflict.Code, "A directory has no content to snapshot; Snapshot Blob applies to files.").WithStatus(ns.ErrPathConflict.Status)
}

// snapshotPath is Snapshot Blob of a file of a hierarchical account: in
// one transaction the file's committed content and properties are
// frozen in a snapshot record that takes its own extent reference on
// every part, as a flat snapshot does. The conditions apply to the file
// (412), x-ms-lease-id must be its active lease when given, an archived
// file is 409 BlobArchived, a directory 409 PathConflict, a missing path
// 404 BlobNotFound. A bearer caller needs write permission on the file
// (the snapshot is data kept for it). A file made by Path Create that
// has no content reference yet gets its own here (in place, no new
// ETag), so the collector hands it back, and the snapshots with it.
func (s *Service) snapshotPath(ctx context.Context, hns *ns.Namespace, in SnapshotBlobInput) (SnapshotBlobOutput, error) {
	if in.Ref.Snapshot != "" {
		return SnapshotBlobOutput{}, azerr.Newf(azerr.InvalidQueryParameterValue, "A snapshot cannot be taken of a snapshot.").With("QueryParameterName", "snapshot").With("QueryParameterValue", in.Ref.Snapshot)
	}
	now := s.now(in.Call)
	ref, acc, meta, key := in.Ref, in.Access, in.Metadata, in.CPK
	var out SnapshotBlobOutput
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		out = SnapshotBlobOutput{}
		var snap pathSnapshot
		node, err := hns.Modify(tx, blobFS(ref), ref.Blob, in.Caller, acl.Write, func(n *ns.Node, _ time.Time) error {
			switch {
			case n.Expired(now):
				return ns.ErrPathNotFound
			case n.Dir:
				return errDirSnapshot()
			}
			b, pp := pathRec(n)
			if err := acc.checkConds(b, ref.Container); err != nil {
				return err
			}
			if err := lease.CheckRead(b.Lease, acc.LeaseID, lease.Blob, now); err != nil {
				return err
			}
			if err := notArchived(b); err != nil {
				return err
			}
			// The snapshot keeps the file's key (b.CPK): taking it
			// needs the key, as on a flat account.
			if err := checkCPK(b, key); err != nil {
				return err
			}
			if err := pathWORMRefuse(tx, blobFS(ref), n, wormWrite, now); err != nil { // hns_worm.go
				return err
			}
			if len(n.Ref) == 0 {
				n.Ref = contentRef(ref.Account, n.ID)
			}
			if n.Size > 0 {
				var fc fileContent
				if _, err := kv.GetJSON(tx, n.Ref, &fc); err != nil {
					return err
				}
				b.Parts = fc.Parts
			}
			b.Lease = lease.Lease{}
			if len(meta) > 0 {
				b.Meta = meta
			}
			snap = pathSnapshot{Rec: *b, Owner: pp.Owner, Group: pp.Group, ACL: pp.ACL, Perms: pp.Permissions}
			return nil
		})
		if err != nil {
			return lookupErr(err)
		}
		t, err := newPathSnapTime(tx, ref.Account, node.ID, now)
		if err != nil {
			return err
		}
		if err := extent.AdjustRefs(tx, now, nil, snap.Rec.Parts); err != nil {
			return err
		}
		out = SnapshotBlobOutput{Snapshot: t, ETag: node.ETag, LastModified: node.Modified}
		return kv.PutJSON(tx, pathSnapKey(ref.Account, node.ID, t), &snap)
	})
	return out, err
}

// deletePathSnapshot is Delete Blob ?snapshot= on a hierarchical
// account: the snapshot record goes and its extent references are
// released in the same transaction. The conditions apply to the
// snapshot, as on a flat account; a bearer caller needs write permission
// on the file.
func (s *Service) deletePathSnapshot(ctx context.Context, hns *ns.Namespace, in DeleteBlobInput) error {
	if in.Permanent {
		// Nothing of a path's snapshots is soft-deleted here.
		return azerr.New(azerr.BlobNotFound)
	}
	now := s.now(in.Call)
	ref, acc := in.Ref, in.Access
	return s.store.Update(ctx, func(tx kv.Tx) error {
		node, err := hns.LookupFor(tx, blobFS(ref), ref.Blob, in.Caller, acl.Write)
		if err != nil {
			return lookupErr(err)
		}
		if node.Expired(now) {
			return azerr.New(azerr.BlobNotFound)
		}
		b, _, err := loadPathSnapshot(tx, ref.Account, node, ref.Snapshot)
		if err != nil {
			return err
		}
		if err := acc.checkConds(b, ref.Container); err != nil {
			return err
		}
		if err := wormRefuse(tx, ref, b, wormDelete, now); err != nil { // containerworm.go
			return err
		}
		if err := tx.Delete(pathSnapKey(ref.Account, node.ID, ref.Snapshot)); err != nil {
			return err
		}
		return extent.AdjustRefs(tx, now, b.Parts, nil)
	})
}

// KeepSnapshots moves the snapshots of the file a write replaced
// (co.Replaced) to the file that replaced it (co.Node): Put Blob, Put
// Block List and Copy Blob onto a path, and Path - Create of a file over
// an existing one, keep the snapshots of the name as an overwrite of a
// flat blob keeps its snapshots ("Snapshot Blob": a blob's snapshots are
// kept until the blob is deleted with them or they are deleted). It runs
// in the write's transaction; a file without snapshots costs one range
// read of nothing. The new file gets its content reference here if it
// has none (Path - Create makes files without one), through ns.Modify,
// so the collector hands the snapshots back when the file goes.
func (s *Service) KeepSnapshots(tx kv.Tx, fs ns.FS, path string, c ns.Caller, co *ns.CreateOutput) error {
	old := co.Replaced
	if old == nil || co.Node == nil || co.Node.Dir || len(old.Ref) == 0 {
		return nil
	}
	snaps, err := scanPathSnapshots(tx, fs.Account, old.ID, 0)
	if err != nil || len(snaps) == 0 {
		return err
	}
	if len(co.Node.Ref) == 0 {
		n, err := s.hns.Modify(tx, fs, path, c, 0, func(n *ns.Node, _ time.Time) error {
			n.Ref = contentRef(fs.Account, n.ID)
			return nil
		})
		if err != nil {
			return err
		}
		co.Node = n
	}
	for _, sn := range snaps {
		if err := tx.Delete(pathSnapKey(fs.Account, old.ID, sn.snap)); err != nil {
			return err
		}
		if err := kv.PutJSON(tx, pathSnapKey(fs.Account, co.Node.ID, sn.snap), &sn.rec); err != nil {
			return err
		}
	}
	return nil
}

// setPathSnapshotTier is Set Blob Tier of a snapshot of a file, as a
// flat account allows it on a snapshot (no lease: a snapshot has none):
// the tier is the snapshot record's own. A bearer caller needs write
// permission on the file.
func (s *Service) setPathSnapshotTier(ctx context.Context, hns *ns.Namespace, in SetBlobTierInput) (SetBlobTierOutput, error) {
	tier, err := CheckTier(in.Tier, BlockBlob)
	if err != nil {
		return SetBlobTierOutput{}, err
	}
	now := s.now(in.Call)
	ref := in.Ref
	var out SetBlobTierOutput
	err = s.store.Update(ctx, func(tx kv.Tx) error {
		out = SetBlobTierOutput{}
		node, err := hns.LookupFor(tx, blobFS(ref), ref.Blob, in.Caller, acl.Write)
		if err != nil {
			return lookupErr(err)
		}
		if node.Expired(now) || node.Dir || len(node.Ref) == 0 {
			return azerr.New(azerr.BlobNotFound)
		}
		var r pathSnapshot
		key := pathSnapKey(ref.Account, node.ID, ref.Snapshot)
		found, err := kv.GetJSON(tx, key, &r)
		if err != nil {
			return err
		}
		if !found {
			return azerr.New(azerr.BlobNotFound)
		}
		out.Rehydrating = rehydrates(r.Rec.Tier, tier)
		changed := now
		r.Rec.Tier, r.Rec.TierChanged = tier, &changed
		return kv.PutJSON(tx, key, &r)
	})
	return out, err
}

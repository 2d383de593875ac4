package blob

import (
	"context"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Append blobs and the From URL writes on a hierarchical account.
//
// Azure serves append blobs on accounts with a hierarchical namespace
// ("Blob Storage feature support in Azure Storage accounts"; only the
// page blob APIs and Incremental Copy Blob are listed as unsupported in
// "Known issues with Azure Data Lake Storage"). An append blob is a file
// of the namespace like any other: its name, properties, lease, ACL and
// expiry are its node's, its bytes the content record under the node's
// reference, and its blob type, committed block count and seal the
// node's Append state (ns.Node.Append, nil for the block blobs), the one
// record of the file's type. So a rename moves it with its type, a
// delete or a dfs Path Create over it replaces it as any file, and List
// Blobs reads its type from the node it walks anyway.
//
// Data appended with Append Block is committed at once (the content
// record and the node's size change in the append's transaction),
// unlike the dfs append to a block blob file, which waits for a flush.
//
// The dfs endpoint writes append blob files too, as Hadoop's ABFS driver
// does in its append blob mode (fs.azure.appendblob.directories,
// HADOOP-17058; AbfsClient): Path - Create with blobtype=appendblob
// creates one, and Path - Update action=append on one commits the data
// at once, as Append Block, at position = the file's length only: ABFS
// treats a retried append answered 400 whose data the file already holds
// as done (appendSuccessCheckOp, whose comment names the code Azure
// answers an append at a stale offset: InvalidQueryParameterValue), so
// another position is 400 InvalidQueryParameterValue here. Nothing is
// left pending, so a flush at the file's length only gives it a new
// ETag (and its headers), and any other position is 400
// InvalidFlushPosition, as for a block blob file.

// updatePathTx is updateBlobTx for a file of a hierarchical account: fn
// changes the file as the Blob API shows it (its record with its
// committed parts; a directory shows as a block blob), after the checks
// of a write of an existing blob (Access.checkUpdate, the node's
// lease), and what it changed is stored: the content record, and the
// node's size, append state, new ETag and time (ns.Set), in tx. A bearer
// caller needs write permission on the file.
func (s *Service) updatePathTx(tx kv.Tx, hns *ns.Namespace, ref BlobRef, a Access, op wormOp, c ns.Caller, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error) {
	cont, err := loadContainer(tx, ref.Account, ref.Container)
	if err != nil {
		return nil, err
	}
	node, err := hns.LookupFor(tx, blobFS(ref), ref.Blob, c, acl.Write)
	if err != nil {
		return nil, lookupErr(err)
	}
	if ref.Snapshot != "" || ref.Blob == "" || node.Expired(now) {
		return nil, azerr.New(azerr.BlobNotFound)
	}
	b, _ := pathRec(node)
	if !node.Dir && len(node.Ref) > 0 && node.Size > 0 {
		var fc fileContent
		if _, err := kv.GetJSON(tx, node.Ref, &fc); err != nil {
			return nil, err
		}
		b.Parts = fc.Parts
	}
	if err := a.checkUpdate(b, ref.Container, now); err != nil {
		return nil, err
	}
	if err := cont.WORM.refusePath(node, op, now); err != nil { // hns_worm.go
		return nil, err
	}
	if err := fn(tx, b); err != nil {
		return nil, err
	}
	if node.Dir || node.Append == nil {
		// fn refuses anything but an append blob; this keeps a slip
		// from writing content into a directory.
		return nil, azerr.New(azerr.InvalidBlobType)
	}
	set := ns.SetInput{Path: ref.Blob, LeaseID: a.LeaseID, Caller: c, Append: &ns.AppendState{Blocks: b.Appends, Sealed: b.Sealed}}
	if b.Size != node.Size {
		cref := node.Ref
		if len(cref) == 0 {
			cref = contentRef(ref.Account, node.ID)
		}
		if err := kv.PutJSON(tx, cref, &fileContent{Parts: b.Parts}); err != nil {
			return nil, err
		}
		set.Content = &ns.Content{Size: b.Size, Ref: cref}
	}
	n, err := hns.Set(tx, blobFS(ref), set)
	if err != nil {
		return nil, blobErr(err)
	}
	b.ETag, b.Modified, b.Lease = n.ETag, n.Modified, n.Lease
	return b, nil
}

// updatePath is updatePathTx in a transaction of its own.
func (s *Service) updatePath(ctx context.Context, hns *ns.Namespace, ref BlobRef, a Access, op wormOp, c ns.Caller, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error) {
	var out *blobRec
	err := s.store.Update(ctx, func(tx kv.Tx) (err error) {
		out, err = s.updatePathTx(tx, hns, ref, a, op, c, now, fn)
		return err
	})
	return out, err
}

package blob

import (
	"context"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
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

// commitAppend is the dfs append of st at pos to the append blob file n
// (in Modify, whose fn it runs in): pos must be n's length (400
// InvalidQueryParameterValue), then the flat account's append rules
// (appendParts: sealed, block count) apply, the data joins the content
// record and n takes the size and block count. afterCommitAppend gives n
// its new ETag.
func (s *Service) commitAppend(tx kv.Tx, acct string, n *ns.Node, pos int64, st *extent.Staged, now time.Time) error {
	if pos != n.Size {
		return azerr.InvalidQuery("position", strconv.FormatInt(pos, 10))
	}
	b := &blobRec{Type: AppendBlob, Size: n.Size, Appends: n.Append.Blocks, Sealed: n.Append.Sealed}
	if n.Size > 0 {
		var fc fileContent
		if _, err := kv.GetJSON(tx, n.Ref, &fc); err != nil {
			return err
		}
		b.Parts = fc.Parts
	}
	if err := st.Write(tx); err != nil {
		return err
	}
	if _, err := appendParts(tx, now, b, -1, -1, st.Size, st.Parts); err != nil {
		return err
	}
	if err := kv.PutJSON(tx, n.Ref, &fileContent{Parts: b.Parts}); err != nil {
		return err
	}
	n.Size, n.Append = b.Size, &ns.AppendState{Blocks: b.Appends, Sealed: b.Sealed}
	return nil
}

// afterCommitAppend finishes a dfs append to an append blob file: the
// file's new ETag and time (ns.Set, under the lease id the append
// holds), then the lease action's end unless a flush follows (which
// releases) or the action is a release without one ("Only applicable if
// Flush is set to true").
func (s *Service) afterCommitAppend(tx kv.Tx, p PathRef, c ns.Caller, la PathLeaseAction, id string, flush bool, now time.Time) error {
	n, err := s.hns.Lookup(tx, p.fs(), p.Path, c)
	if err != nil {
		return err
	}
	if _, err := s.hns.Set(tx, p.fs(), ns.SetInput{Path: p.Path, LeaseID: id, Caller: c, Append: n.Append}); err != nil {
		return err
	}
	if flush || la.Action == PathLeaseRelease {
		return nil
	}
	_, err = s.hns.Modify(tx, p.fs(), p.Path, c, 0, func(n *ns.Node, _ time.Time) error {
		return la.after(n, id, now)
	})
	return err
}

// putAppendPath is Put Blob of an append blob on a hierarchical account:
// an empty append blob file, created with its missing parents (as Put
// Blob of a block blob), or replacing the file at the name (an archived
// one is not overwritten).
func (s *Service) putAppendPath(ctx context.Context, hns *ns.Namespace, in PutBlobInput) (PutBlobOutput, error) {
	ref := in.Ref
	cin := ns.CreateInput{Path: ref.Blob, Cond: in.Access.Cond, LeaseID: in.Access.LeaseID, MakeParents: true, Metadata: in.Metadata,
		Props: contentProps(in.HTTPHeaders), RefFor: func(id []byte) []byte { return contentRef(ref.Account, id) }, Caller: in.Caller,
		Replace: PathOnline, Append: &ns.AppendState{}, Tags: in.Tags, CPK: shaOf(in.CPK)}
	var node *ns.Node
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		co, err := s.createFile(tx, hns, ref, in.CreateOnly, in.Access.IfTags, cin)
		if err != nil {
			return err
		}
		node = co.Node
		return nil
	})
	if err != nil {
		return PutBlobOutput{}, err
	}
	return PutBlobOutput{ETag: node.ETag, LastModified: node.Modified, ServerEncrypted: true}, nil
}

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

// keepBlobType is the Replace check of a write that must find the file
// it overwrites of the same blob type (Put Block List, an asynchronous
// Copy Blob: 409 InvalidBlobType otherwise, as on a flat account),
// after PathOnline's.
func keepBlobType(appendBlob bool) func(old *ns.Node) error {
	return func(old *ns.Node) error {
		if err := PathOnline(old); err != nil {
			return err
		}
		if (old.Append != nil) != appendBlob {
			return azerr.New(azerr.InvalidBlobType)
		}
		return nil
	}
}

// putBlobFromURLPath is Put Blob From URL onto a path of a hierarchical
// account: the file, with its missing parents, created from the source's
// content (sharing its data items) as Put Blob creates it, in the
// transaction that reads the source, with the index tags of x-ms-tags
// or, with x-ms-copy-source-tag-option: COPY, the source's.
func (s *Service) putBlobFromURLPath(ctx context.Context, hns *ns.Namespace, in PutBlobFromURLInput) (FromURLOutput, error) {
	now := s.now(in.Call)
	ref := in.Ref
	var node *ns.Node
	d, err := s.fromSource(ctx, in.Call, &in.Source, func(tx kv.Tx, parts []extent.Part, n int64, src *blobRec) error {
		if n > maxPutBlob {
			return azerr.New(azerr.RequestBodyTooLarge)
		}
		props := in.HTTPHeaders
		if in.CopyProperties {
			props = src.Props
			if props.ContentType == "" {
				props.ContentType = "application/octet-stream"
			}
		}
		if props.ContentMD5 == nil {
			props.ContentMD5 = src.Props.ContentMD5 // the same bytes
		}
		tags := in.Tags
		if in.CopyTags {
			tags = src.Tags
		}
		co, err := s.createFile(tx, hns, ref, in.CreateOnly, in.Access.IfTags, ns.CreateInput{Path: ref.Blob, Cond: in.Access.Cond, LeaseID: in.Access.LeaseID, MakeParents: true,
			Metadata: in.Metadata, Props: contentProps(props), Size: n, RefFor: func(id []byte) []byte { return contentRef(ref.Account, id) },
			Caller: in.Caller, Tier: in.Tier, Replace: PathOnline, Tags: tags, CPK: shaOf(in.CPK)})
		if err != nil {
			return err
		}
		node = co.Node
		own := append([]extent.Part(nil), parts...)
		if err := extent.AdjustRefs(tx, now, nil, own); err != nil {
			return err
		}
		return kv.PutJSON(tx, node.Ref, &fileContent{Parts: own})
	})
	if err != nil {
		return FromURLOutput{}, err
	}
	out := FromURLOutput{ETag: node.ETag, LastModified: node.Modified, ContentMD5: node.Props.MD5, ContentCRC64: d.crc, ServerEncrypted: true}
	if d.md5 != nil {
		out.ContentMD5 = d.md5
	}
	return out, nil
}

// pathSource makes f read a path when its account is hierarchical: the
// file as the Blob API shows it (copySource), read by c.
func (s *Service) pathSource(f *FromURLSource, call Call) {
	if f.File != nil || f.file != nil || s.nsOf(f.Blob.Account) == nil {
		return
	}
	lookup := s.copySource(CopySource{Blob: f.Blob}, call.Caller, s.now(call))
	f.file = func(tx kv.Tx) (*blobRec, func(off, n int64) error, error) {
		b, err := lookup(tx)
		return b, nil, err
	}
}

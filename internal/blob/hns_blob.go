package blob

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// The Blob API's writes on a hierarchical account: they change the
// namespace (the node owns the properties, see hns.go) and keep the
// content here, so a file written through either API is one file.

// hnsUnsupported is the answer of a hierarchical account to a Blob
// operation the namespace does not carry here (the page blob writes
// Put Page and Put Page From URL, which Azure lists among the Blob APIs
// it does not serve there), instead of writing a
// blob record no path refers to: Azure answers 409
// FeatureNotYetSupportedForHierarchicalNamespaceAccounts ("This
// operation is not yet supported for hierarchical namespace accounts",
// as Azure sent it for appendBlock, Azure/azure-storage-node#632).
func hnsUnsupported() error {
	return azerr.New(azerr.FeatureNotYetSupportedForHierarchicalNamespaceAccounts)
}

// createFile is ns.Create of in for a Blob API write that makes the
// file ref (Put Blob, Put Block List, Copy Blob, Put Blob From URL):
// with createOnly a name that exists is 403
// AuthorizationPermissionMismatch (a caller who may create blobs but
// not write them); after the namespace's own conditions and lease, the
// x-ms-if-tags condition on the file it replaces (checkNodeTags), and
// the replaced file's snapshots carried over to the new one
// (KeepSnapshots).
func (s *Service) createFile(tx kv.Tx, hns *ns.Namespace, ref BlobRef, createOnly bool, ifTags TagCondition, in ns.CreateInput) (*ns.CreateOutput, error) {
	if createOnly {
		if _, err := hns.Lookup(tx, blobFS(ref), ref.Blob, in.Caller); err == nil {
			return nil, azerr.New(azerr.AuthorizationPermissionMismatch)
		}
	}
	co, err := hns.Create(tx, blobFS(ref), in)
	if err != nil {
		return nil, blobErr(err)
	}
	// Container-level WORM: a file replaced is overwritten (hns_worm.go).
	if err := pathWORMRefuse(tx, blobFS(ref), co.Replaced, wormWrite, s.clock.Now()); err != nil {
		return nil, err
	}
	if err := checkNodeTags(ifTags, co.Replaced, ref.Container); err != nil {
		return nil, err
	}
	return co, s.KeepSnapshots(tx, blobFS(ref), ref.Blob, in.Caller, co)
}

func contentProps(h HTTPHeaders) ns.ContentProps {
	return ns.ContentProps{Type: h.ContentType, Encoding: h.ContentEncoding, Language: h.ContentLanguage,
		Disposition: h.ContentDisposition, CacheCtl: h.CacheControl, MD5: h.ContentMD5}
}

// putPath is Put Blob on a hierarchical account: a block blob named
// a/b/c.txt is the file c.txt of directory a/b, created with its missing
// parents (ns.Create with MakeParents) in the transaction that stores
// its content, with the index tags of x-ms-tags (hns_tags.go); an
// append blob is an empty append blob file (putAppendPath). A page blob
// is 400 BlobTypeNotSupported ("Page blob is not supported for this
// account type."). An archived file is not overwritten (PathOnline).
func (s *Service) putPath(ctx context.Context, hns *ns.Namespace, in PutBlobInput) (out PutBlobOutput, err error) {
	switch {
	case in.Type == PageBlob:
		return out, azerr.New(azerr.BlobTypeNotSupported)
	case in.Type != BlockBlob && in.Type != AppendBlob:
		return out, azerr.New(azerr.InvalidBlobType)
	case in.Ref.Snapshot != "":
		return out, azerr.New(azerr.InvalidQueryParameterValue)
	case in.Type == AppendBlob:
		return s.putAppendPath(ctx, hns, in)
	}
	now := s.now(in.Call)
	body, err := extent.LimitBody(content(in.Body), in.Length, maxPutBlob)
	if err != nil {
		return out, err
	}
	props := contentProps(in.HTTPHeaders)
	ref := in.Ref
	cin := ns.CreateInput{Path: ref.Blob, Cond: in.Access.Cond, LeaseID: in.Access.LeaseID, MakeParents: true, Metadata: in.Metadata, Props: props,
		Size: max(in.Length, 0), RefFor: func(id []byte) []byte { return contentRef(ref.Account, id) }, Caller: in.Caller, Tier: in.Tier, Replace: PathOnline, Tags: in.Tags, CPK: shaOf(in.CPK)}
	if in.CheckFirst && in.Length != 0 {
		// The file's creation, its parents', conditions, lease and
		// access, run and rolled back before the body is read.
		if err := s.checkCreateFirst(ctx, func(tx kv.Tx) error {
			_, err := s.createFile(tx, hns, ref, in.CreateOnly, in.Access.IfTags, cin)
			return err
		}); err != nil {
			return out, err
		}
	}
	// The content is staged under the request's customer-provided key,
	// if any, and the file takes the key (a write that replaces a file
	// takes the key of its request, as on a flat account: cpk.go).
	st, err := s.data.StageEmbeddedSealed(ctx, body, in.Length, cipherOf(in.CPK))
	if err != nil {
		return out, err
	}
	// Freed at once if the write is refused (extent.Staged.Finish).
	recorded := false
	defer func() { st.Finish(ctx, recorded) }()
	if err := st.CheckDigests(in.Checksums); err != nil {
		return out, err
	}
	cin.Props.MD5, cin.Size = st.MD5, st.Size
	if md, dir := folderMarker(in.Metadata); dir && st.Size == 0 {
		if len(in.Tags) > 0 {
			return out, blobErr(ns.ErrPathConflict) // a directory has no tags (hns_tags.go)
		}
		// An empty blob marked hdi_isfolder=true is a directory, the way
		// the Blob API shows directories and tools that speak only Blob
		// (azcopy, Hadoop's WASB driver, Storage Explorer) make them.
		cin = ns.CreateInput{Path: ref.Blob, Dir: true, Cond: in.Access.Cond, LeaseID: in.Access.LeaseID, MakeParents: true, Metadata: md, Props: contentProps(in.HTTPHeaders), Caller: in.Caller, CPK: shaOf(in.CPK)}
	}
	var node *ns.Node
	err = s.store.Update(ctx, extent.Recording(&recorded, func(tx kv.Tx) error {
		co, err := s.createFile(tx, hns, ref, in.CreateOnly, in.Access.IfTags, cin)
		if err != nil {
			return err
		}
		node = co.Node
		if node.Dir {
			return nil
		}
		if err := st.Write(tx); err != nil {
			return err
		}
		if err := extent.AdjustRefs(tx, now, nil, st.Parts); err != nil {
			return err
		}
		if err := kv.PutJSON(tx, node.Ref, &fileContent{Parts: st.Parts}); err != nil {
			return err
		}
		return s.dfsChanged(tx, in.Call, blobFS(ref), ref.Blob, node, changelog.BlobCreated, apiPutBlob, nil)
	}))
	if err != nil {
		return out, err
	}
	return PutBlobOutput{ETag: node.ETag, LastModified: node.Modified, ContentMD5: st.MD5, ContentCRC64: st.CRC64, ServerEncrypted: true}, nil
}

// deletePath is Delete Blob on a hierarchical account: the file, or an
// empty directory (a non-empty one is 409 DirectoryNotEmpty), detached
// from the namespace; its content goes with the collector. A file with
// snapshots (hns_snapshot.go) needs x-ms-delete-snapshots, as a flat
// blob does (409 SnapshotsPresent after the conditions and the lease):
// with include the file and its snapshots go, with only the snapshots
// go and the file stays. ?snapshot= deletes one snapshot.
//
// With the account's retention policy on, a deleted file or directory is
// soft-deleted (ns.DeleteInput.Retain), except where the hierarchical
// namespace table of "Soft delete for blobs" (Delete Blob: "Soft delete
// won't be supported for blobs with snapshots and snapshots") rules it
// out: a file deleted with its snapshots (include), a snapshot and the
// snapshots deleted by only are gone for good, their data released in
// the delete's transaction, and the answer says so
// (x-ms-delete-type-permanent: true). A file without snapshots is
// soft-deleted, include or not.
func (s *Service) deletePath(ctx context.Context, hns *ns.Namespace, in DeleteBlobInput) (DeleteBlobOutput, error) {
	if in.Ref.Snapshot != "" {
		return DeleteBlobOutput{}, s.deletePathSnapshot(ctx, hns, in)
	}
	now := s.now(in.Call)
	var out DeleteBlobOutput
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		out = DeleteBlobOutput{}
		var deletionID string
		din := ns.DeleteInput{Path: in.Ref.Blob, Cond: in.Access.Cond, LeaseID: in.Access.LeaseID, Caller: in.Caller, DeletionID: &deletionID}
		var n *ns.Node
		withSnaps := false
		if in.DeleteSnapshots == DeleteSnapshotsNone {
			// The usual Delete Blob: the namespace finds the node once and
			// vets it after its conditions and lease (x-ms-if-tags, and a
			// file with snapshots refused).
			refuse := RefuseSnapshots(tx, in.Ref.Account, "blob")
			din.Vet = func(n *ns.Node) error {
				if err := checkNodeTags(in.Access.IfTags, n, in.Ref.Container); err != nil {
					return err
				}
				if err := pathWORMRefuse(tx, blobFS(in.Ref), n, wormDelete, now); err != nil { // hns_worm.go
					return err
				}
				return refuse(n)
			}
		} else {
			// only and include decide on the file's snapshots before
			// anything is deleted.
			var err error
			if n, err = s.pathLive(tx, hns, in.Ref, in.Caller, now); err != nil {
				return err
			}
			if err := checkNodeTags(in.Access.IfTags, n, in.Ref.Container); err != nil {
				return err
			}
			// Container-level WORM: the file (include) and its snapshots
			// are deleted only as Delete Blob may (hns_worm.go).
			if err := s.refusePathSnapshotsDelete(tx, in.Ref, n, in.DeleteSnapshots == DeleteSnapshotsInclude, now); err != nil {
				return err
			}
			if in.DeleteSnapshots == DeleteSnapshotsOnly {
				b, _ := pathRec(n)
				if err := in.Access.checkUpdate(b, in.Ref.Container, now); err != nil {
					return err
				}
				if c := in.Caller; c != nil && !c.Super && !n.Access().Allows(n.Owner, n.Group, *c, acl.Write) {
					return blobErr(ns.ErrPermissionMismatch)
				}
				if n.Dir || len(n.Ref) == 0 {
					return nil
				}
				return dropPathSnapshots(tx, in.Ref.Account, n.ID, now)
			}
			if withSnaps, err = hasPathSnapshots(tx, in.Ref.Account, n); err != nil {
				return err
			}
		}
		if !withSnaps {
			// A file deleted with its snapshots is gone for good.
			retain, err := DeleteRetention(tx, in.Ref.Account)
			if err != nil {
				return err
			}
			din.Retain = retain
		}
		gone, err := hns.Delete(tx, blobFS(in.Ref), din)
		if err != nil {
			return blobErr(err)
		}
		if gone != nil && !gone.Dir {
			if err := s.dfsChanged(tx, in.Call, blobFS(in.Ref), in.Ref.Blob, gone, changelog.BlobDeleted, apiDeleteBlob, nil); err != nil {
				return err
			}
		}
		out.SoftDeleted = deletionID != ""
		if withSnaps {
			return dropPathSnapshots(tx, in.Ref.Account, n.ID, now)
		}
		return nil
	})
	return out, err
}

// pathLive fails with BlobNotFound when ref is missing or a file past its
// expiry.
func (s *Service) pathLive(tx kv.Tx, hns *ns.Namespace, ref BlobRef, c ns.Caller, now time.Time) (*ns.Node, error) {
	n, err := hns.Lookup(tx, blobFS(ref), ref.Blob, c)
	if err != nil {
		return nil, blobErr(err)
	}
	if n.Expired(now) {
		return nil, azerr.New(azerr.BlobNotFound)
	}
	return n, nil
}

// setPath is Set Blob Metadata and Set Blob Properties' content headers
// on a hierarchical account: the node's metadata or headers, with a new
// ETag. An archived file is 409 BlobArchived, as a flat archived blob.
// Metadata is written under the item's customer-provided key, which the
// call must carry (cpk.go; Azure refuses a key on a directory created
// without one with BlobDoesNotUseCustomerSpecifiedEncryption:
// azdatalake's recorded TestDirSetMetadataWithCPKNegative); content
// headers take no key, as on a flat account.
func (s *Service) setPath(ctx context.Context, hns *ns.Namespace, ref BlobRef, a Access, call Call, md *map[string]string, hdrs *HTTPHeaders) (*ns.Node, error) {
	if ref.Snapshot != "" {
		return nil, azerr.New(azerr.BlobNotFound)
	}
	now := s.now(call)
	in := ns.SetInput{Path: ref.Blob, Cond: a.withoutNoneMatchAny().Cond, Metadata: md, LeaseID: a.LeaseID, Caller: call.Caller}
	if hdrs != nil {
		p := contentProps(*hdrs)
		in.Props = &p
	}
	var n *ns.Node
	err := s.store.Update(ctx, func(tx kv.Tx) (err error) {
		live, err := s.pathLive(tx, hns, ref, call.Caller, now)
		if err != nil {
			return err
		}
		if err := onlineTier(live.Tier); err != nil {
			return err
		}
		if err := checkNodeTags(a.IfTags, live, ref.Container); err != nil {
			return err
		}
		if err := pathWORMRefuse(tx, blobFS(ref), live, wormWrite, now); err != nil { // hns_worm.go
			return err
		}
		if md != nil {
			if err := cpkMismatch(live.CPK, shaOf(call.CPK)); err != nil {
				return err
			}
		}
		n, err = hns.Set(tx, blobFS(ref), in)
		return blobErr(err)
	})
	return n, err
}

// putBlockListPath is Put Block List on a hierarchical account. Put
// Block stages blocks by the blob's name as on a flat account (the
// staging belongs to no file until the commit); the commit creates or
// replaces the file, with its missing parent directories, from the
// uncommitted blocks named, in the transaction that drops the staging;
// an append blob file there is 409 InvalidBlobType, as on a flat account.
// The content record keeps no block list, so blocks are looked up among
// the uncommitted ones only: naming a committed block of the file is
// 400 InvalidBlockList. With customer-provided keys, as on a flat
// account, each uncommitted block must have been staged under the key of
// the commit (409 otherwise, cpk.go), a committed range is reused only
// under the file's own key, and the file takes the commit's key.
func (s *Service) putBlockListPath(ctx context.Context, hns *ns.Namespace, in PutBlockListInput) (PutBlockListOutput, error) {
	if in.Ref.Snapshot != "" {
		return PutBlockListOutput{}, azerr.New(azerr.InvalidQueryParameterValue)
	}
	now := s.now(in.Call)
	ref := in.Ref
	cin := ns.CreateInput{Path: ref.Blob, Cond: in.Access.Cond, LeaseID: in.Access.LeaseID, MakeParents: true, Metadata: in.Metadata,
		Props: contentProps(in.HTTPHeaders), RefFor: func(id []byte) []byte { return contentRef(ref.Account, id) }, Caller: in.Caller, Tier: in.Tier, Replace: keepBlobType(false), Tags: in.Tags,
		CPK: shaOf(in.CPK)}
	sha := cin.CPK
	var node *ns.Node
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		var fc fileContent
		var size int64
		// The file's committed content, read once if a block names it.
		var current *fileContent
		var currentSize int64
		committed := func() (*fileContent, int64, error) {
			if current != nil {
				return current, currentSize, nil
			}
			current = &fileContent{}
			n, err := hns.Lookup(tx, blobFS(ref), ref.Blob, in.Caller)
			if err != nil || n.Dir || n.Expired(now) || n.CPK != sha {
				// Nothing committed to reuse (under this key).
				return current, 0, nil
			}
			if len(n.Ref) > 0 && n.Size > 0 {
				if _, err := kv.GetJSON(tx, n.Ref, current); err != nil {
					return nil, 0, err
				}
			}
			currentSize = n.Size
			return current, currentSize, nil
		}
		for _, b := range in.Blocks {
			var u uncommitted
			found := false
			if b.ID != "" && b.Kind != wire.Committed {
				var err error
				if found, err = kv.GetJSON(tx, BlockKey(ref.Account, ref.Container, ref.Blob, b.ID), &u); err != nil {
					return err
				}
			}
			if !found && b.Kind != wire.Uncommitted {
				// A committed block as Get Block List reports it: its
				// range of the file's content.
				cur, curSize, err := committed()
				if err != nil {
					return err
				}
				off, n, ok := pathBlockRange(b.ID, curSize)
				if !ok {
					return azerr.New(azerr.InvalidBlockList)
				}
				for _, p := range extent.Within(cur.Parts, off, n) {
					p.Off = size + (p.Off - off)
					fc.Parts = append(fc.Parts, p)
				}
				size += n
				continue
			}
			if !found {
				return azerr.New(azerr.InvalidBlockList)
			}
			if u.CPK != sha {
				// A block is committed with the key it was staged with.
				return cpkMismatch(u.CPK, sha)
			}
			for _, p := range u.Parts {
				p.Off = size + (p.Off - u.Parts[0].Off)
				fc.Parts = append(fc.Parts, p)
			}
			size += u.Size
		}
		c := cin
		c.Size = size
		co, err := s.createFile(tx, hns, ref, in.CreateOnly, in.Access.IfTags, c)
		if err != nil {
			return err
		}
		node = co.Node
		// The content takes its references before the staging releases
		// its own.
		if err := extent.AdjustRefs(tx, now, nil, fc.Parts); err != nil {
			return err
		}
		if err := s.dropUncommitted(tx, ref, now); err != nil {
			return err
		}
		if err := kv.PutJSON(tx, node.Ref, &fc); err != nil {
			return err
		}
		return s.dfsChanged(tx, in.Call, blobFS(ref), ref.Blob, node, changelog.BlobCreated, apiPutBlockList, nil)
	})
	if err != nil {
		return PutBlockListOutput{}, err
	}
	return PutBlockListOutput{ETag: node.ETag, LastModified: node.Modified, ServerEncrypted: true}, nil
}

// The committed content of a file, whatever wrote it (flushes, Put Blob,
// Put Block List, copies), is not kept as blocks: Get Block List reports
// it as consecutive blocks of up to pathBlockMax bytes (one block for any
// file up to 4000 MiB, the largest block), named pathBlockID(i), and Put
// Block List takes those names (Committed or Latest) for those ranges of
// the file's current content, so a client that appends a block to the
// committed list (Get Block List, Put Block, Put Block List) works on a
// path as on a flat account.
const pathBlockMax = maxPutBlock

// pathBlockID is the name of committed block i of a path: base64 of a
// fixed-width label, the same length for every i.
func pathBlockID(i int64) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "dfs-committed-%010d", i))
}

// pathBlocks is the committed block list of a file of size bytes.
func pathBlocks(size int64) []wire.BlockInfo {
	var out []wire.BlockInfo
	for i, off := int64(0), int64(0); off < size; i, off = i+1, off+pathBlockMax {
		out = append(out, wire.BlockInfo{Name: pathBlockID(i), Size: min(pathBlockMax, size-off)})
	}
	return out
}

// pathBlockRange is the range of committed block id of a file of size
// bytes; false when id names none of its blocks.
func pathBlockRange(id string, size int64) (off, n int64, ok bool) {
	raw, err := base64.StdEncoding.DecodeString(id)
	if err != nil {
		return 0, 0, false
	}
	digits, ok := strings.CutPrefix(string(raw), "dfs-committed-")
	i, err := strconv.ParseInt(digits, 10, 64)
	if !ok || err != nil || pathBlockID(i) != id {
		return 0, 0, false
	}
	off = i * pathBlockMax
	if i < 0 || off >= size {
		return 0, 0, false
	}
	return off, min(pathBlockMax, size-off), true
}

// listDeletedPaths is List Blobs with showonly=deleted on a hierarchical
// account, what azdatalake's filesystem NewListDeletedPathsPager sends:
// the soft-deleted paths still retained (ns.ListDeleted), each with its
// deletion id, deletion time and remaining retention days, in path
// order; a deleted directory is one entry, whatever it held. The marker
// is the namespace's. A bearer caller needs read and execute on the
// filesystem's root, as for listing it.
func (s *Service) listDeletedPaths(ctx context.Context, hns *ns.Namespace, in ListBlobsInput) (ListBlobsOutput, error) {
	now := s.now(in.Call)
	ref := in.Ref
	var out ListBlobsOutput
	err := s.store.View(ctx, func(tx kv.Tx) error {
		out = ListBlobsOutput{}
		if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
			return err
		}
		fs := ns.FS{Account: ref.Account, Filesystem: ref.Container}
		if err := s.mayListDeleted(tx, hns, fs, in.Caller); err != nil {
			return err
		}
		paths, next, err := hns.ListDeleted(tx, fs, ns.ListDeletedInput{Prefix: in.Prefix, Marker: in.Marker, Max: in.MaxResults})
		if errors.Is(err, ns.ErrInvalidContinuation) {
			return azerr.Newf(azerr.InvalidQueryParameterValue, "The marker is not valid.").With("QueryParameterName", "marker").With("QueryParameterValue", in.Marker)
		}
		if err != nil {
			return blobErr(err)
		}
		for _, d := range paths {
			b, pp := pathRec(d.Node)
			it := ListedBlob{Name: d.Path, Properties: b.properties(BlobRef{Account: ref.Account, Container: ref.Container, Blob: d.Path}, now),
				Deleted: true, DeletedTime: d.At, RemainingRetentionDays: d.RemainingDays(now), DeletionID: d.DeletionID}
			it.Properties.Path = pp
			out.Items = append(out.Items, it)
		}
		out.NextMarker = next
		return nil
	})
	return out, err
}

// copySource returns the lookup of a copy's source inside the copy's
// transaction: a file of the File service, a path of a hierarchical
// account (a file as loadPath reads it; a directory, or nothing, is no
// source: nil), or a blob record.
func (s *Service) copySource(src CopySource, c ns.Caller, now time.Time) func(tx kv.Tx) (*blobRec, error) {
	ref := src.Blob
	var fileSrc func(tx kv.Tx) (*blobRec, error)
	if src.File != nil {
		fileSrc = func(tx kv.Tx) (*blobRec, error) {
			o, err := src.File(tx, now)
			if err != nil {
				return nil, err
			}
			b, readable := sourceRecord(o)
			return b, readable(0, b.Size)
		}
	}
	l := s.layoutOf(ref.Account)
	return func(tx kv.Tx) (*blobRec, error) {
		if fileSrc != nil {
			return fileSrc(tx)
		}
		return l.source(tx, ref, now, c)
	}
}

// folderMarker reports whether md marks a directory (hdi_isfolder=true,
// the name matched without regard to case as metadata names are) and
// returns md without the marker, which the Blob view adds back to every
// directory.
func folderMarker(md map[string]string) (map[string]string, bool) {
	for k, v := range md {
		if strings.EqualFold(k, "hdi_isfolder") && strings.EqualFold(v, "true") {
			out := make(map[string]string, len(md)-1)
			for k2, v2 := range md {
				if k2 != k {
					out[k2] = v2
				}
			}
			return out, true
		}
	}
	return md, false
}

// setPathTier is Set Blob Tier of a file of a hierarchical account
// (access tiers are supported there: "Blob Storage feature support in
// Azure Storage accounts", access tiers): Hot, Cool or Cold, kept in the
// node without a new ETag or last-modified time, as Set Blob Tier leaves
// a flat blob's; the lease applies as there. Archive is supported as well
// ("Blob Storage feature support in Azure Storage accounts": access tiers
// incl. Archive on Data Lake Storage): the file goes offline under the
// flat account's rules (onlineTier: Get Blob, which is also the dfs
// Path - Read, Set Blob Properties/Metadata and append/flush are 409
// BlobArchived) and leaving Archive is a rehydration (202 Accepted),
// complete at once as on a flat account. A directory is 409 PathConflict;
// a snapshot takes its own tier (setPathSnapshotTier).
func (s *Service) setPathTier(ctx context.Context, hns *ns.Namespace, in SetBlobTierInput) (SetBlobTierOutput, error) {
	if in.Ref.Snapshot != "" {
		return s.setPathSnapshotTier(ctx, hns, in)
	}
	tier, err := CheckTier(in.Tier, BlockBlob)
	if err != nil {
		return SetBlobTierOutput{}, err
	}
	now := s.now(in.Call)
	var out SetBlobTierOutput
	err = s.store.Update(ctx, func(tx kv.Tx) error {
		out = SetBlobTierOutput{}
		if _, err := loadContainer(tx, in.Ref.Account, in.Ref.Container); err != nil {
			return err
		}
		_, err := hns.Modify(tx, blobFS(in.Ref), in.Ref.Blob, in.Caller, acl.Write, func(n *ns.Node, _ time.Time) error {
			switch {
			case n.Expired(now):
				return ns.ErrPathNotFound
			case n.Dir:
				return ns.ErrPathConflict
			}
			if err := lease.CheckWrite(n.Lease, in.LeaseID, lease.Blob, now); err != nil {
				return err
			}
			if n.Append != nil {
				// Tiers are for block blobs, as on a flat account.
				return azerr.New(azerr.AccessTierNotSupportedForBlobType)
			}
			out.Rehydrating = rehydrates(n.Tier, tier)
			changed := now
			n.Tier, n.TierChanged = tier, &changed
			return nil
		})
		if errors.Is(err, ns.ErrPathNotFound) || errors.Is(err, ns.ErrInvalidPath) {
			return azerr.New(azerr.BlobNotFound)
		}
		return blobErr(err)
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

// mayListDeleted is whether c may list the soft-deleted paths of fs
// (showonly=deleted, include=deleted): read and execute on its root, as
// to list it; a deleted path's own directory may be gone.
func (s *Service) mayListDeleted(tx kv.Tx, hns *ns.Namespace, fs ns.FS, c ns.Caller) error {
	if c == nil || c.Super {
		return nil
	}
	root, err := hns.Lookup(tx, fs, "", c)
	if err != nil {
		return blobErr(err)
	}
	if !root.Access().Allows(root.Owner, root.Group, *c, acl.Read|acl.Execute) {
		return blobErr(ns.ErrPermissionMismatch)
	}
	return nil
}

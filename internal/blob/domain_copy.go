package blob

import (
	"context"
	"errors"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/copysrc"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// SourceReader is the blob or snapshot at ref as the source of a
// copy another service makes (Copy File or Put Range From URL), read
// inside that copy's transaction: missing, 404 CannotVerifyCopySource
// (BlobNotFound); in the archive tier, 409 BlobArchived, as a read of it;
// written with a customer-provided key, 409 CannotVerifyCopySource
// (BlobUsesCustomerSpecifiedEncryption): its data items are encrypted and
// a copy to a file sends no key, as Copy Blob.
func (s *Service) SourceReader(ref BlobRef) copysrc.Reader {
	return func(tx kv.Tx, _ time.Time) (*copysrc.Object, error) {
		b, err := findRef(tx, ref)
		if err != nil {
			return nil, err
		}
		if b == nil {
			return nil, copysrc.FailureOf(azerr.BlobNotFound)
		}
		if err := notArchived(b); err != nil {
			return nil, err
		}
		if b.CPK != "" {
			return nil, copysrc.FailureOf(azerr.BlobUsesCustomerSpecifiedEncryption)
		}
		return &copysrc.Object{
			Size: b.Size, Parts: b.Parts, ETag: b.ETag, Created: b.Created, Modified: b.Modified, Meta: b.Meta,
			Props: copysrc.Props(b.Props),
		}, nil
	}
}

// CopyBlobInput is Copy Blob (or, with Sync, Copy Blob From URL) onto
// the base blob Ref.
type CopyBlobInput struct {
	Call
	Ref    BlobRef
	Access Access
	// CreateOnly refuses to replace an existing blob (see PutBlobInput).
	CreateOnly bool
	Source     CopySource
	Sync       bool
	// Metadata replaces the source's (empty: the source's is copied).
	Metadata map[string]string
	// Tags are the copy's tags, or, with CopyTags, the source's.
	Tags     blobtags.Tags
	CopyTags bool
	// Tier is the copy's tier as given ("" for the default), checked
	// against the source's blob type.
	Tier string
	// SourceContentMD5, with Sync, is the MD5 the source's content must
	// have.
	SourceContentMD5 []byte
	// Seal is x-ms-seal-blob: whether a copy of an append blob is sealed
	// (nil: as the source is).
	Seal *bool
	// Immutability is the policy and legal hold of the copy (nil: none;
	// the source's are not copied; immutability.go).
	Immutability *Immutability
}

// CopyBlobOutput is the copy: it completes inside the call, so its
// status is always "success".
type CopyBlobOutput struct {
	// VersionID is the version the write made current ("" with
	// versioning off): x-ms-version-id.
	VersionID    string
	ETag         string
	LastModified time.Time
	CopyID       string
	CopyStatus   string
	// ContentMD5 is SourceContentMD5, once checked.
	ContentMD5 []byte
}

// CopyBlob is Copy Blob
// (https://learn.microsoft.com/en-us/rest/api/storageservices/copy-blob)
// and Copy Blob From URL
// (https://learn.microsoft.com/en-us/rest/api/storageservices/copy-blob-from-url)
// from a source served here. The copy completes inside one transaction
// (the destination shares the source's data items), so it reports
// x-ms-copy-status: success at once.
func (s *Service) CopyBlob(ctx context.Context, in CopyBlobInput) (CopyBlobOutput, error) {
	now := s.now(in.Call)
	lookup := s.copySource(in.Source, in.Caller, now)
	if hns := s.nsOf(in.Ref.Account); hns != nil {
		if in.Immutability != nil {
			return CopyBlobOutput{}, errNoImmutability() // a hierarchical account has no versions
		}
		return s.copyPath(ctx, hns, in, lookup, now)
	}
	ref, acc, createOnly, sync := in.Ref, in.Access, in.CreateOnly, in.Sync
	srcURL := in.Source.URL
	meta, tags, copyTags, tierV, srcMD5 := in.Metadata, in.Tags, in.CopyTags, in.Tier, in.SourceContentMD5
	if !sync {
		srcMD5 = nil
	}
	// The source's bytes are hashed in a snapshot read first, so the
	// write transaction does not hold its lock while up to 256 MiB are
	// read; it hashes again only if the source changed in between.
	var hashed []extent.Part
	if srcMD5 != nil {
		err := s.store.View(ctx, func(tx kv.Tx) error {
			src, err := lookup(tx)
			if err != nil || src == nil || src.Tier == tierArchive || src.Size > maxCopyFromURL {
				return nil // the write transaction reports it
			}
			if _, err := s.hash(ctx, tx, Checksums{MD5: srcMD5}, src.Parts, src.Size, nil); err != nil {
				return err
			}
			hashed = src.Parts
			return nil
		})
		if err != nil {
			return CopyBlobOutput{}, err
		}
	}
	imm, hold, err := s.checkWriteImmutability(ref.Account, in.Immutability, now)
	if err != nil {
		return CopyBlobOutput{}, err
	}
	copyID := newUUID()
	var rec *blobRec
	err = s.store.Update(ctx, s.changing(in.Call, apiCopyBlob, ref, func(tx kv.Tx) error {
		src, err := copySourceOf(tx, ref, in.Source, lookup, now)
		if err != nil {
			return err
		}
		if err := copySourceKey(src); err != nil {
			return err
		}
		// A copy to an online tier is how an archived blob is read; the
		// copy completes at once (see tier.go).
		tier, err := CheckTier(tierV, src.Type)
		if err != nil {
			return err
		}
		if src.Tier == tierArchive && (sync || tier == "" || tier == tierArchive) {
			return azerr.New(azerr.BlobArchived)
		}
		if sync {
			if src.Type != BlockBlob {
				return azerr.New(azerr.InvalidSourceBlobType)
			}
			if src.Size > maxCopyFromURL {
				return azerr.Newf(azerr.CannotVerifyCopySource, "The source blob is larger than 256 MiB.").WithStatus(413) // Request Entity Too Large
			}
		}
		if srcMD5 != nil && (hashed == nil || !extent.SameParts(src.Parts, hashed)) {
			if _, err := s.hash(ctx, tx, Checksums{MD5: srcMD5}, src.Parts, src.Size, nil); err != nil {
				return err
			}
		}
		nb := *src
		nb.Lease = lease.Lease{}
		nb.Imm, nb.Hold = imm, hold
		nb.Tier, nb.TierChanged = tier, nil
		if !copyTags {
			nb.Tags = tags
		}
		// Both Copy Blob and Copy Blob From URL copy the source's metadata
		// unless the request gives x-ms-meta-* of its own.
		if len(meta) > 0 {
			nb.Meta = meta
		}
		nb.Sealed = copySealed(src, in.Seal)
		nb.Parts = append([]extent.Part(nil), src.Parts...)
		nb.Blocks = append([]block(nil), src.Blocks...)
		nb.Copy = &CopyInfo{ID: copyID, Source: srcURL, Status: "success", Progress: progress(src.Size), Completion: now}
		rec, err = s.replaceBlobIf(tx, ref, acc, createOnly, now, &nb, func(old *blobRec) error {
			if old != nil && old.Type != src.Type && !sync {
				return azerr.New(azerr.InvalidBlobType)
			}
			return nil
		})
		return err
	}))
	if err != nil {
		return CopyBlobOutput{}, err
	}
	return CopyBlobOutput{ETag: rec.ETag, LastModified: rec.Modified, CopyID: copyID, CopyStatus: "success", ContentMD5: srcMD5, VersionID: rec.VersionID}, nil
}

// copySourceOf is the source of a copy onto ref, read in the copy's
// transaction by lookup: the destination's container must exist, a
// missing source (or its container) is 404 CannotVerifyCopySource, and
// the source's conditions (x-ms-source-if-*) and lease
// (x-ms-source-lease-id, not for a snapshot) must hold.
func copySourceOf(tx kv.Tx, ref BlobRef, cs CopySource, lookup func(kv.Tx) (*blobRec, error), now time.Time) (*blobRec, error) {
	if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
		return nil, err
	}
	src, err := lookup(tx)
	if err != nil {
		return nil, err
	}
	if src == nil {
		if _, err := loadContainer(tx, cs.Blob.Account, cs.Blob.Container); err != nil {
			return nil, azerr.Newf(azerr.CannotVerifyCopySource, "The source container does not exist.")
		}
		return nil, azerr.Newf(azerr.CannotVerifyCopySource, "The specified blob does not exist.")
	}
	if err := cs.Cond.CheckSource(src.ETag, src.Modified); err != nil {
		return nil, err
	}
	if id := cs.LeaseID; id != "" && cs.Blob.Snapshot == "" {
		if err := lease.CheckRead(src.Lease, id, lease.Blob, now); err != nil {
			return nil, err
		}
	}
	return src, nil
}

// copySealed is whether the copy of src is sealed: a copy of an append
// blob is sealed as its source is, unless x-ms-seal-blob says otherwise
// (seal non-nil); other blobs have no seal. azure-sdk-for-python's
// recorded test_append_blob.py tests test_copy_sealed_blob_will_get_a_sealed_blob,
// test_copy_unsealed_blob_will_get_a_sealed_blob (x-ms-seal-blob: true)
// and test_copy_sealed_blob_with_seal_blob_will_get_a_sealed_blob
// (false: the copy takes appends).
func copySealed(src *blobRec, seal *bool) bool {
	if src.Type != AppendBlob {
		return false
	}
	if seal != nil {
		return *seal
	}
	return src.Sealed
}

// AbortCopyBlobInput is Abort Copy Blob of copy CopyID onto Ref. LeaseID
// is the lease the caller holds on the blob ("" for none).
type AbortCopyBlobInput struct {
	Call
	Ref     BlobRef
	LeaseID string
	CopyID  string
}

// AbortCopyBlob is Abort Copy Blob
// (https://learn.microsoft.com/en-us/rest/api/storageservices/abort-copy-blob):
// copies complete inside Copy Blob here, so there is never a pending copy
// to abort (409 NoPendingCopyOperation), after the usual existence and
// lease checks; on a hierarchical account those of the file's node
// (loadPath, write permission for a bearer caller).
func (s *Service) AbortCopyBlob(ctx context.Context, in AbortCopyBlobInput) error {
	now := s.now(in.Call)
	ref, leaseID, id := in.Ref, in.LeaseID, in.CopyID
	l := s.layoutOf(ref.Account)
	return s.store.View(ctx, func(tx kv.Tx) error {
		b, _, err := l.resolve(tx, ref, now, in.Caller, acl.Write, false)
		if err != nil {
			return err
		}
		e := b.Lease.Effective(now)
		if e.Duration == "infinite" || leaseID != "" {
			if err := lease.CheckWrite(b.Lease, leaseID, lease.Blob, now); err != nil {
				return err
			}
		}
		if b.Copy == nil || b.Copy.Status != "pending" {
			return azerr.New(azerr.NoPendingCopyOperation)
		}
		if b.Copy.ID != id {
			return azerr.New(azerr.CopyIDMismatch)
		}
		return errors.New("abort copy: pending copies do not exist on this server")
	})
}

// copyPath is Copy Blob (and Copy Blob From URL) onto a path of a
// hierarchical account: the destination file, with its missing parent
// directories, is created from the source's committed content (sharing
// its data items), headers and metadata (or the request's) in one
// transaction, and the copy completes inside the call as on a flat
// account. The copy's status properties (x-ms-copy-*) are kept in the
// node (ns.Node.Copy) until its content or properties are written again,
// as a flat blob keeps them ("Get Blob Properties": they do not appear
// once the blob is modified with Set Blob Properties, Put Blob or Put
// Block List). The file takes the index tags of x-ms-tags, or the
// source's with x-ms-copy-source-tag-option: COPY (Copy Blob From URL).
// An append blob source makes an append blob file (Copy Blob; Copy Blob
// From URL takes block blobs only, 409 InvalidSourceBlobType, as on a
// flat account), which an asynchronous copy writes only over a file of
// the same type (409 InvalidBlobType); a page blob source is 400
// BlobTypeNotSupported, as Put Blob of one. An archived source needs an
// online destination tier and an archived destination is not
// overwritten, both 409 BlobArchived as on a flat account.
func (s *Service) copyPath(ctx context.Context, hns *ns.Namespace, in CopyBlobInput, lookup func(kv.Tx) (*blobRec, error), now time.Time) (CopyBlobOutput, error) {
	ref := in.Ref
	var md5 []byte
	if in.Sync {
		md5 = in.SourceContentMD5
	}
	copyID := newUUID()
	var node *ns.Node
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		src, err := copySourceOf(tx, ref, in.Source, lookup, now)
		if err != nil {
			return err
		}
		if err := copySourceKey(src); err != nil {
			return err
		}
		tier, err := CheckTier(in.Tier, src.Type)
		if err != nil {
			return err
		}
		var app *ns.AppendState
		switch {
		case in.Sync && src.Type != BlockBlob:
			return azerr.New(azerr.InvalidSourceBlobType)
		case src.Type == PageBlob:
			return azerr.New(azerr.BlobTypeNotSupported)
		case src.Type == AppendBlob:
			app = &ns.AppendState{Blocks: src.Appends, Sealed: copySealed(src, in.Seal)}
		}
		replace := PathOnline
		if !in.Sync {
			replace = keepBlobType(app != nil)
		}
		switch {
		case src.Tier == tierArchive:
			return azerr.New(azerr.BlobArchived)
		case in.Sync && src.Size > maxCopyFromURL:
			return azerr.Newf(azerr.CannotVerifyCopySource, "The source blob is larger than 256 MiB.").WithStatus(413) // Request Entity Too Large
		}
		if md5 != nil {
			if _, err := s.hash(ctx, tx, Checksums{MD5: md5}, src.Parts, src.Size, nil); err != nil {
				return err
			}
		}
		meta := src.Meta
		if len(in.Metadata) > 0 {
			meta = in.Metadata
		}
		tags := in.Tags
		if in.CopyTags {
			tags = src.Tags
		}
		co, err := s.createFile(tx, hns, ref, in.CreateOnly, in.Access.IfTags, ns.CreateInput{Path: ref.Blob, Cond: in.Access.Cond, LeaseID: in.Access.LeaseID, MakeParents: true,
			Metadata: meta, Props: contentProps(src.Props), Size: src.Size, RefFor: func(id []byte) []byte { return contentRef(ref.Account, id) }, Caller: in.Caller,
			Tier: tier, Replace: replace, Append: app, Tags: tags, Copy: &ns.CopyState{ID: copyID, Source: in.Source.URL, Status: "success", Progress: progress(src.Size), Completion: now}})
		if err != nil {
			return err
		}
		node = co.Node
		parts := append([]extent.Part(nil), src.Parts...)
		if err := extent.AdjustRefs(tx, now, nil, parts); err != nil {
			return err
		}
		if err := kv.PutJSON(tx, node.Ref, &fileContent{Parts: parts}); err != nil {
			return err
		}
		return s.dfsChanged(tx, in.Call, blobFS(ref), ref.Blob, node, changelog.BlobCreated, apiCopyBlob, nil)
	})
	if err != nil {
		return CopyBlobOutput{}, err
	}
	return CopyBlobOutput{ETag: node.ETag, LastModified: node.Modified, CopyID: copyID, CopyStatus: "success", ContentMD5: md5}, nil
}

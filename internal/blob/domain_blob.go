package blob

import (
	"context"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// PutBlob is Put Blob (https://learn.microsoft.com/en-us/rest/api/storageservices/put-blob).
// A block blob's body is stored first (see extent.Stage), then one
// transaction applies the write rules and replaces the blob; the stored
// body is freed at once if the write is refused.
func (s *Service) PutBlob(ctx context.Context, in PutBlobInput) (PutBlobOutput, error) {
	if in.Immutability != nil && s.nsOf(in.Ref.Account) != nil {
		return PutBlobOutput{}, errNoImmutability() // a hierarchical account has no versions
	}
	return s.layoutOf(in.Ref.Account).create(ctx, in)
}

// GetBlobPropertiesInput is Get Blob Properties (also Get Blob Metadata).
type GetBlobPropertiesInput struct {
	Call
	Ref    BlobRef
	Access Access
	// UPN is x-ms-upn: true on a hierarchical account, the path's
	// owner, group and ACL with user principal names (namePath).
	UPN bool
	// NoKey skips the customer-provided key check: the caller uses only
	// what takes no key (the dfs endpoint's Path - Get Properties
	// action=getStatus, "only the system defined properties", Path -
	// List and the lookup of Path - Delete on a flat account).
	NoKey bool
}

// GetBlobProperties is Get Blob Properties
// (https://learn.microsoft.com/en-us/rest/api/storageservices/get-blob-properties):
// the blob's properties once the read conditions hold.
func (s *Service) GetBlobProperties(ctx context.Context, in GetBlobPropertiesInput) (BlobProperties, error) {
	now := s.now(in.Call)
	ref := in.Ref // the closure copies ref, not all of in
	l, caller, upn := s.layoutOf(ref.Account), in.Caller, in.UPN
	var b *blobRec
	var path *PathProperties
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		b, path, err = l.resolve(tx, ref, now, caller, 0, upn)
		return err
	})
	if err != nil {
		return BlobProperties{}, err
	}
	if err := in.Access.checkRead(b, in.Ref, now); err != nil {
		return BlobProperties{}, err
	}
	if !in.NoKey {
		if err := checkCPK(b, in.CPK); err != nil {
			return BlobProperties{}, err
		}
	}
	p := b.properties(in.Ref, now)
	p.Path = path
	return p, nil
}

// GetBlobInput is Get Blob: the blob's content, or Range of it.
type GetBlobInput struct {
	Call
	Ref    BlobRef
	Access Access
	Range  *wire.Range // nil: the whole blob
	// RangeMD5 asks for the MD5 of the range (at most 4 MiB).
	RangeMD5 bool
	// UPN is x-ms-upn: true on a hierarchical account (see
	// GetBlobPropertiesInput).
	UPN bool
}

// GetBlobOutput is the blob read and its content.
type GetBlobOutput struct {
	Properties BlobProperties
	// Offset and Count are the bytes of the blob Body holds.
	Offset, Count int64
	// Body streams the content; the caller must send or close it. The
	// data it reads stays pinned until then, so a download outlives an
	// overwrite or delete of the blob (extent.Store.OpenBody).
	Body *extent.Body
}

// GetBlob is Get Blob
// (https://learn.microsoft.com/en-us/rest/api/storageservices/get-blob):
// one read transaction checks the read rules and resolves the parts of
// the range; the content is then streamed from the parts it resolved.
func (s *Service) GetBlob(ctx context.Context, in GetBlobInput) (out GetBlobOutput, err error) {
	// What the read transaction takes and finds, in one allocation: the
	// closure refers to it alone (this is the hot path of small
	// downloads; each variable a closure assigns would be an allocation
	// of its own).
	t := &struct {
		in     GetBlobInput
		now    time.Time
		b      *blobRec
		rp     *extent.ReadPins
		off, n int64
		// l is the account's layout, path what it resolved on a
		// hierarchical one.
		l    Layout
		path *PathProperties
	}{in: in, now: s.now(in.Call), l: s.layoutOf(in.Ref.Account), rp: s.data.NewReadPins()}
	err = s.store.View(ctx, func(tx kv.Tx) (err error) {
		if t.b, t.path, err = t.l.resolve(tx, t.in.Ref, t.now, t.in.Caller, acl.Read, t.in.UPN); err != nil {
			return err
		}
		b := t.b
		if err := t.in.Access.checkRead(b, t.in.Ref, t.now); err != nil {
			return err
		}
		if err := checkCPK(b, t.in.CPK); err != nil {
			return err
		}
		if err := notArchived(b); err != nil {
			return err
		}
		t.off, t.n = 0, b.Size
		if t.in.Range != nil {
			if t.off, t.n, err = t.in.Range.Resolve(b.Size); err != nil {
				return err
			}
		}
		if t.in.RangeMD5 && t.n > 4<<20 {
			return azerr.Newf(azerr.OutOfRangeInput, "The range must be 4 MiB or smaller when x-ms-range-get-content-md5 is true.")
		}
		// The range's data items are pinned inside this transaction
		// (extent.ReadPins), so the collector cannot free them under the
		// download however soon after an overwrite it runs.
		return t.rp.Load(tx, b.Parts, t.off, t.n)
	})
	if err != nil {
		t.rp.Release()
		return out, err
	}
	body, err := s.data.OpenBodyFrom(ctx, t.rp, in.RangeMD5, cipherOf(in.CPK))
	if err != nil {
		return out, err
	}
	out = GetBlobOutput{Properties: t.b.properties(in.Ref, t.now), Offset: t.off, Count: t.n, Body: body}
	out.Properties.Path = t.path
	return out, nil
}

// DeleteBlob is Delete Blob
// (https://learn.microsoft.com/en-us/rest/api/storageservices/delete-blob).
// With the account's DeleteRetentionPolicy enabled it soft-deletes;
// otherwise it deletes for good. A soft-deleted blob or snapshot is not
// found (404) except by Permanent, which removes a soft-deleted snapshot.
func (s *Service) DeleteBlob(ctx context.Context, in DeleteBlobInput) (DeleteBlobOutput, error) {
	return s.layoutOf(in.Ref.Account).delete(ctx, in)
}

// SequenceNumberAction is how Set Blob Properties changes a page blob's
// sequence number.
type SequenceNumberAction string

// SequenceNumberAction values (x-ms-sequence-number-action on REST).
const (
	SequenceNumberKeep      SequenceNumberAction = ""          // unchanged
	SequenceNumberMax       SequenceNumberAction = "max"       // the larger of the two
	SequenceNumberUpdate    SequenceNumberAction = "update"    // the given one
	SequenceNumberIncrement SequenceNumberAction = "increment" // one more
)

// SetBlobPropertiesInput is Set Blob Properties.
type SetBlobPropertiesInput struct {
	Call
	Ref    BlobRef
	Access Access
	// HTTPHeaders replace the blob's content properties, all of them
	// (nil: unchanged).
	HTTPHeaders *HTTPHeaders
	// Size resizes a page blob (nil: unchanged).
	Size                 *int64
	SequenceNumberAction SequenceNumberAction
	SequenceNumber       int64 // for SequenceNumberMax and SequenceNumberUpdate
}

// SetBlobPropertiesOutput is the blob as Set Blob Properties left it.
type SetBlobPropertiesOutput struct {
	ETag           string
	LastModified   time.Time
	Type           string
	SequenceNumber int64 // a page blob's
}

// SetBlobProperties is Set Blob Properties
// (https://learn.microsoft.com/en-us/rest/api/storageservices/set-blob-properties).
// If-None-Match: * does not fail it on an existing blob.
func (s *Service) SetBlobProperties(ctx context.Context, in SetBlobPropertiesInput) (SetBlobPropertiesOutput, error) {
	if hns := s.nsOf(in.Ref.Account); hns != nil {
		if in.Size != nil || in.SequenceNumberAction != SequenceNumberKeep {
			return SetBlobPropertiesOutput{}, azerr.New(azerr.InvalidBlobType)
		}
		n, err := s.setPath(ctx, hns, in.Ref, in.Access, in.Call, nil, in.HTTPHeaders)
		if err != nil {
			return SetBlobPropertiesOutput{}, err
		}
		return SetBlobPropertiesOutput{ETag: n.ETag, LastModified: n.Modified, Type: BlockBlob}, nil
	}
	now := s.now(in.Call)
	seqAction, seqNum, hdrs := in.SequenceNumberAction, in.SequenceNumber, in.HTTPHeaders
	newSize := int64(-1)
	if in.Size != nil {
		newSize = *in.Size
	}
	b, err := s.updateBlobAs(ctx, in.Call, apiSetBlobProperties, in.Ref, in.Access.withoutNoneMatchAny(), wormWrite, now, func(tx kv.Tx, b *blobRec) error {
		if err := notArchived(b); err != nil {
			return err
		}
		if (newSize >= 0 || seqAction != SequenceNumberKeep) && b.Type != PageBlob {
			return azerr.New(azerr.InvalidBlobType)
		}
		if newSize >= 0 {
			if newSize%512 != 0 {
				return azerr.InvalidHeader("x-ms-blob-content-length", strconv.FormatInt(newSize, 10))
			}
			old := b.Parts
			b.Parts = extent.Trim(b.Parts, newSize)
			b.Size = newSize
			if err := extent.AdjustRefs(tx, now, old, b.Parts); err != nil {
				return err
			}
		}
		switch seqAction {
		case SequenceNumberMax:
			if seqNum > b.SeqNum {
				b.SeqNum = seqNum
			}
		case SequenceNumberUpdate:
			b.SeqNum = seqNum
		case SequenceNumberIncrement:
			if b.SeqNum == 1<<63-1 {
				return azerr.New(azerr.SequenceNumberIncrementTooLarge)
			}
			b.SeqNum++
		}
		if hdrs != nil {
			b.Props = *hdrs
		}
		return nil
	})
	if err != nil {
		return SetBlobPropertiesOutput{}, err
	}
	return SetBlobPropertiesOutput{ETag: b.ETag, LastModified: b.Modified, Type: b.Type, SequenceNumber: b.SeqNum}, nil
}

// SetBlobMetadataInput is Set Blob Metadata: Metadata replaces the
// blob's (nil or empty: none).
type SetBlobMetadataInput struct {
	Call
	Ref      BlobRef
	Access   Access
	Metadata map[string]string
}

// SetBlobMetadataOutput is the blob as Set Blob Metadata left it.
type SetBlobMetadataOutput struct {
	// VersionID is the version the write made current ("" with
	// versioning off): x-ms-version-id.
	VersionID       string
	ETag            string
	LastModified    time.Time
	ServerEncrypted bool
}

// SetBlobMetadata is Set Blob Metadata
// (https://learn.microsoft.com/en-us/rest/api/storageservices/set-blob-metadata).
// If-None-Match: * does not fail it on an existing blob.
func (s *Service) SetBlobMetadata(ctx context.Context, in SetBlobMetadataInput) (SetBlobMetadataOutput, error) {
	if hns := s.nsOf(in.Ref.Account); hns != nil {
		md := in.Metadata
		n, err := s.setPath(ctx, hns, in.Ref, in.Access, in.Call, &md, nil)
		if err != nil {
			return SetBlobMetadataOutput{}, err
		}
		return SetBlobMetadataOutput{ETag: n.ETag, LastModified: n.Modified, ServerEncrypted: true}, nil
	}
	meta, key, ref, now := in.Metadata, in.CPK, in.Ref, s.now(in.Call)
	b, err := s.updateBlobAs(ctx, in.Call, apiSetBlobMetadata, in.Ref, in.Access.withoutNoneMatchAny(), wormWrite, now, func(tx kv.Tx, b *blobRec) error {
		if err := checkCPK(b, key); err != nil {
			return err
		}
		if err := notArchived(b); err != nil {
			return err
		}
		if err := b.writeProtected(); err != nil {
			return err
		}
		if err := s.versionOnUpdate(tx, ref, now, b); err != nil {
			return err
		}
		b.Meta = meta
		return nil
	})
	if err != nil {
		return SetBlobMetadataOutput{}, err
	}
	return SetBlobMetadataOutput{ETag: b.ETag, LastModified: b.Modified, ServerEncrypted: true, VersionID: b.VersionID}, nil
}

// LeaseBlob is Lease Blob
// (https://learn.microsoft.com/en-us/rest/api/storageservices/lease-blob).
func (s *Service) LeaseBlob(ctx context.Context, in LeaseBlobInput) (LeaseBlobOutput, error) {
	if s.nsOf(in.Ref.Account) != nil {
		return s.leasePathBlob(ctx, in)
	}
	now := s.now(in.Call)
	ref, acc, lr := in.Ref, in.Access, in.Request
	var out LeaseBlobOutput
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		b, err := loadBlob(tx, ref)
		if err != nil {
			return err
		}
		if err := acc.checkConds(b, ref.Container); err != nil {
			return err
		}
		res, err := lease.Apply(b.Lease, lr, lease.Blob, now)
		if err != nil {
			return err
		}
		// A lease action is not a write: ETag and Last-Modified stay.
		b.Lease = res.Lease
		out = LeaseBlobOutput{ETag: b.ETag, LastModified: b.Modified, Result: res}
		return kv.PutJSON(tx, BlobKey(ref.Account, ref.Container, ref.Blob, ""), b)
	})
	if err != nil {
		return LeaseBlobOutput{}, err
	}
	return out, nil
}

// SnapshotBlob is Snapshot Blob
// (https://learn.microsoft.com/en-us/rest/api/storageservices/snapshot-blob).
// The snapshot shares the blob's data items.
func (s *Service) SnapshotBlob(ctx context.Context, in SnapshotBlobInput) (SnapshotBlobOutput, error) {
	if hns := s.nsOf(in.Ref.Account); hns != nil {
		return s.snapshotPath(ctx, hns, in)
	}
	now := s.now(in.Call)
	ref, acc, meta, key := in.Ref, in.Access, in.Metadata, in.CPK
	var out SnapshotBlobOutput
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		b, w, err := loadBlobWORM(tx, ref)
		if err != nil {
			return err
		}
		if err := acc.checkConds(b, ref.Container); err != nil {
			return err
		}
		if err := lease.CheckRead(b.Lease, acc.LeaseID, lease.Blob, now); err != nil {
			return err
		}
		// The snapshot keeps the blob's key (sb.CPK): taking it needs
		// the key.
		if err := checkCPK(b, key); err != nil {
			return err
		}
		if err := notArchived(b); err != nil {
			return err
		}
		if err := w.refuse(b, wormWrite, now); err != nil { // containerworm.go
			return err
		}
		// Two snapshots in one instant get distinct times, 100 ns apart,
		// also distinct from the soft-deleted ones.
		snap, err := newSnapshotTime(tx, ref.Account, ref.Container, ref.Blob, now)
		if err != nil {
			return err
		}
		sb := *b
		sb.Lease = lease.Lease{}
		sb.Imm, sb.Hold = nil, false // a snapshot has its own (immutability.go)
		if len(meta) > 0 {
			sb.Meta = meta
		}
		if err := extent.AdjustRefs(tx, now, nil, sb.Parts); err != nil {
			return err
		}
		out = SnapshotBlobOutput{Snapshot: snap, ETag: b.ETag, LastModified: b.Modified, VersionID: b.VersionID}
		return s.snapshotTaken(tx, kv.PutJSON(tx, BlobKey(ref.Account, ref.Container, ref.Blob, snap), &sb), in.Call, ref, snap, &sb)
	})
	if err != nil {
		return SnapshotBlobOutput{}, err
	}
	return out, nil
}

// PutBlockInput is Put Block: Length bytes of Body (-1: until EOF),
// checked against Checksums, staged as block BlockID (Base64, as Put
// Block List names it) of the blob Ref. LeaseID is the lease the caller
// holds on the blob ("" for none).
type PutBlockInput struct {
	Call
	Ref       BlobRef
	LeaseID   string
	BlockID   string
	Body      io.Reader
	Length    int64
	Checksums Checksums
	// CheckFirst is PutBlobInput.CheckFirst: the container and the
	// blob's lease are checked before the body is read.
	CheckFirst bool
}

// PutBlockOutput is the digest Put Block answers: the MD5 when the
// caller sent one, else the CRC64.
type PutBlockOutput struct {
	ContentMD5      []byte
	ContentCRC64    []byte
	ServerEncrypted bool
}

// errNoBlockBody is Put Block's answer to an empty body.
func errNoBlockBody() error {
	return azerr.Newf(azerr.InvalidHeaderValue, "Put Block needs a body.").With("HeaderName", "Content-Length").With("HeaderValue", "0")
}

// PutBlock is Put Block
// (https://learn.microsoft.com/en-us/rest/api/storageservices/put-block):
// the body is stored, then one transaction records it as an uncommitted
// block; the stored body is freed at once if that is refused.
func (s *Service) PutBlock(ctx context.Context, in PutBlockInput) (out PutBlockOutput, err error) {
	now := s.now(in.Call)
	rawID, err := wire.DecodeBlockID(in.BlockID)
	if err != nil {
		return out, err
	}
	body, err := extent.LimitBody(content(in.Body), in.Length, maxPutBlock)
	if err != nil {
		return out, err
	}
	if in.Length == 0 {
		return out, errNoBlockBody()
	}
	if in.CheckFirst {
		hns := s.nsOf(in.Ref.Account)
		if err := s.store.View(ctx, func(tx kv.Tx) error { return blockTarget(tx, hns, in.Ref, in.LeaseID, now) }); err != nil {
			return out, err
		}
	}
	// Without a client MD5 the CRC64 is computed too, as Put Block answers
	// x-ms-content-crc64 when the client sent no checksum (azure-sdk-for-js
	// recording "stageBlock": its response carries x-ms-content-crc64 and
	// no Content-MD5).
	st, err := s.data.StageSealed(ctx, body, in.Length, in.Checksums.MD5 != nil, in.Checksums.MD5 == nil, cipherOf(in.CPK))
	if err != nil {
		return out, err
	}
	// Freed at once if the write is refused (extent.Staged.Finish).
	recorded := false
	defer func() { st.Finish(ctx, recorded) }()
	if st.Size == 0 { // an empty chunked body
		return out, errNoBlockBody()
	}
	if err := st.CheckDigests(in.Checksums); err != nil {
		return out, err
	}
	ref, leaseID, id, sha := in.Ref, in.LeaseID, in.BlockID, shaOf(in.CPK)
	err = s.store.Update(ctx, extent.Recording(&recorded, func(tx kv.Tx) error {
		if err := st.Write(tx); err != nil {
			return err
		}
		return s.stageBlock(tx, ref, leaseID, now, rawID, id, st.Size, st.Parts, sha)
	}))
	if err != nil {
		return out, err
	}
	return PutBlockOutput{ContentMD5: st.MD5, ContentCRC64: st.CRC64, ServerEncrypted: true}, nil
}

// CheckPutBlockList applies Put Block List's write rules before its
// block list is read, for a request that sent Expect: 100-continue
// (checkfirst.go). On a hierarchical account the namespace applies them
// in the write alone (nil here).
func (s *Service) CheckPutBlockList(ctx context.Context, in PutBlockListInput) error {
	return s.layoutOf(in.Ref.Account).checkReplace(ctx, in)
}

// PutBlockList is Put Block List
// (https://learn.microsoft.com/en-us/rest/api/storageservices/put-block-list):
// one transaction applies the write rules, builds the blob from the named
// blocks, releases what it replaces and drops the uncommitted blocks.
func (s *Service) PutBlockList(ctx context.Context, in PutBlockListInput) (PutBlockListOutput, error) {
	if len(in.Blocks) > maxCommittedBlocks {
		return PutBlockListOutput{}, azerr.New(azerr.BlockListTooLong)
	}
	if in.Immutability != nil && s.nsOf(in.Ref.Account) != nil {
		return PutBlockListOutput{}, errNoImmutability() // a hierarchical account has no versions
	}
	return s.layoutOf(in.Ref.Account).replace(ctx, in)
}

// GetBlockListInput is Get Block List of a blob or snapshot.
type GetBlockListInput struct {
	Call
	Ref    BlobRef
	Access Access
}

// GetBlockListOutput is a block blob's committed blocks and, for the
// base blob, its uncommitted blocks in upload order. Exists is false for
// a blob that has uncommitted blocks only (no ETag, times or size then).
type GetBlockListOutput struct {
	Exists       bool
	ETag         string
	LastModified time.Time
	Size         int64
	Committed    []wire.BlockInfo
	Uncommitted  []wire.BlockInfo
}

// GetBlockList is Get Block List
// (https://learn.microsoft.com/en-us/rest/api/storageservices/get-block-list).
func (s *Service) GetBlockList(ctx context.Context, in GetBlockListInput) (GetBlockListOutput, error) {
	now := s.now(in.Call)
	ref, acc := in.Ref, in.Access
	var b *blobRec
	var committed, uncommittedList []wire.BlockInfo
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
			return err
		}
		var pathCommitted []wire.BlockInfo
		if hns := s.nsOf(ref.Account); hns != nil {
			// A path: its committed content as pathBlocks; a directory
			// has none.
			var pp *PathProperties
			b, pp, err = loadPath(tx, hns, ref, now, in.Caller, acl.Read)
			if azerr.Has(err, azerr.BlobNotFound) {
				b, err = nil, nil
			}
			if err != nil {
				return err
			}
			if b != nil && !pp.Dir {
				pathCommitted = pathBlocks(b.Size)
			}
		} else {
			b, err = findRef(tx, ref)
		}
		if err != nil {
			return err
		}
		var uncs []struct {
			name string
			u    uncommitted
		}
		if ref.Snapshot == "" && ref.VersionID == "" {
			prefix := blocksPrefix(ref.Account, ref.Container, ref.Blob)
			var derr error
			err = tx.Scan(prefix, kv.PrefixEnd(prefix), 0, false, func(k, v []byte) bool {
				parts, _ := kv.Split(k)
				if len(parts) != 5 || parts[4] == "" {
					return true // the sequence record
				}
				var u uncommitted
				if derr = kv.DecodeJSON(k, v, &u); derr != nil {
					return false
				}
				uncs = append(uncs, struct {
					name string
					u    uncommitted
				}{parts[4], u})
				return true
			})
			if err == nil {
				err = derr
			}
			if err != nil {
				return err
			}
		}
		if b == nil && len(uncs) == 0 {
			return azerr.New(azerr.BlobNotFound)
		}
		if b != nil {
			if b.Type != BlockBlob {
				return azerr.New(azerr.InvalidBlobType)
			}
			if err := acc.checkRead(b, ref, now); err != nil {
				return err
			}
		}
		sort.SliceStable(uncs, func(i, j int) bool { return uncs[i].u.Seq < uncs[j].u.Seq })
		if b != nil {
			for _, bl := range b.Blocks {
				committed = append(committed, wire.BlockInfo{Name: bl.Name, Size: bl.Size})
			}
			committed = append(committed, pathCommitted...)
		}
		for _, u := range uncs {
			uncommittedList = append(uncommittedList, wire.BlockInfo{Name: u.name, Size: u.u.Size})
		}
		return nil
	})
	if err != nil {
		return GetBlockListOutput{}, err
	}
	out := GetBlockListOutput{Committed: committed, Uncommitted: uncommittedList}
	if b != nil {
		out.Exists, out.ETag, out.LastModified, out.Size = true, b.ETag, b.Modified, b.Size
	}
	return out, nil
}

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

// PutBlobInput is Put Blob: a whole blob of Type created or replaced at
// Ref (the base blob).
type PutBlobInput struct {
	Call
	Ref    BlobRef
	Type   string // BlockBlob, PageBlob or AppendBlob
	Access Access
	// CreateOnly refuses to replace an existing blob (403
	// AuthorizationPermissionMismatch): a caller allowed to create blobs
	// but not to write them.
	CreateOnly bool
	NewBlob
	// A block blob's content: Length bytes of Body (-1: until EOF),
	// checked against Checksums.
	Body      io.Reader
	Length    int64
	Checksums Checksums
	// A page blob's size (a multiple of 512) and sequence number.
	Size           int64
	SequenceNumber int64
	// CheckFirst applies the write rules (container, conditions, lease)
	// once before the body is read, so a refused write is answered
	// without it: the request sent Expect: 100-continue and its client
	// holds the body back until asked (server/expect.go). The rules are
	// applied again, authoritatively, in the write's transaction.
	CheckFirst bool
}

// PutBlobOutput is the blob Put Blob wrote.
type PutBlobOutput struct {
	// VersionID is the version the write made current ("" with
	// versioning off): x-ms-version-id.
	VersionID    string
	ETag         string
	LastModified time.Time
	// The digests of a block blob's content, computed as it was stored.
	ContentMD5   []byte
	ContentCRC64 []byte
	// ServerEncrypted is whether the content is encrypted at rest, as
	// Azure always reports it.
	ServerEncrypted bool
}

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

// putBlobFlat is Put Blob on a flat account (flatLayout.create).
func (s *Service) putBlobFlat(ctx context.Context, in PutBlobInput) (out PutBlobOutput, err error) {
	now := s.now(in.Call)
	if in.CheckFirst && in.Type == BlockBlob {
		if err := s.store.View(ctx, func(tx kv.Tx) error {
			_, err := beginReplace(tx, in.Ref, in.Access, in.CreateOnly, now)
			return err
		}); err != nil {
			return out, err
		}
	}
	// The record and the transaction's result in one allocation (this is
	// the hot path of small uploads).
	w := &struct {
		rec blobRec
		nb  *blobRec // rec as stored, stamped
	}{rec: in.NewBlob.record(in.Type)}
	rec := &w.rec
	if in.Immutability != nil {
		if rec.Imm, rec.Hold, err = s.checkWriteImmutability(in.Ref.Account, in.Immutability, now); err != nil {
			return out, err
		}
	}
	var st *extent.Staged
	// The staged chunks are freed at once if the write is refused (see
	// extent.Staged.Finish).
	recorded := false
	defer func() { st.Finish(ctx, recorded) }()
	switch in.Type {
	case BlockBlob:
		body, err := extent.LimitBody(content(in.Body), in.Length, maxPutBlob)
		if err != nil {
			return out, err
		}
		// MD5 and CRC64 are computed whatever the caller sent: Put Blob
		// keeps the MD5 and answers both.
		if st, err = s.data.StageEmbeddedSealed(ctx, body, in.Length, cipherOf(in.CPK)); err != nil {
			return out, err
		}
		if err := st.CheckDigests(in.Checksums); err != nil {
			return out, err
		}
		rec.Props.ContentMD5 = st.MD5
		rec.Size, rec.Parts = st.Size, st.Parts
	case PageBlob:
		rec.Size, rec.SeqNum = in.Size, in.SequenceNumber
	case AppendBlob:
	default:
		return out, azerr.New(azerr.InvalidBlobType)
	}
	rec.CPK = shaOf(in.CPK)                                  // a new blob takes the key of its request
	ref, acc, createOnly := in.Ref, in.Access, in.CreateOnly // not all of in into the closure
	err = s.store.Update(ctx, extent.Recording(&recorded, s.changing(in.Call, apiPutBlob, ref, func(tx kv.Tx) (err error) {
		if st != nil {
			if err := st.Write(tx); err != nil {
				return err
			}
		}
		w.nb, err = s.replaceBlob(tx, ref, acc, createOnly, now, rec)
		return err
	})))
	if err != nil {
		return out, err
	}
	out = PutBlobOutput{ETag: w.nb.ETag, LastModified: w.nb.Modified, ServerEncrypted: true, VersionID: w.nb.VersionID}
	if st != nil {
		out.ContentMD5, out.ContentCRC64 = st.MD5, st.CRC64
	}
	return out, nil
}

// BlobProperties are what a read reports of a blob or snapshot (Get Blob
// Properties' response headers, and Get Blob's).
type BlobProperties struct {
	Type         string
	ETag         string
	LastModified time.Time
	CreationTime time.Time
	Size         int64
	HTTPHeaders  HTTPHeaders
	Metadata     map[string]string
	// Lease is the base blob's lease at the time of the read; a
	// snapshot's (HasLease false) is not reported.
	Lease    lease.Effective
	HasLease bool
	TagCount int
	// A block blob's access tier, whether it is the inferred default,
	// and when Set Blob Tier last changed it (nil: never).
	AccessTier         string
	AccessTierInferred bool
	AccessTierChanged  *time.Time
	// SmartAccessTier is the tier a Smart blob is in ("" otherwise).
	SmartAccessTier string
	// A page blob's sequence number.
	SequenceNumber int64
	// An append blob's committed block count and seal.
	CommittedBlockCount int
	Sealed              bool
	// The last copy onto the blob (nil: none).
	Copy *CopyInfo
	// ServerEncrypted is whether the content is encrypted at rest.
	ServerEncrypted bool
	// EncryptionKeySHA256 is the SHA-256 of the customer-provided key
	// the content is encrypted with ("": none; cpk.go).
	EncryptionKeySHA256 string
	// Path is set for a path of a hierarchical account.
	Path *PathProperties
	// VersionID is the version read ("" for a blob without one);
	// IsCurrentVersion whether it is the current version (reported on
	// an account with versioning on).
	VersionID        string
	IsCurrentVersion bool
	// ImmutabilityUntil and ImmutabilityMode are the version's
	// immutability policy (zero and "": none); LegalHold its legal hold
	// (immutability.go).
	ImmutabilityUntil time.Time
	ImmutabilityMode  string
	LegalHold         bool
}

// properties reports b, read at ref at now.
func (b *blobRec) properties(ref BlobRef, now time.Time) BlobProperties {
	p := BlobProperties{
		Type: b.Type, ETag: b.ETag, LastModified: b.Modified, CreationTime: b.Created, Size: b.Size,
		HTTPHeaders: b.Props, Metadata: b.Meta, TagCount: len(b.Tags), Copy: b.Copy, ServerEncrypted: true,
		EncryptionKeySHA256: b.CPK, VersionID: b.VersionID,
	}
	p.IsCurrentVersion = ref.Snapshot == "" && b.VersionID != "" && !b.prev
	if b.Imm != nil {
		p.ImmutabilityUntil, p.ImmutabilityMode = b.Imm.Until, b.Imm.Mode
	}
	p.LegalHold = b.Hold
	if ref.Snapshot != "" {
		p.VersionID = "" // a snapshot is no version
	}
	if ref.Snapshot == "" && !b.prev {
		p.Lease, p.HasLease = b.Lease.Effective(now), true
	}
	switch b.Type {
	case BlockBlob:
		p.AccessTier, p.AccessTierInferred = b.tier()
		p.AccessTierChanged = b.TierChanged
		p.SmartAccessTier = smartTier(p.AccessTier)
	case PageBlob:
		p.SequenceNumber = b.SeqNum
	case AppendBlob:
		p.CommittedBlockCount, p.Sealed = b.Appends, b.Sealed
	}
	return p
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

// DeleteSnapshots says what Delete Blob does with a blob's snapshots.
type DeleteSnapshots string

// DeleteSnapshots values (x-ms-delete-snapshots on REST).
const (
	DeleteSnapshotsNone    DeleteSnapshots = ""        // refuse a blob with snapshots
	DeleteSnapshotsInclude DeleteSnapshots = "include" // the blob and its snapshots
	DeleteSnapshotsOnly    DeleteSnapshots = "only"    // the snapshots, not the blob
)

// DeleteBlobInput is Delete Blob of a blob or a snapshot.
type DeleteBlobInput struct {
	Call
	Ref             BlobRef
	Access          Access
	DeleteSnapshots DeleteSnapshots // for a base blob only
	// Permanent removes a soft-deleted snapshot for good (deletetype=permanent).
	Permanent bool
}

// DeleteBlobOutput says how Delete Blob deleted.
type DeleteBlobOutput struct {
	// SoftDeleted is true when the account's DeleteRetentionPolicy kept
	// what was deleted as soft-deleted records (see softdelete.go).
	SoftDeleted bool
}

// DeleteBlob is Delete Blob
// (https://learn.microsoft.com/en-us/rest/api/storageservices/delete-blob).
// With the account's DeleteRetentionPolicy enabled it soft-deletes;
// otherwise it deletes for good. A soft-deleted blob or snapshot is not
// found (404) except by Permanent, which removes a soft-deleted snapshot.
func (s *Service) DeleteBlob(ctx context.Context, in DeleteBlobInput) (DeleteBlobOutput, error) {
	return s.layoutOf(in.Ref.Account).delete(ctx, in)
}

// deleteBlobFlat is Delete Blob on a flat account (flatLayout.delete).
func (s *Service) deleteBlobFlat(ctx context.Context, in DeleteBlobInput) (DeleteBlobOutput, error) {
	ref, acc, ds, permanent := in.Ref, in.Access, in.DeleteSnapshots, in.Permanent
	if permanent && ref.Snapshot == "" && ref.VersionID == "" {
		return DeleteBlobOutput{}, errPermanentDelete("Permanent delete applies only to a soft-deleted snapshot or version: give snapshot=.")
	}
	now := s.now(in.Call)
	soft := false
	// A version id names a previous version, deleted alone, or the
	// current one, whose deletion is the base blob's (domain_versions.go).
	vid := ref.VersionID
	ref.VersionID = ""
	err := s.store.Update(ctx, s.changing(in.Call, apiDeleteBlob, ref, func(tx kv.Tx) error {
		soft = false
		if vid != "" {
			vref := ref
			vref.VersionID = vid
			if permanent {
				return deleteVersionPermanently(tx, vref, acc, now)
			}
			if cur, err := isCurrentVersion(tx, vref); err != nil || !cur {
				if err != nil {
					return err
				}
				soft, err = deleteVersion(tx, vref, acc, now)
				return err
			}
		}
		pol, err := loadRetention(tx, ref.Account)
		if err != nil {
			return err
		}
		if permanent {
			return deletePermanently(tx, ref, now, pol, func(b *blobRec) error { return acc.checkConds(b, ref.Container) })
		}
		b, w, err := loadBlobWORM(tx, ref) // w: containerworm.go
		if err != nil {
			return err
		}
		mark := pol.mark(now)
		if ds != DeleteSnapshotsOnly {
			if err := b.deleteProtected(now); err != nil {
				return err
			}
			if err := w.refuse(b, wormDelete, now); err != nil {
				return err
			}
		}
		if ref.Snapshot != "" {
			if err := acc.checkConds(b, ref.Container); err != nil {
				return err
			}
			if err := tx.Delete(BlobKey(ref.Account, ref.Container, ref.Blob, ref.Snapshot)); err != nil {
				return err
			}
			if pol.on {
				soft = true
				return putDeleted(tx, ref.Account, ref.Container, ref.Blob, ref.Snapshot, b, mark)
			}
			return extent.AdjustRefs(tx, now, b.Parts, nil)
		}
		if err := acc.checkUpdate(b, ref.Container, now); err != nil {
			return err
		}
		// Find the snapshots: they follow the base record in key order.
		prefix := blobVersionsPrefix(ref.Account, ref.Container, ref.Blob)
		var snaps []blobRec
		var snapNames []string
		var derr error
		err = tx.Scan(prefix, kv.PrefixEnd(prefix), 0, false, func(k, v []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 5 || parts[4] == "" {
				return true
			}
			// A snapshot that does not decode fails the delete: skipped, it
			// would outlive its blob with its chunk references held.
			var sb blobRec
			if derr = kv.DecodeJSON(k, v, &sb); derr != nil {
				return false
			}
			snaps = append(snaps, sb)
			snapNames = append(snapNames, parts[4])
			return true
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return err
		}
		// With soft delete off, soft-deleted snapshots still retained
		// count as snapshots (the service refuses to delete such a blob
		// without x-ms-delete-snapshots) and go with include/only; with
		// it on, only live snapshots count.
		var dead []deletedEntry
		present := len(snaps)
		if !pol.on {
			all, err := findDeleted(tx, ref.Account, ref.Container, ref.Blob)
			if err != nil {
				return err
			}
			for _, e := range all {
				if e.snap == "" {
					continue
				}
				dead = append(dead, e)
				if e.rec.Del.retained(now) {
					present++
				}
			}
		}
		if present > 0 && ds == DeleteSnapshotsNone {
			return azerr.New(azerr.SnapshotsPresent)
		}
		for i := range snaps { // a snapshot under a policy or hold stays (immutability.go, containerworm.go)
			if err := snaps[i].deleteProtected(now); err != nil {
				return err
			}
			if err := w.refuse(&snaps[i], wormDelete, now); err != nil {
				return err
			}
		}
		var release []extent.Part
		for i := range snaps {
			if err := tx.Delete(BlobKey(ref.Account, ref.Container, ref.Blob, snapNames[i])); err != nil {
				return err
			}
			if pol.on {
				if err := putDeleted(tx, ref.Account, ref.Container, ref.Blob, snapNames[i], &snaps[i], mark); err != nil {
					return err
				}
			} else {
				release = append(release, snaps[i].Parts...)
			}
		}
		if ds != DeleteSnapshotsNone {
			for _, e := range dead {
				if err := dropDeleted(tx, ref.Account, ref.Container, ref.Blob, e.snap, e.rec); err != nil {
					return err
				}
				release = append(release, e.rec.Parts...)
			}
		}
		if ds != DeleteSnapshotsOnly {
			if err := tx.Delete(BlobKey(ref.Account, ref.Container, ref.Blob, "")); err != nil {
				return err
			}
			if s.versioningOn(ref.Account) {
				// The current version becomes a previous one, with its
				// references: the blob has no current version.
				if err := putVersion(tx, ref, b); err != nil {
					return err
				}
			} else if pol.on {
				if err := putDeleted(tx, ref.Account, ref.Container, ref.Blob, "", b, mark); err != nil {
					return err
				}
			} else {
				release = append(release, b.Parts...)
			}
			if err := s.dropUncommitted(tx, ref, now); err != nil {
				return err
			}
		}
		soft = pol.on
		return extent.AdjustRefs(tx, now, release, nil)
	}))
	if err != nil {
		return DeleteBlobOutput{}, err
	}
	return DeleteBlobOutput{SoftDeleted: soft}, nil
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

// LeaseBlobInput is Lease Blob: one lease action (lease.Request, whose
// LeaseID is the lease the action names) under the conditions of Access
// (its LeaseID is not used).
type LeaseBlobInput struct {
	Call
	Ref     BlobRef
	Access  Access
	Request lease.Request
}

// LeaseBlobOutput is the outcome of the lease action and the blob's
// ETag and Last-Modified, which a lease action does not change.
type LeaseBlobOutput struct {
	ETag         string
	LastModified time.Time
	Result       lease.Result
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

// SnapshotBlobInput is Snapshot Blob: Metadata, when not empty, is the
// snapshot's instead of the blob's. Access.LeaseID, when set, must be
// the blob's active lease; an active lease does not otherwise prevent a
// snapshot.
type SnapshotBlobInput struct {
	Call
	Ref      BlobRef
	Access   Access
	Metadata map[string]string
}

// SnapshotBlobOutput is the snapshot taken: its time (the snapshot
// parameter that addresses it) and the ETag and Last-Modified of the
// blob it was taken from. ServerEncrypted is false: the snapshot writes
// no content.
type SnapshotBlobOutput struct {
	// VersionID is the version the write made current ("" with
	// versioning off): x-ms-version-id.
	VersionID       string
	Snapshot        string
	ETag            string
	LastModified    time.Time
	ServerEncrypted bool
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

// PutBlockListInput is Put Block List: the blob Ref committed from
// Blocks, in order, each looked up among the uncommitted blocks, the
// committed ones, or both (wire.BlockKind).
type PutBlockListInput struct {
	Call
	Ref    BlobRef
	Access Access
	// CreateOnly refuses to replace an existing blob (see PutBlobInput).
	CreateOnly bool
	NewBlob
	Blocks []wire.BlockRef
}

// PutBlockListOutput is the blob Put Block List committed.
type PutBlockListOutput struct {
	// VersionID is the version the write made current ("" with
	// versioning off): x-ms-version-id.
	VersionID       string
	ETag            string
	LastModified    time.Time
	ServerEncrypted bool
}

// blockListTarget is Put Block List's write rules on a flat account
// (beginReplace) and the blob it replaces, if any, a block blob.
func blockListTarget(tx kv.Tx, ref BlobRef, acc Access, createOnly bool, now time.Time) (*blobRec, *container, error) {
	old, c, err := beginReplaceIn(tx, ref, acc, createOnly, now)
	if err != nil {
		return nil, nil, err
	}
	if old != nil && old.Type != BlockBlob {
		return nil, nil, azerr.New(azerr.InvalidBlobType)
	}
	return old, c, nil
}

// CheckPutBlockList applies Put Block List's write rules before its
// block list is read, for a request that sent Expect: 100-continue
// (checkfirst.go). On a hierarchical account the namespace applies them
// in the write alone (nil here).
func (s *Service) CheckPutBlockList(ctx context.Context, in PutBlockListInput) error {
	return s.layoutOf(in.Ref.Account).checkReplace(ctx, in)
}

// checkPutBlockListFlat is CheckPutBlockList on a flat account
// (flatLayout.checkReplace).
func (s *Service) checkPutBlockListFlat(ctx context.Context, in PutBlockListInput) error {
	now := s.now(in.Call)
	return s.store.View(ctx, func(tx kv.Tx) error {
		_, _, err := blockListTarget(tx, in.Ref, in.Access, in.CreateOnly, now)
		return err
	})
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

// putBlockListFlat is Put Block List's commit on a flat account
// (flatLayout.replace).
func (s *Service) putBlockListFlat(ctx context.Context, in PutBlockListInput) (PutBlockListOutput, error) {
	now := s.now(in.Call)
	ref, acc, createOnly, newb, blocks, sha := in.Ref, in.Access, in.CreateOnly, in.NewBlob, in.Blocks, shaOf(in.CPK)
	var rec *blobRec
	imm, hold, err := s.checkWriteImmutability(ref.Account, newb.Immutability, now)
	if err != nil {
		return PutBlockListOutput{}, err
	}
	err = s.store.Update(ctx, s.changing(in.Call, apiPutBlockList, ref, func(tx kv.Tx) error {
		old, cont, err := blockListTarget(tx, ref, acc, createOnly, now)
		if err != nil {
			return err
		}
		// committed blocks by id, with their parts
		committed := map[string][]extent.Part{}
		if old != nil {
			i := 0
			for _, bl := range old.Blocks {
				committed[bl.Name] = old.Parts[i : i+bl.NParts]
				i += bl.NParts
			}
		}
		nb := newb.record(BlockBlob)
		nb.Imm, nb.Hold = imm, hold
		if nb.Imm == nil {
			nb.Imm = s.inheritedPolicy(ref.Account, cont, now) // immutability.go
		}
		nb.HasBlockList = true
		nb.CPK = sha
		nb.replaces(old, now)
		unc := map[string]*uncommitted{}
		for _, bref := range blocks {
			var parts []extent.Part
			var size int64
			useUncommitted := func() (bool, error) {
				if bref.ID == "" { // the sequence record, not a block
					return false, nil
				}
				u, ok := unc[bref.ID]
				if !ok {
					u = new(uncommitted)
					found, err := kv.GetJSON(tx, BlockKey(ref.Account, ref.Container, ref.Blob, bref.ID), u)
					if err != nil {
						return false, err
					}
					if !found {
						return false, nil
					}
					unc[bref.ID] = u
				}
				if u.CPK != sha {
					// A block is committed with the key it was
					// written with (cpk.go).
					return false, cpkMismatch(u.CPK, sha)
				}
				parts, size = u.Parts, u.Size
				return true, nil
			}
			useCommitted := func() bool {
				cp, ok := committed[bref.ID]
				if !ok || old.CPK != sha {
					return false
				}
				parts = cp
				for _, p := range cp {
					size += p.Len
				}
				return true
			}
			var ok bool
			switch bref.Kind {
			case wire.Committed:
				ok = useCommitted()
			case wire.Uncommitted:
				if ok, err = useUncommitted(); err != nil {
					return err
				}
			default:
				if ok, err = useUncommitted(); err != nil {
					return err
				}
				if !ok {
					ok = useCommitted()
				}
			}
			if !ok {
				return azerr.New(azerr.InvalidBlockList)
			}
			for _, p := range parts {
				p.Off = nb.Size + (p.Off - parts[0].Off)
				nb.Parts = append(nb.Parts, p)
			}
			nb.Blocks = append(nb.Blocks, block{Name: bref.ID, Size: size, NParts: len(parts)})
			nb.Size += size
		}
		for i := range nb.Blocks {
			if blockIDLen(nb.Blocks[i].Name) != blockIDLen(nb.Blocks[0].Name) {
				return azerr.New(azerr.InvalidBlockList)
			}
		}
		if len(nb.Blocks) > maxCommittedBlocks {
			return azerr.New(azerr.BlockCountExceedsLimit)
		}
		// With soft delete on, the replaced list is kept as a soft-deleted
		// snapshot and keeps its references.
		oldParts, err := s.beforeOverwrite(tx, ref, now, old, &nb)
		if err != nil {
			return err
		}
		// the new list takes its references before the uncommitted blocks
		// and the old list release theirs
		if err := extent.AdjustRefs(tx, now, oldParts, nb.Parts); err != nil {
			return err
		}
		if err := s.dropUncommitted(tx, ref, now); err != nil {
			return err
		}
		rec = &nb
		return kv.PutJSON(tx, BlobKey(ref.Account, ref.Container, ref.Blob, ""), &nb)
	}))
	if err != nil {
		return PutBlockListOutput{}, err
	}
	return PutBlockListOutput{ETag: rec.ETag, LastModified: rec.Modified, ServerEncrypted: true, VersionID: rec.VersionID}, nil
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

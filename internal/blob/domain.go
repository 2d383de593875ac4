package blob

import (
	"errors"
	"io"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// The Blob domain API. Each operation is a method of Service taking a
// typed input and returning a typed output or an *azerr.Error: it runs
// its checks and its write inside one kv transaction, takes its time from
// the injected clock, and knows nothing of HTTP (no request, no header
// names read, no response writer). The REST handlers (internal/blob/blobrest)
// parse a request into the input, call the method and render the
// output; other front ends over the same data call the methods directly.

// now is the time of call c.
func (s *Service) now(c Call) time.Time {
	if !c.Now.IsZero() {
		return c.Now
	}
	return s.clock.Now()
}

// NewTagCondition is the condition of a parsed expression (nil: none).
func NewTagCondition(e *blobtags.Expr) TagCondition { return TagCondition{expr: e} }

// BadTagCondition is a condition that did not parse: err is what the
// operation answers once it has found the blob.
func BadTagCondition(err error) TagCondition { return TagCondition{err: err} }

// check evaluates the condition on b (nil: no blob, which no condition
// matches) in container c.
func (t TagCondition) check(b *blobRec, c string) error {
	if t.err != nil {
		return t.err
	}
	if t.expr == nil {
		return nil
	}
	if b == nil || !t.expr.Matches(b.Tags, c) {
		return azerr.New(azerr.ConditionNotMet)
	}
	return nil
}

// checkWrite applies the write rules shared by every blob write that may
// create the blob: the conditions first (If-None-Match: * on an existing
// blob is 409 BlobAlreadyExists), then the lease.
func (a Access) checkWrite(b *blobRec, c string, now time.Time) error {
	var etag string
	var mod = now
	if b != nil {
		etag, mod = b.ETag, b.Modified
	}
	if err := a.Cond.CheckWrite(b != nil, etag, mod); err != nil {
		if errors.Is(err, cond.ErrExists) {
			return azerr.New(azerr.BlobAlreadyExists)
		}
		return err
	}
	if err := a.IfTags.check(b, c); err != nil {
		return err
	}
	if b == nil {
		if a.LeaseID != "" {
			return azerr.New(azerr.LeaseNotPresentWithBlobOperation)
		}
		return nil
	}
	return lease.CheckWrite(b.Lease, a.LeaseID, lease.Blob, now)
}

// checkConds evaluates the conditions of a write that does not create the
// blob (Delete, Lease, Snapshot, Put Page, Append Block, ...) on an
// existing blob or snapshot: every unmet condition, If-None-Match: *
// included, is 412 ConditionNotMet. The create-only 409 BlobAlreadyExists
// belongs to Put Blob, Put Block List and Copy Blob (checkWrite).
func (a Access) checkConds(b *blobRec, c string) error {
	if err := a.Cond.CheckWrite(true, b.ETag, b.Modified); err != nil {
		if errors.Is(err, cond.ErrExists) {
			return azerr.New(azerr.ConditionNotMet)
		}
		return err
	}
	if err := a.Tier.check(b); err != nil {
		return err
	}
	return a.IfTags.check(b, c)
}

// checkUpdate is checkWrite for writes of an existing blob: checkConds,
// then the lease.
func (a Access) checkUpdate(b *blobRec, c string, now time.Time) error {
	if err := a.checkConds(b, c); err != nil {
		return err
	}
	return lease.CheckWrite(b.Lease, a.LeaseID, lease.Blob, now)
}

// checkRead applies the read rules: conditions (304/412), the tags
// condition, then a lease id, when given, must match the base blob's
// lease (a snapshot has none).
func (a Access) checkRead(b *blobRec, ref BlobRef, now time.Time) error {
	if a.CondErr != nil {
		return a.CondErr
	}
	// "If-None-Match: *" asks a read to succeed only where nothing
	// exists: Azure refuses it as 400 UnsatisfiableCondition (azure-cli's
	// live test test_storage_blob_oauth: "storage blob show
	// --if-none-match *" fails with ErrorCode:UnsatisfiableCondition).
	for _, v := range a.Cond.IfNoneMatch {
		if v == cond.Any {
			return azerr.New(azerr.UnsatisfiableCondition)
		}
	}
	if err := a.Cond.CheckRead(b.ETag, b.Modified); err != nil {
		return err
	}
	if err := a.IfTags.check(b, ref.Container); err != nil {
		return err
	}
	if ref.Snapshot != "" {
		return nil
	}
	return lease.CheckRead(b.Lease, a.LeaseID, lease.Blob, now)
}

// withoutNoneMatchAny drops "If-None-Match: *" for writes that are not
// create-only (Set Blob Properties, Set Blob Metadata): on those Azure lets
// it pass on an existing blob (cond.ErrExists) instead of answering 409
// BlobAlreadyExists; a missing blob is still 404.
func (a Access) withoutNoneMatchAny() Access {
	var keep []string
	for _, v := range a.Cond.IfNoneMatch {
		if v != cond.Any {
			keep = append(keep, v)
		}
	}
	a.Cond.IfNoneMatch = keep
	return a
}

// content is a write's body; nil is no content.
func content(r io.Reader) io.Reader {
	if r == nil {
		return noContent{}
	}
	return r
}

type noContent struct{}

func (noContent) Read([]byte) (int, error) { return 0, io.EOF }

// record is the blob record n describes, of type typ, without content.
func (n *NewBlob) record(typ string) blobRec {
	return blobRec{Type: typ, Props: n.HTTPHeaders, Meta: n.Metadata, Tier: n.Tier, Tags: n.Tags}
}

// check evaluates the conditions against b.
func (c TierCondition) check(b *blobRec) error {
	if c.ModifiedSince == nil && c.UnmodifiedSince == nil {
		return nil
	}
	at := b.Created
	if b.TierChanged != nil {
		at = *b.TierChanged
	}
	at = at.UTC().Truncate(time.Second)
	if c.ModifiedSince != nil && !at.After(*c.ModifiedSince) {
		return azerr.New(azerr.AccessTierChangeTimeConditionNotMet)
	}
	if c.UnmodifiedSince != nil && at.After(*c.UnmodifiedSince) {
		return azerr.New(azerr.AccessTierChangeTimeConditionNotMet)
	}
	return nil
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

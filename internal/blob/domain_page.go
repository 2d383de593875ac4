package blob

import (
	"context"
	"io"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// SequenceConditions are a page write's conditions on the page blob's
// sequence number (nil: none): at most LessOrEqual, below Less, equal to
// Equal.
type SequenceConditions struct {
	LessOrEqual, Less, Equal *int64
	// Err is a condition that did not parse, answered after the ones
	// before it are evaluated (the REST front end's parseSequenceConds).
	Err error
}

// Check evaluates the conditions against seq: 412
// SequenceNumberConditionNotMet when one fails.
func (c SequenceConditions) Check(seq int64) error {
	for _, f := range []struct {
		v  *int64
		ok func(v int64) bool
	}{
		{c.LessOrEqual, func(v int64) bool { return seq <= v }},
		{c.Less, func(v int64) bool { return seq < v }},
		{c.Equal, func(v int64) bool { return seq == v }},
	} {
		if f.v != nil && !f.ok(*f.v) {
			return azerr.New(azerr.SequenceNumberConditionNotMet)
		}
	}
	return c.Err
}

// PutPageInput is Put Page: Length bytes of Body (checked against
// Checksums) written at Offset of the page blob Ref, or, with Clear,
// those pages cleared. Offset and Length are multiples of 512.
type PutPageInput struct {
	Call
	Ref            BlobRef
	Access         Access
	Sequence       SequenceConditions
	Offset, Length int64
	Clear          bool
	Body           io.Reader
	Checksums      Checksums
	// CheckFirst is PutBlobInput.CheckFirst: the write rules and the
	// page checks are applied before the body is read.
	CheckFirst bool
}

// PutPageOutput is the page blob after the write and, for an update, the
// digest of the content written (the MD5 when the caller sent one, else
// the CRC64).
type PutPageOutput struct {
	ETag            string
	LastModified    time.Time
	SequenceNumber  int64
	ContentMD5      []byte
	ContentCRC64    []byte
	ServerEncrypted bool
}

// PutPage is Put Page
// (https://learn.microsoft.com/en-us/rest/api/storageservices/put-page):
// an update stores the body first, then one transaction splices it in
// (a clear splices a hole) under the write rules and the sequence number
// conditions.
func (s *Service) PutPage(ctx context.Context, in PutPageInput) (out PutPageOutput, err error) {
	if err := s.layoutOf(in.Ref.Account).pageBlobs(); err != nil {
		return out, err
	}
	now := s.now(in.Call)
	var st *extent.Staged
	recorded := false
	if !in.Clear {
		if in.Length > MaxPageWrite {
			return out, azerr.New(azerr.RequestBodyTooLarge)
		}
		if in.CheckFirst {
			seq, off, n, key := in.Sequence, in.Offset, in.Length, in.CPK
			if err := s.checkUpdateFirst(ctx, s.layoutOf(in.Ref.Account), in.Ref, in.Access, wormWrite, in.Caller, now, func(b *blobRec) error {
				if err := checkCPK(b, key); err != nil {
					return err
				}
				return pagesWritable(b, seq, off, n)
			}); err != nil {
				return out, err
			}
		}
		body, err := extent.LimitBody(content(in.Body), in.Length, MaxPageWrite)
		if err != nil {
			return out, err
		}
		// Without a client MD5 the CRC64 is computed too, as Put Page
		// answers x-ms-content-crc64 when the client sent no checksum
		// (azure-sdk-for-js recording "verify PagedAsyncIterableIterator
		// for listPageRanges").
		if st, err = s.data.StageSealed(ctx, body, in.Length, in.Checksums.MD5 != nil, in.Checksums.MD5 == nil, cipherOf(in.CPK)); err != nil {
			return out, err
		}
		// Freed at once if the write is refused (extent.Staged.Finish).
		defer func() { st.Finish(ctx, recorded) }()
		if err := st.CheckDigests(in.Checksums); err != nil {
			return out, err
		}
	}
	seq, off, n, key := in.Sequence, in.Offset, in.Length, in.CPK
	// recorded follows the function that records st (updateBlob returns
	// its error unchanged: extent.Recording).
	b, err := s.updateBlob(ctx, in.Ref, in.Access, wormWrite, now, func(tx kv.Tx, b *blobRec) error {
		return extent.Recording(&recorded, func(tx kv.Tx) error {
			if err := checkCPK(b, key); err != nil {
				return err
			}
			var parts []extent.Part
			if st != nil {
				if err := st.Write(tx); err != nil {
					return err
				}
				parts = st.Parts
			}
			return writePages(tx, now, seq, b, off, n, parts)
		})(tx)
	})
	if err != nil {
		return out, err
	}
	out = PutPageOutput{ETag: b.ETag, LastModified: b.Modified, SequenceNumber: b.SeqNum}
	if st != nil {
		out.ContentMD5, out.ContentCRC64, out.ServerEncrypted = st.MD5, st.CRC64, true
	}
	return out, nil
}

// GetPageRangesInput is Get Page Ranges of a page blob or snapshot,
// within Range (nil: all of it); with PrevSnapshot (a snapshot time as
// stored) the ranges changed since that snapshot.
type GetPageRangesInput struct {
	Call
	Ref          BlobRef
	Access       Access
	Range        *wire.Range
	PrevSnapshot string
}

// GetPageRangesOutput is the blob's valid (or, against a previous
// snapshot, changed and cleared) ranges, in order.
type GetPageRangesOutput struct {
	ETag         string
	LastModified time.Time
	Size         int64
	Ranges       []extent.Span
}

// GetPageRanges is Get Page Ranges
// (https://learn.microsoft.com/en-us/rest/api/storageservices/get-page-ranges).
func (s *Service) GetPageRanges(ctx context.Context, in GetPageRangesInput) (GetPageRangesOutput, error) {
	now := s.now(in.Call)
	ref, acc, prevSnap := in.Ref, in.Access, in.PrevSnapshot
	var prevT time.Time
	if prevSnap != "" {
		t, err := wire.ParseSnapshot(prevSnap)
		if err != nil {
			return GetPageRangesOutput{}, azerr.InvalidQuery("prevsnapshot", prevSnap)
		}
		prevT = t
	}
	var b, prev *blobRec
	l, caller := s.layoutOf(ref.Account), in.Caller
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		// A path is a block blob in the Blob view: 409 InvalidBlobType
		// below, as for a flat account's block blob ("Blob Storage
		// features available in Azure Data Lake Storage" lists page
		// blobs among what such accounts do not support without naming
		// this operation's error).
		if b, _, err = l.resolve(tx, ref, now, caller, acl.Read, false); err != nil {
			return err
		}
		if b.Type != PageBlob {
			return azerr.New(azerr.InvalidBlobType)
		}
		if err := acc.checkRead(b, ref, now); err != nil {
			return err
		}
		if prevSnap != "" {
			if ref.Snapshot != "" {
				if t, err := wire.ParseSnapshot(ref.Snapshot); err == nil && prevT.After(t) {
					return azerr.New(azerr.PreviousSnapshotCannotBeNewer)
				}
			}
			if prev, err = findBlob(tx, ref.Account, ref.Container, ref.Blob, prevSnap); err != nil {
				return err
			}
			if prev == nil {
				return azerr.New(azerr.PreviousSnapshotNotFound)
			}
		}
		return nil
	})
	if err != nil {
		return GetPageRangesOutput{}, err
	}
	lo, hi := int64(0), b.Size
	if in.Range != nil {
		if b.Size == 0 {
			return GetPageRangesOutput{}, azerr.New(azerr.InvalidRange)
		}
		if lo, hi, err = in.Range.Resolve(b.Size); err != nil {
			return GetPageRangesOutput{}, err
		}
		hi += lo
	}
	out := GetPageRangesOutput{ETag: b.ETag, LastModified: b.Modified, Size: b.Size}
	if prev != nil {
		out.Ranges = extent.Diff(prev.Parts, b.Parts, lo, hi)
	} else {
		out.Ranges = extent.Spans(b.Parts, lo, hi)
	}
	return out, nil
}

// AppendBlockInput is Append Block: Length bytes of Body (-1: until EOF),
// checked against Checksums, appended to the append blob Ref, when it is
// AppendPosition bytes long and stays within MaxSize (nil: no such
// condition).
type AppendBlockInput struct {
	Call
	Ref            BlobRef
	Access         Access
	AppendPosition *int64
	MaxSize        *int64
	Body           io.Reader
	Length         int64
	Checksums      Checksums
	// CheckFirst is PutBlobInput.CheckFirst: the write rules and the
	// append conditions are applied before the body is read.
	CheckFirst bool
}

// AppendBlockOutput is where the block landed and the blob after it, and
// the digest of the block (the MD5 when the caller sent one, else the
// CRC64).
type AppendBlockOutput struct {
	ETag                string
	LastModified        time.Time
	AppendOffset        int64
	CommittedBlockCount int
	ContentMD5          []byte
	ContentCRC64        []byte
	ServerEncrypted     bool
}

// AppendBlock is Append Block
// (https://learn.microsoft.com/en-us/rest/api/storageservices/append-block):
// the block is stored first, then one transaction appends it under the
// write rules and the append conditions.
func (s *Service) AppendBlock(ctx context.Context, in AppendBlockInput) (out AppendBlockOutput, err error) {
	l := s.layoutOf(in.Ref.Account)
	now := s.now(in.Call)
	body, err := extent.LimitBody(content(in.Body), in.Length, maxAppendBlock)
	if err != nil {
		return out, err
	}
	if in.Length == 0 {
		return out, azerr.InvalidHeader("Content-Length", "0")
	}
	if in.CheckFirst {
		appendPos, maxSize, key, n := optional(in.AppendPosition), optional(in.MaxSize), in.CPK, max(in.Length, 0)
		if err := s.checkUpdateFirst(ctx, l, in.Ref, in.Access, wormAppend, in.Caller, now, func(b *blobRec) error {
			if err := checkCPK(b, key); err != nil {
				return err
			}
			return appendAllowed(b, appendPos, maxSize, n)
		}); err != nil {
			return out, err
		}
	}
	st, err := s.data.StageSealed(ctx, body, in.Length, in.Checksums.MD5 != nil, in.Checksums.MD5 == nil, cipherOf(in.CPK))
	if err != nil {
		return out, err
	}
	// Freed at once if the write is refused (extent.Staged.Finish).
	recorded := false
	defer func() { st.Finish(ctx, recorded) }()
	if st.Size == 0 { // an empty chunked body
		return out, azerr.InvalidHeader("Content-Length", "0")
	}
	if err := st.CheckDigests(in.Checksums); err != nil {
		return out, err
	}
	appendPos, maxSize, key := optional(in.AppendPosition), optional(in.MaxSize), in.CPK
	var offset int64
	// recorded follows the function that records st (l.update returns
	// its error unchanged: extent.Recording).
	b, err := l.update(ctx, in.Ref, in.Access, wormAppend, in.Caller, now, func(tx kv.Tx, b *blobRec) error {
		return extent.Recording(&recorded, func(tx kv.Tx) (err error) {
			if err := checkCPK(b, key); err != nil {
				return err
			}
			if err := st.Write(tx); err != nil {
				return err
			}
			offset, err = appendParts(tx, now, b, appendPos, maxSize, st.Size, st.Parts)
			return err
		})(tx)
	})
	if err != nil {
		return out, err
	}
	return AppendBlockOutput{ETag: b.ETag, LastModified: b.Modified, AppendOffset: offset, CommittedBlockCount: b.Appends,
		ContentMD5: st.MD5, ContentCRC64: st.CRC64, ServerEncrypted: true}, nil
}

// optional is an optional size, -1 when absent.
func optional(v *int64) int64 {
	if v == nil {
		return -1
	}
	return *v
}

// SealBlobInput is Seal Append Blob, when the blob is AppendPosition
// bytes long (nil: any length).
type SealBlobInput struct {
	Call
	Ref            BlobRef
	Access         Access
	AppendPosition *int64
}

// SealBlobOutput is the sealed blob.
type SealBlobOutput struct {
	ETag         string
	LastModified time.Time
	Sealed       bool
}

// SealBlob is Seal Append Blob
// (https://learn.microsoft.com/en-us/rest/api/storageservices/append-blob-seal):
// a sealed append blob takes no more appends (409 BlobIsSealed) until it
// is re-created. The usual write conditions and lease apply; sealing a
// sealed blob succeeds. If-None-Match: * does not fail it on an existing
// blob.
func (s *Service) SealBlob(ctx context.Context, in SealBlobInput) (SealBlobOutput, error) {
	appendPos := optional(in.AppendPosition)
	b, err := s.layoutOf(in.Ref.Account).update(ctx, in.Ref, in.Access.withoutNoneMatchAny(), wormNone, in.Caller, s.now(in.Call), func(tx kv.Tx, b *blobRec) error {
		if b.Type != AppendBlob {
			return azerr.New(azerr.InvalidBlobType)
		}
		if appendPos >= 0 && appendPos != b.Size {
			return azerr.New(azerr.AppendPositionConditionNotMet)
		}
		b.Sealed = true
		return nil
	})
	if err != nil {
		return SealBlobOutput{}, err
	}
	return SealBlobOutput{ETag: b.ETag, LastModified: b.Modified, Sealed: b.Sealed}, nil
}

// pagesWritable is writePages' checks: a page blob, the sequence number
// conditions, the range within the blob, no immutability policy or legal
// hold.
func pagesWritable(b *blobRec, seq SequenceConditions, off, n int64) error {
	if b.Type != PageBlob {
		return azerr.New(azerr.InvalidBlobType)
	}
	if err := seq.Check(b.SeqNum); err != nil {
		return err
	}
	if off+n > b.Size {
		return azerr.New(azerr.InvalidPageRange)
	}
	return b.writeProtected() // immutability.go
}

// writePages replaces pages [off, off+n) of the page blob b with parts
// (offsets from 0; none clears them), after Put Page's checks (seq: the
// sequence number conditions).
func writePages(tx kv.Tx, now time.Time, seq SequenceConditions, b *blobRec, off, n int64, parts []extent.Part) error {
	if err := pagesWritable(b, seq, off, n); err != nil {
		return err
	}
	old := b.Parts
	b.Parts = extent.SpliceShifted(b.Parts, off, n, parts, off)
	return extent.AdjustRefs(tx, now, old, b.Parts)
}

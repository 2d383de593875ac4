package blob

import (
	"context"
	"io"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// PutBlobInput is Put Blob: a whole blob of Type created or replaced at
// Ref (the base blob).
type PutBlobInput struct {
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
}

// PutBlobOutput is the blob Put Blob wrote.
type PutBlobOutput struct {
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
func (s *Service) PutBlob(ctx context.Context, in PutBlobInput) (out PutBlobOutput, err error) {
	now := s.clock.Now()
	// The record and the transaction's result in one allocation (this is
	// the hot path of small uploads).
	w := &struct {
		rec blobRec
		nb  *blobRec // rec as stored, stamped
	}{rec: in.NewBlob.record(in.Type)}
	rec := &w.rec
	var st *extent.Staged
	// The staged chunks are freed at once if the write is refused (see
	// extent.Staged.Finish).
	tried := false
	defer func() { st.Finish(ctx, tried, err) }()
	switch in.Type {
	case BlockBlob:
		body, err := extent.LimitBody(in.Body, in.Length, maxPutBlob)
		if err != nil {
			return out, err
		}
		// MD5 and CRC64 are computed whatever the caller sent: Put Blob
		// keeps the MD5 and answers both.
		if st, err = s.data.StageEmbedded(ctx, body, in.Length, nil); err != nil {
			return out, err
		}
		if err := in.Checksums.verify(st); err != nil {
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
	ref, acc, createOnly := in.Ref, in.Access, in.CreateOnly // not all of in into the closure
	err = s.store.Update(ctx, func(tx kv.Tx) (err error) {
		if st != nil {
			if err := st.Write(tx); err != nil {
				return err
			}
		}
		w.nb, err = s.replaceBlob(tx, ref, acc, createOnly, now, rec)
		return err
	})
	tried = true
	if err != nil {
		return out, err
	}
	out = PutBlobOutput{ETag: w.nb.ETag, LastModified: w.nb.Modified, ServerEncrypted: true}
	if st != nil {
		out.ContentMD5, out.ContentCRC64 = st.MD5, st.CRC64
	}
	return out, nil
}

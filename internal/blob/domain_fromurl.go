package blob

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"io"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/copysrc"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// The *FromURL writes (Put Blob From URL, Put Block From URL, Append
// Block From URL, Put Page From URL) take their bytes from a blob or file
// served here (x-ms-copy-source on REST), instead of a body. No byte is
// copied: the written blob or block shares the source's data items,
// which count the new references, exactly as Copy Blob does; the source
// is read and the destination written in one transaction. When the caller
// asks the source's digest to be checked (FromURLSource.Checksums) the
// bytes are hashed outside the write transaction, which then
// checks the source range still maps the same data (the last attempt
// hashes inside it, so a source rewritten without pause cannot starve the
// request).

const fromURLAttempts = 3

var errSourceChanged = errors.New("blob: copy source changed while it was hashed")

// FromURLSource is the source of a From URL write: a blob or snapshot
// served here (Blob), or a file of the File service the REST handler
// resolves through the file peer (file); the range of it to take (nil:
// all of it), the conditions on it (x-ms-source-if-* on REST) and the
// digests its range must have. Authorizing the source is the caller's.
type FromURLSource struct {
	Blob      BlobRef
	Cond      cond.Conditions
	Range     *wire.Range
	Checksums Checksums
	// CPK is the key the source was written with, as the request gives
	// it (x-ms-source-encryption-key; nil: none).
	CPK *CPK
	// File, set for a file of the File service (which the REST handler
	// resolves through the file peer), reads it inside the write's
	// transaction; nil for a blob.
	File copysrc.Reader
	// file resolves a path source of a hierarchical account inside the
	// write's transaction (pathSource); nil for a blob.
	file func(tx kv.Tx) (*blobRec, func(off, n int64) error, error)
	// now is the write's time, at which File reads the source.
	now time.Time
}

// read resolves the source in tx: the parts of its range (offsets from
// 0), the range's length, and the source record.
func (f *FromURLSource) read(tx kv.Tx) ([]extent.Part, int64, *blobRec, error) {
	var b *blobRec
	var readable func(off, n int64) error
	var err error
	switch {
	case f.File != nil:
		var o *copysrc.Object
		if o, err = f.File(tx, f.now); err == nil {
			b, readable = sourceRecord(o)
		}
	case f.file != nil:
		b, readable, err = f.file(tx)
	default:
		b, err = findRef(tx, f.Blob)
	}
	if err != nil {
		return nil, 0, nil, err
	}
	if b == nil {
		return nil, 0, nil, azerr.Newf(azerr.CannotVerifyCopySource, "The specified blob does not exist.")
	}
	if err := f.Cond.CheckSource(b.ETag, b.Modified); err != nil {
		return nil, 0, nil, err
	}
	if err := notArchived(b); err != nil {
		return nil, 0, nil, err
	}
	off, n := int64(0), b.Size
	if f.Range != nil {
		if off, n, err = f.Range.Resolve(b.Size); err != nil {
			return nil, 0, nil, err
		}
	}
	if readable != nil {
		if err := readable(off, n); err != nil {
			return nil, 0, nil, err
		}
	}
	parts := extent.Within(b.Parts, off, n)
	for i := range parts {
		parts[i].Off -= off
	}
	return parts, n, b, nil
}

// digests are the source range's MD5 and CRC64, each computed when the
// client sent the matching x-ms-source-content-* header.
type digests struct{ md5, crc []byte }

func (f *FromURLSource) wantsDigest() bool { return f.Checksums.MD5 != nil || f.Checksums.CRC64 != nil }

// hash reads the n bytes of parts and checks them against the client's
// digests, inside tx: the reader pins the items while the transaction
// still names them, which is all the collector needs (extent.ReadPins).
func (s *Service) hash(ctx context.Context, tx kv.Tx, want Checksums, parts []extent.Part, n int64, cipher *extent.Cipher) (digests, error) {
	inline, err := extent.Prefetch(tx, parts, 0, n)
	if err != nil {
		return digests{}, err
	}
	var sinks []io.Writer
	var mh hash.Hash
	var ch hash.Hash64
	if want.MD5 != nil {
		mh = md5.New()
		sinks = append(sinks, mh)
	}
	if want.CRC64 != nil {
		ch = extent.NewCRC64()
		sinks = append(sinks, ch)
	}
	rd := s.data.NewReaderSealed(ctx, parts, inline, 0, n, cipher)
	defer rd.Close()
	if _, err := io.CopyN(io.MultiWriter(sinks...), rd, n); err != nil {
		return digests{}, err
	}
	var d digests
	if mh != nil {
		if d.md5 = mh.Sum(nil); !bytes.Equal(d.md5, want.MD5) {
			return d, azerr.New(azerr.MD5Mismatch).With("UserSpecifiedMd5", base64.StdEncoding.EncodeToString(want.MD5)).With("ServerCalculatedMd5", base64.StdEncoding.EncodeToString(d.md5))
		}
	}
	if ch != nil {
		if d.crc = binary.LittleEndian.AppendUint64(nil, ch.Sum64()); !bytes.Equal(d.crc, want.CRC64) {
			return d, azerr.New(azerr.CRC64Mismatch).With("UserSpecifiedCrc", base64.StdEncoding.EncodeToString(want.CRC64)).With("ServerCalculatedCrc", base64.StdEncoding.EncodeToString(d.crc))
		}
	}
	return d, nil
}

// fromSource runs write, in one transaction with the read of the source
// range, checking the client's digests of the source first (see the top
// of this file). A source on a hierarchical account is its path, read by
// call's caller (pathSource).
func (s *Service) fromSource(ctx context.Context, call Call, f *FromURLSource, write0 func(tx kv.Tx, parts []extent.Part, n int64, src *blobRec) error) (digests, error) {
	s.pathSource(f, call)
	f.now = s.now(call)
	if call.CPK != nil || f.CPK != nil {
		// The source's encrypted items can be shared only under the key
		// they are encrypted with; under another key (or none) the
		// bytes are copied, decrypted and encrypted again.
		var srcKey string
		err := s.store.View(ctx, func(tx kv.Tx) error {
			_, _, src, err := f.read(tx)
			if err == nil && src != nil {
				srcKey = src.CPK
			}
			return err
		})
		if err != nil {
			return digests{}, err
		}
		if srcKey != shaOf(call.CPK) {
			return s.fromSourceCopied(ctx, call, f, write0)
		}
	}
	write := func(tx kv.Tx, parts []extent.Part, n int64, src *blobRec) error {
		if err := fromURLKeys(src, f.CPK, call.CPK); err != nil {
			return err
		}
		return write0(tx, parts, n, src)
	}
	if !f.wantsDigest() {
		return digests{}, s.store.Update(ctx, func(tx kv.Tx) error {
			parts, n, src, err := f.read(tx)
			if err != nil {
				return err
			}
			return write(tx, parts, n, src)
		})
	}
	for attempt := 1; ; attempt++ {
		final := attempt == fromURLAttempts
		var d digests
		var want []extent.Part
		if !final {
			err := s.store.View(ctx, func(tx kv.Tx) error {
				parts, n, src, err := f.read(tx)
				if err != nil {
					return err
				}
				if err := fromURLKeys(src, f.CPK, call.CPK); err != nil {
					return err
				}
				want = parts
				d, err = s.hash(ctx, tx, f.Checksums, parts, n, cipherOf(f.CPK))
				return err
			})
			if err != nil {
				return d, err
			}
		}
		err := s.store.Update(ctx, func(tx kv.Tx) error {
			parts, n, src, err := f.read(tx)
			if err != nil {
				return err
			}
			if final {
				if d, err = s.hash(ctx, tx, f.Checksums, parts, n, cipherOf(f.CPK)); err != nil {
					return err
				}
			} else if !extent.SameParts(parts, want) {
				return errSourceChanged
			}
			return write(tx, parts, n, src)
		})
		if errors.Is(err, errSourceChanged) {
			continue
		}
		return d, err
	}
}

// fromSourceCopied is fromSource for a source whose bytes cannot be
// shared with the destination: encrypted with another customer-provided
// key than the destination's, or one of them without a key. The source
// range is read (decrypted with the source key sent) and staged anew
// (encrypted with the destination's key, if any) before the
// transaction, which then checks that the source still has the parts
// that were read and runs write with the staged parts.
func (s *Service) fromSourceCopied(ctx context.Context, call Call, f *FromURLSource, write func(tx kv.Tx, parts []extent.Part, n int64, src *blobRec) error) (d digests, err error) {
	for attempt := 1; attempt <= fromURLAttempts; attempt++ {
		var parts []extent.Part
		var n int64
		rp := s.data.NewReadPins()
		err := s.store.View(ctx, func(tx kv.Tx) error {
			var src *blobRec
			var err error
			if parts, n, src, err = f.read(tx); err != nil {
				return err
			}
			if err := fromURLSourceKey(src, f.CPK); err != nil {
				return err
			}
			if f.wantsDigest() {
				if d, err = s.hash(ctx, tx, f.Checksums, parts, n, cipherOf(f.CPK)); err != nil {
					return err
				}
			}
			// Pinned inside the transaction (extent.ReadPins).
			return rp.Load(tx, parts, 0, n)
		})
		if err != nil {
			rp.Release()
			return d, err
		}
		rd := s.data.OpenReader(ctx, rp, cipherOf(f.CPK))
		st, err := s.data.StageSealed(ctx, rd, n, false, false, cipherOf(call.CPK))
		rd.Close()
		if err != nil {
			return d, err
		}
		recorded := false
		err = s.store.Update(ctx, extent.Recording(&recorded, func(tx kv.Tx) error {
			now, _, src, err := f.read(tx)
			if err != nil {
				return err
			}
			if !extent.SameParts(now, parts) {
				return errSourceChanged
			}
			if err := st.Write(tx); err != nil {
				return err
			}
			return write(tx, st.Parts, n, src)
		}))
		st.Finish(ctx, recorded)
		if errors.Is(err, errSourceChanged) {
			continue
		}
		return d, err
	}
	return d, azerr.Newf(azerr.CannotVerifyCopySource, "The copy source changed while it was read.").WithStatus(409) // Conflict
}

// checkSourceSize bounds the n bytes a block or append takes from its
// source.
func checkSourceSize(n, max int64) error {
	if n == 0 {
		return azerr.Newf(azerr.InvalidHeaderValue, "The source range is empty.").With("HeaderName", "x-ms-source-range").With("HeaderValue", "")
	}
	if n > max {
		return azerr.New(azerr.RequestBodyTooLarge)
	}
	return nil
}

// PutBlobFromURLInput is Put Blob From URL: a block blob at Ref whose
// content is the source's. With CopyProperties the source's content
// properties replace NewBlob's; with CopyTags, its tags.
type PutBlobFromURLInput struct {
	Call
	Ref        BlobRef
	Access     Access
	CreateOnly bool
	NewBlob
	Source         FromURLSource
	CopyProperties bool
	CopyTags       bool
}

// FromURLOutput is the blob after a From URL write, with the digests of
// the source range when they were checked.
type FromURLOutput struct {
	// VersionID is the version the write made current ("" with
	// versioning off): x-ms-version-id.
	VersionID    string
	ETag         string
	LastModified time.Time
	ContentMD5   []byte
	ContentCRC64 []byte
	// A page blob's sequence number (Put Page From URL); where an
	// append landed and the blob's block count (Append Block From URL).
	SequenceNumber      int64
	AppendOffset        int64
	CommittedBlockCount int
	ServerEncrypted     bool
}

// PutBlobFromURL is Put Blob From URL
// (https://learn.microsoft.com/en-us/rest/api/storageservices/put-blob-from-url).
func (s *Service) PutBlobFromURL(ctx context.Context, in PutBlobFromURLInput) (FromURLOutput, error) {
	if hns := s.nsOf(in.Ref.Account); hns != nil {
		if in.Immutability != nil {
			return FromURLOutput{}, errNoImmutability() // a hierarchical account has no versions
		}
		return s.putBlobFromURLPath(ctx, hns, in)
	}
	now := s.now(in.Call)
	ref, acc, createOnly, newb, copyProps, copyTags, key := in.Ref, in.Access, in.CreateOnly, in.NewBlob, in.CopyProperties, in.CopyTags, in.CPK
	// The version-level immutability headers, as Put Blob takes them
	// (immutability.go): the new version gets the policy and hold.
	imm, hold, err := s.checkWriteImmutability(ref.Account, newb.Immutability, now)
	if err != nil {
		return FromURLOutput{}, err
	}
	var rec *blobRec
	d, err := s.fromSource(ctx, in.Call, &in.Source, func(tx kv.Tx, parts []extent.Part, n int64, src *blobRec) error {
		if n > maxPutBlob {
			return azerr.New(azerr.RequestBodyTooLarge)
		}
		nb := newb.record(BlockBlob)
		nb.Size, nb.Parts, nb.CPK = n, parts, shaOf(key)
		nb.Imm, nb.Hold = imm, hold
		if copyProps {
			nb.Props = src.Props
			if nb.Props.ContentType == "" {
				nb.Props.ContentType = "application/octet-stream"
			}
		}
		if nb.Props.ContentMD5 == nil {
			nb.Props.ContentMD5 = src.Props.ContentMD5 // the same bytes
		}
		if copyTags {
			nb.Tags = src.Tags
		}
		var err error
		rec, err = s.replaceBlob(tx, ref, acc, createOnly, now, &nb)
		return s.blobWritten(tx, err, in.Call, apiPutBlobFromURL, ref, rec)
	})
	if err != nil {
		return FromURLOutput{}, err
	}
	out := FromURLOutput{ETag: rec.ETag, LastModified: rec.Modified, ContentMD5: rec.Props.ContentMD5, ContentCRC64: d.crc, ServerEncrypted: true, VersionID: rec.VersionID}
	if d.md5 != nil {
		out.ContentMD5 = d.md5
	}
	return out, nil
}

// PutBlockFromURLInput is Put Block From URL: block BlockID (Base64) of
// the blob Ref holding the source range. LeaseID is the lease the caller
// holds on the blob ("" for none).
type PutBlockFromURLInput struct {
	Call
	Ref     BlobRef
	LeaseID string
	BlockID string
	Source  FromURLSource
}

// PutBlockFromURL is Put Block From URL
// (https://learn.microsoft.com/en-us/rest/api/storageservices/put-block-from-url).
func (s *Service) PutBlockFromURL(ctx context.Context, in PutBlockFromURLInput) (FromURLOutput, error) {
	now := s.now(in.Call)
	rawID, err := wire.DecodeBlockID(in.BlockID)
	if err != nil {
		return FromURLOutput{}, err
	}
	ref, leaseID, id, key := in.Ref, in.LeaseID, in.BlockID, in.CPK
	d, err := s.fromSource(ctx, in.Call, &in.Source, func(tx kv.Tx, parts []extent.Part, n int64, _ *blobRec) error {
		if err := checkSourceSize(n, maxPutBlock); err != nil {
			return err
		}
		return s.stageBlock(tx, ref, leaseID, now, rawID, id, n, parts, shaOf(key))
	})
	if err != nil {
		return FromURLOutput{}, err
	}
	return FromURLOutput{ContentMD5: d.md5, ContentCRC64: d.crc, ServerEncrypted: true}, nil
}

// AppendBlockFromURLInput is Append Block From URL: the source range
// appended to the append blob Ref under the append conditions (see
// AppendBlockInput).
type AppendBlockFromURLInput struct {
	Call
	Ref            BlobRef
	Access         Access
	AppendPosition *int64
	MaxSize        *int64
	Source         FromURLSource
}

// AppendBlockFromURL is Append Block From URL
// (https://learn.microsoft.com/en-us/rest/api/storageservices/append-block-from-url).
func (s *Service) AppendBlockFromURL(ctx context.Context, in AppendBlockFromURLInput) (FromURLOutput, error) {
	l := s.layoutOf(in.Ref.Account)
	now := s.now(in.Call)
	ref, acc, appendPos, maxSize := in.Ref, in.Access, optional(in.AppendPosition), optional(in.MaxSize)
	var b *blobRec
	var offset int64
	d, err := s.fromSource(ctx, in.Call, &in.Source, func(tx kv.Tx, parts []extent.Part, n int64, _ *blobRec) (err error) {
		if err := checkSourceSize(n, maxAppendBlock); err != nil {
			return err
		}
		b, err = l.updateTx(tx, ref, acc, wormAppend, in.Caller, now, func(tx kv.Tx, b *blobRec) (err error) {
			if err := checkCPK(b, in.CPK); err != nil {
				return err
			}
			offset, err = appendParts(tx, now, b, appendPos, maxSize, n, parts)
			return err
		})
		return err
	})
	if err != nil {
		return FromURLOutput{}, err
	}
	return FromURLOutput{ETag: b.ETag, LastModified: b.Modified, ContentMD5: d.md5, ContentCRC64: d.crc,
		AppendOffset: offset, CommittedBlockCount: b.Appends, ServerEncrypted: true}, nil
}

// PutPageFromURLInput is Put Page From URL: the source range (as long as
// Length) written over pages [Offset, Offset+Length) of the page blob
// Ref, under the write and sequence number conditions.
type PutPageFromURLInput struct {
	Call
	Ref            BlobRef
	Access         Access
	Sequence       SequenceConditions
	Offset, Length int64
	Source         FromURLSource
}

// PutPageFromURL is Put Page From URL
// (https://learn.microsoft.com/en-us/rest/api/storageservices/put-page-from-url).
func (s *Service) PutPageFromURL(ctx context.Context, in PutPageFromURLInput) (FromURLOutput, error) {
	if err := s.layoutOf(in.Ref.Account).pageBlobs(); err != nil {
		return FromURLOutput{}, err
	}
	now := s.now(in.Call)
	ref, acc, seq, off, n, key := in.Ref, in.Access, in.Sequence, in.Offset, in.Length, in.CPK
	var b *blobRec
	d, err := s.fromSource(ctx, in.Call, &in.Source, func(tx kv.Tx, parts []extent.Part, _ int64, _ *blobRec) (err error) {
		b, err = updateBlobTx(tx, ref, acc, wormWrite, now, func(tx kv.Tx, b *blobRec) error {
			if err := checkCPK(b, key); err != nil {
				return err
			}
			return writePages(tx, now, seq, b, off, n, parts)
		})
		return err
	})
	if err != nil {
		return FromURLOutput{}, err
	}
	return FromURLOutput{ETag: b.ETag, LastModified: b.Modified, SequenceNumber: b.SeqNum, ContentMD5: d.md5, ContentCRC64: d.crc, ServerEncrypted: true}, nil
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

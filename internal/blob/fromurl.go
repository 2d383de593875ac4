package blob

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"hash/crc64"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// The *FromURL writes (Put Blob From URL, Put Block From URL, Append
// Block From URL, Put Page From URL) take their bytes from a blob or file
// of this account named by x-ms-copy-source, instead of the request body. No byte
// is copied: the written blob or block shares the source's data items,
// which count the new references, exactly as Copy Blob does; the source
// is read and the destination written in one transaction. When the client
// asks the source's digest to be checked (x-ms-source-content-md5 /
// -crc64) the bytes are hashed outside the write transaction, which then
// checks the source range still maps the same data (the last attempt
// hashes inside it, so a source rewritten without pause cannot starve the
// request).

const fromURLAttempts = 3

var errSourceChanged = errors.New("blob: copy source changed while it was hashed")

// source is the parsed source of a *FromURL write.
type source struct {
	account, container, name, snap string
	file                           *fileSource     // a file of this server instead of a blob
	conds                          cond.Conditions // x-ms-source-if-*
	rng                            *wire.Range     // x-ms-source-range; nil: all of it
	md5, crc                       []byte          // digests the client expects, if any
}

// parseSource reads x-ms-copy-source and the source headers of a
// *FromURL write; rangeAllowed is false for Put Blob From URL.
func (s *Service) parseSource(r *req, rangeAllowed bool) (*source, error) {
	if r.ContentLength > 0 { // the bytes come from the source
		return nil, azerr.InvalidHeader("Content-Length", strconv.FormatInt(r.ContentLength, 10))
	}
	src := &source{file: s.fileCopySource(r)}
	if f := src.file; f != nil {
		if err := f.peer.AuthorizeCopySource(r.Request, f.path, f.q, true); err != nil {
			return nil, err
		}
	} else {
		acct, c, name, snap, err := copySource(r)
		if err != nil {
			return nil, err
		}
		if err := s.authorizeSource(r, acct, c, name); err != nil {
			return nil, err
		}
		src.account, src.container, src.name, src.snap = acct, c, name, snap
	}
	var err error
	if src.conds, err = cond.ParseSource(r.Header); err != nil {
		return nil, err
	}
	if v := r.Header.Get("x-ms-source-range"); v != "" {
		rng, err := wire.ParseRange(http.Header{http.CanonicalHeaderKey(wire.HeaderXMsRange): {v}})
		if !rangeAllowed || err != nil || rng == nil || rng.Open() {
			return nil, azerr.InvalidHeader("x-ms-source-range", v)
		}
		src.rng = rng
	}
	if v := r.Header.Get("x-ms-source-content-md5"); v != "" {
		if src.md5, err = base64.StdEncoding.DecodeString(v); err != nil || len(src.md5) != md5.Size {
			return nil, azerr.InvalidHeader("x-ms-source-content-md5", v)
		}
	}
	if v := r.Header.Get("x-ms-source-content-crc64"); v != "" {
		if src.crc, err = base64.StdEncoding.DecodeString(v); err != nil || len(src.crc) != 8 {
			return nil, azerr.InvalidHeader("x-ms-source-content-crc64", v)
		}
	}
	return src, nil
}

// read resolves the source in tx: the parts of its range (offsets from
// 0), the range's length, and the source record.
func (f *source) read(tx kv.Tx, r *req) ([]extent.Part, int64, *blobRec, error) {
	var b *blobRec
	var readable func(off, n int64) error
	var err error
	if f.file != nil {
		b, readable, err = f.file.record(tx, r)
	} else {
		b, err = findBlob(tx, f.account, f.container, f.name, f.snap)
	}
	if err != nil {
		return nil, 0, nil, err
	}
	if b == nil {
		return nil, 0, nil, azerr.Newf(azerr.CannotVerifyCopySource, "The specified blob does not exist.")
	}
	if err := f.conds.CheckSource(b.ETag, b.Modified); err != nil {
		return nil, 0, nil, err
	}
	if err := notArchived(b); err != nil {
		return nil, 0, nil, err
	}
	off, n := int64(0), b.Size
	if f.rng != nil {
		if off, n, err = f.rng.Resolve(b.Size); err != nil {
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

func (f *source) wantsDigest() bool { return f.md5 != nil || f.crc != nil }

// hash reads the n bytes of parts and checks them against the client's
// digests.
func (s *Service) hash(ctx context.Context, tx kv.Tx, f *source, parts []extent.Part, n int64) (digests, error) {
	inline, err := extent.Prefetch(tx, parts, 0, n)
	if err != nil {
		return digests{}, err
	}
	var sinks []io.Writer
	var mh hash.Hash
	var ch hash.Hash64
	if f.md5 != nil {
		mh = md5.New()
		sinks = append(sinks, mh)
	}
	if f.crc != nil {
		ch = crc64.New(extent.CRC64Table)
		sinks = append(sinks, ch)
	}
	rd := s.data.NewReader(ctx, parts, inline, 0, n)
	defer rd.Close()
	if _, err := io.CopyN(io.MultiWriter(sinks...), rd, n); err != nil {
		return digests{}, err
	}
	var d digests
	if mh != nil {
		if d.md5 = mh.Sum(nil); !bytes.Equal(d.md5, f.md5) {
			return d, azerr.New(azerr.MD5Mismatch).With("UserSpecifiedMd5", base64.StdEncoding.EncodeToString(f.md5)).With("ServerCalculatedMd5", base64.StdEncoding.EncodeToString(d.md5))
		}
	}
	if ch != nil {
		if d.crc = binary.LittleEndian.AppendUint64(nil, ch.Sum64()); !bytes.Equal(d.crc, f.crc) {
			return d, azerr.New(azerr.CRC64Mismatch).With("UserSpecifiedCrc", base64.StdEncoding.EncodeToString(f.crc)).With("ServerCalculatedCrc", base64.StdEncoding.EncodeToString(d.crc))
		}
	}
	return d, nil
}

// fromSource runs write, in one transaction with the read of the source
// range, checking the client's digests of the source first (see the top
// of this file).
func (s *Service) fromSource(r *req, f *source, write func(tx kv.Tx, parts []extent.Part, n int64, src *blobRec) error) (digests, error) {
	if !f.wantsDigest() {
		return digests{}, s.store.Update(r.Context(), func(tx kv.Tx) error {
			parts, n, src, err := f.read(tx, r)
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
			err := s.store.View(r.Context(), func(tx kv.Tx) error {
				parts, n, _, err := f.read(tx, r)
				if err != nil {
					return err
				}
				want = parts
				d, err = s.hash(r.Context(), tx, f, parts, n)
				return err
			})
			if err != nil {
				return d, err
			}
		}
		err := s.store.Update(r.Context(), func(tx kv.Tx) error {
			parts, n, src, err := f.read(tx, r)
			if err != nil {
				return err
			}
			if final {
				if d, err = s.hash(r.Context(), tx, f, parts, n); err != nil {
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

func (d digests) echo(w http.ResponseWriter) {
	if d.md5 != nil {
		w.Header().Set("Content-MD5", base64.StdEncoding.EncodeToString(d.md5))
	}
	if d.crc != nil {
		w.Header().Set("x-ms-content-crc64", base64.StdEncoding.EncodeToString(d.crc))
	}
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

// putBlobFromURL is Put Blob From URL: a block blob whose content is the
// source's. The source's HTTP properties are copied unless
// x-ms-copy-source-blob-properties is false or the request gives its
// own; metadata, tier and tags come from the request (tags from the
// source with x-ms-copy-source-tag-option: COPY).
func (s *Service) putBlobFromURL(w http.ResponseWriter, r *req) error {
	if err := wire.ValidBlobName(r.name); err != nil {
		return err
	}
	if typ := r.Header.Get("x-ms-blob-type"); typ != BlockBlob {
		return azerr.InvalidHeader("x-ms-blob-type", typ)
	}
	newb, conds, err := parseNewBlob(r, BlockBlob)
	if err != nil {
		return err
	}
	_, copyTags, err := tagsForCopy(r, true)
	if err != nil {
		return err
	}
	copyProps := true
	if v := r.Header.Get("x-ms-copy-source-blob-properties"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return azerr.InvalidHeader("x-ms-copy-source-blob-properties", v)
		}
		copyProps = b
	}
	f, err := s.parseSource(r, false)
	if err != nil {
		return err
	}
	var rec *blobRec
	d, err := s.fromSource(r, f, func(tx kv.Tx, parts []extent.Part, n int64, src *blobRec) error {
		if n > maxPutBlob {
			return azerr.New(azerr.RequestBodyTooLarge)
		}
		nb := newb.record(BlockBlob)
		nb.Size, nb.Parts = n, parts
		if copyProps && !sendsContentHeaders(r.Header) {
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
		rec, err = s.replaceBlob(tx, r.ref(), r.access(conds), r.createOnly(), r.Now, &nb)
		return err
	})
	if err != nil {
		return err
	}
	setETag(w, rec.ETag, rec.Modified)
	if rec.Props.ContentMD5 != nil {
		w.Header().Set("Content-MD5", base64.StdEncoding.EncodeToString(rec.Props.ContentMD5))
	}
	d.echo(w)
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusCreated)
	return nil
}

// tagsForCopy reads the tags of a copy's destination: x-ms-tags, or, when
// allowed and x-ms-copy-source-tag-option is COPY, the source's (copy
// true).
func tagsForCopy(r *req, copyAllowed bool) (tags blobtags.Tags, copy bool, err error) {
	if tags, err = requestTags(r); err != nil {
		return nil, false, err
	}
	switch opt := r.Header.Get("x-ms-copy-source-tag-option"); {
	case opt == "", strings.EqualFold(opt, "REPLACE"):
		return tags, false, nil
	case strings.EqualFold(opt, "COPY") && copyAllowed:
		if tags != nil {
			return nil, false, azerr.Newf(azerr.InvalidHeaderValue, "x-ms-tags cannot be given with x-ms-copy-source-tag-option: COPY.").With("HeaderName", "x-ms-tags").With("HeaderValue", r.Header.Get("x-ms-tags"))
		}
		return nil, true, nil
	default:
		return nil, false, azerr.InvalidHeader("x-ms-copy-source-tag-option", opt)
	}
}

// putBlockFromURL is Put Block From URL: an uncommitted block holding the
// source range (all of the source without x-ms-source-range).
func (s *Service) putBlockFromURL(w http.ResponseWriter, r *req) error {
	if err := wire.ValidBlobName(r.name); err != nil {
		return err
	}
	idParam, rawID, err := parseBlockID(r)
	if err != nil {
		return err
	}
	f, err := s.parseSource(r, true)
	if err != nil {
		return err
	}
	d, err := s.fromSource(r, f, func(tx kv.Tx, parts []extent.Part, n int64, _ *blobRec) error {
		if err := checkSourceSize(n, maxPutBlock); err != nil {
			return err
		}
		return s.stageBlock(tx, r.ref(), r.Header.Get("x-ms-lease-id"), r.Now, rawID, idParam, n, parts)
	})
	if err != nil {
		return err
	}
	d.echo(w)
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusCreated)
	return nil
}

// appendBlockFromURL is Append Block From URL.
func (s *Service) appendBlockFromURL(w http.ResponseWriter, r *req) error {
	conds, appendPos, maxSize, err := parseAppendConds(r)
	if err != nil {
		return err
	}
	f, err := s.parseSource(r, true)
	if err != nil {
		return err
	}
	var b *blobRec
	var offset int64
	d, err := s.fromSource(r, f, func(tx kv.Tx, parts []extent.Part, n int64, _ *blobRec) (err error) {
		if err := checkSourceSize(n, maxAppendBlock); err != nil {
			return err
		}
		b, err = updateBlobTx(tx, r.ref(), r.access(conds), r.Now, func(tx kv.Tx, b *blobRec) (err error) {
			offset, err = appendParts(tx, r.Now, b, appendPos, maxSize, n, parts)
			return err
		})
		return err
	})
	if err != nil {
		return err
	}
	writeAppendResult(w, b.ETag, b.Modified, offset, b.Appends, true)
	d.echo(w)
	w.WriteHeader(http.StatusCreated)
	return nil
}

// putPageFromURL is Put Page From URL: the source range (required, as
// long as x-ms-range) written over the destination pages.
func (s *Service) putPageFromURL(w http.ResponseWriter, r *req) error {
	conds, off, n, err := parsePageWrite(r)
	if err != nil {
		return err
	}
	if mode := r.Header.Get("x-ms-page-write"); mode != "update" {
		if mode == "" {
			return azerr.MissingHeader("x-ms-page-write")
		}
		return azerr.InvalidHeader("x-ms-page-write", mode)
	}
	if r.Header.Get("x-ms-source-range") == "" {
		return azerr.MissingHeader("x-ms-source-range")
	}
	f, err := s.parseSource(r, true)
	if err != nil {
		return err
	}
	if f.rng.End-f.rng.Start+1 != n {
		return azerr.InvalidHeader("x-ms-source-range", r.Header.Get("x-ms-source-range"))
	}
	var b *blobRec
	seq := parseSequenceConds(r.Header)
	d, err := s.fromSource(r, f, func(tx kv.Tx, parts []extent.Part, _ int64, _ *blobRec) (err error) {
		b, err = updateBlobTx(tx, r.ref(), r.access(conds), r.Now, func(tx kv.Tx, b *blobRec) error {
			return writePages(tx, r.Now, seq, b, off, n, parts)
		})
		return err
	})
	if err != nil {
		return err
	}
	setETag(w, b.ETag, b.Modified)
	w.Header().Set("x-ms-blob-sequence-number", strconv.FormatInt(b.SeqNum, 10))
	w.Header().Set("x-ms-request-server-encrypted", "true")
	d.echo(w)
	w.WriteHeader(http.StatusCreated)
	return nil
}

package blobrest

import (
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// The REST handlers of the *FromURL writes (domain_fromurl.go).

// parseSource reads x-ms-copy-source and the source headers of a
// *FromURL write, and authorizes the source; rangeAllowed is false for
// Put Blob From URL.
func (s *Service) parseSource(r *req, rangeAllowed bool) (blob.FromURLSource, error) {
	var src blob.FromURLSource
	if r.ContentLength > 0 { // the bytes come from the source
		return src, azerr.InvalidHeader("Content-Length", strconv.FormatInt(r.ContentLength, 10))
	}
	if f := s.fileCopySource(r); f != nil {
		if err := f.peer.AuthorizeCopySource(r.Request, f.path, f.q, true); err != nil {
			return src, err
		}
		rd, err := f.peer.CopySourceReader(f.path, f.q)
		if err != nil {
			return src, err
		}
		src.File = rd
	} else {
		acct, c, name, snap, err := copySource(r)
		if err != nil {
			return src, err
		}
		if err := s.authorizeSource(r, acct, c, name); err != nil {
			return src, err
		}
		src.Blob = blob.BlobRef{Account: acct, Container: c, Blob: name, Snapshot: snap, VersionID: versionSource(r, snap)}
	}
	var err error
	if src.Cond, err = cond.ParseSource(r.Header); err != nil {
		return src, err
	}
	if v := wire.Field(r.Header, "X-Ms-Source-Range"); v != "" {
		rng, err := wire.ParseRange(http.Header{http.CanonicalHeaderKey(wire.HeaderXMsRange): {v}})
		if !rangeAllowed || err != nil || rng == nil || rng.Open() {
			return src, azerr.InvalidHeader("x-ms-source-range", v)
		}
		src.Range = rng
	}
	if v := wire.Field(r.Header, "X-Ms-Source-Content-Md5"); v != "" {
		if src.Checksums.MD5, err = base64.StdEncoding.DecodeString(v); err != nil || len(src.Checksums.MD5) != md5.Size {
			return src, azerr.InvalidHeader("x-ms-source-content-md5", v)
		}
	}
	if v := wire.Field(r.Header, "X-Ms-Source-Content-Crc64"); v != "" {
		if src.Checksums.CRC64, err = base64.StdEncoding.DecodeString(v); err != nil || len(src.Checksums.CRC64) != 8 {
			return src, azerr.InvalidHeader("x-ms-source-content-crc64", v)
		}
	}
	if src.CPK, err = parseCPK(r.Header, r.HTTPS, &cpkSource); err != nil {
		return src, err
	}
	return src, nil
}

// putBlobFromURL is Put Blob From URL's REST handler. The source's HTTP
// properties are copied unless x-ms-copy-source-blob-properties is false
// or the request gives its own; metadata, tier and tags come from the
// request (tags from the source with x-ms-copy-source-tag-option: COPY).
func (s *Service) putBlobFromURL(r *req) (server.Response, error) {
	if err := wire.ValidBlobName(r.name); err != nil {
		return server.Response{}, err
	}
	if typ := wire.Field(r.Header, "X-Ms-Blob-Type"); typ != blob.BlockBlob {
		return server.Response{}, azerr.InvalidHeader("x-ms-blob-type", typ)
	}
	newb, conds, err := parseNewBlob(r, blob.BlockBlob)
	if err != nil {
		return server.Response{}, err
	}
	_, copyTags, err := tagsForCopy(r, true)
	if err != nil {
		return server.Response{}, err
	}
	copyProps := true
	if v := wire.Field(r.Header, "X-Ms-Copy-Source-Blob-Properties"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return server.Response{}, azerr.InvalidHeader("x-ms-copy-source-blob-properties", v)
		}
		copyProps = b
	}
	f, err := s.parseSource(r, false)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.PutBlobFromURL(r.Context(), blob.PutBlobFromURLInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds), CreateOnly: r.createOnly(), NewBlob: newb,
		Source: f, CopyProperties: copyProps && !sendsContentHeaders(r.Header), CopyTags: copyTags})
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusCreated, 6)
	setETag(&resp, out.ETag, out.LastModified)
	echoDigests(&resp, out.ContentMD5, out.ContentCRC64)
	resp.Set("X-Ms-Request-Server-Encrypted", strconv.FormatBool(out.ServerEncrypted))
	setVersionID(&resp, out.VersionID)
	return resp, nil
}

// putBlockFromURL is Put Block From URL's REST handler: an uncommitted
// block holding the source range (all of the source without
// x-ms-source-range).
func (s *Service) putBlockFromURL(r *req) (server.Response, error) {
	if err := wire.ValidBlobName(r.name); err != nil {
		return server.Response{}, err
	}
	idParam, _, err := parseBlockID(r)
	if err != nil {
		return server.Response{}, err
	}
	f, err := s.parseSource(r, true)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.PutBlockFromURL(r.Context(), blob.PutBlockFromURLInput{Call: r.call(), Ref: r.ref(), LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id"), BlockID: idParam, Source: f})
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusCreated, 4)
	echoDigests(&resp, out.ContentMD5, out.ContentCRC64)
	resp.Set("X-Ms-Request-Server-Encrypted", strconv.FormatBool(out.ServerEncrypted))
	setVersionID(&resp, out.VersionID)
	return resp, nil
}

// appendBlockFromURL is Append Block From URL's REST handler.
func (s *Service) appendBlockFromURL(r *req) (server.Response, error) {
	conds, appendPos, maxSize, err := parseAppendConds(r)
	if err != nil {
		return server.Response{}, err
	}
	f, err := s.parseSource(r, true)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.AppendBlockFromURL(r.Context(), blob.AppendBlockFromURLInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds),
		AppendPosition: optSize(appendPos), MaxSize: optSize(maxSize), Source: f})
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusCreated, 7)
	writeAppendResult(&resp, out.ETag, out.LastModified, out.AppendOffset, out.CommittedBlockCount, out.ServerEncrypted)
	echoDigests(&resp, out.ContentMD5, out.ContentCRC64)
	return resp, nil
}

// putPageFromURL is Put Page From URL's REST handler: the source range
// (required, as long as x-ms-range) written over the destination pages.
func (s *Service) putPageFromURL(r *req) (server.Response, error) {
	conds, off, n, err := parsePageWrite(r)
	if err != nil {
		return server.Response{}, err
	}
	if mode := wire.Field(r.Header, "X-Ms-Page-Write"); mode != "update" {
		if mode == "" {
			return server.Response{}, azerr.MissingHeader("x-ms-page-write")
		}
		return server.Response{}, azerr.InvalidHeader("x-ms-page-write", mode)
	}
	if wire.Field(r.Header, "X-Ms-Source-Range") == "" {
		return server.Response{}, azerr.MissingHeader("x-ms-source-range")
	}
	f, err := s.parseSource(r, true)
	if err != nil {
		return server.Response{}, err
	}
	if f.Range.End-f.Range.Start+1 != n {
		return server.Response{}, azerr.InvalidHeader("x-ms-source-range", wire.Field(r.Header, "X-Ms-Source-Range"))
	}
	out, err := s.PutPageFromURL(r.Context(), blob.PutPageFromURLInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds),
		Sequence: parseSequenceConds(r.Header), Offset: off, Length: n, Source: f})
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusCreated, 6)
	setETag(&resp, out.ETag, out.LastModified)
	resp.Set("X-Ms-Blob-Sequence-Number", strconv.FormatInt(out.SequenceNumber, 10))
	resp.Set("X-Ms-Request-Server-Encrypted", strconv.FormatBool(out.ServerEncrypted))
	echoDigests(&resp, out.ContentMD5, out.ContentCRC64)
	return resp, nil
}

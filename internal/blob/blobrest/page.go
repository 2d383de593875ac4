package blobrest

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// parseSequenceConds reads the x-ms-if-sequence-number-le/-lt/-eq
// conditions of a page write, in that order. A malformed one is 400
// InvalidHeaderValue, reported when the conditions are evaluated, after
// those before it (SequenceConditions.check).
func parseSequenceConds(h http.Header) blob.SequenceConditions {
	var c blob.SequenceConditions
	for _, f := range []struct {
		name string
		dst  **int64
	}{
		{"x-ms-if-sequence-number-le", &c.LessOrEqual},
		{"x-ms-if-sequence-number-lt", &c.Less},
		{"x-ms-if-sequence-number-eq", &c.Equal},
	} {
		s := h.Get(f.name)
		if s == "" {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			c.Err = azerr.InvalidHeader(f.name, s)
			return c
		}
		*f.dst = &v
	}
	return c
}

// putPage is Put Page's REST handler (update or clear).
func (s *Service) putPage(r *req) (server.Response, error) {
	conds, off, n, err := parsePageWrite(r)
	if err != nil {
		return server.Response{}, err
	}
	in := blob.PutPageInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds), Sequence: parseSequenceConds(r.Header), Offset: off, Length: n, CheckFirst: expectsContinue(r.Header)}
	mode := wire.Field(r.Header, "X-Ms-Page-Write")
	switch mode {
	case "update":
		if n > blob.MaxPageWrite {
			return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
		}
		if r.ContentLength != n {
			return server.Response{}, azerr.Newf(azerr.InvalidPageRange, "The page range length must equal the Content-Length.")
		}
		if in.Checksums, err = parseChecksums(r.Header); err != nil {
			return server.Response{}, err
		}
		in.Body = r.Body
	case "clear":
		if r.ContentLength > 0 {
			return server.Response{}, azerr.InvalidHeader("Content-Length", strconv.FormatInt(r.ContentLength, 10))
		}
		in.Clear = true
	case "":
		return server.Response{}, azerr.MissingHeader("x-ms-page-write")
	default:
		return server.Response{}, azerr.InvalidHeader("x-ms-page-write", mode)
	}
	out, err := s.PutPage(r.Context(), in)
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusCreated, 6)
	setETag(&resp, out.ETag, out.LastModified)
	resp.Set("X-Ms-Blob-Sequence-Number", strconv.FormatInt(out.SequenceNumber, 10))
	if !in.Clear {
		echoDigests(&resp, out.ContentMD5, out.ContentCRC64)
		resp.Set("X-Ms-Request-Server-Encrypted", strconv.FormatBool(out.ServerEncrypted))
	}
	return resp, nil
}

// parsePageWrite reads the conditions and the page range of a page write.
func parsePageWrite(r *req) (conds cond.Conditions, off, n int64, err error) {
	if conds, err = cond.Parse(r.Header); err != nil {
		return conds, 0, 0, err
	}
	off, n, err = wire.PageRange(r.Header)
	return conds, off, n, err
}

type pageRangeXML struct {
	XMLName xml.Name
	Start   int64 `xml:"Start"`
	End     int64 `xml:"End"`
}

type pageListXML struct {
	XMLName xml.Name       `xml:"PageList"`
	Ranges  []pageRangeXML `xml:",any"`
}

// getPageRanges is Get Page Ranges' REST handler.
func (s *Service) getPageRanges(r *req) (server.Response, error) {
	rng, err := wire.ParseRange(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	prevSnap := r.q.Get("prevsnapshot")
	if prevSnap != "" {
		prevT, err := wire.ParseSnapshot(prevSnap)
		if err != nil {
			return server.Response{}, azerr.InvalidQuery("prevsnapshot", prevSnap)
		}
		prevSnap = wire.FormatISO7(prevT)
	}
	pr, err := s.GetPageRanges(r.Context(), blob.GetPageRangesInput{Call: r.call(), Ref: r.ref(), Access: r.readAccess(), Range: rng, PrevSnapshot: prevSnap})
	if err != nil {
		return server.Response{}, err
	}
	out := pageListXML{Ranges: []pageRangeXML{}}
	for _, sp := range pr.Ranges {
		name := "PageRange"
		if sp.Clear {
			name = "ClearRange"
		}
		out.Ranges = append(out.Ranges, pageRangeXML{XMLName: xml.Name{Local: name}, Start: sp.Off, End: sp.End - 1})
	}
	resp, err := server.XML(http.StatusOK, out)
	if err != nil {
		return resp, err
	}
	resp.Header = make([]server.HeaderField, 0, 3)
	setETag(&resp, pr.ETag, pr.LastModified)
	resp.Set("X-Ms-Blob-Content-Length", strconv.FormatInt(pr.Size, 10))
	return resp, nil
}

// appendBlock is Append Block's REST handler.
func (s *Service) appendBlock(r *req) (server.Response, error) {
	conds, appendPos, maxSize, err := parseAppendConds(r)
	if err != nil {
		return server.Response{}, err
	}
	in := blob.AppendBlockInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds), AppendPosition: optSize(appendPos), MaxSize: optSize(maxSize), Body: r.Body,
		CheckFirst: expectsContinue(r.Header)}
	if in.Checksums, err = parseChecksums(r.Header); err != nil {
		return server.Response{}, err
	}
	if in.Length, err = contentLength(r); err != nil {
		return server.Response{}, err
	}
	out, err := s.AppendBlock(r.Context(), in)
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusCreated, 7)
	writeAppendResult(&resp, out.ETag, out.LastModified, out.AppendOffset, out.CommittedBlockCount, out.ServerEncrypted)
	echoDigests(&resp, out.ContentMD5, out.ContentCRC64)
	return resp, nil
}

// optSize is a size header's value as an optional input (-1: absent).
func optSize(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

// writeAppendResult sets the headers of an append's response.
func writeAppendResult(resp *server.Response, etag string, modified time.Time, offset int64, appends int, encrypted bool) {
	setETag(resp, etag, modified)
	resp.Set("X-Ms-Blob-Append-Offset", strconv.FormatInt(offset, 10))
	resp.Set("X-Ms-Blob-Committed-Block-Count", strconv.Itoa(appends))
	resp.Set("X-Ms-Request-Server-Encrypted", strconv.FormatBool(encrypted))
}

// parseAppendConds reads the conditions of an append: the write
// conditions and x-ms-blob-condition-appendpos / -maxsize (-1: absent).
func parseAppendConds(r *req) (conds cond.Conditions, appendPos, maxSize int64, err error) {
	if conds, err = cond.Parse(r.Header); err != nil {
		return conds, 0, 0, err
	}
	if appendPos, err = parseSizeHeader(r.Header, "x-ms-blob-condition-appendpos", false); err != nil {
		return conds, 0, 0, err
	}
	maxSize, err = parseSizeHeader(r.Header, "x-ms-blob-condition-maxsize", false)
	return conds, appendPos, maxSize, err
}

// sealBlob is Seal Append Blob: a sealed append blob takes no more
// appends (409 BlobIsSealed) until it is re-created. The usual write
// conditions and lease apply, and x-ms-blob-condition-appendpos (the
// length the caller expects it to be sealed at). Sealing a sealed blob
// succeeds.
func (s *Service) sealBlob(r *req) (server.Response, error) {
	conds, appendPos, _, err := parseAppendConds(r)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.SealBlob(r.Context(), blob.SealBlobInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds), AppendPosition: optSize(appendPos)})
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusOK, 3)
	setETag(&resp, out.ETag, out.LastModified)
	resp.Set("X-Ms-Blob-Sealed", strconv.FormatBool(out.Sealed))
	return resp, nil
}

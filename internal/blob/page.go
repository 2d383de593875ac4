package blob

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

const (
	maxPageWrite   = 4 << 20
	maxAppendBlock = 100 << 20
	maxAppends     = 50000
)

// parseSequenceConds reads the x-ms-if-sequence-number-le/-lt/-eq
// conditions of a page write, in that order. A malformed one is 400
// InvalidHeaderValue, reported when the conditions are evaluated, after
// those before it (SequenceConditions.check).
func parseSequenceConds(h http.Header) SequenceConditions {
	var c SequenceConditions
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
			c.err = azerr.InvalidHeader(f.name, s)
			return c
		}
		*f.dst = &v
	}
	return c
}

// putPage is Put Page's REST handler (update or clear).
func (s *Service) putPage(w http.ResponseWriter, r *req) error {
	conds, off, n, err := parsePageWrite(r)
	if err != nil {
		return err
	}
	in := PutPageInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds), Sequence: parseSequenceConds(r.Header), Offset: off, Length: n, CheckFirst: expectsContinue(r.Header)}
	mode := r.Header.Get("x-ms-page-write")
	switch mode {
	case "update":
		if n > maxPageWrite {
			return azerr.New(azerr.RequestBodyTooLarge)
		}
		if r.ContentLength != n {
			return azerr.Newf(azerr.InvalidPageRange, "The page range length must equal the Content-Length.")
		}
		if in.Checksums, err = parseChecksums(r.Header); err != nil {
			return err
		}
		in.Body = r.Body
	case "clear":
		if r.ContentLength > 0 {
			return azerr.InvalidHeader("Content-Length", strconv.FormatInt(r.ContentLength, 10))
		}
		in.Clear = true
	case "":
		return azerr.MissingHeader("x-ms-page-write")
	default:
		return azerr.InvalidHeader("x-ms-page-write", mode)
	}
	out, err := s.PutPage(r.Context(), in)
	if err != nil {
		return err
	}
	setETag(w, out.ETag, out.LastModified)
	h := w.Header()
	h.Set("x-ms-blob-sequence-number", strconv.FormatInt(out.SequenceNumber, 10))
	if !in.Clear {
		echoDigests(h, out.ContentMD5, out.ContentCRC64)
		h.Set("x-ms-request-server-encrypted", strconv.FormatBool(out.ServerEncrypted))
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

// parsePageWrite reads the conditions and the page range of a page write.
func parsePageWrite(r *req) (conds cond.Conditions, off, n int64, err error) {
	if conds, err = cond.Parse(r.Header); err != nil {
		return conds, 0, 0, err
	}
	off, n, err = wire.PageRange(r.Header)
	return conds, off, n, err
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

// pagesWritable is writePages' checks: a page blob, the sequence number
// conditions, the range within the blob.
func pagesWritable(b *blobRec, seq SequenceConditions, off, n int64) error {
	if b.Type != PageBlob {
		return azerr.New(azerr.InvalidBlobType)
	}
	if err := seq.check(b.SeqNum); err != nil {
		return err
	}
	if off+n > b.Size {
		return azerr.New(azerr.InvalidPageRange)
	}
	return nil
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
func (s *Service) getPageRanges(w http.ResponseWriter, r *req) error {
	rng, err := wire.ParseRange(r.Header)
	if err != nil {
		return err
	}
	prevSnap := r.q.Get("prevsnapshot")
	if prevSnap != "" {
		prevT, err := wire.ParseSnapshot(prevSnap)
		if err != nil {
			return azerr.InvalidQuery("prevsnapshot", prevSnap)
		}
		prevSnap = wire.FormatISO7(prevT)
	}
	pr, err := s.GetPageRanges(r.Context(), GetPageRangesInput{Call: r.call(), Ref: r.ref(), Access: r.readAccess(), Range: rng, PrevSnapshot: prevSnap})
	if err != nil {
		return err
	}
	out := pageListXML{Ranges: []pageRangeXML{}}
	for _, sp := range pr.Ranges {
		name := "PageRange"
		if sp.Clear {
			name = "ClearRange"
		}
		out.Ranges = append(out.Ranges, pageRangeXML{XMLName: xml.Name{Local: name}, Start: sp.Off, End: sp.End - 1})
	}
	setETag(w, pr.ETag, pr.LastModified)
	w.Header().Set("x-ms-blob-content-length", strconv.FormatInt(pr.Size, 10))
	return server.WriteXML(w, http.StatusOK, out)
}

// appendBlock is Append Block's REST handler.
func (s *Service) appendBlock(w http.ResponseWriter, r *req) error {
	conds, appendPos, maxSize, err := parseAppendConds(r)
	if err != nil {
		return err
	}
	in := AppendBlockInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds), AppendPosition: optSize(appendPos), MaxSize: optSize(maxSize), Body: r.Body,
		CheckFirst: expectsContinue(r.Header)}
	if in.Checksums, err = parseChecksums(r.Header); err != nil {
		return err
	}
	if in.Length, err = contentLength(r); err != nil {
		return err
	}
	out, err := s.AppendBlock(r.Context(), in)
	if err != nil {
		return err
	}
	writeAppendResult(w, out.ETag, out.LastModified, out.AppendOffset, out.CommittedBlockCount, out.ServerEncrypted)
	echoDigests(w.Header(), out.ContentMD5, out.ContentCRC64)
	w.WriteHeader(http.StatusCreated)
	return nil
}

// optSize is a size header's value as an optional input (-1: absent).
func optSize(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

// appendParts appends size bytes, held by parts (offsets from 0), to the
// append blob b, after Append Block's checks; it returns the offset they
// landed at.
func appendParts(tx kv.Tx, now time.Time, b *blobRec, appendPos, maxSize, size int64, parts []extent.Part) (int64, error) {
	if err := appendAllowed(b, appendPos, maxSize, size); err != nil {
		return 0, err
	}
	offset := b.Size
	added := make([]extent.Part, 0, len(parts))
	for _, p := range parts {
		p.Off += offset
		added = append(added, p)
	}
	b.Parts = append(b.Parts, added...)
	b.Size += size
	b.Appends++
	return offset, extent.AdjustRefs(tx, now, nil, added)
}

// appendAllowed is appendParts' checks: an append blob, not sealed,
// below the block count limit, at appendPos and within maxSize (-1:
// absent) after size more bytes.
func appendAllowed(b *blobRec, appendPos, maxSize, size int64) error {
	if b.Type != AppendBlob {
		return azerr.New(azerr.InvalidBlobType)
	}
	if b.Sealed {
		return azerr.New(azerr.BlobIsSealed)
	}
	if b.Appends >= maxAppends {
		return azerr.New(azerr.BlockCountExceedsLimit)
	}
	if appendPos >= 0 && appendPos != b.Size {
		return azerr.New(azerr.AppendPositionConditionNotMet)
	}
	if maxSize >= 0 && b.Size+size > maxSize {
		return azerr.New(azerr.MaxBlobSizeConditionNotMet)
	}
	return nil
}

// writeAppendResult sets the headers of an append's response.
func writeAppendResult(w http.ResponseWriter, etag string, modified time.Time, offset int64, appends int, encrypted bool) {
	setETag(w, etag, modified)
	h := w.Header()
	h.Set("x-ms-blob-append-offset", strconv.FormatInt(offset, 10))
	h.Set("x-ms-blob-committed-block-count", strconv.Itoa(appends))
	h.Set("x-ms-request-server-encrypted", strconv.FormatBool(encrypted))
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
func (s *Service) sealBlob(w http.ResponseWriter, r *req) error {
	conds, appendPos, _, err := parseAppendConds(r)
	if err != nil {
		return err
	}
	out, err := s.SealBlob(r.Context(), SealBlobInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds), AppendPosition: optSize(appendPos)})
	if err != nil {
		return err
	}
	setETag(w, out.ETag, out.LastModified)
	w.Header().Set("x-ms-blob-sealed", strconv.FormatBool(out.Sealed))
	w.WriteHeader(http.StatusOK)
	return nil
}

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

// checkSequence evaluates the x-ms-if-sequence-number-* conditions.
func checkSequence(h http.Header, seq int64) error {
	for _, c := range []struct {
		name string
		ok   func(v int64) bool
	}{
		{"x-ms-if-sequence-number-le", func(v int64) bool { return seq <= v }},
		{"x-ms-if-sequence-number-lt", func(v int64) bool { return seq < v }},
		{"x-ms-if-sequence-number-eq", func(v int64) bool { return seq == v }},
	} {
		s := h.Get(c.name)
		if s == "" {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return azerr.InvalidHeader(c.name, s)
		}
		if !c.ok(v) {
			return azerr.New(azerr.SequenceNumberConditionNotMet)
		}
	}
	return nil
}

func (s *Service) putPage(w http.ResponseWriter, r *req) error {
	conds, off, n, err := parsePageWrite(r)
	if err != nil {
		return err
	}
	mode := r.Header.Get("x-ms-page-write")
	var st *extent.Staged
	tried, uerr := false, error(nil)
	switch mode {
	case "update":
		if n > maxPageWrite {
			return azerr.New(azerr.RequestBodyTooLarge)
		}
		if r.ContentLength != n {
			return azerr.Newf(azerr.InvalidPageRange, "The page range length must equal the Content-Length.")
		}
		if err := checkChecksumHeaders(r.Header); err != nil {
			return err
		}
		body, bn, err := limitBody(r, maxPageWrite)
		if err != nil {
			return err
		}
		if st, err = s.data.StageBlobWrite(r.Context(), body, bn, r.Header); err != nil {
			return err
		}
		// Freed at once if the write is refused (extent.Staged.Finish).
		defer func() { st.Finish(r.Context(), tried, uerr) }()
		if err := st.CheckDigests(r.Header); err != nil {
			return err
		}
	case "clear":
		if r.ContentLength > 0 {
			return azerr.InvalidHeader("Content-Length", strconv.FormatInt(r.ContentLength, 10))
		}
	case "":
		return azerr.MissingHeader("x-ms-page-write")
	default:
		return azerr.InvalidHeader("x-ms-page-write", mode)
	}
	b, err := s.updateBlob(r.Context(), r.ref(), r.access(conds), r.Now, func(tx kv.Tx, b *blobRec) error {
		var parts []extent.Part
		if st != nil {
			if err := st.Write(tx); err != nil {
				return err
			}
			parts = st.Parts
		}
		return writePages(tx, r, b, off, n, parts)
	})
	tried, uerr = true, err
	if err != nil {
		return err
	}
	setETag(w, b.ETag, b.Modified)
	h := w.Header()
	h.Set("x-ms-blob-sequence-number", strconv.FormatInt(b.SeqNum, 10))
	if st != nil {
		st.EchoDigests(w)
		h.Set("x-ms-request-server-encrypted", "true")
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
// (offsets from 0; none clears them), after Put Page's checks.
func writePages(tx kv.Tx, r *req, b *blobRec, off, n int64, parts []extent.Part) error {
	if b.Type != PageBlob {
		return azerr.New(azerr.InvalidBlobType)
	}
	if err := checkSequence(r.Header, b.SeqNum); err != nil {
		return err
	}
	if off+n > b.Size {
		return azerr.New(azerr.InvalidPageRange)
	}
	old := b.Parts
	b.Parts = extent.SpliceShifted(b.Parts, off, n, parts, off)
	return extent.AdjustRefs(tx, r.Now, old, b.Parts)
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

func (s *Service) getPageRanges(w http.ResponseWriter, r *req) error {
	rng, err := wire.ParseRange(r.Header)
	if err != nil {
		return err
	}
	prevSnap := r.q.Get("prevsnapshot")
	var prevT time.Time
	if prevSnap != "" {
		if prevT, err = wire.ParseSnapshot(prevSnap); err != nil {
			return azerr.InvalidQuery("prevsnapshot", prevSnap)
		}
		prevSnap = wire.FormatISO7(prevT)
	}
	var b, prev *blobRec
	err = s.store.View(r.Context(), func(tx kv.Tx) (err error) {
		if b, err = loadBlob(tx, r.ref()); err != nil {
			return err
		}
		if b.Type != PageBlob {
			return azerr.New(azerr.InvalidBlobType)
		}
		if err := r.readAccess().checkRead(b, r.ref(), r.Now); err != nil {
			return err
		}
		if prevSnap != "" {
			if r.snapshot != "" {
				if t, err := wire.ParseSnapshot(r.snapshot); err == nil && prevT.After(t) {
					return azerr.New(azerr.PreviousSnapshotCannotBeNewer)
				}
			}
			if prev, err = findBlob(tx, r.Account, r.container, r.name, prevSnap); err != nil {
				return err
			}
			if prev == nil {
				return azerr.New(azerr.PreviousSnapshotNotFound)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	lo, hi := int64(0), b.Size
	if rng != nil {
		if b.Size == 0 {
			return azerr.New(azerr.InvalidRange)
		}
		if lo, hi, err = rng.Resolve(b.Size); err != nil {
			return err
		}
		hi += lo
	}
	var spans []extent.Span
	if prev != nil {
		spans = extent.Diff(prev.Parts, b.Parts, lo, hi)
	} else {
		spans = extent.Spans(b.Parts, lo, hi)
	}
	out := pageListXML{Ranges: []pageRangeXML{}}
	for _, sp := range spans {
		name := "PageRange"
		if sp.Clear {
			name = "ClearRange"
		}
		out.Ranges = append(out.Ranges, pageRangeXML{XMLName: xml.Name{Local: name}, Start: sp.Off, End: sp.End - 1})
	}
	setETag(w, b.ETag, b.Modified)
	w.Header().Set("x-ms-blob-content-length", strconv.FormatInt(b.Size, 10))
	return server.WriteXML(w, http.StatusOK, out)
}

func (s *Service) appendBlock(w http.ResponseWriter, r *req) error {
	conds, appendPos, maxSize, err := parseAppendConds(r)
	if err != nil {
		return err
	}
	if err := checkChecksumHeaders(r.Header); err != nil {
		return err
	}
	body, n, err := limitBody(r, maxAppendBlock)
	if err != nil {
		return err
	}
	if n == 0 {
		return azerr.InvalidHeader("Content-Length", "0")
	}
	st, err := s.data.StageBlobWrite(r.Context(), body, n, r.Header)
	if err != nil {
		return err
	}
	// Freed at once if the write is refused (extent.Staged.Finish).
	tried, uerr := false, error(nil)
	defer func() { st.Finish(r.Context(), tried, uerr) }()
	if st.Size == 0 { // an empty chunked body
		return azerr.InvalidHeader("Content-Length", "0")
	}
	if err := st.CheckDigests(r.Header); err != nil {
		return err
	}
	var offset int64
	b, err := s.updateBlob(r.Context(), r.ref(), r.access(conds), r.Now, func(tx kv.Tx, b *blobRec) error {
		if err := st.Write(tx); err != nil {
			return err
		}
		offset, err = appendParts(tx, r, b, appendPos, maxSize, st.Size, st.Parts)
		return err
	})
	tried, uerr = true, err
	if err != nil {
		return err
	}
	writeAppendResult(w, b, offset)
	st.EchoDigests(w)
	w.WriteHeader(http.StatusCreated)
	return nil
}

// appendParts appends size bytes, held by parts (offsets from 0), to the
// append blob b, after Append Block's checks; it returns the offset they
// landed at.
func appendParts(tx kv.Tx, r *req, b *blobRec, appendPos, maxSize, size int64, parts []extent.Part) (int64, error) {
	if b.Type != AppendBlob {
		return 0, azerr.New(azerr.InvalidBlobType)
	}
	if b.Sealed {
		return 0, azerr.New(azerr.BlobIsSealed)
	}
	if b.Appends >= maxAppends {
		return 0, azerr.New(azerr.BlockCountExceedsLimit)
	}
	if appendPos >= 0 && appendPos != b.Size {
		return 0, azerr.New(azerr.AppendPositionConditionNotMet)
	}
	if maxSize >= 0 && b.Size+size > maxSize {
		return 0, azerr.New(azerr.MaxBlobSizeConditionNotMet)
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
	return offset, extent.AdjustRefs(tx, r.Now, nil, added)
}

func writeAppendResult(w http.ResponseWriter, b *blobRec, offset int64) {
	setETag(w, b.ETag, b.Modified)
	h := w.Header()
	h.Set("x-ms-blob-append-offset", strconv.FormatInt(offset, 10))
	h.Set("x-ms-blob-committed-block-count", strconv.Itoa(b.Appends))
	h.Set("x-ms-request-server-encrypted", "true")
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
	b, err := s.updateBlob(r.Context(), r.ref(), r.access(conds).withoutNoneMatchAny(), r.Now, func(tx kv.Tx, b *blobRec) error {
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
		return err
	}
	setETag(w, b.ETag, b.Modified)
	w.Header().Set("x-ms-blob-sealed", "true")
	w.WriteHeader(http.StatusOK)
	return nil
}

package blob

import (
	"encoding/xml"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

const (
	maxPageWrite   = 4 << 20
	maxAppendBlock = 100 << 20
	maxAppends     = 50000
)

// splice replaces bytes [off, off+n) of a sparse part list with repl
// (nil: leave a hole). Parts stay sorted and non-overlapping; a part cut
// in two keeps its data item with adjusted offsets.
func splice(parts []Part, off, n int64, repl *Part) []Part {
	end := off + n
	out := make([]Part, 0, len(parts)+2)
	for _, p := range parts {
		if p.end() <= off || p.Off >= end {
			out = append(out, p)
			continue
		}
		if p.Off < off {
			out = append(out, p.slice(p.Off, off))
		}
		if p.end() > end {
			out = append(out, p.slice(end, p.end()))
		}
	}
	if repl != nil {
		out = append(out, *repl)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Off < out[j].Off })
	return out
}

// slice returns the part covering blob bytes [from, to) of p.
func (p Part) slice(from, to int64) Part {
	q := Part{Off: from, Len: to - from, ID: p.ID}
	if p.ID == "" {
		q.Data = p.Data[from-p.Off : to-p.Off]
	} else {
		q.DOff = p.DOff + (from - p.Off)
	}
	return q
}

// trimParts drops content at or beyond size (page blob resize).
func trimParts(parts []Part, size int64) []Part {
	var max int64
	for _, p := range parts {
		if p.end() > max {
			max = p.end()
		}
	}
	if max <= size {
		return parts
	}
	return splice(parts, size, max-size, nil)
}

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
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return err
	}
	off, n, err := wire.PageRange(r.Header)
	if err != nil {
		return err
	}
	mode := r.Header.Get("x-ms-page-write")
	var st *staged
	switch mode {
	case "update":
		if n > maxPageWrite {
			return azerr.New(azerr.RequestBodyTooLarge)
		}
		if r.ContentLength != n {
			return azerr.Newf(azerr.InvalidPageRange, "The page range length must equal the Content-Length.")
		}
		body, bn, err := limitBody(r, maxPageWrite)
		if err != nil {
			return err
		}
		if st, err = s.stage(r.Context(), body, bn, r.Header, false); err != nil {
			return err
		}
		if err := checkDigests(r.Header, st); err != nil {
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
	b, err := s.updateBlob(r, conds, func(tx kv.Tx, b *blobRec) error {
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
		var repl *Part
		if st != nil {
			if err := st.write(tx); err != nil {
				return err
			}
			p := st.parts[0]
			p.Off = off
			repl = &p
		}
		b.Parts = splice(b.Parts, off, n, repl)
		return adjustRefs(tx, r.Now, old, b.Parts)
	})
	if err != nil {
		return err
	}
	setETag(w, b.ETag, b.Modified)
	h := w.Header()
	h.Set("x-ms-blob-sequence-number", strconv.FormatInt(b.SeqNum, 10))
	if st != nil {
		echoDigests(w, st)
		h.Set("x-ms-request-server-encrypted", "true")
	}
	w.WriteHeader(http.StatusCreated)
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

// span is a range with the data it shows, for diffs.
type span struct {
	off, end int64
	clear    bool
}

// pageSpans returns the merged written ranges of parts within [lo, hi).
func pageSpans(parts []Part, lo, hi int64) []span {
	var out []span
	for _, p := range parts {
		a, b := max(p.Off, lo), min(p.end(), hi)
		if a >= b {
			continue
		}
		if len(out) > 0 && out[len(out)-1].end == a {
			out[len(out)-1].end = b
			continue
		}
		out = append(out, span{off: a, end: b})
	}
	return out
}

// diffSpans returns the ranges whose content differs between prev and cur
// within [lo, hi): written in cur (page ranges) or holes in cur that prev
// had written (clear ranges). Identity of content is the data item and
// offset it comes from, so rewritten pages count even with equal bytes.
func diffSpans(prev, cur []Part, lo, hi int64) []span {
	cuts := map[int64]bool{lo: true, hi: true}
	for _, ps := range [][]Part{prev, cur} {
		for _, p := range ps {
			if p.Off > lo && p.Off < hi {
				cuts[p.Off] = true
			}
			if p.end() > lo && p.end() < hi {
				cuts[p.end()] = true
			}
		}
	}
	pts := make([]int64, 0, len(cuts))
	for c := range cuts {
		pts = append(pts, c)
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i] < pts[j] })
	at := func(ps []Part, x int64) (string, int64, bool) {
		i := sort.Search(len(ps), func(i int) bool { return ps[i].end() > x })
		if i < len(ps) && ps[i].Off <= x {
			return ps[i].ID, ps[i].DOff + (x - ps[i].Off), true
		}
		return "", 0, false
	}
	var out []span
	for i := 0; i+1 < len(pts); i++ {
		a, b := pts[i], pts[i+1]
		cid, cdo, cok := at(cur, a)
		pid, pdo, pok := at(prev, a)
		if cok == pok && cid == pid && cdo == pdo {
			continue
		}
		sp := span{off: a, end: b, clear: !cok}
		if n := len(out); n > 0 && out[n-1].end == a && out[n-1].clear == sp.clear {
			out[n-1].end = b
			continue
		}
		out = append(out, sp)
	}
	return out
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
		if b, err = loadBlob(tx, r); err != nil {
			return err
		}
		if b.Type != PageBlob {
			return azerr.New(azerr.InvalidBlobType)
		}
		if err := readChecks(b, r); err != nil {
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
	var spans []span
	if prev != nil {
		spans = diffSpans(prev.Parts, b.Parts, lo, hi)
	} else {
		spans = pageSpans(b.Parts, lo, hi)
	}
	out := pageListXML{Ranges: []pageRangeXML{}}
	for _, sp := range spans {
		name := "PageRange"
		if sp.clear {
			name = "ClearRange"
		}
		out.Ranges = append(out.Ranges, pageRangeXML{XMLName: xml.Name{Local: name}, Start: sp.off, End: sp.end - 1})
	}
	setETag(w, b.ETag, b.Modified)
	w.Header().Set("x-ms-blob-content-length", strconv.FormatInt(b.Size, 10))
	return server.WriteXML(w, http.StatusOK, out)
}

func (s *Service) appendBlock(w http.ResponseWriter, r *req) error {
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return err
	}
	appendPos, err := parseSizeHeader(r.Header, "x-ms-blob-condition-appendpos", false)
	if err != nil {
		return err
	}
	maxSize, err := parseSizeHeader(r.Header, "x-ms-blob-condition-maxsize", false)
	if err != nil {
		return err
	}
	body, n, err := limitBody(r, maxAppendBlock)
	if err != nil {
		return err
	}
	if n == 0 {
		return azerr.InvalidHeader("Content-Length", "0")
	}
	st, err := s.stage(r.Context(), body, n, r.Header, false)
	if err != nil {
		return err
	}
	if st.size == 0 { // an empty chunked body
		return azerr.InvalidHeader("Content-Length", "0")
	}
	if err := checkDigests(r.Header, st); err != nil {
		return err
	}
	var offset int64
	b, err := s.updateBlob(r, conds, func(tx kv.Tx, b *blobRec) error {
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
		if maxSize >= 0 && b.Size+st.size > maxSize {
			return azerr.New(azerr.MaxBlobSizeConditionNotMet)
		}
		if err := st.write(tx); err != nil {
			return err
		}
		offset = b.Size
		for _, p := range st.parts {
			p.Off += b.Size
			b.Parts = append(b.Parts, p)
		}
		b.Size += st.size
		b.Appends++
		return adjustRefs(tx, r.Now, nil, st.parts)
	})
	if err != nil {
		return err
	}
	setETag(w, b.ETag, b.Modified)
	h := w.Header()
	h.Set("x-ms-blob-append-offset", strconv.FormatInt(offset, 10))
	h.Set("x-ms-blob-committed-block-count", strconv.Itoa(b.Appends))
	echoDigests(w, st)
	h.Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusCreated)
	return nil
}

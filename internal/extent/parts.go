package extent

import (
	"bytes"
	"sort"
)

// Splice replaces bytes [off, off+n) of a sparse part list with repl
// (nil: leave a hole). Parts stay sorted and non-overlapping; a part cut
// in two keeps its data item with adjusted offsets. The input is not
// modified.
func Splice(parts []Part, off, n int64, repl *Part) []Part {
	end := off + n
	out := make([]Part, 0, len(parts)+2)
	for _, p := range parts {
		if p.End() <= off || p.Off >= end {
			out = append(out, p)
			continue
		}
		if p.Off < off {
			out = append(out, p.Slice(p.Off, off))
		}
		if p.End() > end {
			out = append(out, p.Slice(end, p.End()))
		}
	}
	if repl != nil {
		out = append(out, *repl)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Off < out[j].Off })
	return out
}

// Slice returns the part covering blob bytes [from, to) of p.
func (p Part) Slice(from, to int64) Part {
	q := Part{Off: from, Len: to - from, ID: p.ID}
	if p.ID == "" {
		q.Data = p.Data[from-p.Off : to-p.Off]
	} else {
		q.DOff = p.DOff + (from - p.Off)
	}
	return q
}

// Trim drops content at or beyond size (page blob resize).
func Trim(parts []Part, size int64) []Part {
	var max int64
	for _, p := range parts {
		if p.End() > max {
			max = p.End()
		}
	}
	if max <= size {
		return parts
	}
	return Splice(parts, size, max-size, nil)
}

// Span is a range [Off, End) with the data it shows, for diffs: Clear
// marks a range that was written before and is a hole now.
type Span struct {
	Off, End int64
	Clear    bool
}

// Spans returns the merged written ranges of parts within [lo, hi).
func Spans(parts []Part, lo, hi int64) []Span {
	var out []Span
	for _, p := range parts {
		a, b := max(p.Off, lo), min(p.End(), hi)
		if a >= b {
			continue
		}
		if len(out) > 0 && out[len(out)-1].End == a {
			out[len(out)-1].End = b
			continue
		}
		out = append(out, Span{Off: a, End: b})
	}
	return out
}

// Diff returns the ranges whose content differs between prev and cur
// within [lo, hi): written in cur (page ranges) or holes in cur that prev
// had written (clear ranges). Identity of content is the data item and
// offset it comes from, so rewritten pages count even with equal bytes.
func Diff(prev, cur []Part, lo, hi int64) []Span {
	cuts := map[int64]bool{lo: true, hi: true}
	for _, ps := range [][]Part{prev, cur} {
		for _, p := range ps {
			if p.Off > lo && p.Off < hi {
				cuts[p.Off] = true
			}
			if p.End() > lo && p.End() < hi {
				cuts[p.End()] = true
			}
		}
	}
	pts := make([]int64, 0, len(cuts))
	for c := range cuts {
		pts = append(pts, c)
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i] < pts[j] })
	at := func(ps []Part, x int64) (string, int64, bool) {
		i := sort.Search(len(ps), func(i int) bool { return ps[i].End() > x })
		if i < len(ps) && ps[i].Off <= x {
			return ps[i].ID, ps[i].DOff + (x - ps[i].Off), true
		}
		return "", 0, false
	}
	var out []Span
	for i := 0; i+1 < len(pts); i++ {
		a, b := pts[i], pts[i+1]
		cid, cdo, cok := at(cur, a)
		pid, pdo, pok := at(prev, a)
		if cok == pok && cid == pid && cdo == pdo {
			continue
		}
		sp := Span{Off: a, End: b, Clear: !cok}
		if n := len(out); n > 0 && out[n-1].End == a && out[n-1].Clear == sp.Clear {
			out[n-1].End = b
			continue
		}
		out = append(out, sp)
	}
	return out
}

// Within returns the parts of sorted parts covering [off, off+n), cut to
// that range; holes stay holes.
func Within(parts []Part, off, n int64) []Part {
	end := off + n
	var out []Part
	for _, p := range parts {
		if p.End() <= off || p.Off >= end {
			continue
		}
		out = append(out, p.Slice(max(p.Off, off), min(p.End(), end)))
	}
	return out
}

// SpliceShifted replaces bytes [off, off+n) of parts with src (parts within
// [off-delta, off-delta+n)) moved by delta; the input is not modified.
func SpliceShifted(parts []Part, off, n int64, src []Part, delta int64) []Part {
	out := Splice(parts, off, n, nil)
	for _, p := range src {
		p.Off += delta
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Off < out[j].Off })
	return out
}

// SameParts reports whether two part lists map the same bytes.
func SameParts(a, b []Part) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Off != y.Off || x.Len != y.Len || x.ID != y.ID || x.DOff != y.DOff || !bytes.Equal(x.Data, y.Data) {
			return false
		}
	}
	return true
}

package extent

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// errCode returns the Azure error code of err, "" for nil.
func errCode(err error) string {
	if err == nil {
		return ""
	}
	var ae *azerr.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return "not an azerr: " + err.Error()
}

func ptParts(ps []Part) string {
	if len(ps) == 0 {
		return "[]"
	}
	return fmt.Sprint(ps)
}

func TestSplice(t *testing.T) {
	p := func(off, n int64, id string, doff int64) Part { return Part{Off: off, Len: n, ID: id, DOff: doff} }
	rp := func(off, n int64, id string) *Part { x := p(off, n, id, 0); return &x }
	tests := []struct {
		name   string
		parts  []Part
		off, n int64
		repl   *Part
		want   []Part
	}{
		{"insert into empty", nil, 0, 512, rp(0, 512, "a"), []Part{p(0, 512, "a", 0)}},
		{"hole into empty", nil, 0, 512, nil, nil},
		{"replace exactly", []Part{p(0, 512, "a", 0)}, 0, 512, rp(0, 512, "b"), []Part{p(0, 512, "b", 0)}},
		{"middle of a part", []Part{p(0, 1024, "a", 0)}, 512, 256, rp(512, 256, "b"),
			[]Part{p(0, 512, "a", 0), p(512, 256, "b", 0), p(768, 256, "a", 768)}},
		{"hole in the middle keeps offsets", []Part{p(0, 1024, "a", 100)}, 256, 512, nil,
			[]Part{p(0, 256, "a", 100), p(768, 256, "a", 868)}},
		{"across two parts", []Part{p(0, 512, "a", 0), p(1024, 512, "b", 0)}, 256, 1024, nil,
			[]Part{p(0, 256, "a", 0), p(1280, 256, "b", 256)}},
		{"covers everything", []Part{p(0, 512, "a", 0), p(512, 512, "b", 0)}, 0, 1024, nil, nil},
		{"head overlap", []Part{p(512, 1024, "a", 100)}, 0, 1024, rp(0, 1024, "c"),
			[]Part{p(0, 1024, "c", 0), p(1024, 512, "a", 612)}},
		{"tail overlap", []Part{p(0, 1024, "a", 0)}, 512, 1024, rp(512, 1024, "c"),
			[]Part{p(0, 512, "a", 0), p(512, 1024, "c", 0)}},
		{"between parts, sorted", []Part{p(0, 512, "a", 0), p(2048, 512, "b", 0)}, 1024, 512, rp(1024, 512, "c"),
			[]Part{p(0, 512, "a", 0), p(1024, 512, "c", 0), p(2048, 512, "b", 0)}},
		{"adjacent parts untouched", []Part{p(0, 512, "a", 0), p(1024, 512, "b", 0)}, 512, 512, rp(512, 512, "c"),
			[]Part{p(0, 512, "a", 0), p(512, 512, "c", 0), p(1024, 512, "b", 0)}},
		{"swallows inner parts", []Part{p(0, 512, "a", 0), p(512, 512, "b", 0), p(1024, 512, "c", 0), p(1536, 512, "d", 0)}, 256, 1536, rp(256, 1536, "x"),
			[]Part{p(0, 256, "a", 0), p(256, 1536, "x", 0), p(1792, 256, "d", 256)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]Part(nil), tc.parts...)
			got := Splice(in, tc.off, tc.n, tc.repl)
			if ptParts(got) != ptParts(tc.want) {
				t.Fatalf("got %s, want %s", ptParts(got), ptParts(tc.want))
			}
			if ptParts(in) != ptParts(tc.parts) {
				t.Fatalf("Splice modified its input: %s", ptParts(in))
			}
		})
	}
}

func TestTrim(t *testing.T) {
	p := func(off, n int64, id string, doff int64) Part { return Part{Off: off, Len: n, ID: id, DOff: doff} }
	two := []Part{p(0, 512, "a", 0), p(1024, 512, "b", 10)}
	tests := []struct {
		name  string
		parts []Part
		size  int64
		want  []Part
	}{
		{"empty", nil, 512, nil},
		{"all inside", two, 2048, two},
		{"exactly at the end", two, 1536, two},
		{"cut a part", two, 1280, []Part{p(0, 512, "a", 0), p(1024, 256, "b", 10)}},
		{"drop a part", two, 1024, []Part{p(0, 512, "a", 0)}},
		{"drop in a hole", two, 768, []Part{p(0, 512, "a", 0)}},
		{"cut the first", two, 256, []Part{p(0, 256, "a", 0)}},
		{"to zero", two, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Trim(tc.parts, tc.size)
			if ptParts(got) != ptParts(tc.want) {
				t.Fatalf("got %s, want %s", ptParts(got), ptParts(tc.want))
			}
		})
	}
}

func ptSpans(ss []Span) string {
	if len(ss) == 0 {
		return "[]"
	}
	s := ""
	for i, sp := range ss {
		if i > 0 {
			s += " "
		}
		kind := "page"
		if sp.Clear {
			kind = "clear"
		}
		s += fmt.Sprintf("%s:%d-%d", kind, sp.Off, sp.End)
	}
	return s
}

func TestSpans(t *testing.T) {
	p := func(off, n int64, id string) Part { return Part{Off: off, Len: n, ID: id} }
	parts := []Part{p(0, 512, "a"), p(512, 512, "b"), p(2048, 512, "c"), p(3072, 1024, "d")}
	tests := []struct {
		name   string
		parts  []Part
		lo, hi int64
		want   string
	}{
		{"none", nil, 0, 4096, "[]"},
		{"adjacent parts merge", parts, 0, 4096, "page:0-1024 page:2048-2560 page:3072-4096"},
		{"clipped to the window", parts, 256, 3584, "page:256-1024 page:2048-2560 page:3072-3584"},
		{"window in a hole", parts, 1024, 2048, "[]"},
		{"window inside one part", parts, 3200, 3300, "page:3200-3300"},
		{"window ends on a boundary", parts, 512, 2048, "page:512-1024"},
		{"empty window", parts, 512, 512, "[]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ptSpans(Spans(tc.parts, tc.lo, tc.hi)); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	p := func(off, n int64, id string, doff int64) Part { return Part{Off: off, Len: n, ID: id, DOff: doff} }
	tests := []struct {
		name      string
		prev, cur []Part
		lo, hi    int64
		want      string
	}{
		{"both empty", nil, nil, 0, 4096, "[]"},
		{"unchanged", []Part{p(0, 1024, "a", 0)}, []Part{p(0, 1024, "a", 0)}, 0, 4096, "[]"},
		{"written", nil, []Part{p(512, 512, "a", 0)}, 0, 4096, "page:512-1024"},
		{"cleared", []Part{p(512, 512, "a", 0)}, nil, 0, 4096, "clear:512-1024"},
		{"overwritten in the middle", []Part{p(0, 1024, "a", 0)}, []Part{p(0, 512, "a", 0), p(512, 512, "b", 0)}, 0, 4096, "page:512-1024"},
		{"hole punched", []Part{p(0, 1024, "a", 0)}, []Part{p(0, 512, "a", 0), p(768, 256, "a", 768)}, 0, 4096, "clear:512-768"},
		{"split part is no change", []Part{p(0, 1024, "a", 0)}, []Part{p(0, 512, "a", 0), p(512, 512, "a", 512)}, 0, 4096, "[]"},
		{"same item other offset", []Part{p(0, 512, "a", 0)}, []Part{p(0, 512, "a", 512)}, 0, 4096, "page:0-512"},
		{"adjacent writes merge", nil, []Part{p(0, 512, "a", 0), p(512, 512, "b", 0)}, 0, 4096, "page:0-1024"},
		{"adjacent clears merge", []Part{p(0, 512, "a", 0), p(512, 512, "b", 0)}, nil, 0, 4096, "clear:0-1024"},
		{"clear then page stay apart", []Part{p(0, 1024, "a", 0)}, []Part{p(1024, 1024, "b", 0)}, 0, 4096, "clear:0-1024 page:1024-2048"},
		{"hole in both", []Part{p(0, 512, "a", 0)}, []Part{p(0, 512, "a", 0), p(2048, 512, "c", 0)}, 0, 4096, "page:2048-2560"},
		{"window", []Part{p(0, 2048, "a", 0)}, nil, 512, 1024, "clear:512-1024"},
		{"window cuts a write", nil, []Part{p(0, 2048, "a", 0)}, 1024, 4096, "page:1024-2048"},
		{"mixed", []Part{p(0, 2048, "a", 0), p(4096, 1024, "b", 0)},
			[]Part{p(0, 1024, "a", 0), p(1024, 512, "c", 0), p(4096, 512, "b", 0), p(6144, 512, "d", 0)}, 0, 8192,
			"page:1024-1536 clear:1536-2048 clear:4608-5120 page:6144-6656"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ptSpans(Diff(tc.prev, tc.cur, tc.lo, tc.hi)); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestSpliceEmbeddedParts(t *testing.T) {
	parts := []Part{{Off: 0, Len: 10, Data: []byte("0123456789")}}
	got := Splice(parts, 3, 4, nil)
	if len(got) != 2 || string(got[0].Data) != "012" || string(got[1].Data) != "789" || got[1].Off != 7 {
		t.Fatalf("Splice of embedded data: %+v", got)
	}
}

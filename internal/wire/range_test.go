package wire

import (
	"math"
	"net/http"
	"strconv"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

func TestParseRange(t *testing.T) {
	tests := []struct {
		name     string
		h        http.Header
		want     *Range
		code     string
		wantName string // HeaderName detail on error
	}{
		{"none", hdr(), nil, "", ""},
		{"empty values", hdr("x-ms-range", "", "Range", ""), nil, "", ""},
		{"sdk chunk", hdr("x-ms-range", "bytes=0-4194303"), &Range{0, 4194303}, "", ""},
		{"range header", hdr("Range", "bytes=10-19"), &Range{10, 19}, "", ""},
		{"open end", hdr("Range", "bytes=5-"), &Range{5, OpenEnd}, "", ""},
		{"single byte", hdr("x-ms-range", "bytes=0-0"), &Range{0, 0}, "", ""},
		{"x-ms-range wins", hdr("x-ms-range", "bytes=1-2", "Range", "bytes=3-4"), &Range{1, 2}, "", ""},
		{"x-ms-range wins even if bad", hdr("x-ms-range", "bytes=x", "Range", "bytes=3-4"), nil, azerr.InvalidHeaderValue, "x-ms-range"},
		{"empty x-ms-range falls back", hdr("x-ms-range", "", "Range", "bytes=3-4"), &Range{3, 4}, "", ""},
		{"unit case-insensitive", hdr("Range", "Bytes=1-2"), &Range{1, 2}, "", ""},
		{"surrounding space", hdr("Range", " bytes=1-2 "), &Range{1, 2}, "", ""},
		{"max int64", hdr("Range", "bytes=0-9223372036854775807"), &Range{0, math.MaxInt64}, "", ""},
		{"lower-case raw key", http.Header{"x-ms-range": {"bytes=7-8"}}, &Range{7, 8}, "", ""},
		{"overflow", hdr("Range", "bytes=0-9223372036854775808"), nil, azerr.InvalidHeaderValue, "Range"},
		{"start > end", hdr("Range", "bytes=5-4"), nil, azerr.InvalidHeaderValue, "Range"},
		{"suffix", hdr("Range", "bytes=-5"), nil, azerr.InvalidHeaderValue, "Range"},
		{"java empty-blob form", hdr("x-ms-range", "bytes=0--1"), nil, azerr.InvalidHeaderValue, "x-ms-range"},
		{"multi", hdr("Range", "bytes=0-1,3-4"), nil, azerr.InvalidHeaderValue, "Range"},
		{"no unit", hdr("Range", "0-1"), nil, azerr.InvalidHeaderValue, "Range"},
		{"other unit", hdr("Range", "items=0-1"), nil, azerr.InvalidHeaderValue, "Range"},
		{"no dash", hdr("Range", "bytes=5"), nil, azerr.InvalidHeaderValue, "Range"},
		{"sign", hdr("Range", "bytes=+1-2"), nil, azerr.InvalidHeaderValue, "Range"},
		{"inner space", hdr("Range", "bytes= 1-2"), nil, azerr.InvalidHeaderValue, "Range"},
		{"hex", hdr("Range", "bytes=0x1-2"), nil, azerr.InvalidHeaderValue, "Range"},
		{"only unit", hdr("Range", "bytes="), nil, azerr.InvalidHeaderValue, "Range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRange(tc.h)
			checkErr(t, err, tc.code)
			if tc.code != "" {
				e, _ := azerr.As(err)
				if n, _ := detail(e, "HeaderName"); n != tc.wantName {
					t.Fatalf("HeaderName = %q, want %q", n, tc.wantName)
				}
				if got != nil {
					t.Fatalf("range = %+v on error", got)
				}
				return
			}
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRangeString(t *testing.T) {
	for _, r := range []Range{{0, 4194303}, {5, OpenEnd}, {0, 0}} {
		h := hdr("Range", r.String())
		got, err := ParseRange(h)
		if err != nil || *got != r {
			t.Fatalf("round trip %v: got %+v, %v", r, got, err)
		}
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		r       Range
		size    int64
		off, n  int64
		code    string
		crange  string // Content-Range header on the 416
		comment string
	}{
		{Range{0, 4194303}, 10, 0, 10, "", "", "end clipped"},
		{Range{0, 9}, 10, 0, 10, "", "", "exact"},
		{Range{3, 5}, 10, 3, 3, "", "", "inner"},
		{Range{9, OpenEnd}, 10, 9, 1, "", "", "open last byte"},
		{Range{0, OpenEnd}, 1, 0, 1, "", "", "open whole"},
		{Range{0, math.MaxInt64}, 10, 0, 10, "", "", "huge end"},
		{Range{10, 20}, 10, 0, 0, azerr.InvalidRange, "bytes */10", "start == size"},
		{Range{11, OpenEnd}, 10, 0, 0, azerr.InvalidRange, "bytes */10", "start > size"},
		{Range{0, 0}, 0, 0, 0, azerr.InvalidRange, "bytes */0", "empty blob bytes=0-0 (recorded)"},
		{Range{0, OpenEnd}, 0, 0, 0, azerr.InvalidRange, "bytes */0", "empty blob bytes=0-"},
		{Range{0, 4194303}, 0, 0, 0, azerr.InvalidRange, "bytes */0", "empty blob sdk chunk"},
		{Range{0, 1}, -1, 0, 0, azerr.InvalidRange, "bytes */0", "negative size"},
	}
	for _, tc := range tests {
		t.Run(tc.comment, func(t *testing.T) {
			off, n, err := tc.r.Resolve(tc.size)
			checkErr(t, err, tc.code)
			if tc.code != "" {
				e, _ := azerr.As(err)
				if e.Status != 416 || e.Headers["Content-Range"] != tc.crange {
					t.Fatalf("status %d headers %v, want 416 Content-Range %q", e.Status, e.Headers, tc.crange)
				}
				return
			}
			if off != tc.off || n != tc.n {
				t.Fatalf("got (%d,%d), want (%d,%d)", off, n, tc.off, tc.n)
			}
		})
	}
}

func TestContentRange(t *testing.T) {
	tests := []struct {
		off, n, size int64
		want         string
	}{
		{0, 10, 10, "bytes 0-9/10"},
		{0, 4194304, 10485760, "bytes 0-4194303/10485760"},
		{9, 1, 10, "bytes 9-9/10"},
	}
	for _, tc := range tests {
		if got := ContentRange(tc.off, tc.n, tc.size); got != tc.want {
			t.Errorf("ContentRange(%d,%d,%d) = %q, want %q", tc.off, tc.n, tc.size, got, tc.want)
		}
	}
	if got := UnsatisfiedContentRange(0); got != "bytes */0" {
		t.Errorf("UnsatisfiedContentRange(0) = %q", got)
	}
}

func TestPageRange(t *testing.T) {
	tests := []struct {
		name   string
		h      http.Header
		off, n int64
		code   string
	}{
		{"one page", hdr("Range", "bytes=0-511"), 0, 512, ""},
		{"x-ms-range 4MiB", hdr("x-ms-range", "bytes=512-4194815"), 512, 4194304, ""},
		{"missing", hdr(), 0, 0, azerr.MissingRequiredHeader},
		{"malformed", hdr("x-ms-range", "bytes=a-b"), 0, 0, azerr.InvalidHeaderValue},
		{"open end", hdr("x-ms-range", "bytes=0-"), 0, 0, azerr.InvalidPageRange},
		{"start misaligned", hdr("x-ms-range", "bytes=1-512"), 0, 0, azerr.InvalidPageRange},
		{"end misaligned", hdr("x-ms-range", "bytes=0-512"), 0, 0, azerr.InvalidPageRange},
		{"end+1 misaligned", hdr("x-ms-range", "bytes=0-510"), 0, 0, azerr.InvalidPageRange},
		{"max int64 end", hdr("x-ms-range", "bytes=0-9223372036854775807"), 0, 0, azerr.InvalidPageRange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			off, n, err := PageRange(tc.h)
			checkErr(t, err, tc.code)
			if tc.code == "" && (off != tc.off || n != tc.n) {
				t.Fatalf("got (%d,%d), want (%d,%d)", off, n, tc.off, tc.n)
			}
			if tc.code == azerr.InvalidPageRange {
				if e, _ := azerr.As(err); e.Status != 416 {
					t.Fatalf("status %d, want 416", e.Status)
				}
			}
		})
	}
}

func BenchmarkParseRange(b *testing.B) {
	h := hdr("x-ms-range", "bytes=0-"+strconv.Itoa(4194303))
	for b.Loop() {
		if _, err := ParseRange(h); err != nil {
			b.Fatal(err)
		}
	}
}

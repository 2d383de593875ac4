package wire

import (
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

func TestFormatHTTPDate(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2019, 5, 24, 23, 0, 39, 999_999_999, time.UTC), "Fri, 24 May 2019 23:00:39 GMT"},
		{time.Date(2019, 5, 25, 1, 0, 39, 0, loc), "Fri, 24 May 2019 23:00:39 GMT"},
	}
	for _, tc := range tests {
		if got := FormatHTTPDate(tc.in); got != tc.want {
			t.Errorf("got %q want %q", got, tc.want)
		}
	}
}

func TestFormatISO7(t *testing.T) {
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2011, 3, 9, 1, 42, 34, 936_000_000, time.UTC), "2011-03-09T01:42:34.9360000Z"},
		{time.Date(2011, 3, 9, 1, 42, 34, 0, time.UTC), "2011-03-09T01:42:34.0000000Z"},
		{time.Date(2011, 3, 9, 1, 42, 34, 123_456_789, time.UTC), "2011-03-09T01:42:34.1234567Z"},
		{time.Date(2011, 3, 9, 3, 42, 34, 100, time.FixedZone("X", 2*3600)), "2011-03-09T01:42:34.0000001Z"},
	}
	for _, tc := range tests {
		if got := FormatISO7(tc.in); got != tc.want {
			t.Errorf("got %q want %q", got, tc.want)
		}
	}
}

func TestParseSnapshot(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		code string
	}{
		{"2011-03-09T01:42:34.9360000Z", time.Date(2011, 3, 9, 1, 42, 34, 936_000_000, time.UTC), ""},
		{"2011-03-09T01:42:34.0000001Z", time.Date(2011, 3, 9, 1, 42, 34, 100, time.UTC), ""},
		{"2011-03-09T01:42:34Z", time.Date(2011, 3, 9, 1, 42, 34, 0, time.UTC), ""},
		{"2011-03-09T01:42:34.936Z", time.Date(2011, 3, 9, 1, 42, 34, 936_000_000, time.UTC), ""},
		{"2011-03-09T03:42:34.9360000+02:00", time.Date(2011, 3, 9, 1, 42, 34, 936_000_000, time.UTC), ""},
		{"", time.Time{}, azerr.InvalidQueryParameterValue},
		{"2011-03-09T01:42:34.93600001Z", time.Time{}, azerr.InvalidQueryParameterValue},
		{"2011-03-09 01:42:34Z", time.Time{}, azerr.InvalidQueryParameterValue},
		{"2011-03-09T01:42:34", time.Time{}, azerr.InvalidQueryParameterValue},
		{"Wed, 09 Mar 2011 01:42:34 GMT", time.Time{}, azerr.InvalidQueryParameterValue},
		{"2011-13-09T01:42:34Z", time.Time{}, azerr.InvalidQueryParameterValue},
		{"garbage", time.Time{}, azerr.InvalidQueryParameterValue},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSnapshot(tc.in)
			checkErr(t, err, tc.code)
			if tc.code != "" {
				e, _ := azerr.As(err)
				if n, _ := detail(e, "QueryParameterName"); n != "snapshot" {
					t.Fatalf("QueryParameterName %q", n)
				}
				return
			}
			if !got.Equal(tc.want) || got.Location() != time.UTC {
				t.Fatalf("got %v want %v", got, tc.want)
			}
		})
	}
	// Round trip at 100 ns resolution.
	now := time.Date(2026, 1, 2, 3, 4, 5, 123_456_789, time.UTC)
	got, err := ParseSnapshot(FormatISO7(now))
	if err != nil || !got.Equal(now.Truncate(100*time.Nanosecond)) {
		t.Fatalf("round trip: %v %v", got, err)
	}
}

// decodeETag inverts NewETag; it exists to prove the format is injective.
func decodeETag(t *testing.T, etag string) (ticks uint64, sub, seq uint64) {
	t.Helper()
	s := strings.TrimSuffix(strings.TrimPrefix(etag, `"0x`), `"`)
	hex := func(s string) uint64 {
		var v uint64
		for _, c := range s {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= uint64(c - '0')
			case c >= 'A' && c <= 'F':
				v |= uint64(c-'A') + 10
			default:
				t.Fatalf("bad hex digit %q in %s", c, etag)
			}
		}
		return v
	}
	n := int(hex(s[len(s)-1:])) + 1
	s = s[:len(s)-1]
	seq = hex(s[len(s)-n:])
	s = s[:len(s)-n]
	sub = hex(s[len(s)-2:])
	ticks = hex(s[:len(s)-2])
	return
}

func TestNewETag(t *testing.T) {
	// The tick part matches Azure's: 2019-05-24T23:00:35Z-ish recorded as
	// "0x8D6E09BA16A7494" (an azure-sdk-for-js recording).
	ts := time.Date(2019, 5, 24, 23, 0, 35, 0, time.UTC)
	e := NewETag(ts, 0)
	if !strings.HasPrefix(e, `"0x8D6E09B`) || !strings.HasSuffix(e, `"`) {
		t.Fatalf("etag %s", e)
	}
	if e[3:] != strings.ToUpper(e[3:]) {
		t.Fatalf("not upper-case: %s", e)
	}
	if got := NewETag(ts, 0); got != e {
		t.Fatalf("not deterministic: %s vs %s", got, e)
	}
	if got := NewETag(ts.In(time.FixedZone("X", 3600)), 0); got != e {
		t.Fatalf("location changes etag: %s vs %s", got, e)
	}

	seen := map[string][2]any{}
	times := []time.Time{
		ts, ts.Add(time.Nanosecond), ts.Add(99 * time.Nanosecond), ts.Add(100 * time.Nanosecond),
		ts.Add(time.Second), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(3700, 1, 1, 0, 0, 0, 0, time.UTC), time.Unix(0, 0), time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC),
	}
	seqs := []uint64{0, 1, 15, 16, 255, 256, 1 << 32, math.MaxUint64}
	for _, tm := range times {
		for _, sq := range seqs {
			e := NewETag(tm, sq)
			if prev, dup := seen[e]; dup {
				t.Fatalf("collision %s for (%v,%d) and %v", e, tm, sq, prev)
			}
			seen[e] = [2]any{tm, sq}
			ticks, sub, seq := decodeETag(t, e)
			wt, ws := dotnetTicks(tm)
			if ticks != uint64(wt) || sub != uint64(ws) || seq != sq {
				t.Fatalf("decode %s = (%d,%d,%d), want (%d,%d,%d)", e, ticks, sub, seq, wt, ws, sq)
			}
		}
	}
}

func TestParseIntQuery(t *testing.T) {
	tests := []struct {
		name   string
		q      string
		min    int
		max    int
		def    int
		want   int
		code   string
		minmax bool // expect MinimumAllowed/MaximumAllowed details
	}{
		{"absent", "", 1, 32, 1, 1, "", false},
		{"other param", "maxresults=5", 1, 32, 1, 1, "", false},
		{"in range", "numofmessages=32", 1, 32, 1, 32, "", false},
		{"min", "numofmessages=1", 1, 32, 1, 1, "", false},
		{"first value wins", "numofmessages=2&numofmessages=99", 1, 32, 1, 2, "", false},
		{"plus sign", "numofmessages=%2B3", 1, 32, 1, 3, "", false},
		{"above (recorded)", "numofmessages=100", 1, 32, 1, 0, azerr.OutOfRangeQueryParameterValue, true},
		{"zero maxresults", "numofmessages=0", 1, 32, 1, 0, azerr.OutOfRangeQueryParameterValue, true},
		{"negative", "numofmessages=-1", 1, 32, 1, 0, azerr.OutOfRangeQueryParameterValue, true},
		{"overflow", "numofmessages=99999999999999999999999", 1, 32, 1, 0, azerr.OutOfRangeQueryParameterValue, true},
		{"not a number", "numofmessages=abc", 1, 32, 1, 0, azerr.InvalidQueryParameterValue, false},
		{"empty", "numofmessages=", 1, 32, 1, 0, azerr.InvalidQueryParameterValue, false},
		{"float", "numofmessages=1.5", 1, 32, 1, 0, azerr.InvalidQueryParameterValue, false},
		{"space", "numofmessages=+1", 1, 32, 1, 0, azerr.InvalidQueryParameterValue, false}, // '+' decodes to space
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseIntQuery(q, "numofmessages", tc.min, tc.max, tc.def)
			checkErr(t, err, tc.code)
			if tc.code == "" {
				if got != tc.want {
					t.Fatalf("got %d want %d", got, tc.want)
				}
				return
			}
			e, _ := azerr.As(err)
			if n, _ := detail(e, "QueryParameterName"); n != "numofmessages" {
				t.Fatalf("QueryParameterName %q", n)
			}
			if v, _ := detail(e, "QueryParameterValue"); v != q.Get("numofmessages") {
				t.Fatalf("QueryParameterValue %q", v)
			}
			mn, ok1 := detail(e, "MinimumAllowed")
			mx, ok2 := detail(e, "MaximumAllowed")
			if tc.minmax != (ok1 && ok2) || (tc.minmax && (mn != "1" || mx != "32")) {
				t.Fatalf("details %+v", e.Details)
			}
		})
	}
}

func TestParseISOTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2009-09-28T08:49:37.0000000Z", time.Date(2009, 9, 28, 8, 49, 37, 0, time.UTC), true},
		{"2009-09-28T08:49:37Z", time.Date(2009, 9, 28, 8, 49, 37, 0, time.UTC), true},
		{"2009-09-28T08:49:37.123Z", time.Date(2009, 9, 28, 8, 49, 37, 123_000_000, time.UTC), true},
		{"2009-09-28T08:49Z", time.Date(2009, 9, 28, 8, 49, 0, 0, time.UTC), true},
		{"2009-09-28", time.Date(2009, 9, 28, 0, 0, 0, 0, time.UTC), true},
		{"2009-09-28T10:49:37+02:00", time.Date(2009, 9, 28, 8, 49, 37, 0, time.UTC), true},
		{"", time.Time{}, false},
		{"2009-09-28T08:49:37.12345678Z", time.Time{}, false},
		{"2009-09-28T08:49:37", time.Time{}, false},
		{"28/09/2009", time.Time{}, false},
		{"Mon, 28 Sep 2009 08:49:37 GMT", time.Time{}, false},
	}
	for _, tc := range tests {
		got, err := ParseISOTime(tc.in)
		if !tc.ok {
			checkErr(t, err, azerr.InvalidInput)
			continue
		}
		if err != nil || !got.Equal(tc.want) || got.Location() != time.UTC {
			t.Errorf("%q: got %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

package wire

import (
	"math/rand/v2"
	"net/http"
	"testing"
	"time"
)

// TestAppendHTTPDate: the field-by-field form is time.Format's, for any
// instant and zone, the years outside four digits included.
func TestAppendHTTPDate(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	zone := time.FixedZone("x", -7*3600)
	times := []time.Time{{}, time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 2, 29, 12, 0, 0, 0, zone)}
	for range 100000 {
		times = append(times, time.Unix(r.Int64N(1<<38)-1<<37, r.Int64N(1e9)).In(zone))
	}
	for _, tm := range times {
		want := tm.UTC().Format(http.TimeFormat)
		if got := FormatHTTPDate(tm); got != want {
			t.Fatalf("FormatHTTPDate(%v) = %q, want %q", tm, got, want)
		}
		if got, ok := ParseIMFFixdate(want); tm.Year() >= 0 && tm.UTC().Year() <= 9999 && (!ok || !got.Equal(tm.Truncate(time.Second))) {
			t.Fatalf("ParseIMFFixdate(%q) = %v %v", want, got, ok)
		}
	}
}

// FuzzParseIMFFixdate: where the fast reading answers, net/http's
// ParseTime answers the same instant; it declines every form ParseTime
// refuses. ParseHTTPDate answers as ParseTime does on every input.
func FuzzParseIMFFixdate(f *testing.F) {
	for _, s := range []string{"Mon, 02 Jan 2006 15:04:05 GMT", "Sun, 29 Feb 2004 00:00:00 GMT", "Tue, 29 Feb 2005 00:00:00 GMT",
		"mon, 02 jan 2006 15:04:05 GMT", "Monday, 02-Jan-06 15:04:05 GMT", "Mon Jan  2 15:04:05 2006",
		"Mon, 02 Jan 2006 24:00:00 GMT", "Mon, 31 Apr 2006 10:00:00 GMT", "Mon, 02 Jan 2006 15:04:05 UTC"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseIMFFixdate(s)
		want, err := http.ParseTime(s)
		if ok && (err != nil || !got.Equal(want) || got.Location() != time.UTC) {
			t.Fatalf("ParseIMFFixdate(%q) = %v, ParseTime: %v %v", s, got, want, err)
		}
		if all, aerr := ParseHTTPDate(s); (aerr == nil) != (err == nil) || err == nil && !all.Equal(want) {
			t.Fatalf("ParseHTTPDate(%q) = %v, %v; ParseTime: %v, %v", s, all, aerr, want, err)
		}
	})
}

package odata

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that errors are syntax
// errors inside the input, and that an accepted filter's canonical form
// parses back to the same canonical form with the same matches. Seeds
// are every filter of the golden file plus filters the SDKs send.
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 30s ./internal/table/odata
func FuzzParse(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("testdata", "filters.golden"))
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if s, ok := strings.CutPrefix(line, "filter: "); ok {
			f.Add(s)
		}
	}
	for _, s := range []string{
		"PartitionKey eq 'partition' and RowKey ge '0001' and RowKey lt '0100'",
		"(PartitionKey eq 'tables_querytests_1') and (RowKey ge 'rowkey_0') and (IsGCed eq false) and (LongPrimitive gt 60L)",
		"TableName ge 'a' and TableName lt 'b'",
		"Timestamp ge datetime'2024-01-01T00:00:00.0000000Z'",
	} {
		f.Add(s)
	}
	recs := loadRecords(f)
	f.Fuzz(func(t *testing.T, src string) {
		flt, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("%q: non-syntax error %v", src, err)
			}
			if se.Pos < 0 || se.Pos > len(src) {
				t.Fatalf("%q: error position %d outside the input", src, se.Pos)
			}
			return
		}
		canon := flt.String()
		again, err := Parse(canon)
		if err != nil {
			t.Fatalf("%q: canonical form %q does not parse: %v", src, canon, err)
		}
		if again.String() != canon {
			t.Fatalf("%q: canonical form %q re-renders as %q", src, canon, again.String())
		}
		for _, r := range recs {
			if flt.Match(r) != again.Match(r) {
				t.Fatalf("%q and its canonical form %q disagree on %s", src, canon, r.id())
			}
		}
		for _, key := range []string{"PartitionKey", "RowKey", "TableName"} {
			rg := flt.KeyRange(key)
			for _, r := range recs {
				v, ok := r.Property(key)
				if !ok || !flt.Match(r) {
					continue
				}
				if !rg.contains(v) {
					t.Fatalf("%q matches %s but its %s range %v excludes it", src, r.id(), key, rg)
				}
			}
		}
	})
}

// contains reports whether a string value is inside the range.
func (r Range) contains(v Value) bool {
	if r.Empty || v.Type != String {
		return false
	}
	s := string(v.Bytes)
	if r.HasLo && (s < r.Lo || (s == r.Lo && !r.LoIncl)) {
		return false
	}
	if r.HasHi && (s > r.Hi || (s == r.Hi && !r.HiIncl)) {
		return false
	}
	return true
}

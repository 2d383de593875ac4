package blobrest

import (
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// TestParseUndeleteSource: x-ms-undelete-source is "?deletionid={id}",
// optionally after the request's own path (with or without its
// container, a leading "/", URL-encoded); anything else is 400
// InvalidHeaderValue.
func TestParseUndeleteSource(t *testing.T) {
	for _, c := range []struct{ v, id string }{
		{"?deletionid=132658816156507617", "132658816156507617"},
		{"d/f?deletionid=1", "1"},
		{"/d/f?deletionid=1", "1"},
		{"cnt/d/f?deletionid=1", "1"},
		{"/cnt/d%2Ff?deletionid=1", "1"},
		{"?deletionid=1&other=x", "1"},
	} {
		id, err := parseUndeleteSource(c.v, "cnt", "d/f")
		if err != nil || id != c.id {
			t.Errorf("parseUndeleteSource(%q) = %q, %v; want %q", c.v, id, err, c.id)
		}
	}
	for _, v := range []string{"", "d/f", "?deletionid=", "?x=1", "other?deletionid=1", "?deletionid=%zz", "cnt2/d/f?deletionid=1"} {
		if _, err := parseUndeleteSource(v, "cnt", "d/f"); !azerr.Has(err, azerr.InvalidHeaderValue) {
			t.Errorf("parseUndeleteSource(%q): %v, want InvalidHeaderValue", v, err)
		}
	}
}

// FuzzParseUndeleteSource: any header value gives an id or 400, and an
// accepted value always carries a non-empty deletion id.
func FuzzParseUndeleteSource(f *testing.F) {
	for _, s := range []string{"?deletionid=1", "d/f?deletionid=2", "/cnt/d/f?deletionid=3", "?deletionid=", "%", "?%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		id, err := parseUndeleteSource(v, "cnt", "d/f")
		if err != nil {
			if !azerr.Has(err, azerr.InvalidHeaderValue) {
				t.Fatalf("%q: %v", v, err)
			}
			return
		}
		if id == "" {
			t.Fatalf("%q: accepted without a deletion id", v)
		}
	})
}

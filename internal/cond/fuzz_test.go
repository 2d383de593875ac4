package cond

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// FuzzParse feeds arbitrary header values to Parse and ParseSource and the
// result to every check; nothing may panic and every error must be of the
// documented kind.
func FuzzParse(f *testing.F) {
	f.Add(`"a", "b,c"`, "*", "Mon, 06 May 2024 07:08:09 GMT", "garbage", `"0x1"`)
	f.Add("", "", "", "", "")
	f.Add(`"`, `,,,"`, "Mon, 06 May 2024 09:08:09 +0200", "Mon May  6 07:08:09 2024", "0x1")
	f.Fuzz(func(t *testing.T, match, noneMatch, modSince, unmodSince, etag string) {
		h := http.Header{}
		for name, v := range map[string]string{
			HeaderIfMatch: match, HeaderIfNoneMatch: noneMatch, HeaderIfModifiedSince: modSince, HeaderIfUnmodifiedSince: unmodSince,
			HeaderSourceIfMatch: match, HeaderSourceIfNoneMatch: noneMatch, HeaderSourceIfModifiedSince: modSince, HeaderSourceIfUnmodifiedSince: unmodSince,
		} {
			h[http.CanonicalHeaderKey(name)] = []string{v}
		}
		lm := time.Date(2024, 5, 6, 7, 8, 9, 500, time.UTC)
		// Dates parse as net/http parses them.
		want, werr := http.ParseTime(modSince)
		if got, err := wire.ParseHTTPDate(modSince); (err == nil) != (werr == nil) || err == nil && !got.Equal(want) {
			t.Fatalf("wire.ParseHTTPDate(%q) = %v, %v; net/http: %v, %v", modSince, got, err, want, werr)
		}
		for _, parse := range []func(Header) (Conditions, error){Parse, ParseSource} {
			c, err := parse(h)
			if err != nil {
				e, ok := azerr.As(err)
				if !ok || e.Code != azerr.InvalidHeaderValue || e.Status != 400 || len(e.Details) != 2 {
					t.Fatalf("parse error %#v", err)
				}
				continue
			}
			for _, list := range [][]string{c.IfMatch, c.IfNoneMatch} {
				for _, v := range list {
					if v == "" || v != strings.TrimSpace(v) {
						t.Fatalf("bad element %q in %q", v, list)
					}
				}
			}
			for _, d := range []*time.Time{c.IfModifiedSince, c.IfUnmodifiedSince} {
				if d != nil && (d.Location() != time.UTC || d.Nanosecond() != 0) {
					t.Fatalf("date not truncated UTC: %v", d)
				}
			}
			if c.IsEmpty() != (len(c.IfMatch) == 0 && len(c.IfNoneMatch) == 0 && c.IfModifiedSince == nil && c.IfUnmodifiedSince == nil) {
				t.Fatal("IsEmpty disagrees")
			}
			expect(t, c.CheckRead(etag, lm), azerr.ConditionNotMet, 304, 412)
			expect(t, c.CheckWrite(true, etag, lm), azerr.ConditionNotMet, 412)
			expect(t, c.CheckWrite(false, etag, lm), azerr.ConditionNotMet, 412)
			expect(t, c.CheckSource(etag, lm), azerr.SourceConditionNotMet, 412)
			if c.IsEmpty() {
				if c.CheckRead(etag, lm) != nil || c.CheckWrite(true, etag, lm) != nil || c.CheckSource(etag, lm) != nil {
					t.Fatal("empty conditions failed")
				}
			}
		}
	})
}

func expect(t *testing.T, err error, code string, statuses ...int) {
	t.Helper()
	if err == nil || errors.Is(err, ErrExists) {
		return
	}
	e, ok := azerr.As(err)
	if !ok || e.Code != code {
		t.Fatalf("unexpected error %#v", err)
	}
	for _, s := range statuses {
		if e.Status == s {
			return
		}
	}
	t.Fatalf("unexpected status %d", e.Status)
}

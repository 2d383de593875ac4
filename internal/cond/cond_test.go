package cond

import (
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

const etag = `"0x8D4BCC2E4835CD0"`

// lastModified has sub-second precision on purpose: comparisons truncate it.
var (
	lastModified = time.Date(2024, 5, 6, 7, 8, 9, 700_000_000, time.UTC)
	lmSec        = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	before       = lmSec.Add(-time.Second)
	after        = lmSec.Add(time.Second)
)

func tp(t time.Time) *time.Time { return &t }

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		h    http.Header
		want Conditions
	}{
		{"empty", hdr(), Conditions{}},
		{"blank values", hdr("If-Match", " ", "If-None-Match", ",, ,", "If-Modified-Since", ""), Conditions{}},
		{"one quoted etag", hdr("If-Match", etag), Conditions{IfMatch: []string{etag}}},
		{"unquoted etag", hdr("If-Match", "0x1"), Conditions{IfMatch: []string{"0x1"}}},
		{"star", hdr("If-None-Match", "*"), Conditions{IfNoneMatch: []string{"*"}}},
		{"list", hdr("If-Match", `"a", "b",c`), Conditions{IfMatch: []string{`"a"`, `"b"`, "c"}}},
		{"comma inside quotes", hdr("If-Match", `"a,b" , "c"`), Conditions{IfMatch: []string{`"a,b"`, `"c"`}}},
		{"unterminated quote", hdr("If-Match", `"a,b`), Conditions{IfMatch: []string{`"a,b`}}},
		{"repeated header lines", hdr("If-None-Match", `"a"`, "If-None-Match", `"b", *`), Conditions{IfNoneMatch: []string{`"a"`, `"b"`, "*"}}},
		{"rfc1123 dates", hdr("If-Modified-Since", "Mon, 06 May 2024 07:08:09 GMT", "If-Unmodified-Since", "Mon, 06 May 2024 07:08:10 GMT"),
			Conditions{IfModifiedSince: tp(lmSec), IfUnmodifiedSince: tp(after)}},
		{"rfc850 date", hdr("If-Modified-Since", "Monday, 06-May-24 07:08:09 GMT"), Conditions{IfModifiedSince: tp(lmSec)}},
		{"asctime date", hdr("If-Modified-Since", "Mon May  6 07:08:09 2024"), Conditions{IfModifiedSince: tp(lmSec)}},
		{"numeric zone", hdr("If-Modified-Since", "Mon, 06 May 2024 09:08:09 +0200"), Conditions{IfModifiedSince: tp(lmSec)}},
	}
	for _, c := range cases {
		got, err := Parse(c.h)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestParseBadDate(t *testing.T) {
	for _, name := range []string{HeaderIfModifiedSince, HeaderIfUnmodifiedSince} {
		_, err := Parse(hdr(name, "yesterday"))
		e, ok := azerr.As(err)
		if !ok || e.Code != azerr.InvalidHeaderValue || e.Status != 400 {
			t.Fatalf("%s: %v", name, err)
		}
		want := []azerr.Detail{{Name: "HeaderName", Value: name}, {Name: "HeaderValue", Value: "yesterday"}}
		if !reflect.DeepEqual(e.Details, want) {
			t.Errorf("%s details: %+v", name, e.Details)
		}
	}
	for _, name := range []string{HeaderSourceIfModifiedSince, HeaderSourceIfUnmodifiedSince} {
		_, err := ParseSource(hdr(name, "2024-05-06"))
		e, ok := azerr.As(err)
		if !ok || e.Code != azerr.InvalidHeaderValue || e.Details[0].Value != name {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestParseSource(t *testing.T) {
	h := hdr(
		HeaderSourceIfMatch, etag,
		HeaderSourceIfNoneMatch, `"x"`,
		HeaderSourceIfModifiedSince, before.Format(http.TimeFormat),
		HeaderSourceIfUnmodifiedSince, after.Format(http.TimeFormat),
		// destination headers must not leak into source conditions
		HeaderIfMatch, `"dest"`,
	)
	got, err := ParseSource(h)
	want := Conditions{IfMatch: []string{etag}, IfNoneMatch: []string{`"x"`}, IfModifiedSince: tp(before), IfUnmodifiedSince: tp(after)}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseSource = %+v, %v", got, err)
	}
	dest, err := Parse(h)
	if err != nil || !reflect.DeepEqual(dest, Conditions{IfMatch: []string{`"dest"`}}) {
		t.Errorf("Parse = %+v, %v", dest, err)
	}
}

func TestIsEmpty(t *testing.T) {
	for _, c := range []struct {
		c    Conditions
		want bool
	}{
		{Conditions{}, true},
		{Conditions{IfMatch: []string{"*"}}, false},
		{Conditions{IfNoneMatch: []string{"*"}}, false},
		{Conditions{IfModifiedSince: tp(before)}, false},
		{Conditions{IfUnmodifiedSince: tp(before)}, false},
	} {
		if got := c.c.IsEmpty(); got != c.want {
			t.Errorf("%+v.IsEmpty() = %v", c.c, got)
		}
	}
}

// want: 0 ok, 304, 412, -1 ErrExists.
func checkResult(t *testing.T, name string, err error, want int, code string) {
	t.Helper()
	switch want {
	case 0:
		if err != nil {
			t.Errorf("%s: %v, want ok", name, err)
		}
	case -1:
		if !errors.Is(err, ErrExists) {
			t.Errorf("%s: %v, want ErrExists", name, err)
		}
	default:
		e, ok := azerr.As(err)
		if !ok || e.Status != want || e.Code != code {
			t.Errorf("%s: %v, want %d %s", name, err, want, code)
		}
	}
}

func TestCheckRead(t *testing.T) {
	cases := []struct {
		name string
		c    Conditions
		want int
	}{
		{"none", Conditions{}, 0},
		{"if-match same", Conditions{IfMatch: []string{etag}}, 0},
		{"if-match unquoted", Conditions{IfMatch: []string{"0x8D4BCC2E4835CD0"}}, 0},
		{"if-match star", Conditions{IfMatch: []string{"*"}}, 0},
		{"if-match in list", Conditions{IfMatch: []string{`"x"`, etag}}, 0},
		{"if-match other", Conditions{IfMatch: []string{`"x"`}}, 412},
		{"if-match case differs", Conditions{IfMatch: []string{`"0x8d4bcc2e4835cd0"`}}, 412},
		{"if-unmodified-since later", Conditions{IfUnmodifiedSince: tp(after)}, 0},
		{"if-unmodified-since equal", Conditions{IfUnmodifiedSince: tp(lmSec)}, 0},
		{"if-unmodified-since earlier", Conditions{IfUnmodifiedSince: tp(before)}, 412},
		{"if-none-match other", Conditions{IfNoneMatch: []string{`"x"`}}, 0},
		{"if-none-match same", Conditions{IfNoneMatch: []string{etag}}, 304},
		{"if-none-match one of list", Conditions{IfNoneMatch: []string{`"x"`, etag}}, 304},
		{"if-none-match star", Conditions{IfNoneMatch: []string{"*"}}, 304},
		{"if-modified-since earlier", Conditions{IfModifiedSince: tp(before)}, 0},
		{"if-modified-since equal (sub-second ignored)", Conditions{IfModifiedSince: tp(lmSec)}, 304},
		{"if-modified-since later", Conditions{IfModifiedSince: tp(after)}, 304},
		{"inm fails, ims passes", Conditions{IfNoneMatch: []string{etag}, IfModifiedSince: tp(before)}, 0},
		{"inm passes, ims fails", Conditions{IfNoneMatch: []string{`"x"`}, IfModifiedSince: tp(after)}, 0},
		{"inm fails, ims fails", Conditions{IfNoneMatch: []string{etag}, IfModifiedSince: tp(after)}, 304},
		{"412 wins over 304 (if-match)", Conditions{IfMatch: []string{`"x"`}, IfNoneMatch: []string{etag}}, 412},
		{"412 wins over 304 (ius)", Conditions{IfUnmodifiedSince: tp(before), IfModifiedSince: tp(after)}, 412},
		{"all pass", Conditions{IfMatch: []string{etag}, IfUnmodifiedSince: tp(lmSec), IfNoneMatch: []string{`"x"`}, IfModifiedSince: tp(before)}, 0},
		{"if-match ok, ius fails", Conditions{IfMatch: []string{etag}, IfUnmodifiedSince: tp(before)}, 412},
	}
	for _, c := range cases {
		checkResult(t, c.name, c.c.CheckRead(etag, lastModified), c.want, azerr.ConditionNotMet)
	}
	// Unquoted stored ETag against a quoted condition.
	checkResult(t, "stored etag unquoted", Conditions{IfMatch: []string{etag}}.CheckRead("0x8D4BCC2E4835CD0", lastModified), 0, "")
	// Last-Modified in another zone compares by instant.
	checkResult(t, "zone", Conditions{IfModifiedSince: tp(lmSec)}.CheckRead(etag, lastModified.In(time.FixedZone("x", 3600))), 304, azerr.ConditionNotMet)
}

func TestCheckWrite(t *testing.T) {
	cases := []struct {
		name   string
		c      Conditions
		exists bool
		want   int
	}{
		{"none/exists", Conditions{}, true, 0},
		{"none/missing", Conditions{}, false, 0},
		{"if-match same", Conditions{IfMatch: []string{etag}}, true, 0},
		{"if-match star", Conditions{IfMatch: []string{"*"}}, true, 0},
		{"if-match other", Conditions{IfMatch: []string{`"x"`}}, true, 412},
		{"if-match/missing", Conditions{IfMatch: []string{etag}}, false, 412},
		{"if-match star/missing", Conditions{IfMatch: []string{"*"}}, false, 412},
		{"if-none-match other", Conditions{IfNoneMatch: []string{`"x"`}}, true, 0},
		{"if-none-match same", Conditions{IfNoneMatch: []string{etag}}, true, 412},
		{"if-none-match same, unquoted", Conditions{IfNoneMatch: []string{"0x8D4BCC2E4835CD0"}}, true, 412},
		{"if-none-match star", Conditions{IfNoneMatch: []string{"*"}}, true, -1},
		{"if-none-match star/missing", Conditions{IfNoneMatch: []string{"*"}}, false, 0},
		{"if-none-match same/missing", Conditions{IfNoneMatch: []string{etag}}, false, 0},
		{"if-modified-since earlier", Conditions{IfModifiedSince: tp(before)}, true, 0},
		{"if-modified-since equal (never 304)", Conditions{IfModifiedSince: tp(lmSec)}, true, 412},
		{"if-modified-since later", Conditions{IfModifiedSince: tp(after)}, true, 412},
		{"if-modified-since/missing", Conditions{IfModifiedSince: tp(after)}, false, 0},
		{"if-unmodified-since equal", Conditions{IfUnmodifiedSince: tp(lmSec)}, true, 0},
		{"if-unmodified-since earlier", Conditions{IfUnmodifiedSince: tp(before)}, true, 412},
		{"if-unmodified-since/missing", Conditions{IfUnmodifiedSince: tp(before)}, false, 0},
		{"star plus unmet if-match: 412 first", Conditions{IfNoneMatch: []string{"*"}, IfMatch: []string{`"x"`}}, true, 412},
		{"star plus unmet ims: 412 first", Conditions{IfNoneMatch: []string{"*"}, IfModifiedSince: tp(after)}, true, 412},
		{"if-match ok, ius fails", Conditions{IfMatch: []string{etag}, IfUnmodifiedSince: tp(before)}, true, 412},
		{"inm ok, ims fails", Conditions{IfNoneMatch: []string{`"x"`}, IfModifiedSince: tp(after)}, true, 412},
		{"all pass", Conditions{IfMatch: []string{etag}, IfUnmodifiedSince: tp(after), IfNoneMatch: []string{`"x"`}, IfModifiedSince: tp(before)}, true, 0},
	}
	for _, c := range cases {
		checkResult(t, c.name, c.c.CheckWrite(c.exists, etag, lastModified), c.want, azerr.ConditionNotMet)
	}
}

func TestCheckSource(t *testing.T) {
	cases := []struct {
		name string
		c    Conditions
		want int
	}{
		{"none", Conditions{}, 0},
		{"if-match same", Conditions{IfMatch: []string{etag}}, 0},
		{"if-match star", Conditions{IfMatch: []string{"*"}}, 0},
		{"if-match other", Conditions{IfMatch: []string{`"x"`}}, 412},
		{"if-none-match other", Conditions{IfNoneMatch: []string{`"x"`}}, 0},
		{"if-none-match same", Conditions{IfNoneMatch: []string{etag}}, 412},
		{"if-none-match star", Conditions{IfNoneMatch: []string{"*"}}, 412},
		{"if-modified-since earlier", Conditions{IfModifiedSince: tp(before)}, 0},
		{"if-modified-since equal (not 304)", Conditions{IfModifiedSince: tp(lmSec)}, 412},
		{"if-unmodified-since equal", Conditions{IfUnmodifiedSince: tp(lmSec)}, 0},
		{"if-unmodified-since earlier", Conditions{IfUnmodifiedSince: tp(before)}, 412},
	}
	for _, c := range cases {
		checkResult(t, c.name, c.c.CheckSource(etag, lastModified), c.want, azerr.SourceConditionNotMet)
	}
}

// TestParseThenCheck runs the real header path end to end.
func TestParseThenCheck(t *testing.T) {
	c, err := Parse(hdr("If-None-Match", `"other", `+etag, "If-Modified-Since", lastModified.Format(http.TimeFormat)))
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, "conditional GET of an unchanged blob", c.CheckRead(etag, lastModified), 304, azerr.ConditionNotMet)
	checkResult(t, "after a change", c.CheckRead(`"0x2"`, lastModified.Add(time.Second)), 0, "")
}

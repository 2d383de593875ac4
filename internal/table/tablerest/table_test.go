package tablerest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
	"github.com/cerulean-storage/cerulean/internal/table"
	"github.com/cerulean-storage/cerulean/internal/table/odata"
)

// formatETag renders the escaped ISO form of the timestamp for any
// tick value the service can produce.
func FuzzFormatETag(f *testing.F) {
	f.Add(odata.Ticks(time.Date(2014, 1, 22, 12, 26, 9, 619064600, time.UTC)))
	f.Add(odata.Ticks(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)))
	f.Add(odata.Ticks(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)))
	f.Fuzz(func(t *testing.T, ts int64) {
		lo, hi := odata.Ticks(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)), odata.Ticks(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC))
		if ts < lo || ts > hi {
			return
		}
		want := `W/"datetime'` + strings.ReplaceAll(odata.FormatDateTime(odata.FromTicks(ts)), ":", "%3A") + `'"`
		if got := formatETag(ts); got != want {
			t.Fatalf("formatETag(%d) = %s, want %s", ts, got, want)
		}
		if back, ok := parseETag(want); !ok || back != ts {
			t.Fatalf("parseETag(%s) = %d, %v", want, back, ok)
		}
	})
}

func TestETagFormat(t *testing.T) {
	ts := odata.Ticks(time.Date(2014, 1, 22, 12, 26, 9, 619064600, time.UTC))
	got := formatETag(ts)
	if got != `W/"datetime'2014-01-22T12%3A26%3A09.6190646Z'"` {
		t.Fatalf("ETag %s", got)
	}
	if back, ok := parseETag(got); !ok || back != ts {
		t.Fatalf("parse %s: %d %v", got, back, ok)
	}
	if back, ok := parseETag(`W/"datetime'2014-01-22T12:26:09.6190646Z'"`); !ok || back != ts {
		t.Fatalf("unescaped colons: %d %v", back, ok)
	}
	for _, bad := range []string{`"0x8D"`, `W/"datetime'x'"`, `W/"datetime'`, `datetime'2014-01-22T12:26:09Z'`, `W/"datetime'2014-01-22T12%3Z'"`} {
		if _, ok := parseETag(bad); ok {
			t.Fatalf("accepted ETag %s", bad)
		}
	}
}

func TestKeyPredicate(t *testing.T) {
	for _, tc := range []struct {
		in, pk, rk string
		ok         bool
	}{
		{"(PartitionKey='a',RowKey='b')", "a", "b", true},
		{"(RowKey='b',PartitionKey='a')", "a", "b", true},
		{"(PartitionKey='it''s',RowKey='')", "it's", "", true},
		{"(PartitionKey='a,RowKey=',RowKey='x')", "a,RowKey=", "x", true},
		{"(PartitionKey='a')", "", "", false},
		{"(PartitionKey='a',PartitionKey='b')", "", "", false},
		{"(PartitionKey='a',RowKey='b'", "", "", false},
		{"(PartitionKey='a',RowKey='b')x", "", "", false},
		{"(PartitionKey=a,RowKey='b')", "", "", false},
		{"(PartitionKey='a',RowKey='b", "", "", false},
	} {
		pk, rk, ok := parseKeyPredicate(tc.in)
		if ok != tc.ok || pk != tc.pk || rk != tc.rk {
			t.Errorf("%s: %q %q %v", tc.in, pk, rk, ok)
		}
	}
	// What keyPredicate renders parses back after URL decoding.
	for _, k := range []string{"a", "it's", "100% ü", ""} {
		pred := keyPredicate(k, k+"x")
		dec, err := url.PathUnescape(pred)
		if err != nil {
			t.Fatal(err)
		}
		if pk, rk, ok := parseKeyPredicate(dec); !ok || pk != k || rk != k+"x" {
			t.Fatalf("%s: %q %q %v", pred, pk, rk, ok)
		}
	}
}

func TestContinuationTokens(t *testing.T) {
	for _, s := range []string{"", "a", "p/ü\x00", strings.Repeat("k", 600)} {
		tok := encodeToken(s)
		if tok == "" {
			t.Fatalf("empty token for %q", s)
		}
		if back, ok := decodeToken(tok); !ok || back != s {
			t.Fatalf("token %s: %q %v", tok, back, ok)
		}
	}
	for _, bad := range []string{"", "x", "1!", "1!3!abcd", "1!2!!!", "2!0!"} {
		if _, ok := decodeToken(bad); ok {
			t.Fatalf("accepted token %q", bad)
		}
	}
}

func TestParseEntityBody(t *testing.T) {
	props, pk, rk, err := parseEntityBody([]byte(`{"odata.metadata":"x","PartitionKey":"p","RowKey":"r","Timestamp":"2020-01-01T00:00:00Z",
		"B":true,"I":1,"D":1.0,"E":1e3,"Big":2147483648,"S":"s","L@odata.type":"Edm.Int64","L":"5","Z":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if *pk != "p" || *rk != "r" {
		t.Fatalf("keys %q %q", *pk, *rk)
	}
	var got []string
	for _, p := range props {
		got = append(got, p.Name()+":"+p.Value().Type.String())
	}
	if strings.Join(got, ",") != "B:Edm.Boolean,I:Edm.Int32,D:Edm.Double,E:Edm.Double,Big:Edm.Double,S:Edm.String,L:Edm.Int64" {
		t.Fatalf("properties %s", strings.Join(got, ","))
	}
	for body, code := range map[string]string{
		`{"A":1,"A":2}`: azerr.DuplicatePropertiesSpecified,
		`{"A@odata.type":"Edm.Int64","A@odata.type":"Edm.Int64","A":"1"}`: azerr.DuplicatePropertiesSpecified,
		`{"A@odata.type":"Edm.Foo","A":"1"}`:                              azerr.InvalidInput,
		`{"A@odata.type":"Edm.Int64"}`:                                    "",
		`{"A@odata.type":"Edm.Boolean","A":"yes"}`:                        azerr.InvalidInput,
		`{"A@odata.type":"Edm.Boolean","A":1}`:                            azerr.InvalidInput,
		`{"A@odata.type":"Edm.Double","A":"1.5"}`:                         "",
		`{"A":[1]}`: azerr.InvalidInput,
		`{"9":1}`:   azerr.PropertyNameInvalid,
		`{"PartitionKey@odata.type":"Edm.Int32","PartitionKey":"1"}`: azerr.InvalidInput,
		`{} {}`: azerr.InvalidInput,
		`"x"`:   azerr.InvalidInput,
	} {
		_, _, _, err := parseEntityBody([]byte(body))
		if code == "" {
			if err != nil {
				t.Errorf("%s: %v", body, err)
			}
			continue
		}
		if !azerr.Has(err, code) {
			t.Errorf("%s: got %v, want %s", body, err, code)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"plain", "quote\" back\\slash", "ctl\x00\x1f\n\t", "ü €\u2028\u2029", "bad\xffutf8", "<html>&"} {
		b := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q rendered as invalid JSON %s: %v", s, b, err)
		}
		want := s
		if !utf8.ValidString(s) {
			want = strings.ToValidUTF8(s, "\ufffd")
		}
		if back != want {
			t.Fatalf("%q round-tripped as %q", s, back)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		accept, dollar string
		want           format
		code           string
	}{
		{"", "", minimalMeta, ""},
		{"application/json", "", minimalMeta, ""},
		{"application/json;odata=nometadata", "", noMeta, ""},
		{"application/json; odata=fullmetadata; charset=utf-8", "", fullMeta, ""},
		{"application/json;odata=nometadata", "application/json;odata=fullmetadata", fullMeta, ""},
		{"text/html, application/json;odata=nometadata", "", noMeta, ""},
		{"*/*", "", minimalMeta, ""},
		{"application/atom+xml", "", 0, azerr.AtomFormatNotSupported},
		{"text/plain", "", 0, azerr.JSONFormatNotSupported},
		{"application/json;odata=verbose", "", 0, azerr.InvalidInput},
	} {
		f, err := parseFormat(tc.accept, tc.dollar)
		if tc.code != "" {
			if !azerr.Has(err, tc.code) {
				t.Errorf("%q/%q: %v, want %s", tc.accept, tc.dollar, err, tc.code)
			}
			continue
		}
		if err != nil || f != tc.want {
			t.Errorf("%q/%q: %v %v", tc.accept, tc.dollar, f, err)
		}
	}
}

// FuzzKeyPredicate checks the entity URL parser never panics and
// accepts what keyPredicate renders.
func FuzzKeyPredicate(f *testing.F) {
	for _, s := range []string{"(PartitionKey='a',RowKey='b')", "(RowKey='',PartitionKey='''')", "(PartitionKey='a'", "()", "("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pk, rk, ok := parseKeyPredicate(s)
		if !ok {
			return
		}
		dec, err := url.PathUnescape(keyPredicate(pk, rk))
		if err != nil {
			t.Fatal(err)
		}
		pk2, rk2, ok := parseKeyPredicate(dec)
		if !ok || pk2 != pk || rk2 != rk {
			t.Fatalf("%q -> %q/%q -> %q/%q", s, pk, rk, pk2, rk2)
		}
	})
}

// FuzzEntityBody checks the JSON entity parser never panics and that
// what it accepts survives the stored format.
func FuzzEntityBody(f *testing.F) {
	for _, s := range []string{
		`{"PartitionKey":"p","RowKey":"r","A":1,"B@odata.type":"Edm.Int64","B":"2","C":1.5,"D":true,"E":"x"}`,
		`{"G@odata.type":"Edm.Guid","G":"4185404a-5818-48c3-b9be-f217df0dba6f","T@odata.type":"Edm.DateTime","T":"2020-01-01T00:00:00Z"}`,
		`{"X@odata.type":"Edm.Binary","X":"AQID","N@odata.type":"Edm.Double","N":"NaN"}`,
		`{"A":1,"A":2}`, `[`, `{"A":{"b":1}}`,
		`{"B@odata.type":"Edm.Boolean","B":"False","C@odata.type":"Edm.Boolean","C":"TRUE","N@odata.type":"Edm.Int32","N":null}`,
	} {
		f.Add([]byte(s))
	}
	// The stored form is reached through the domain: each accepted body
	// is written as a new entity of one table and read back.
	ctx := context.Background()
	dom := table.New(mem.New(), clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), nil)
	if _, err := dom.CreateTable(ctx, table.CreateTableInput{Account: "a", Name: "t"}); err != nil {
		f.Fatal(err)
	}
	var row atomic.Int64
	f.Fuzz(func(t *testing.T, body []byte) {
		props, _, _, err := parseEntityBody(body)
		if err != nil {
			if _, ok := azerr.As(err); !ok {
				t.Fatalf("non-Azure error %v", err)
			}
			return
		}
		rk := strconv.FormatInt(row.Add(1), 10)
		w := &table.EntityWrite{Kind: table.OpInsert, Table: "t", PartitionKey: "p", RowKey: rk, Props: props}
		if _, err := dom.WriteEntity(ctx, table.WriteEntityInput{Account: "a", Write: w}); err != nil {
			if azerr.Has(err, azerr.EntityTooLarge) {
				return // the parser does not weigh the entity; the store refuses it
			}
			t.Fatalf("stored form: %v", err)
		}
		got, err := dom.GetEntity(ctx, table.GetEntityInput{EntityKey: table.EntityKey{Account: "a", Table: "t", PartitionKey: "p", RowKey: rk}})
		back := got.Entity
		if err != nil || len(back.Properties()) != len(props) {
			t.Fatalf("stored form: %v", err)
		}
		out := (&jsonOut{f: fullMeta, base: "http://h/a", account: "a", table: "t"}).appendEntity(nil, back, true)
		if !json.Valid(out) {
			t.Fatalf("invalid JSON %s", out)
		}
	})
}

// FuzzFlatObject checks parseFlatObject against encoding/json: both
// accept the same flat objects and read the same members.
func FuzzFlatObject(f *testing.F) {
	for _, s := range []string{
		`{}`, ` {"a":1 , "b" : "x\"y\\u00e9\ud83d\ude00", "c":true,"d":false,"e":null,"f":-0.5e+3}`,
		`{"a":"\ud800"}`, `{"a":"\udc00\u0041"}`, `{"a":"\ud800\ud800"}`, "{\"a\":\"\xff\"}", `{"a":01}`, `{"a":1.}`,
		`{"a":[1]}`, `{"a":{}}`, `{"a":1}x`, `{"a" 1}`, `{,}`, `{"a":1,}`, `{"a":tru}`, `{"\u0000":"\t"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseFlatObject(b)
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		jerr := dec.Decode(&m)
		if jerr == nil {
			if _, terr := dec.Token(); terr != io.EOF {
				jerr = errors.New("trailing data")
			}
		}
		flat := jerr == nil && m != nil
		for _, v := range m {
			switch v.(type) {
			case map[string]any, []any:
				flat = false
			}
		}
		if flat != (err == nil) {
			var ne *errNested
			if jerr == nil && errors.As(err, &ne) {
				return
			}
			t.Fatalf("%q: flat parser err %v, encoding/json err %v", b, err, jerr)
		}
		if err != nil {
			return
		}
		last := map[string]any{}
		for _, mem := range got {
			last[mem.name] = mem.val
		}
		if len(last) != len(m) {
			t.Fatalf("%q: %d members, encoding/json %d", b, len(last), len(m))
		}
		for k, v := range m {
			if fmt.Sprintf("%#v", last[k]) != fmt.Sprintf("%#v", v) {
				t.Fatalf("%q: member %q = %#v, encoding/json %#v", b, k, last[k], v)
			}
		}
	})
}

// checkTableName follows the rule ^[A-Za-z][A-Za-z0-9]{2,62}$ (not
// "tables", any case), with OutOfRangeInput for an alphanumeric name of
// the wrong length: the byte loops are held to the regular expressions
// they replaced.
func TestCheckTableName(t *testing.T) {
	for _, name := range []string{"", "a", "ab", "abc", "Tables", "tables2", "1abc", "ab-c", "ab_c", "abcé", strings.Repeat("a", 63), strings.Repeat("a", 64), "a1B2c3"} {
		checkTableNameAgainstRE(t, name)
	}
}

func FuzzCheckTableName(f *testing.F) {
	f.Add("mytable")
	f.Add("1x")
	f.Fuzz(checkTableNameAgainstRE)
}

var (
	tableNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{2,62}$`)
	alnumRE     = regexp.MustCompile(`^[A-Za-z0-9]+$`)
)

func checkTableNameAgainstRE(t *testing.T, name string) {
	want := ""
	switch {
	case (len(name) < 3 || len(name) > 63) && alnumRE.MatchString(name):
		want = azerr.OutOfRangeInput
	case !tableNameRE.MatchString(name) || strings.EqualFold(name, "tables"):
		want = azerr.InvalidResourceName
	}
	got := ""
	if err := checkTableName(name); err != nil {
		var e *azerr.Error
		if !errors.As(err, &e) {
			t.Fatalf("%q: %v", name, err)
		}
		got = e.Code
	}
	if got != want {
		t.Errorf("checkTableName(%q) = %q, want %q", name, got, want)
	}
}

// parseFormatSplit is parseFormat as it was written with strings.Split
// and ToLower: the reference FuzzParseFormat holds the in-place parser
// to.
func parseFormatSplit(accept, dollarFormat string) (format, error) {
	s := accept
	if dollarFormat != "" {
		s = dollarFormat
		if s == "json" {
			return minimalMeta, nil
		}
	}
	if strings.TrimSpace(s) == "" {
		return minimalMeta, nil
	}
	sawXML := false
	for _, item := range strings.Split(s, ",") {
		params := strings.Split(item, ";")
		switch strings.ToLower(strings.TrimSpace(params[0])) {
		case "application/json":
			f := minimalMeta
			for _, p := range params[1:] {
				k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "odata") {
					switch strings.ToLower(v) {
					case "nometadata":
						f = noMeta
					case "fullmetadata":
						f = fullMeta
					case "minimalmetadata", "":
					default:
						return 0, errors.New("odata")
					}
				}
			}
			return f, nil
		case "*/*", "application/*":
			return minimalMeta, nil
		case "application/atom+xml", "application/xml", "text/xml":
			sawXML = true
		}
	}
	if sawXML {
		return 0, errors.New("atom")
	}
	return 0, errors.New("json")
}

// FuzzParseFormat: parseFormat picks the format parseFormatSplit picks,
// and refuses what it refuses.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"", "application/json;odata=nometadata", "application/json; odata=FullMetadata, text/xml",
		"text/xml, application/atom+xml", "APPLICATION/JSON;;odata=", "*/*", "application/*;q=0.5", "x/y,", "application/json;odata=bogus"} {
		f.Add(s, "")
	}
	f.Add("", "json")
	f.Add("", "application/json;odata=minimalmetadata")
	f.Fuzz(func(t *testing.T, accept, dollar string) {
		got, gerr := parseFormat(accept, dollar)
		want, werr := parseFormatSplit(accept, dollar)
		if (gerr == nil) != (werr == nil) || got != want {
			t.Fatalf("parseFormat(%q, %q) = %v, %v; want %v, %v", accept, dollar, got, gerr, want, werr)
		}
	})
}

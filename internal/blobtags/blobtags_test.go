package blobtags

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

func code(err error) string {
	var ae *azerr.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func TestParseHeader(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Tags
		code string
	}{
		{"", nil, ""},
		{"a=1", Tags{"a": "1"}, ""},
		{"a=1&b=two+words&c=", Tags{"a": "1", "b": "two words", "c": ""}, ""},
		{"k%2Fx=v%3Dw", Tags{"k/x": "v=w"}, ""},
		{"a=1&a=2", nil, azerr.DuplicateTagNames},
		{"=1", nil, azerr.EmptyTagName},
		{"a=%21", nil, azerr.InvalidTag},
		{"a=%zz", nil, azerr.InvalidHeaderValue},
		{strings.Repeat("k", 129) + "=v", nil, azerr.TagsTooLarge},
		{"k=" + strings.Repeat("v", 257), nil, azerr.TagsTooLarge},
		{"a=1&b=1&c=1&d=1&e=1&f=1&g=1&h=1&i=1&j=1&k=1", nil, azerr.TagsTooLarge},
	} {
		got, err := ParseHeader(c.in)
		if code(err) != c.code {
			t.Errorf("ParseHeader(%q): error %v, want code %q", c.in, err, c.code)
			continue
		}
		if err == nil && !equal(got, c.want) {
			t.Errorf("ParseHeader(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func equal(a, b Tags) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestXMLRoundTrip(t *testing.T) {
	in := Tags{"b": "2", "a": "one two", "z/x:y": "=_+-."}
	out := string(AppendXML(nil, in, nil))
	want := "<Tags><TagSet><Tag><Key>a</Key><Value>one two</Value></Tag><Tag><Key>b</Key><Value>2</Value></Tag><Tag><Key>z/x:y</Key><Value>=_+-.</Value></Tag></TagSet></Tags>"
	if out != want {
		t.Fatalf("AppendXML:\n%s\nwant\n%s", out, want)
	}
	back, err := ParseXML([]byte(`<?xml version="1.0" encoding="utf-8"?>` + out))
	if err != nil || !equal(back, in) {
		t.Fatalf("ParseXML: %v %v", back, err)
	}
	if got, err := ParseXML(nil); err != nil || len(got) != 0 {
		t.Fatalf("empty body: %v %v", got, err)
	}
	if _, err := ParseXML([]byte("<Tags><TagSet><Tag>")); code(err) != azerr.InvalidXMLDocument {
		t.Fatalf("malformed: %v", err)
	}
	if _, err := ParseXML([]byte("<Tags><TagSet><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>a</Key><Value>2</Value></Tag></TagSet></Tags>")); code(err) != azerr.DuplicateTagNames {
		t.Fatalf("duplicate: %v", err)
	}
}

func TestExpressions(t *testing.T) {
	tags := Tags{"Project": "Contoso", "Status": "Done", "n": "05"}
	var ten []string
	for i := 0; i < 10; i++ {
		ten = append(ten, fmt.Sprintf(`"k%d" = 'v'`, i))
	}
	tenTags := strings.Join(ten, " AND ")
	for _, c := range []struct {
		expr      string
		cond      bool // x-ms-if-tags dialect
		want      bool
		bad       bool
		container string
	}{
		{expr: `"Project" = 'Contoso'`, want: true},
		{expr: `"Project"='Contoso'`, want: true},
		{expr: `"Project" = 'contoso'`, want: false},
		{expr: `"Project" = 'Contoso' and "Status" = 'Done'`, want: true},
		{expr: `"Project" = 'Contoso' AND "Status" = 'Open'`, want: false},
		{expr: `"n" > '04' AND "n" < '06'`, want: true},
		{expr: `"n" >= '05' AND "n" <= '05'`, want: true},
		{expr: `"missing" = ''`, want: false},
		{expr: `"a" = 'it''s'`, bad: true}, // ' is no tag character
		{expr: `@container = 'c1' AND "Status" = 'Done'`, want: true, container: "c1"},
		{expr: `@container = 'c2'`, want: false, container: "c2"},
		// bare tag names, as the JavaScript SDK's recorded tests write them
		{expr: `Project = 'Contoso'`, want: true},
		{expr: `Project='Contoso' and Status='Open'`, want: false},
		{expr: `n>'04' AND "n"<'06'`, want: true},
		{expr: `AND = 'x'`, want: false},
		{expr: `Status<>'Open' OR (Project='X' AND n='05')`, cond: true, want: true},
		{expr: `"Status" <> 'Open'`, cond: true, want: true},
		{expr: `"missing" <> 'x'`, cond: true, want: false},
		{expr: `"Status" = 'Open' OR "Project" = 'Contoso'`, cond: true, want: true},
		{expr: `("Status" = 'Open' OR "n" = '05') AND "Project" = 'Contoso'`, cond: true, want: true},
		{expr: `"Status" = 'Open' OR ("n" = '05' AND "Project" = 'X')`, cond: true, want: false},
		// errors
		{expr: ``, bad: true},
		{expr: `   `, bad: true},
		{expr: `Project-1 = 'Contoso'`, bad: true}, // bare names: letters, digits, _
		{expr: `Pro ject = 'Contoso'`, bad: true},
		{expr: strings.Repeat("k", 129) + ` = 'v'`, bad: true},
		{expr: `= 'v'`, bad: true},
		{expr: `"Project" = "Contoso"`, bad: true},
		{expr: `"Project" = 'Contoso`, bad: true},
		{expr: `"Project" == 'Contoso'`, bad: true},
		{expr: `"Project" <> 'Contoso'`, bad: true},           // where: no <>
		{expr: `"a" = '1' OR "b" = '2'`, bad: true},           // where: no OR
		{expr: `("a" = '1')`, bad: true},                      // where: no parentheses
		{expr: `@container = 'c'`, cond: true, bad: true},     // no @container in conditions
		{expr: `@container > 'c'`, bad: true, container: "x"}, // = only
		{expr: `"a" = '1' AND`, bad: true},
		{expr: `"a" = '1' "b" = '2'`, bad: true},
		{expr: `"a!" = '1'`, bad: true},
		{expr: `"a" = '1!'`, bad: true},
		{expr: `("a" = '1'`, cond: true, bad: true},
		{expr: `"a" = '1')`, cond: true, bad: true},
		{expr: `"a" = '1' ANDx "b" = '2'`, bad: true},
		// The limit is 10 unique tags, not 10 comparisons: eleven
		// comparisons of one tag, or ten tags and @container, are fine.
		{expr: strings.Repeat(`"Project" >= 'A' AND `, 10) + `"Project" = 'Contoso'`, want: true},
		{expr: tenTags + ` AND @container = 'c1'`},
		{expr: tenTags + ` AND "k0" >= '0' AND "k0" <= '9'`},
		{expr: tenTags + ` AND "k10" = 'x'`, bad: true},
		{expr: `(` + tenTags + `) OR "k10" = 'x'`, cond: true, bad: true},
	} {
		var e *Expr
		var err error
		if c.cond {
			e, err = ParseCondition(c.expr)
		} else {
			e, err = ParseWhere(c.expr)
		}
		if c.bad {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("%q: parsed, want a syntax error (got %v)", c.expr, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		if got := e.Matches(tags, "c1"); got != c.want {
			t.Errorf("%q: match %v, want %v", c.expr, got, c.want)
		}
	}
	e, err := ParseWhere(`"b" = '1' AND @container = 'box' AND "a" > '0' AND "b" < '9'`)
	if err != nil {
		t.Fatal(err)
	}
	if k := strings.Join(e.Keys(), ","); k != "b,a" || e.Container() != "box" {
		t.Fatalf("keys %q container %q", k, e.Container())
	}
}

// FuzzExpr: the parsers never panic, and an accepted expression
// evaluates.
func FuzzExpr(f *testing.F) {
	for _, s := range []string{`"a" = '1'`, `("a" <> '1' OR "b" >= 'x') and "c" < ''''`, `@container = 'c' AND "k" <= 'v'`, `((("a"='1')))`, `tag1='val1' AND b>='x'`} {
		f.Add(s)
	}
	tags := Tags{"a": "1", "b": "x", "c": "'"}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []func(string) (*Expr, error){ParseCondition, func(s string) (*Expr, error) { return ParseWhere(s) }} {
			e, err := p(s)
			if err != nil {
				continue
			}
			e.Matches(tags, "c")
			e.Matches(nil, "")
			_ = e.Container()
		}
	})
}

// FuzzHeader: x-ms-tags parsing never panics, and what it accepts is
// within the limits.
func FuzzHeader(f *testing.F) {
	for _, s := range []string{"a=1&b=2", "k%2F=v+w", "=", "&&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseHeader(s)
		if err != nil {
			return
		}
		if len(tg) > maxTags {
			t.Fatalf("%d tags accepted", len(tg))
		}
		for k, v := range tg {
			if k == "" || len(k) > maxKeyLen || len(v) > maxValueLen || !validChars(k) || !validChars(v) {
				t.Fatalf("invalid tag accepted: %q=%q", k, v)
			}
		}
		if _, err := ParseXML(AppendXML(nil, tg, nil)); err != nil {
			t.Fatalf("rendered tags do not parse back: %v", err)
		}
	})
}

func TestTerms(t *testing.T) {
	cases := []struct {
		where string
		full  bool
		want  []Term
	}{
		{`"a" = '1' AND @container = 'c' AND b > '2'`, false, []Term{{"a", "=", "1"}, {"b", ">", "2"}}},
		{`@container = 'c'`, false, nil},
		{`a = '1' OR b = '2'`, true, nil},
		{`(a = '1' OR b = '2') AND c <= '3'`, true, []Term{{"c", "<=", "3"}}},
	}
	for _, c := range cases {
		var e *Expr
		var err error
		if c.full {
			e, err = ParseCondition(c.where)
		} else {
			e, err = ParseWhere(c.where)
		}
		if err != nil {
			t.Fatal(c.where, err)
		}
		got := e.Terms()
		if len(got) != len(c.want) {
			t.Fatalf("%s: %v, want %v", c.where, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("%s: %v, want %v", c.where, got, c.want)
			}
		}
	}
}

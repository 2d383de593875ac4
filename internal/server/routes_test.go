package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/auth"
)

const (
	tAccount Level = 1 << iota
	tContainer
	tObject
)

var (
	ruleRead  = SASRule{Resource: auth.ObjectLevel, AnyOf: "r"}
	ruleWrite = SASRule{Resource: auth.ObjectLevel, AnyOf: "w"}
)

func hA(*testing.T) string { return "a" }
func hB(*testing.T) string { return "b" }

func testTable() *Routes[func(*testing.T) string] {
	return NewRoutes([]Route[func(*testing.T) string]{
		{Methods: GET, Levels: tAccount, Restype: Any, Comp: "list", Name: "list", Handler: hA, SAS: SASRule{Resource: auth.ServiceLevel, AnyOf: "l"}},
		{Methods: GET | HEAD, Levels: tContainer, Restype: "container", Comp: "acl", Name: "acl", Handler: hA, SharedKeyOnly: true},
		{Methods: PUT, Levels: tObject, Headers: []Cond{Has("x-ms-copy-source"), Has("x-ms-blob-type")}, Name: "fromURL", Handler: hA, SAS: ruleWrite},
		{Methods: PUT, Levels: tObject, Headers: []Cond{Has("x-ms-copy-source"), Lacks("x-ms-blob-type")}, Name: "copy", Handler: hA, SAS: ruleWrite},
		{Methods: PUT, Levels: tObject, Headers: []Cond{Lacks("x-ms-copy-source")}, Name: "put", Handler: hA, SAS: ruleWrite},
		{Methods: PUT, Levels: tObject, Comp: "lease", Headers: []Cond{Is("x-ms-lease-action", "break")}, Name: "lease", Handler: hB, SAS: SASRule{Resource: auth.ObjectLevel, AnyOf: "w", SinceAnyOf: "d", Since: "2017-07-29"}},
		{Methods: PUT, Levels: tObject, Comp: "lease", Name: "lease", Handler: hB, SAS: ruleWrite},
		{Methods: GET, Levels: tContainer | tObject, Restype: Any, Comp: Any, Resource: "filesystem", Action: "getAccessControl", Name: "dfs", Handler: hA, SAS: ruleRead},
		{Methods: GET, Levels: tObject, Query: []Cond{Is("peekonly", "true")}, Name: "peek", Handler: hA, SAS: ruleRead},
		{Methods: GET, Levels: tObject, Name: "get", Handler: hA, SAS: ruleRead},
		{Methods: HEAD, Levels: tObject, Name: "props", Handler: hA, SAS: ruleRead},
		{Methods: DELETE, Levels: tObject, Query: []Cond{Has("versionid")}, Name: "delete", Handler: hB, SAS: SASRule{Resource: auth.ObjectLevel, AnyOf: "x"}},
		{Methods: DELETE, Levels: tObject, Name: "delete", Handler: hB, SAS: SASRule{Resource: auth.ObjectLevel, AnyOf: "d"}},
	})
}

func TestRoutesMatch(t *testing.T) {
	tbl := testTable()
	cases := []struct {
		m       Method
		l       Level
		sel     Selectors
		h, q    map[string]string
		want    string
		comment string
	}{
		{GET, tAccount, Selectors{Comp: "list"}, nil, nil, "list", "restype Any: absent"},
		{GET, tAccount, Selectors{Comp: "list", Restype: "service"}, nil, nil, "list", "restype Any: any value"},
		{PUT, tAccount, Selectors{Comp: "list"}, nil, nil, "", "method"},
		{GET, tContainer, Selectors{Comp: "list"}, nil, nil, "", "level"},
		{HEAD, tContainer, Selectors{Comp: "acl", Restype: "container"}, nil, nil, "acl", "GET|HEAD"},
		{GET, tContainer, Selectors{Comp: "acl"}, nil, nil, "", "restype must match"},
		{PUT, tObject, Selectors{}, map[string]string{"x-ms-copy-source": "u", "x-ms-blob-type": "BlockBlob"}, nil, "fromURL", ""},
		{PUT, tObject, Selectors{}, map[string]string{"x-ms-copy-source": "u"}, nil, "copy", ""},
		{PUT, tObject, Selectors{}, map[string]string{"x-ms-copy-source": ""}, nil, "put", "an empty header is absent"},
		{PUT, tObject, Selectors{}, nil, nil, "put", ""},
		{PUT, tObject, Selectors{Comp: "x"}, nil, nil, "", "comp \"\" means absent"},
		{PUT, tObject, Selectors{Comp: "lease"}, map[string]string{"x-ms-lease-action": "BREAK"}, nil, "lease", "value ignores case"},
		{GET, tObject, Selectors{}, nil, map[string]string{"peekonly": "True"}, "peek", ""},
		{GET, tObject, Selectors{}, nil, map[string]string{"peekonly": "false"}, "get", ""},
		{HEAD, tObject, Selectors{}, nil, nil, "props", "HEAD is not GET"},
		{GET, tObject, Selectors{Resource: "filesystem", Action: "getAccessControl"}, nil, nil, "dfs", "resource and action"},
		{GET, tObject, Selectors{Resource: "filesystem"}, nil, nil, "get", "action must match when set"},
		{GET, tObject, Selectors{Resource: "file", Action: "x"}, nil, nil, "get", "resource and action unset: not consulted"},
		{0, tObject, Selectors{}, nil, nil, "", "no method"},
		{GET, 0, Selectors{}, nil, nil, "", "no level"},
		{DELETE, tObject, Selectors{}, nil, map[string]string{"versionid": "v"}, "delete", "a variant by a query parameter"},
	}
	for _, c := range cases {
		h, q := http.Header{}, url.Values{}
		for k, v := range c.h {
			h.Set(k, v)
		}
		for k, v := range c.q {
			q.Set(k, v)
		}
		got := ""
		if r := tbl.Match(c.m, c.l, &c.sel, h, q); r != nil {
			got = r.Name
		}
		if got != c.want {
			t.Errorf("%s level %#x %+v %v %v (%s): got %q, want %q", c.m, c.l, c.sel, c.h, c.q, c.comment, got, c.want)
		}
	}
	if errs := tbl.Verify(); len(errs) != 0 {
		t.Errorf("a good table: %v", errs)
	}
	if got := strings.Join(tbl.Names(), ","); got != "list,acl,fromURL,copy,put,lease,dfs,peek,get,props,delete" {
		t.Errorf("names %s", got)
	}
}

// TestRoutesVerify: Verify finds what breaks a table.
func TestRoutesVerify(t *testing.T) {
	type rt = Route[func(*testing.T) string]
	cases := []struct {
		name string
		rs   []rt
		want string
	}{
		{"shadowed", []rt{
			{Methods: PUT, Levels: tObject, Name: "put", Handler: hA, SAS: ruleWrite},
			{Methods: PUT, Levels: tObject, Headers: []Cond{Has("x-ms-copy-source")}, Name: "copy", Handler: hA, SAS: ruleWrite},
		}, `"copy" (PUT, level 0x4) is shadowed: its example matches "put"`},
		{"shadowed on one level", []rt{
			{Methods: GET, Levels: tContainer, Restype: Any, Name: "a", Handler: hA, SAS: ruleRead},
			{Methods: GET, Levels: tContainer | tObject, Restype: "x", Name: "b", Handler: hB, SAS: ruleRead},
		}, `"b" (GET, level 0x2) is shadowed`},
		{"shadowed by a variant", []rt{
			{Methods: PUT, Levels: tObject, Comp: "lease", Headers: []Cond{Lacks("x-ms-lease-action")}, Name: "lease", Handler: hA, SAS: ruleWrite},
			{Methods: PUT, Levels: tObject, Comp: "lease", Name: "lease", Handler: hA, SAS: ruleRead},
		}, `"lease" (PUT, level 0x4) is shadowed`},
		{"another handler", []rt{
			{Methods: GET, Levels: tObject, Name: "get", Handler: hA, SAS: ruleRead},
			{Methods: HEAD, Levels: tObject, Name: "get", Handler: hB, SAS: ruleRead},
		}, "another handler"},
		{"other flags", []rt{
			{Methods: GET, Levels: tObject, Name: "get", Handler: hA, SAS: ruleRead, Flags: 1},
			{Methods: HEAD, Levels: tObject, Name: "get", Handler: hA, SAS: ruleRead},
		}, "other flags"},
		{"another structured-body rule", []rt{
			{Methods: GET, Levels: tObject, Name: "get", Handler: hA, SAS: ruleRead, Structured: StructuredResponse},
			{Methods: HEAD, Levels: tObject, Name: "get", Handler: hA, SAS: ruleRead},
		}, "other flags"},
		{"another bearer-only mark", []rt{
			{Methods: POST, Levels: tAccount, Name: "key", Handler: hA, SharedKeyOnly: true, BearerOnly: true},
			{Methods: PUT, Levels: tAccount, Name: "key", Handler: hA, SharedKeyOnly: true},
		}, "other flags"},
		{"another rule, same headers", []rt{
			{Methods: GET, Levels: tObject, Name: "get", Handler: hA, SAS: ruleRead},
			{Methods: HEAD, Levels: tObject, Name: "get", Handler: hA, SAS: ruleWrite},
		}, "another SAS rule"},
		{"another rule, same query conditions", []rt{
			{Methods: DELETE, Levels: tObject, Query: []Cond{Has("versionid")}, Name: "delete", Handler: hA, SAS: ruleRead},
			{Methods: DELETE, Levels: tObject, Query: []Cond{Has("versionid")}, Name: "delete", Handler: hA, SAS: ruleWrite},
		}, "another SAS rule"},
	}
	for _, c := range cases {
		errs := NewRoutes(c.rs).Verify()
		found := false
		for _, err := range errs {
			found = found || strings.Contains(err.Error(), c.want)
		}
		if !found {
			t.Errorf("%s: want an error with %q, got %v", c.name, c.want, errs)
		}
	}
}

// TestNewRoutesRefuses: an entry without a rule, or with both a rule and
// Shared Key only, or without method, level or name, stops the program
// at start.
func TestNewRoutesRefuses(t *testing.T) {
	for name, r := range map[string]Route[func(*testing.T) string]{
		"no rule":                     {Methods: GET, Levels: tObject, Name: "get", Handler: hA},
		"both":                        {Methods: GET, Levels: tObject, Name: "get", Handler: hA, SAS: ruleRead, SharedKeyOnly: true},
		"no method":                   {Levels: tObject, Name: "get", Handler: hA, SAS: ruleRead},
		"no level":                    {Methods: GET, Name: "get", Handler: hA, SAS: ruleRead},
		"no name":                     {Methods: GET, Levels: tObject, Handler: hA, SAS: ruleRead},
		"bearer only with a SAS rule": {Methods: POST, Levels: tAccount, Name: "key", Handler: hA, SAS: ruleRead, BearerOnly: true},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: accepted", name)
				}
			}()
			NewRoutes([]Route[func(*testing.T) string]{r})
		}()
	}
}

func TestMethodOf(t *testing.T) {
	for m, want := range map[string]Method{"GET": GET, "HEAD": HEAD, "PUT": PUT, "POST": POST, "DELETE": DELETE, "MERGE": MERGE, "PATCH": PATCH, "OPTIONS": 0} {
		if got := MethodOf(m); got != want {
			t.Errorf("%s: %v, want %v", m, got, want)
		}
	}
	if s := (GET | HEAD).String(); s != "GET|HEAD" {
		t.Errorf("String %q", s)
	}
}

package filerest

import (
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
)

func TestParseListInclude(t *testing.T) {
	for _, c := range []struct {
		in   string
		want listInclude
		bad  bool
	}{
		{"", listInclude{}, false},
		{"Timestamps", listInclude{timestamps: true}, false},
		{"Timestamps,ETag,Attributes,PermissionKey", listInclude{true, true, true, true}, false},
		{"etag, permissionkey", listInclude{etag: true, permissionKey: true}, false},
		{"Metadata", listInclude{}, true},
		{"ETag,", listInclude{}, true},
	} {
		got, err := parseListInclude(c.in)
		if c.bad {
			if !azerr.Has(err, azerr.InvalidQueryParameterValue) {
				t.Errorf("%q: got %v, want InvalidQueryParameterValue", c.in, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: got %+v %v, want %+v", c.in, got, err, c.want)
		}
	}
}

func TestListMarker(t *testing.T) {
	for _, n := range []string{"A", "DIR\uFFFE", "X Y/Z", strings.Repeat("Ä", 255)} {
		got, ok := decodeListMarker(encodeListMarker(n))
		if !ok || got != n {
			t.Errorf("%q: round trip gave %q %v", n, got, ok)
		}
	}
	for _, m := range []string{"!!", "a=b", "%%"} {
		if _, ok := decodeListMarker(m); ok {
			t.Errorf("%q decoded", m)
		}
	}
}

func TestRenameSource(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []string
		code string
	}{
		{"http://127.0.0.1:10003/acct/shr/dir/f.txt", []string{"dir", "f.txt"}, ""},
		{"https://host/acct/shr/dir/?sv=2022&sig=x", []string{"dir"}, ""},
		{"http://h/acct/shr/a%2Fb%20c", []string{"a", "b c"}, ""},
		{"/acct/shr/x", []string{"x"}, ""},
		{"", nil, azerr.MissingRequiredHeader},
		{"dir/f", nil, azerr.InvalidHeaderValue},
		{"http://h/other/sh/x", nil, azerr.InvalidHeaderValue},
		{"http://h/acct/shr2/x", nil, azerr.InvalidInput},
		{"http://h/acct/shr", nil, azerr.InvalidInput},
		{"http://h/acct/shr/x?sharesnapshot=2030-01-02T03:04:05.0000000Z", nil, azerr.ShareSnapshotOperationNotSupported},
		{"http://h/acct/shr/a//b", nil, azerr.InvalidResourceName},
		{"http://h/acct/shr/a/..", nil, azerr.InvalidResourceName},
	} {
		hr := httptest.NewRequest("PUT", "http://h/acct/shr/dest?comp=rename", nil)
		if c.src != "" {
			hr.Header.Set("x-ms-file-rename-source", c.src)
		}
		r := &req{Request: &server.Request{Request: hr, Account: "acct"}, share: "shr"}
		got, _, err := renameSource(r)
		if c.code != "" {
			if !azerr.Has(err, c.code) {
				t.Errorf("%q: got %v %v, want %s", c.src, got, err, c.code)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %q %v, want %q", c.src, got, err, c.want)
		}
	}
}

// FuzzRenameSource: any header value either fails with a catalog error
// or yields valid path components of the request's share.
func FuzzRenameSource(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:10003/acct/shr/dir/f.txt",
		"https://acct.file.core.windows.net/acct/shr/a%2Fb?sv=2022-11-02&sig=x",
		"/acct/shr/x", "/acct/shr/", "http://h/acct/shr/x?sharesnapshot=1", "%zz", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		hr := httptest.NewRequest("PUT", "http://h/acct/shr/dest?comp=rename", nil)
		hr.Header["X-Ms-File-Rename-Source"] = []string{src}
		r := &req{Request: &server.Request{Request: hr, Account: "acct"}, share: "shr"}
		comps, _, err := renameSource(r)
		if err != nil {
			if _, ok := azerr.As(err); !ok {
				t.Fatalf("%q: non-catalog error %v", src, err)
			}
			return
		}
		if len(comps) == 0 {
			t.Fatalf("%q: no components", src)
		}
		for _, c := range comps {
			if c == "" || c == "." || c == ".." || strings.Contains(c, "/") {
				t.Fatalf("%q: component %q", src, c)
			}
		}
	})
}

// FuzzListMarker: a decoded marker re-encodes to itself.
func FuzzListMarker(f *testing.F) {
	f.Add(encodeListMarker("ABC"))
	f.Add("!!")
	f.Fuzz(func(t *testing.T, m string) {
		n, ok := decodeListMarker(m)
		if ok && encodeListMarker(n) != m {
			t.Fatalf("%q decodes to %q which encodes to %q", m, n, encodeListMarker(n))
		}
	})
}

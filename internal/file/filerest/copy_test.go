package filerest

import (
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// cpHost is the File endpoint of the unit tests: copy sources name it.
const cpHost = "127.0.0.1:10003"

// hdr is a set of request headers.
type hdr map[string]string

func src(path string) string { return "http://" + cpHost + "/acct/" + path }

// defaultSDDL is the domain's default permission (a valid SDDL).
const defaultSDDL = "O:BAG:SYD:(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)(A;OICI;0x1301bf;;;AU)"

func TestParseCopySource(t *testing.T) {
	for _, tc := range []struct {
		name, raw, code         string
		acct, share, path, snap string
	}{
		{name: "file", raw: src("shr/d/f.txt"), share: "shr", path: "d/f.txt"},
		{name: "escaped", raw: src("shr/a%20b.txt"), share: "shr", path: "a b.txt"},
		{name: "snapshot", raw: src("shr/f?sharesnapshot=2030-01-02T03:04:05Z"), share: "shr", path: "f", snap: "2030-01-02T03:04:05.0000000Z"},
		{name: "sas kept", raw: src("shr/f?sv=2020-02-10&sig=abc"), share: "shr", path: "f"},
		{name: "missing", raw: "", code: azerr.MissingRequiredHeader},
		{name: "relative", raw: "/acct/shr/f", code: azerr.InvalidHeaderValue},
		{name: "share only", raw: src("sh"), code: azerr.InvalidHeaderValue},
		{name: "share slash", raw: src("shr/"), code: azerr.InvalidHeaderValue},
		{name: "bad share", raw: src("Sh_x/f"), code: azerr.InvalidHeaderValue},
		{name: "bad path", raw: src("shr/a:b"), code: azerr.InvalidHeaderValue},
		{name: "bad snapshot", raw: src("shr/f?sharesnapshot=yesterday"), code: azerr.InvalidHeaderValue},
		{name: "too long", raw: src("shr/" + strings.Repeat("a", 2100)), code: azerr.InvalidHeaderValue},
		{name: "other account", raw: "http://" + cpHost + "/other/shr/f", acct: "other", share: "shr", path: "f"},
		{name: "blob endpoint", raw: "http://127.0.0.1:10000/acct/c/b", code: azerr.CannotVerifyCopySource},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hr := httptest.NewRequest(http.MethodPut, "http://"+cpHost+"/acct/shr/dst", nil)
			if tc.raw != "" {
				hr.Header.Set("x-ms-copy-source", tc.raw)
			}
			cs, err := (&Service{f: &file.Service{}}).parseCopySource(&req{Request: &server.Request{Request: hr, Account: "acct"}})
			if tc.code != "" {
				if !azerr.Has(err, tc.code) {
					t.Fatalf("got %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.acct == "" {
				tc.acct = "acct"
			}
			if cs.Acct != tc.acct || cs.Share != tc.share || cs.Path != tc.path || cs.Snap != tc.snap || cs.Raw != tc.raw {
				t.Fatalf("got %+v", cs)
			}
		})
	}
}

func TestParseCopySMB(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    hdr
		code string
		want func(*file.CopySMB) bool
	}{
		{name: "none", h: hdr{}, want: func(c *file.CopySMB) bool { return c.Attrs == nil && !c.AttrsSource && !c.PermSource }},
		{name: "source attrs", h: hdr{"x-ms-file-attributes": "Source"}, want: func(c *file.CopySMB) bool { return c.AttrsSource }},
		{name: "attrs", h: hdr{"x-ms-file-attributes": "ReadOnly|System"}, want: func(c *file.CopySMB) bool { return *c.Attrs == file.AttrReadOnly|file.AttrSystem }},
		{name: "bad attrs", h: hdr{"x-ms-file-attributes": "Sticky"}, code: azerr.InvalidHeaderValue},
		{name: "flags", h: hdr{"x-ms-file-copy-set-archive": "true", "x-ms-file-copy-ignore-readonly": "True"}, want: func(c *file.CopySMB) bool { return c.SetArchive && c.IgnoreReadOnly }},
		{name: "bad flag", h: hdr{"x-ms-file-copy-set-archive": "yes"}, code: azerr.InvalidHeaderValue},
		{name: "perm source", h: hdr{headerPermCopyMode: "source"}, want: func(c *file.CopySMB) bool { return c.PermSource }},
		{name: "perm source with perm", h: hdr{headerPermCopyMode: "source", "x-ms-file-permission-key": "1*2"}, code: azerr.InvalidHeaderValue},
		{name: "override needs perm", h: hdr{headerPermCopyMode: "override"}, code: azerr.MissingRequiredHeader},
		{name: "override perm", h: hdr{headerPermCopyMode: "override", "x-ms-file-permission": defaultSDDL}, want: func(c *file.CopySMB) bool { return c.Perm == defaultSDDL }},
		{name: "override key", h: hdr{headerPermCopyMode: "override", "x-ms-file-permission-key": "1*2"}, want: func(c *file.CopySMB) bool { return c.PermKey == "1*2" }},
		{name: "perm and key", h: hdr{"x-ms-file-permission": defaultSDDL, "x-ms-file-permission-key": "1*2"}, code: azerr.InvalidHeaderValue},
		{name: "bad sddl", h: hdr{headerPermCopyMode: "override", "x-ms-file-permission": "nonsense"}, code: azerr.FileInvalidPermission},
		{name: "bad mode", h: hdr{headerPermCopyMode: "copy"}, code: azerr.InvalidHeaderValue},
		{name: "source times", h: hdr{"x-ms-file-creation-time": "source", "x-ms-file-change-time": "2023-03-31T21:05:00.0000000Z"}, want: func(c *file.CopySMB) bool { return true }},
		{name: "bad time", h: hdr{"x-ms-file-last-write-time": "noon"}, code: azerr.InvalidHeaderValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.h {
				h.Set(k, v)
			}
			c, err := parseCopySMB(h)
			if tc.code != "" {
				if !azerr.Has(err, tc.code) {
					t.Fatalf("got %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil || !tc.want(c) {
				t.Fatalf("got %+v, %v", c, err)
			}
		})
	}
}

func TestSourceRange(t *testing.T) {
	for _, tc := range []struct {
		v    string
		n    int64
		off  int64
		code string
	}{
		{"bytes=0-511", 512, 0, ""},
		{"bytes=100-1123", 1024, 100, ""},
		{"", 512, 0, azerr.MissingRequiredHeader},
		{"bytes=0-", 512, 0, azerr.InvalidHeaderValue},
		{"bytes=0-510", 512, 0, azerr.InvalidHeaderValue},
		{"pages=0-511", 512, 0, azerr.InvalidHeaderValue},
		{"bytes=0-4194304", 512, 0, azerr.RequestBodyTooLarge},
	} {
		h := http.Header{}
		if tc.v != "" {
			h.Set("x-ms-source-range", tc.v)
		}
		off, err := sourceRange(h, tc.n)
		if tc.code != "" {
			if !azerr.Has(err, tc.code) {
				t.Errorf("%q: got %v, want %s", tc.v, err, tc.code)
			}
			continue
		}
		if err != nil || off != tc.off {
			t.Errorf("%q: got %d, %v", tc.v, off, err)
		}
	}
}

func TestCRCConditions(t *testing.T) {
	crc := binary.LittleEndian.AppendUint64(nil, 0x1122334455667788)
	other := binary.LittleEndian.AppendUint64(nil, 42)
	enc := base64.StdEncoding.EncodeToString
	for _, tc := range []struct {
		name string
		h    hdr
		code string
	}{
		{"none", hdr{}, ""},
		{"content ok", hdr{"x-ms-source-content-crc64": enc(crc)}, ""},
		{"content bad", hdr{"x-ms-source-content-crc64": enc(other)}, azerr.CRC64Mismatch},
		{"if-match ok", hdr{"x-ms-source-if-match-crc64": enc(crc)}, ""},
		{"if-match unmet", hdr{"x-ms-source-if-match-crc64": enc(other)}, azerr.SourceConditionNotMet},
		{"if-none-match ok", hdr{"x-ms-source-if-none-match-crc64": enc(other)}, ""},
		{"if-none-match unmet", hdr{"x-ms-source-if-none-match-crc64": enc(crc)}, azerr.SourceConditionNotMet},
		{"malformed", hdr{"x-ms-source-content-crc64": "abc"}, azerr.InvalidHeaderValue},
		{"short", hdr{"x-ms-source-if-match-crc64": enc([]byte{1, 2})}, azerr.InvalidHeaderValue},
	} {
		h := http.Header{}
		for k, v := range tc.h {
			h.Set(k, v)
		}
		c, err := parseCRCConditions(h)
		if err == nil {
			err = c.Check(crc)
		}
		if tc.code == "" && err != nil || tc.code != "" && !azerr.Has(err, tc.code) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.code)
		}
	}
}

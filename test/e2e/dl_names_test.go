package e2e

import (
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// blobRaw sends a Shared Key request to the Blob endpoint of e's server;
// path is the escaped part after the account.
func (e *dlEnv) blobRaw(method, path string, hdr map[string]string) (*http.Response, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.app.BlobURL+path, nil)
	must(e.t, err)
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2023-11-03")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	signRaw(req)
	resp, err := e.hc.Do(req)
	must(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(e.t, err)
	return resp, b
}

// dlPaths lists every path of filesystem fs, recursively, through the
// dfs endpoint.
func dlPaths(t *testing.T, e *dlEnv, fs string) string {
	t.Helper()
	resp, body := e.raw(http.MethodGet, "/"+fs+"?resource=filesystem&recursive=true", nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("list %s: %d %s", fs, resp.StatusCode, body)
	}
	return string(body)
}

func segments(n int) string { return strings.TrimSuffix(strings.Repeat("s/", n), "/") }

// TestDLPathNameRules checks the Blob name rules on the dfs endpoint of a
// hierarchical account, in the JSON error form: a path of more than
// 1,024 characters (UTF-16 code units) is 400 OutOfRangeInput (it used to
// be created up to 32,000 characters, and 100,000 gave 500 InternalError
// from the store's key limit), more than 254 segments 409 PathIsTooDeep,
// for Path Create and for both names of a rename; nothing is created.
// The Blob endpoint of the same account answers the same.
func TestDLPathNameRules(t *testing.T) {
	e := startDL(t, true)
	e.mkfs("names")
	file := map[string]string{}

	create := func(p, resource string) (*http.Response, []byte) {
		return e.raw(http.MethodPut, "/names/"+p+"?resource="+resource, file, nil)
	}
	// The limits themselves are accepted.
	for _, c := range []struct{ what, path, resource string }{
		{"1,024 characters", strings.Repeat("a", 1024), "file"},
		// 700 two-byte characters: 1,400 bytes but 700 characters.
		{"700 é", strings.Repeat("é", 700), "file"},
		// 512 emoji are 1,024 UTF-16 code units.
		{"512 emoji", strings.Repeat("😀", 512), "file"},
		{"254 segments", segments(254), "directory"},
	} {
		if resp, body := create(c.path, c.resource); resp.StatusCode != 201 {
			t.Fatalf("%s: %d %s", c.what, resp.StatusCode, body)
		}
	}
	before := dlPaths(t, e, "names")

	for _, c := range []struct {
		what, path, resource string
		status               int
		code                 string
	}{
		{"1,025 characters", strings.Repeat("b", 1025), "file", 400, "OutOfRangeInput"},
		{"513 emoji", strings.Repeat("😀", 513), "file", 400, "OutOfRangeInput"},
		{"32,000 characters", strings.Repeat("c", 32000), "directory", 400, "OutOfRangeInput"},
		{"100,000 characters", strings.Repeat("d", 100000), "file", 400, "OutOfRangeInput"},
		{"20,000 characters", strings.Repeat("d", 20000), "file", 400, "OutOfRangeInput"},
		{"1,025 characters in segments", strings.Repeat("x/", 400) + strings.Repeat("y", 226), "file", 400, "OutOfRangeInput"},
		{"255 segments", segments(255), "directory", 409, "PathIsTooDeep"},
		{"255 segments, new", strings.Repeat("n/", 254) + "n", "file", 409, "PathIsTooDeep"},
	} {
		resp, body := create(c.path, c.resource)
		wantRawDL(t, c.what, resp, body, c.status, c.code)
	}

	// Rename: destination and x-ms-rename-source.
	if resp, body := create("src", "file"); resp.StatusCode != 201 {
		t.Fatalf("src: %d %s", resp.StatusCode, body)
	}
	for _, c := range []struct {
		what, dest, src string
		status          int
		code            string
	}{
		{"rename to 1,025", strings.Repeat("r", 1025), "/names/src", 400, "OutOfRangeInput"},
		{"rename to 255 segments", segments(255), "/names/src", 409, "PathIsTooDeep"},
		{"rename from 1,025", "dst", "/names/" + strings.Repeat("r", 1025), 400, "OutOfRangeInput"},
		{"rename from 255 segments", "dst", "/names/" + segments(255), 409, "PathIsTooDeep"},
	} {
		resp, body := e.raw(http.MethodPut, "/names/"+c.dest, map[string]string{"x-ms-rename-source": c.src}, nil)
		wantRawDL(t, c.what, resp, body, c.status, c.code)
	}
	after := dlPaths(t, e, "names")
	if strings.Count(after, `"name"`) != strings.Count(before, `"name"`)+1 || !strings.Contains(after, `"name":"src"`) {
		t.Fatalf("refused requests created paths:\nbefore %.500s\nafter %.500s", before, after)
	}

	// The Blob endpoint of the hierarchical account.
	put := map[string]string{"x-ms-blob-type": "BlockBlob", "Content-Length": "0"}
	for _, c := range []struct {
		what, name string
		status     int
		code       string
	}{
		{"1,025 characters", strings.Repeat("b", 1025), 400, "OutOfRangeInput"},
		{"255 segments", segments(255), 409, "PathIsTooDeep"},
	} {
		resp, body := e.blobRaw(http.MethodPut, "/names/"+c.name, put)
		var xe struct{ Code string }
		_ = xml.Unmarshal(body, &xe)
		if resp.StatusCode != c.status || resp.Header.Get("x-ms-error-code") != c.code || xe.Code != c.code {
			t.Fatalf("blob %s: %d %s %.300s, want %d %s", c.what, resp.StatusCode, resp.Header.Get("x-ms-error-code"), body, c.status, c.code)
		}
	}
	if resp, body := e.blobRaw(http.MethodPut, "/names/"+segments(253)+"/blob", put); resp.StatusCode != 201 {
		t.Fatalf("blob of 254 segments: %d %s", resp.StatusCode, body)
	}
	if got := dlPaths(t, e, "names"); strings.Count(got, `"name"`) != strings.Count(after, `"name"`)+1 {
		t.Fatalf("blob writes: %.500s", got)
	}
}

// TestDLInvalidUTF8Names checks that every Data Lake path operation
// refuses a path that is not UTF-8 (percent-encoded %C3%28, %FF, an
// encoded surrogate) with 400 InvalidResourceName in the JSON error form,
// as the Blob service refuses such a name, and that nothing is created:
// they used to be stored as given.
func TestDLInvalidUTF8Names(t *testing.T) {
	e := startDL(t, true)
	e.mkfs("utf")
	if resp, body := e.raw(http.MethodPut, "/utf/ok?resource=file", nil, nil); resp.StatusCode != 201 {
		t.Fatalf("ok: %d %s", resp.StatusCode, body)
	}
	before := dlPaths(t, e, "utf")
	for _, b := range []string{"%C3%28", "%FF", "d/%FE", "a%FFb", "%ED%A0%80", "%C0%AF"} {
		for _, c := range []struct {
			what, method, path string
			hdr                map[string]string
		}{
			{"create file", http.MethodPut, "/utf/" + b + "?resource=file", nil},
			{"create directory", http.MethodPut, "/utf/" + b + "?resource=directory", nil},
			{"rename to", http.MethodPut, "/utf/" + b, map[string]string{"x-ms-rename-source": "/utf/ok"}},
			{"rename from", http.MethodPut, "/utf/renamed", map[string]string{"x-ms-rename-source": "/utf/" + b}},
			{"append", http.MethodPatch, "/utf/" + b + "?action=append&position=0", nil},
			{"flush", http.MethodPatch, "/utf/" + b + "?action=flush&position=0", nil},
			{"setAccessControl", http.MethodPatch, "/utf/" + b + "?action=setAccessControl", map[string]string{"x-ms-permissions": "0777"}},
			{"setAccessControlRecursive", http.MethodPatch, "/utf/" + b + "?action=setAccessControlRecursive&mode=modify", map[string]string{"x-ms-acl": "user:u:rwx"}},
			{"getStatus", http.MethodHead, "/utf/" + b + "?action=getStatus", nil},
			{"delete", http.MethodDelete, "/utf/" + b + "?recursive=true", nil},
			{"lease", http.MethodPost, "/utf/" + b, map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}},
			{"list", http.MethodGet, "/utf?resource=filesystem&recursive=false&directory=" + b, nil},
		} {
			resp, body := e.raw(c.method, c.path, c.hdr, nil)
			if c.method == http.MethodHead {
				if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "InvalidResourceName" {
					t.Fatalf("%s %s: %d %s", c.what, b, resp.StatusCode, resp.Header.Get("x-ms-error-code"))
				}
				continue
			}
			wantRawDL(t, c.what+" "+b, resp, body, 400, "InvalidResourceName")
		}
	}
	// The Blob endpoint of the account refuses them too (wire.ValidBlobName).
	for _, b := range []string{"%C3%28", "%FF", "d/%FE"} {
		resp, body := e.blobRaw(http.MethodPut, "/utf/"+b, map[string]string{"x-ms-blob-type": "BlockBlob", "Content-Length": "0"})
		if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "InvalidResourceName" {
			t.Fatalf("Put Blob %s: %d %s", b, resp.StatusCode, body)
		}
	}
	if after := dlPaths(t, e, "utf"); after != before {
		t.Fatalf("refused requests changed the filesystem:\nbefore %s\nafter %s", before, after)
	}
}

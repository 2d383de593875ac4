package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// fileRaw sends a Shared Key request to the File endpoint; path is the
// escaped part after the account. It returns the status, error code and
// body.
func fileRaw(t *testing.T, e *fileEnv, method, path string, hdr map[string]string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.app.FileURL+path, nil)
	must(t, err)
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2023-11-03")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	signRaw(req)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("x-ms-error-code"), string(b)
}

// TestFileInvalidUTF8Names checks that the File REST API refuses names
// that are not UTF-8 (percent-encoded bytes such as %C3%28 or %FF) with
// 400 InvalidResourceName, as the Blob service does, on every operation
// that takes a name: they used to be stored with each bad byte turned
// into U+FFFD, so "%FF", "%FE" and "%C3%28"-like names opened one file.
func TestFileInvalidUTF8Names(t *testing.T) {
	e := startFile(t)
	sh := e.share()
	shName := sh.URL()[strings.LastIndex(sh.URL(), "/")+1:]
	base := "/" + shName
	e.mkdir(sh, "d")
	e.mkfile(sh, "good", 1)
	mkFile := map[string]string{"x-ms-type": "file", "x-ms-content-length": "0"}
	bad := []string{"%C3%28", "%FF", "%FE", "a%FFb", "%ED%A0%80", "%C0%AF"}
	for _, b := range bad {
		for _, c := range []struct {
			what, method, path string
			hdr                map[string]string
			code               string
		}{
			{"create file", http.MethodPut, base + "/" + b, mkFile, "InvalidResourceName"},
			{"create file in a directory", http.MethodPut, base + "/d/" + b, mkFile, "InvalidResourceName"},
			{"create file under a bad directory", http.MethodPut, base + "/" + b + "/f", mkFile, "InvalidResourceName"},
			{"create directory", http.MethodPut, base + "/" + b + "?restype=directory", nil, "InvalidResourceName"},
			{"get properties", http.MethodHead, base + "/" + b, nil, "InvalidResourceName"},
			{"delete", http.MethodDelete, base + "/" + b, nil, "InvalidResourceName"},
			{"rename to", http.MethodPut, base + "/" + b + "?comp=rename", map[string]string{"x-ms-file-rename-source": e.app.FileURL + base + "/good"}, "InvalidResourceName"},
			{"rename from", http.MethodPut, base + "/renamed?comp=rename", map[string]string{"x-ms-file-rename-source": e.app.FileURL + base + "/" + b}, "InvalidResourceName"},
			{"copy to", http.MethodPut, base + "/" + b, map[string]string{"x-ms-copy-source": e.app.FileURL + base + "/good"}, "InvalidResourceName"},
			{"copy from", http.MethodPut, base + "/copied", map[string]string{"x-ms-copy-source": e.app.FileURL + base + "/" + b}, "InvalidHeaderValue"},
			{"create share", http.MethodPut, "/" + b + "?restype=share", nil, ""},
		} {
			st, code, body := fileRaw(t, e, c.method, c.path, c.hdr)
			if st != 400 || c.code != "" && code != c.code {
				t.Errorf("%s %s: %d %s %.200s, want 400 %s", c.what, b, st, code, body, c.code)
			}
		}
	}
	// Nothing was created: the share holds d and good, d is empty, and
	// there is one share.
	st, _, body := fileRaw(t, e, http.MethodGet, base+"?restype=directory&comp=list", nil)
	if st != 200 || strings.Count(body, "<Name>") != 2 || !strings.Contains(body, "<Name>good</Name>") || !strings.Contains(body, "<Name>d</Name>") {
		t.Fatalf("share root: %d %s", st, body)
	}
	st, _, body = fileRaw(t, e, http.MethodGet, base+"/d?restype=directory&comp=list", nil)
	if st != 200 || strings.Contains(body, "<Name>") {
		t.Fatalf("directory d: %d %s", st, body)
	}
	st, _, body = fileRaw(t, e, http.MethodGet, "/?comp=list", nil)
	if st != 200 || strings.Count(body, "<Name>") != 1 {
		t.Fatalf("shares: %d %s", st, body)
	}
}

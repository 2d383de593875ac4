package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/extent"
)

// TestRenderAsWritten: what Render hands net/http is what the handlers
// that wrote their answers themselves handed it. Content of no type
// goes with a nil Content-Type (net/http then sniffs none), one typed
// by a header keeps it; a HEAD's Body is written (net/http sends none
// of it but answers its length).
func TestRenderAsWritten(t *testing.T) {
	body := func() *extent.Body { return extent.NewBody(io.NopCloser(strings.NewReader("abc")), 3) }
	w := httptest.NewRecorder()
	if err := RenderFor(w, nil, nil, Response{Status: http.StatusOK, Content: body()}); err != nil {
		t.Fatal(err)
	}
	if v, ok := w.Header()["Content-Type"]; !ok || v != nil || w.Body.String() != "abc" {
		t.Fatalf("untyped content: Content-Type %q (set %v), body %q", v, ok, w.Body)
	}
	w = httptest.NewRecorder()
	r := Response{Status: http.StatusOK, Content: body()}
	r.Set("Content-Type", "text/x")
	if err := RenderFor(w, nil, nil, r); err != nil || w.Header().Get("Content-Type") != "text/x" {
		t.Fatalf("typed content: %v %v", err, w.Header())
	}
	w = httptest.NewRecorder()
	hr := httptest.NewRequest(http.MethodHead, "/a/b", nil)
	if err := RenderFor(w, hr, nil, XMLDoc(http.StatusOK, []byte("<A/>"))); err != nil || w.Body.String() != "<A/>" {
		t.Fatalf("HEAD body: %v %q", err, w.Body)
	}
}

// TestTypedHeaderWriters: the header writers of typed reads and writes:
// SAS overrides replace what was set (an account SAS overrides
// nothing), a read's length and MD5, a write's digests on a *Response
// and on another HeaderSetter alike.
func TestTypedHeaderWriters(t *testing.T) {
	sas := &auth.SAS{ContentType: "text/plain", CacheControl: "no-cache"}
	var r Response
	r.Set("Content-Type", "a/b")
	ApplySASOverrides(&r, sas)
	if len(r.Header) != 2 || r.Get("Content-Type") != "text/plain" || r.Get("Cache-Control") != "no-cache" {
		t.Fatalf("SAS overrides: %v", r.Header)
	}
	b := extent.NewBody(io.NopCloser(strings.NewReader("abc")), 3)
	r = Response{}
	SetContentHeaders(&r, b, false)
	if len(r.Header) != 1 || r.Get("Content-Length") != "3" {
		t.Fatalf("content headers: %v", r.Header)
	}
	d := extent.Digests{MD5: []byte{1, 2}, CRC64: []byte{3}}
	h := http.Header{}
	SetDigests(h, d)
	r = Response{}
	SetDigestHeaders(&r, d)
	if len(r.Header) != 2 || len(h) != 2 || r.Get("Content-Md5") != "AQI=" || h.Get("Content-Md5") != "AQI=" || r.Get("X-Ms-Content-Crc64") != "Aw==" || h.Get("X-Ms-Content-Crc64") != "Aw==" {
		t.Fatalf("digests: %v / %v", r.Header, h)
	}
	r = Response{}
	SetDigestHeaders(&r, extent.Digests{})
	if len(r.Header) != 0 {
		t.Fatalf("no digests set %v", r.Header)
	}
}

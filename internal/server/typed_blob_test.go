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
	if err := Render(w, Response{Status: http.StatusOK, Content: body()}); err != nil {
		t.Fatal(err)
	}
	if v, ok := w.Header()["Content-Type"]; !ok || v != nil || w.Body.String() != "abc" {
		t.Fatalf("untyped content: Content-Type %q (set %v), body %q", v, ok, w.Body)
	}
	w = httptest.NewRecorder()
	r := Response{Status: http.StatusOK, Content: body()}
	r.Set("Content-Type", "text/x")
	if err := Render(w, r); err != nil || w.Header().Get("Content-Type") != "text/x" {
		t.Fatalf("typed content: %v %v", err, w.Header())
	}
	w = httptest.NewRecorder()
	hr := httptest.NewRequest(http.MethodHead, "/a/b", nil)
	if err := RenderFor(w, hr, nil, XMLDoc(http.StatusOK, []byte("<A/>"))); err != nil || w.Body.String() != "<A/>" {
		t.Fatalf("HEAD body: %v %q", err, w.Body)
	}
}

// TestTypedBlobHeaders: the read's header writers set what their
// http.Header twins set.
func TestTypedBlobHeaders(t *testing.T) {
	sas := &auth.SAS{ContentType: "text/plain", CacheControl: "no-cache"}
	h := http.Header{"Content-Type": {"a/b"}}
	ApplySASOverrides(h, sas)
	var r Response
	r.Set("Content-Type", "a/b")
	SetSASOverrides(&r, sas)
	if len(r.Header) != len(h) || r.Get("Content-Type") != h.Get("Content-Type") || r.Get("Cache-Control") != h.Get("Cache-Control") {
		t.Fatalf("SAS overrides: %v, want %v", r.Header, h)
	}
	b := extent.NewBody(io.NopCloser(strings.NewReader("abc")), 3)
	h = http.Header{}
	SetBodyHeaders(h, b, false)
	r = Response{}
	SetContentHeaders(&r, b, false)
	if len(r.Header) != 1 || r.Get("Content-Length") != h.Get("Content-Length") {
		t.Fatalf("content headers: %v, want %v", r.Header, h)
	}
	d := extent.Digests{MD5: []byte{1, 2}, CRC64: []byte{3}}
	h = http.Header{}
	SetDigests(h, d)
	r = Response{}
	SetDigestHeaders(&r, d)
	if len(r.Header) != 2 || r.Get("Content-Md5") != h.Get("Content-Md5") || r.Get("X-Ms-Content-Crc64") != h.Get("X-Ms-Content-Crc64") {
		t.Fatalf("digests: %v, want %v", r.Header, h)
	}
}

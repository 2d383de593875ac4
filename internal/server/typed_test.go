package server

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/xsm"
)

// TestRender: a typed handler's answer is written by Render alone, its
// headers, status and body, and an error goes back to the dispatcher
// with nothing written.
func TestRender(t *testing.T) {
	h := Typed(func(_ struct{}, fail bool) (Response, error) {
		if fail {
			return Response{}, errors.New("refused")
		}
		return XMLDoc(http.StatusCreated, []byte(XMLDeclaration+"<A/>")).With("X-Ms-Popreceipt", "r1").With("X-Ms-Meta-"+"k", "v"), nil
	})
	// Metadata names keep their case on the wire (wire.WriteMetadata).
	metaK := "X-Ms-Meta-" + "k"
	w := httptest.NewRecorder()
	if err := h(struct{}{}, w, false); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusCreated || w.Body.String() != XMLDeclaration+"<A/>" || w.Header().Get("Content-Type") != "application/xml" ||
		w.Header()["X-Ms-Popreceipt"][0] != "r1" || w.Header()[metaK][0] != "v" {
		t.Fatalf("rendered %d %v %q", w.Code, w.Header(), w.Body)
	}
	w = httptest.NewRecorder()
	if err := h(struct{}{}, w, true); err == nil || w.Body.Len() != 0 || len(w.Header()) != 0 {
		t.Fatalf("a refusal rendered something: %v %v %q", err, w.Header(), w.Body)
	}
	w = httptest.NewRecorder()
	if err := RenderFor(w, nil, nil, Bodiless(http.StatusNoContent)); err != nil || w.Code != http.StatusNoContent || w.Header().Get("Content-Type") != "" {
		t.Fatalf("no body: %d %v", w.Code, w.Header())
	}
	r, err := XML(http.StatusOK, struct {
		XMLName struct{} `xml:"B"`
		V       string   `xml:"V"`
	}{V: "x&y"})
	if err != nil || string(r.Body) != XMLDeclaration+"<B><V>x&amp;y</V></B>" {
		t.Fatalf("XML: %q %v", r.Body, err)
	}
}

// TestVerifyTypedHandlers: entries of one name must share the handler
// value itself: two wrappings of one typed handler differ (Verify sees
// each Typed call as another handler), one value shared by both passes,
// and so does one method expression named twice.
func TestVerifyTypedHandlers(t *testing.T) {
	type h = func(struct{}, http.ResponseWriter, bool) error
	typed := func(struct{}, bool) (Response, error) { return Bodiless(http.StatusOK), nil }
	other := func(struct{}, http.ResponseWriter, bool) error { return nil }
	entries := func(a, b h) []Route[h] {
		return []Route[h]{
			{Methods: GET, Levels: 1, Restype: Any, Comp: "x", Name: "op", Handler: a, SharedKeyOnly: true},
			{Methods: PUT, Levels: 1, Restype: Any, Comp: "x", Name: "op", Handler: b, SharedKeyOnly: true},
		}
	}
	shared := Typed(typed)
	for _, c := range []struct {
		name string
		a, b h
		ok   bool
	}{
		{"two wrappings", Typed(typed), Typed(typed), false},
		{"one shared value", shared, shared, true},
		{"another function", shared, other, false},
		{"one function twice", other, other, true},
	} {
		rt := NewRoutes(entries(c.a, c.b))
		if errs := rt.Verify(); (len(errs) == 0) != c.ok {
			t.Errorf("%s: %v", c.name, errs)
		}
	}
}

// TestHeaderBlock: values set through one block land under canonical
// names, and an Add to one value later leaves the next intact.
func TestHeaderBlock(t *testing.T) {
	h := http.Header{}
	b := NewHeaderBlock(h, 2)
	b.Set("ETag", "e1")
	b.Set("X-Ms-Lease-State", "available")
	b.Set("x-ms-lease-status", "unlocked") // past the block's room
	h.Add("Etag", "e2")
	if got := h["Etag"]; len(got) != 2 || got[0] != "e1" || got[1] != "e2" {
		t.Fatalf("Etag %q", got)
	}
	if h.Get("X-Ms-Lease-State") != "available" || h.Get("X-Ms-Lease-Status") != "unlocked" {
		t.Fatalf("headers %v", h)
	}
}

// content is a Body's reader that counts its reads and closes and can
// fail after its first read.
type content struct {
	data          []byte
	reads, closes int
	failAfter     bool
}

func (c *content) Read(p []byte) (int, error) {
	c.reads++
	if c.failAfter && c.reads > 1 {
		return 0, errors.New("disk gone")
	}
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 4)], c.data)
	c.data = c.data[n:]
	return n, nil
}

func (c *content) Close() error { c.closes++; return nil }

// TestRenderContent: a streamed Content is sent after the headers and
// closed once; a HEAD does not read it; a refused answer's Content is
// closed unsent; Structured frames it (XSM/1.0 headers, framed length);
// a failure mid-stream aborts the connection instead of ending short.
func TestRenderContent(t *testing.T) {
	type reqT struct{ *Request }
	serve := func(method string, c *content, structured bool, fail bool) (*httptest.ResponseRecorder, error) {
		h := Typed(func(_ struct{}, _ reqT) (Response, error) {
			r := Response{Status: http.StatusPartialContent, Content: extent.NewBody(c, 10), Structured: structured}
			r.Set("content-length", "10")
			r.Set("Content-Length", "10") // replaces, does not add
			if fail {
				return r, errors.New("refused")
			}
			return r, nil
		})
		w := httptest.NewRecorder()
		hr := httptest.NewRequest(method, "/a/b", nil)
		return w, h(struct{}{}, w, reqT{&Request{Request: hr}})
	}
	c := &content{data: []byte("0123456789")}
	w, err := serve(http.MethodGet, c, false, false)
	if err != nil || w.Code != http.StatusPartialContent || w.Body.String() != "0123456789" || len(w.Header()["Content-Length"]) != 1 || w.Header().Get("Content-Length") != "10" || c.closes != 1 {
		t.Fatalf("GET: %v %d %v %q closes %d", err, w.Code, w.Header(), w.Body, c.closes)
	}
	if ct, ok := w.Header()["Content-Type"]; !ok || len(ct) != 0 {
		t.Fatalf("GET: Content-Type %q (present %v), want none and not sniffed", ct, ok)
	}
	c = &content{data: []byte("0123456789")}
	if w, err = serve(http.MethodHead, c, false, false); err != nil || w.Body.Len() != 0 || c.reads != 0 || c.closes != 1 {
		t.Fatalf("HEAD: %v body %q reads %d closes %d", err, w.Body, c.reads, c.closes)
	}
	c = &content{data: []byte("0123456789")}
	if w, err = serve(http.MethodGet, c, false, true); err == nil || w.Body.Len() != 0 || c.reads != 0 || c.closes != 1 {
		t.Fatalf("refused: %v body %q reads %d closes %d", err, w.Body, c.reads, c.closes)
	}
	c = &content{data: []byte("0123456789")}
	w, err = serve(http.MethodGet, c, true, false)
	if err != nil || w.Header().Get("X-Ms-Structured-Body") == "" || w.Header().Get("X-Ms-Structured-Content-Length") != "10" || w.Header().Get("Content-Length") == "10" || c.closes != 1 {
		t.Fatalf("structured: %v %v closes %d", err, w.Header(), c.closes)
	}
	got, err := xsm.Decode(w.Body.Bytes(), 10)
	if err != nil || string(got) != "0123456789" || strconv.Itoa(w.Body.Len()) != w.Header().Get("Content-Length") {
		t.Fatalf("structured body: %q %v (framed %d, Content-Length %s)", got, err, w.Body.Len(), w.Header().Get("Content-Length"))
	}
	c = &content{data: []byte("0123456789"), failAfter: true}
	func() {
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Fatalf("mid-stream failure: recovered %v, want ErrAbortHandler", p)
			}
			if c.closes != 1 {
				t.Fatalf("mid-stream failure: closes %d", c.closes)
			}
		}()
		serve(http.MethodGet, c, false, false)
	}()
}

// TestRenderHeadBody: a HEAD's Body is written all the same, so that
// net/http sends its Content-Length (and discards it), as it did for the
// handlers that wrote their documents themselves.
func TestRenderHeadBody(t *testing.T) {
	doc := []byte(XMLDeclaration + "<A/>")
	w := httptest.NewRecorder()
	hr := httptest.NewRequest(http.MethodHead, "/a/b", nil)
	if err := RenderFor(w, hr, nil, XMLDoc(http.StatusOK, doc)); err != nil || w.Body.String() != string(doc) || w.Header().Get("Content-Type") != "application/xml" {
		t.Fatalf("HEAD: %v %v %q", err, w.Header(), w.Body)
	}
}

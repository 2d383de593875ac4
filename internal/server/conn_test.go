package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// startConnServer serves h with connServer (its fallback a net/http
// server of h) on a loopback port.
func startConnServer(t *testing.T, h http.Handler) (string, *connServer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second, ConnContext: tapContext}
	cs := newConnServer(h, hs, ln.Addr(), slog.New(slog.DiscardHandler))
	done := make(chan struct{})
	go func() { _ = cs.serve(ln); close(done) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := cs.shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-done
	})
	return ln.Addr().String(), cs
}

// peerConn is a client connection that sends raw requests and reads
// the responses.
type peerConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialPeer(t *testing.T, addr string) *peerConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return &peerConn{t: t, c: c, br: bufio.NewReader(c)}
}

func (rc *peerConn) send(raw string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.c, raw); err != nil {
		rc.t.Fatal(err)
	}
}

// response reads one response to a request of method; body is read whole.
func (rc *peerConn) response(method string) (*http.Response, []byte) {
	rc.t.Helper()
	resp, body, err := rc.responseCut(method)
	if err != nil {
		rc.t.Fatalf("reading the response body: %v", err)
	}
	return resp, body
}

// expectBodies reads one 200 response per want (to PUTs) and checks its
// body.
func (rc *peerConn) expectBodies(wants ...string) {
	rc.t.Helper()
	for i, want := range wants {
		resp, body := rc.response("PUT")
		if resp.StatusCode != http.StatusOK || string(body) != want {
			rc.t.Errorf("response %d: %d %q, want 200 %q", i, resp.StatusCode, body, want)
		}
	}
}

// responseCut is response that returns a failed read of the body.
func (rc *peerConn) responseCut(method string) (*http.Response, []byte, error) {
	rc.t.Helper()
	resp, err := http.ReadResponse(rc.br, &http.Request{Method: method})
	if err != nil {
		rc.t.Fatalf("reading the response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// closed reports whether the server closed the connection (a read ends in
// EOF or a reset rather than a timeout).
func (rc *peerConn) closed() bool {
	_ = rc.c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, err := rc.br.ReadByte()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

// TestConnMatchesNetHTTP sends the same requests to connServer and to
// net/http's server, each with the same handler, and compares the
// answers: status, every field but Date, framing, body, and whether the
// connection is kept.
func TestConnMatchesNetHTTP(t *testing.T) {
	long := strings.Repeat("0123456789", 500) // past the body buffer: chunked
	cases := []struct {
		name    string
		method  string
		body    string
		extra   string // request fields
		handler http.HandlerFunc
	}{
		{"short body sniffed", "GET", "", "", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "hello")
		}},
		{"no body", "GET", "", "", func(w http.ResponseWriter, r *http.Request) {}},
		{"created, fields", "PUT", "abc", "", func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Etag", `"0x1"`)
			w.Header().Set("X-Ms-Echo", string(b))
			w.Header()["X-Ms-Multi"] = []string{"a", "b"}
			w.WriteHeader(http.StatusCreated)
		}},
		{"no content drops length", "DELETE", "", "", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "12")
			w.WriteHeader(http.StatusNoContent)
		}},
		{"not modified drops type", "GET", "", "", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			w.Header().Set("Etag", `"0x2"`)
			w.WriteHeader(http.StatusNotModified)
		}},
		{"long body chunked", "GET", "", "", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = io.WriteString(w, long)
		}},
		{"declared length", "GET", "", "", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(long)))
			_, _ = io.WriteString(w, long)
		}},
		{"head counts body", "HEAD", "", "", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			_, _ = io.WriteString(w, "<a/>")
		}},
		{"head declared", "HEAD", "", "", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1024")
			w.WriteHeader(http.StatusOK)
		}},
		{"type suppressed", "GET", "", "", func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = nil
			_, _ = io.WriteString(w, "<html>not sniffed</html>")
		}},
		{"status twice", "GET", "", "", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusAccepted)
			w.WriteHeader(http.StatusInternalServerError)
		}},
		{"handler closes", "GET", "", "", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			_, _ = io.WriteString(w, "bye")
		}},
		{"client closes", "GET", "", "Connection: close\r\n", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "bye")
		}},
		{"flushed", "GET", "", "", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "part one;")
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, "part two")
		}},
		{"bad declared length", "GET", "", "", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "x")
			_, _ = io.WriteString(w, "ok")
		}},
		{"short of declared", "GET", "", "", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "10")
			_, _ = io.WriteString(w, "12345")
		}},
		{"value with newline", "GET", "", "", func(w http.ResponseWriter, r *http.Request) {
			w.Header()["X-Ms-Odd"] = []string{" a\r\nInjected: 1 "}
			w.Header()["Bad Name"] = []string{"dropped"}
		}},
		{"body left unread", "PUT", "0123456789", "", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusCreated)
		}},
		{"error body", "GET", "", "", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			w.Header().Set("X-Ms-Error-Code", "BlobNotFound")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, "<?xml version=\"1.0\"?><Error/>")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref := httptest.NewServer(c.handler)
			defer ref.Close()
			addr, _ := startConnServer(t, c.handler)
			raw := c.method + " /devstoreaccount1/c/b?comp=x HTTP/1.1\r\nHost: h\r\n" + c.extra
			if c.body != "" {
				raw += "Content-Length: " + strconv.Itoa(len(c.body)) + "\r\n"
			}
			raw += "\r\n" + c.body
			want := dialPeer(t, ref.Listener.Addr().String())
			got := dialPeer(t, addr)
			want.send(raw)
			got.send(raw)
			wr, wb, werr := want.responseCut(c.method)
			gr, gb, gerr := got.responseCut(c.method)
			if (gerr == nil) != (werr == nil) {
				t.Errorf("reading the body: %v; net/http's: %v", gerr, werr)
			}
			if gr.StatusCode != wr.StatusCode {
				t.Errorf("status %d, net/http %d", gr.StatusCode, wr.StatusCode)
			}
			for _, h := range []http.Header{wr.Header, gr.Header} {
				if h.Get("Date") == "" {
					t.Errorf("no Date field: %v", h)
				}
				delete(h, "Date")
			}
			if !reflect.DeepEqual(gr.Header, wr.Header) {
				t.Errorf("fields\n%v\nnet/http's\n%v", gr.Header, wr.Header)
			}
			if gr.ContentLength != wr.ContentLength || !reflect.DeepEqual(gr.TransferEncoding, wr.TransferEncoding) || gr.Close != wr.Close {
				t.Errorf("framing: length %d, encoding %v, close %v; net/http's %d, %v, %v",
					gr.ContentLength, gr.TransferEncoding, gr.Close, wr.ContentLength, wr.TransferEncoding, wr.Close)
			}
			if !bytes.Equal(gb, wb) {
				t.Errorf("body %q, net/http's %q", gb, wb)
			}
			if g, w := got.closed(), want.closed(); g != w {
				t.Errorf("connection closed %v, net/http's %v", g, w)
			}
		})
	}
}

// TestConnKeepsConnection: requests follow each other on one connection,
// a body the handler did not read included.
func TestConnKeepsConnection(t *testing.T) {
	var n atomic.Int32
	addr, _ := startConnServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Query().Get("read") == "1" {
			b, _ := io.ReadAll(r.Body)
			_, _ = w.Write(b)
		}
	}))
	rc := dialPeer(t, addr)
	rc.send("PUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello" +
		"PUT /b?read=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nworld" +
		"GET /c HTTP/1.1\r\nHost: h\r\n\r\n")
	rc.expectBodies("", "world", "")
	if rc.closed() {
		t.Error("connection closed after three requests")
	}
	if n.Load() != 3 {
		t.Errorf("handler ran %d times, want 3", n.Load())
	}
}

// TestConnLargeUnreadBodyCloses: past maxPostHandlerRead of unread body
// the connection closes after the answer rather than reading it all.
func TestConnLargeUnreadBodyCloses(t *testing.T) {
	addr, _ := startConnServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusPreconditionFailed)
	}))
	rc := dialPeer(t, addr)
	size := maxPostHandlerRead * 4
	rc.send("PUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: " + strconv.Itoa(size) + "\r\n\r\n")
	go func() { _, _ = rc.c.Write(make([]byte, size)) }()
	resp, _ := rc.response("PUT")
	if resp.StatusCode != http.StatusPreconditionFailed || !resp.Close {
		t.Errorf("status %d, close %v; want 412 with Connection: close", resp.StatusCode, resp.Close)
	}
	if !rc.closed() {
		t.Error("connection kept after an unread body of 1 MiB")
	}
}

// TestConnHandsOver: a request of another shape (chunked body, Expect,
// HTTP/1.0, a malformed head) goes to net/http's server with the bytes
// already read, and is answered as net/http answers it; requests before
// it on the connection were answered by connServer.
func TestConnHandsOver(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Ms-Proto", r.Proto)
		_, _ = w.Write(b)
	})
	addr, _ := startConnServer(t, handler)
	t.Run("chunked", func(t *testing.T) {
		rc := dialPeer(t, addr)
		rc.send("PUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nok" +
			"PUT /b HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" +
			"GET /c HTTP/1.1\r\nHost: h\r\n\r\n")
		rc.expectBodies("ok", "hello", "")
	})
	t.Run("expect", func(t *testing.T) {
		rc := dialPeer(t, addr)
		rc.send("PUT /a HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
		line, err := rc.br.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
			t.Fatalf("first line %q (%v), want 100 Continue", line, err)
		}
		if _, err := rc.br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		rc.send("hello")
		resp, body := rc.response("PUT")
		if resp.StatusCode != http.StatusOK || string(body) != "hello" {
			t.Errorf("%d %q, want 200 hello", resp.StatusCode, body)
		}
	})
	t.Run("http/1.0", func(t *testing.T) {
		rc := dialPeer(t, addr)
		rc.send("GET /a HTTP/1.0\r\nHost: h\r\n\r\n")
		resp, _ := rc.response("GET")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Ms-Proto") != "HTTP/1.0" {
			t.Errorf("%d, proto %q; want 200 over HTTP/1.0", resp.StatusCode, resp.Header.Get("X-Ms-Proto"))
		}
	})
	for name, raw := range map[string]string{
		"no host":       "GET /a HTTP/1.1\r\n\r\n",
		"two hosts":     "GET /a HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"bad line":      "GARBAGE\r\nHost: h\r\n\r\n",
		"bad length":    "PUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: x\r\n\r\n",
		"bad field":     "GET /a HTTP/1.1\r\nHost: h\r\nBad Name: v\r\n\r\n",
		"folded line":   "GET /a HTTP/1.1\r\nHost: h\r\nX-Ms-A: 1\r\n 2\r\n\r\n",
		"huge head":     "GET /a HTTP/1.1\r\nHost: h\r\nX-Ms-Big: " + strings.Repeat("x", 2*headBuffer) + "\r\n\r\n",
		"two lengths":   "PUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		"lone LF field": "GET /a HTTP/1.1\r\nHost: h\r\nX-Ms-A: 1\nX-Ms-B: 2\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			ref := httptest.NewServer(handler)
			defer ref.Close()
			want := dialPeer(t, ref.Listener.Addr().String())
			got := dialPeer(t, addr)
			want.send(raw)
			got.send(raw)
			wr, wb := want.response("GET")
			gr, gb := got.response("GET")
			if gr.StatusCode != wr.StatusCode || !bytes.Equal(gb, wb) {
				t.Errorf("%d %q, net/http's %d %q", gr.StatusCode, gb, wr.StatusCode, wb)
			}
		})
	}
}

// TestConnPanic: a handler's panic closes its connection (after logging
// unless it is http.ErrAbortHandler); the server goes on.
func TestConnPanic(t *testing.T) {
	addr, _ := startConnServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			panic(http.ErrAbortHandler)
		}
	}))
	rc := dialPeer(t, addr)
	rc.send("GET /panic HTTP/1.1\r\nHost: h\r\n\r\n")
	if !rc.closed() {
		t.Error("connection kept after a panic")
	}
	rc = dialPeer(t, addr)
	rc.send("GET /ok HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, _ := rc.response("GET"); resp.StatusCode != http.StatusOK {
		t.Errorf("after a panic: %d", resp.StatusCode)
	}
}

// TestConnShutdown: shutdown closes idle connections at once and lets a
// request in progress finish.
func TestConnShutdown(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(entered)
			<-release
		}
		_, _ = io.WriteString(w, "done")
	})
	cs := newConnServer(h, &http.Server{Handler: h, IdleTimeout: time.Minute}, ln.Addr(), slog.New(slog.DiscardHandler))
	go func() { _ = cs.serve(ln) }()
	idle := dialPeer(t, ln.Addr().String())
	idle.send("GET /a HTTP/1.1\r\nHost: h\r\n\r\n")
	idle.response("GET")
	busy := dialPeer(t, ln.Addr().String())
	busy.send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- cs.shutdown(context.Background()) }()
	if !idle.closed() {
		t.Error("idle connection kept open by shutdown")
	}
	select {
	case err := <-shut:
		t.Fatalf("shutdown returned (%v) with a request in progress", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if resp, body := busy.response("GET"); resp.StatusCode != http.StatusOK || string(body) != "done" {
		t.Errorf("request in progress: %d %q", resp.StatusCode, body)
	}
	select {
	case err := <-shut:
		if err != nil {
			t.Errorf("shutdown: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown did not return")
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("listener still accepting after shutdown")
	}
}

// FuzzCommonHead: a head connServer takes is one http.ReadRequest either
// refuses (answered 400, as net/http's server does) or reads as an
// HTTP/1.1 request with a body framed by Content-Length at most and
// none of the fields left to net/http. (An empty Host is taken: net/http's
// server takes it too.)
func FuzzCommonHead(f *testing.F) {
	f.Add("GET /a HTTP/1.1\r\nHost: h\r\n")
	f.Add("PUT /a?comp=block HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nX-Ms-Version: 2025-01-05\r\n")
	f.Add("PUT /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n")
	f.Add("PUT /a HTTP/1.1\r\nHost: h\r\nTRANSFER-encoding : chunked\r\n")
	f.Add("GET /a HTTP/1.0\r\nHost: h\r\n")
	f.Fuzz(func(t *testing.T, head string) {
		if _, ok := commonHead([]byte(head)); !ok {
			return
		}
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(head + "\r\n")))
		if err != nil {
			return
		}
		if req.ProtoMajor != 1 || req.ProtoMinor != 1 {
			t.Errorf("taken: protocol %s", req.Proto)
		}
		if len(req.TransferEncoding) > 0 {
			t.Errorf("taken: transfer encoding %v", req.TransferEncoding)
		}
		for _, k := range []string{"Expect", "Upgrade"} {
			if _, ok := req.Header[k]; ok {
				t.Errorf("taken: %s field", k)
			}
		}
	})
}

// TestConnMetadataNames: the x-ms-meta-* names of a request reach the
// handler as the client spelled them (restoreMetadataNames), whether
// connServer served the request or handed its connection to net/http
// (whose requests the tap records).
func TestConnMetadataNames(t *testing.T) {
	addr, _ := startConnServer(t, metaNamesEcho)
	rc := dialPeer(t, addr)
	rc.send("PUT /a HTTP/1.1\r\nHost: h\r\nx-ms-meta-MyKey: 1\r\nX-MS-META-other: 2\r\nContent-Length: 0\r\n\r\n" +
		"PUT /b HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nx-ms-meta-camelCase: 3\r\n\r\n0\r\n\r\n" +
		"PUT /c HTTP/1.1\r\nHost: h\r\nx-ms-meta-After: 4\r\nContent-Length: 0\r\n\r\n")
	for i, want := range []string{"x-ms-meta-MyKey,x-ms-meta-other", "x-ms-meta-camelCase", "x-ms-meta-After"} {
		_, body := rc.response("PUT")
		if string(body) != want {
			t.Errorf("request %d: names %q, want %q", i, body, want)
		}
	}
}

// TestConnShutdownClosesHandedOver: a connection net/http's server took
// over is closed by shutdown too, when idle, even if ctx has already
// ended.
func TestConnShutdownClosesHandedOver(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) })
	cs := newConnServer(h, &http.Server{Handler: h, IdleTimeout: time.Minute}, ln.Addr(), slog.New(slog.DiscardHandler))
	go func() { _ = cs.serve(ln) }()
	rc := dialPeer(t, ln.Addr().String())
	rc.send("PUT /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
	if resp, _ := rc.response("PUT"); resp.StatusCode != http.StatusOK {
		t.Fatalf("handed-over request: %d", resp.StatusCode)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = cs.shutdown(ctx)
	if !rc.closed() {
		t.Error("handed-over idle connection kept open by shutdown")
	}
}

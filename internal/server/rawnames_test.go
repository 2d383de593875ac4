package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// stream is three requests as a client sends them on one connection: a
// Content-Length body that looks like headers, a chunked body with a
// trailer, and one without a body.
const stream = "PUT /acct/c/a HTTP/1.1\r\nHost: h\r\nx-ms-meta-Author: ann\r\nX-MS-META-lower: x\r\nContent-Length: 34\r\n\r\n" +
	"GET /x HTTP/1.1\r\nx-ms-meta-No: 1\r\n" +
	"PUT /acct/c/b?comp=metadata HTTP/1.1\r\nTransfer-Encoding: chunked\r\nx-ms-meta-MixedCase: v\r\n\r\n" +
	"5;ext=1\r\nhello\r\n0\r\nTrailer: t\r\n\r\n" +
	"\r\nHEAD /acct/c/b HTTP/1.1\r\nx-ms-meta-Q: 1\r\n\r\n"

var streamWant = []rawRequest{
	{line: requestLine("PUT", "/acct/c/a"), meta: []string{"Author", "lower"}},
	{line: requestLine("PUT", "/acct/c/b?comp=metadata"), meta: []string{"MixedCase"}},
	{line: requestLine("HEAD", "/acct/c/b"), meta: []string{"Q"}},
}

func TestFramer(t *testing.T) {
	for _, size := range []int{1, 2, 3, 7, 64, len(stream)} {
		var f framer
		for p := stream; p != ""; {
			n := min(size, len(p))
			f.feed([]byte(p[:n]))
			p = p[n:]
		}
		if !reflect.DeepEqual(f.reqs, streamWant) || f.state != fHeader {
			t.Errorf("feeding %d bytes at a time: state %d, records %+v", size, f.state, f.reqs)
		}
	}
	for _, bad := range []string{
		"PUT /a HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
		"PUT /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"garbage\r\n\r\n",
	} {
		var f framer
		f.feed([]byte(bad))
		f.feed([]byte(stream))
		if f.state != fBroken || len(f.reqs) > 1 {
			t.Errorf("%q: state %d, records %+v", bad, f.state, f.reqs)
		}
	}
}

// FuzzFramer feeds the stream split at two arbitrary points after an
// arbitrary prefix: the framer never panics, and without a prefix it
// always finds the same three requests.
func FuzzFramer(f *testing.F) {
	f.Add([]byte{}, uint16(1), uint16(2))
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"), uint16(100), uint16(200))
	f.Fuzz(func(t *testing.T, prefix []byte, a, b uint16) {
		data := append(append([]byte(nil), prefix...), stream...)
		i, j := min(int(a), len(data)), min(int(b), len(data))
		if i > j {
			i, j = j, i
		}
		var fr framer
		fr.feed(data[:i])
		fr.feed(data[i:j])
		fr.feed(data[j:])
		if len(prefix) == 0 && !reflect.DeepEqual(fr.reqs, streamWant) {
			t.Fatalf("split at %d, %d: %+v", i, j, fr.reqs)
		}
	})
}

func TestRestoreMetadataNames(t *testing.T) {
	tc := &tapConn{}
	tc.p.feed([]byte("PUT /other HTTP/1.1\r\n\r\n" +
		"PUT /acct/c/b HTTP/1.1\r\nx-ms-meta-Author: ann\r\nx-ms-meta-dup: 1\r\nx-ms-meta-DUP: 2\r\nx-ms-meta-plain: p\r\n\r\n"))
	r := httptest.NewRequest(http.MethodPut, "/acct/c/b", nil)
	r.Header.Set("x-ms-meta-author", "ann")
	r.Header.Add("x-ms-meta-dup", "1")
	r.Header.Add("x-ms-meta-dup", "2")
	r.Header.Set("x-ms-meta-plain", "p")
	r = r.WithContext(context.WithValue(r.Context(), tapKey{}, tc))
	restoreMetadataNames(r)
	var keys []string
	for k := range r.Header {
		keys = append(keys, k)
	}
	want := map[string][]string{"x-ms-meta-Author": {"ann"}, "x-ms-meta-dup": {"1", "2"}, "x-ms-meta-plain": {"p"}}
	if !reflect.DeepEqual(map[string][]string(r.Header), want) {
		t.Fatalf("header keys %s: %v", strings.Join(keys, ","), r.Header)
	}
	if len(tc.p.reqs) != 0 {
		t.Fatalf("records left: %+v", tc.p.reqs)
	}
	// A request with no record drops nothing; a batch sub-request does not
	// look, even when its line equals a recorded one.
	tc.p.feed([]byte("GET /next HTTP/1.1\r\n\r\n"))
	other := httptest.NewRequest(http.MethodDelete, "/acct/c/x", nil)
	restoreMetadataNames(other.WithContext(context.WithValue(other.Context(), tapKey{}, tc)))
	sub := httptest.NewRequest(http.MethodGet, "/next", nil)
	ctx := context.WithValue(context.WithValue(sub.Context(), tapKey{}, tc), batchVersionKey{}, "2026-06-06")
	restoreMetadataNames(sub.WithContext(ctx))
	if len(tc.p.reqs) != 1 {
		t.Fatalf("records after an unmatched request and a sub-request: %+v", tc.p.reqs)
	}
}

// BenchmarkFramer is the tap's cost for one Put Blob of 1 KiB as azblob
// sends it (headers about 700 bytes), read in net/http's 4 KiB pieces.
func BenchmarkFramer(b *testing.B) {
	req := "PUT /devstoreaccount1/bench/b3-17 HTTP/1.1\r\nHost: 127.0.0.1:10000\r\nUser-Agent: azsdk-go-azblob/v1.8.3 (go1.26.8; linux)\r\n" +
		"Content-Length: 1024\r\nAccept: application/xml\r\nAuthorization: SharedKey devstoreaccount1:0123456789abcdefghijklmnopqrstuvwxyzABCDEFG=\r\n" +
		"Content-Type: application/octet-stream\r\nX-Ms-Blob-Type: BlockBlob\r\nX-Ms-Client-Request-Id: 0b3c2c1e-6f1d-4a57-6d2e-2b1b8f7f3a11\r\n" +
		"X-Ms-Date: Thu, 26 Nov 2026 03:00:00 GMT\r\nX-Ms-Version: 2026-12-06\r\nAccept-Encoding: gzip\r\n\r\n" + strings.Repeat("x", 1024)
	var f framer
	data := []byte(req)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for p := data; len(p) > 0; {
			n := min(4096, len(p))
			f.feed(p[:n])
			p = p[n:]
		}
		f.reqs = f.reqs[:0]
	}
}

// TestTapOverHTTP runs the tap under net/http on one keep-alive
// connection: a chunked request, one with Expect: 100-continue, and a
// third, each seeing the metadata names it sent.
func TestTapOverHTTP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{ConnContext: tapContext, Handler: metaNamesEcho}
	go func() { _ = hs.Serve(tapListener{ln}) }()
	defer hs.Close()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	roundTrip := func(req string, body string, expect bool) string {
		t.Helper()
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		if expect {
			line, err := br.ReadString('\n')
			if err != nil || !strings.Contains(line, "100 Continue") {
				t.Fatalf("want 100 Continue, got %q %v", line, err)
			}
			_, _ = br.ReadString('\n') // the empty line after it
		}
		if _, err := io.WriteString(c, body); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return string(b)
	}
	got := roundTrip("PUT /a HTTP/1.1\r\nHost: x\r\nx-ms-meta-Author: a\r\nTransfer-Encoding: chunked\r\n\r\n", "3\r\nabc\r\n0\r\n\r\n", false)
	if got != "x-ms-meta-Author" {
		t.Errorf("chunked request saw %q", got)
	}
	got = roundTrip("PUT /b HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\nx-ms-meta-MixedCase: 1\r\nX-MS-META-lower: 2\r\n\r\n", "hello", true)
	if got != "x-ms-meta-MixedCase,x-ms-meta-lower" {
		t.Errorf("100-continue request saw %q", got)
	}
	got = roundTrip("GET /c HTTP/1.1\r\nHost: x\r\nx-ms-meta-Q: 1\r\n\r\n", "", false)
	if got != "x-ms-meta-Q" {
		t.Errorf("third request saw %q", got)
	}
}

// metaNamesEcho answers with the request's x-ms-meta-* field names,
// sorted and comma-separated, after restoreMetadataNames.
var metaNamesEcho = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	restoreMetadataNames(r)
	_, _ = io.Copy(io.Discard, r.Body)
	var names []string
	for k := range r.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-ms-meta-") {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	_, _ = io.WriteString(w, strings.Join(names, ","))
})

package blobrest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// The hot paths of small blobs through the REST handlers, without the
// network: Put Blob and Get Blob of 1 KiB (compare ns/op and allocs/op
// across changes of the handlers or the domain calls under them).

func benchServe(b *testing.B, s *Service, method, target string, hdr http.Header, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "http://127.0.0.1:10000"+target, bytes.NewReader(body))
	for k, v := range hdr {
		req.Header[k] = v
	}
	w := httptest.NewRecorder()
	if err := s.ServeAzure(w, &server.Request{Request: req, Account: "acct", Authenticated: true, Now: s.Clock().Now(), Version: "2026-12-06", ID: "b"}); err != nil {
		b.Fatal(err)
	}
	return w
}

func benchBlobService(b *testing.B) *Service {
	store, chunks, clk := testenv.Stores(b)
	s := New(blob.New(store, chunks, clk, nil))
	benchServe(b, s, http.MethodPut, "/acct/cnt?restype=container", nil, nil)
	return s
}

func BenchmarkPutBlob1K(b *testing.B) {
	s := benchBlobService(b)
	body := bytes.Repeat([]byte("x"), 1024)
	hdr := http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchServe(b, s, http.MethodPut, "/acct/cnt/blob", hdr, body)
	}
}

func BenchmarkGetBlob1K(b *testing.B) {
	s := benchBlobService(b)
	body := bytes.Repeat([]byte("x"), 1024)
	benchServe(b, s, http.MethodPut, "/acct/cnt/blob", http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}, body)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if w := benchServe(b, s, http.MethodGet, "/acct/cnt/blob", nil, nil); w.Body.Len() != 1024 {
			b.Fatalf("read %d bytes", w.Body.Len())
		}
	}
}

// BenchmarkPutBlob1KChangeFeed is BenchmarkPutBlob1K with the account's
// change log off and on (the change feed, or an event subscription,
// reading it): what logging a write costs it, side by side.
func BenchmarkPutBlob1KChangeFeed(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 1024)
	hdr := http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			store, chunks, clk := testenv.Stores(b)
			d := blob.New(store, chunks, clk, nil)
			d.SetChangeFeed(func(string) bool { return on })
			s := New(d)
			benchServe(b, s, http.MethodPut, "/acct/cnt?restype=container", nil, nil)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if w := benchServe(b, s, http.MethodPut, "/acct/cnt/blob", hdr, body); w.Code != http.StatusCreated {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}

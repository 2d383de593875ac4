package blobrest

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/server"
)

// discardWriter keeps headers and drops the body, so the benchmark counts
// the front end's allocations, not a recorder's.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

// BenchmarkDispatch measures ServeAzure's own cost, the dispatch every
// request passes (parse, route, authorize, extras), with operations that
// touch no store: Get Account Information served, and a container URL
// with an unknown restype refused by routing.
func BenchmarkDispatch(b *testing.B) {
	s := benchBlobService(b)
	for _, bc := range []struct{ name, target string }{
		{"served", "/acct/cnt?restype=account&comp=properties"},
		{"refused", "/acct/cnt?restype=bogus"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			hr := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:10000"+bc.target, nil)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				sr := server.Request{Request: hr, Account: "acct", Authenticated: true, Version: "2026-12-06", ID: "b"}
				_ = s.ServeAzure(w, &sr)
			}
		})
	}
}

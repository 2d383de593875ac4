package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// discardWriter is a ResponseWriter that keeps headers and drops the body,
// so the benchmarks count the middleware's allocations, not a recorder's.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

// BenchmarkWrap measures the per-request cost of Server.Wrap's pipeline:
// an anonymous request served by the handler, and one refused before
// dispatch (a malformed x-ms-version, rendered as an XML error).
func BenchmarkWrap(b *testing.B) {
	h := testServer(&testing.T{}, false, func(w http.ResponseWriter, r *Request) error {
		w.WriteHeader(http.StatusOK)
		return nil
	})
	for _, bc := range []struct {
		name, version string
	}{
		{"served", "2021-08-06"},
		{"refused", "bad"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/devstoreaccount1/c/b", nil)
			req.Header.Set("x-ms-version", bc.version)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
		})
	}
}

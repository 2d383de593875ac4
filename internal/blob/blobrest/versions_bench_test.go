package blobrest

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkPutBlob1KVersioning is BenchmarkPutBlob1K with versioning off
// and on, side by side: each overwrite keeps one more version (one more
// record, no data copied) when it is on.
func BenchmarkPutBlob1KVersioning(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("versioning=%v", on), func(b *testing.B) {
			s := benchBlobService(b)
			s.SetVersioning(func(string) bool { return on })
			body := bytes.Repeat([]byte("x"), 1024)
			hdr := http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w := benchServe(b, s, http.MethodPut, "/acct/cnt/blob", hdr, body)
				if on && w.Header().Get("x-ms-version-id") == "" {
					b.Fatal("no version id")
				}
			}
		})
	}
}

// BenchmarkListVersions10k lists the 10,000 versions of one blob page by
// page (include=versions, 1,000 a page); one op is the whole listing.
func BenchmarkListVersions10k(b *testing.B) {
	s := benchBlobService(b)
	s.SetVersioning(func(string) bool { return true })
	hdr := http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}
	const n = 10000
	for i := 0; i < n; i++ {
		benchServe(b, s, http.MethodPut, "/acct/cnt/blob", hdr, []byte("x"))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		items, marker := 0, ""
		for {
			w := benchServe(b, s, http.MethodGet, "/acct/cnt?restype=container&comp=list&include=versions&maxresults=1000&marker="+marker, nil, nil)
			body := w.Body.String()
			items += strings.Count(body, "<VersionId>")
			i := strings.Index(body, "<NextMarker>")
			j := strings.Index(body, "</NextMarker>")
			marker = body[i+len("<NextMarker>") : j]
			if marker == "" {
				break
			}
		}
		if items != n {
			b.Fatalf("listed %d versions, want %d", items, n)
		}
	}
}

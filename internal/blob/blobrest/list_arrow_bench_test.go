package blobrest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// BenchmarkListBlobs100K lists a container of 10⁵ blobs from end to end,
// page by page (5,000 a page, following NextMarker), through the REST
// handler: as XML and as an Arrow IPC stream. One op is the whole
// listing; blobs/s is the listing throughput. The client side (decoding
// into BlobItems) is not included: see BenchmarkListBlobs100KSDK in
// test/e2e for the SDK's view.
func BenchmarkListBlobs100K(b *testing.B) {
	const n = 100_000
	s := benchBlobService(b)
	hdr := http.Header{"X-Ms-Blob-Type": {"BlockBlob"}, "X-Ms-Meta-Color": {"blue"}, "Content-Type": {"text/plain"}}
	body := []byte("0123456789")
	for i := 0; i < n; i++ {
		benchServe(b, s, http.MethodPut, fmt.Sprintf("/acct/cnt/dir%02d/blob-%06d", i%50, i), hdr, body)
	}
	listAll := func(b *testing.B, accept, inc string, arrow bool) int64 {
		var bytesOut int64
		marker, listed := "", 0
		for {
			q := url.Values{"restype": {"container"}, "comp": {"list"}}
			if inc != "" {
				q.Set("include", inc)
			}
			if marker != "" {
				q.Set("marker", marker)
			}
			w := benchServe(b, s, http.MethodGet, "/acct/cnt?"+q.Encode(), http.Header{"Accept": {accept}}, nil)
			bytesOut += int64(w.Body.Len())
			var rows int
			marker, rows = benchNextMarker(b, w.Body.Bytes(), arrow)
			listed += rows
			if marker == "" {
				break
			}
		}
		if listed != n {
			b.Fatalf("listed %d of %d", listed, n)
		}
		return bytesOut
	}
	const xmlAccept, arrowAccept = "application/xml", "application/vnd.apache.arrow.stream,application/xml"
	for _, inc := range []string{"", "metadata"} {
		for _, tc := range []struct {
			name   string
			accept string
			arrow  bool
		}{{"xml", xmlAccept, false}, {"arrow", arrowAccept, true}} {
			b.Run(tc.name+"/include="+inc, func(b *testing.B) {
				var bytesOut int64
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					bytesOut += listAll(b, tc.accept, inc, tc.arrow)
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "blobs/s")
				b.ReportMetric(float64(bytesOut)/float64(b.N)/n, "B/blob")
			})
		}
		// Both formats in turn within each op, so that a shared machine's
		// load falls on both alike: arrow/xml is the speed-up.
		b.Run("paired/include="+inc, func(b *testing.B) {
			var tx, ta time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				listAll(b, xmlAccept, inc, false)
				t1 := time.Now()
				listAll(b, arrowAccept, inc, true)
				tx, ta = tx+t1.Sub(t0), ta+time.Since(t1)
			}
			b.ReportMetric(float64(n)*float64(b.N)/tx.Seconds(), "xml-blobs/s")
			b.ReportMetric(float64(n)*float64(b.N)/ta.Seconds(), "arrow-blobs/s")
			b.ReportMetric(tx.Seconds()/ta.Seconds(), "arrow/xml")
		})
	}
}

// benchNextMarker reads a page's NextMarker and its number of entries.
func benchNextMarker(b *testing.B, page []byte, arrow bool) (string, int) {
	if !arrow {
		i, j := bytes.Index(page, []byte("<NextMarker>")), bytes.Index(page, []byte("</NextMarker>"))
		m := ""
		if i >= 0 && j > i {
			m = string(page[i+len("<NextMarker>") : j])
		}
		return m, bytes.Count(page, []byte("<Blob>"))
	}
	rd, err := ipc.NewReader(bytes.NewReader(page))
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Release()
	md := rd.Schema().Metadata()
	m := ""
	if k := md.FindKey("NextMarker"); k >= 0 {
		m = md.Values()[k]
	}
	rows := 0
	if k := md.FindKey("NumberOfRecords"); k >= 0 {
		fmt.Sscan(md.Values()[k], &rows)
	}
	return m, rows
}

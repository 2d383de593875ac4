package blobrest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/extent"
)

// A small Put Blob body lives in the blob record: no data item, no
// reference, nothing for the collector; snapshots and copies carry their
// own copy, and page writes over such content are not possible (page blobs
// are never embedded).
func TestSmallPutBlobIsEmbedded(t *testing.T) {
	e, _ := newSDEnv(t)
	body := strings.Repeat("x", extent.InlineMax)
	e.ok(http.MethodPut, "/acct/cnt/small", map[string]string{"x-ms-blob-type": blob.BlockBlob}, body)
	if got := e.keys("x"); len(got) != 0 {
		t.Fatalf("data items for an embedded body: %v", got)
	}
	snap := e.snapshot("small")
	e.ok(http.MethodPut, "/acct/cnt/small", map[string]string{"x-ms-blob-type": blob.BlockBlob}, "v2")
	if got := e.read("small", snap); got != body {
		t.Fatalf("snapshot content changed: %d bytes", len(got))
	}
	if got := e.read("small", ""); got != "v2" {
		t.Fatalf("base = %q", got)
	}
	// A ranged read of embedded bytes.
	w := e.ok(http.MethodGet, "/acct/cnt/small?snapshot="+snap, map[string]string{"x-ms-range": "bytes=10-19"}, "")
	if w.Code != http.StatusPartialContent || w.Body.String() != body[10:20] {
		t.Fatalf("ranged read: %d %q", w.Code, w.Body.String())
	}
	if got := e.keys("x"); len(got) != 0 || len(e.keys("g")) != 0 {
		t.Fatalf("data or gc keys after overwrites: %v %v", got, e.keys("g"))
	}
	// One byte more than the threshold is a shared data item.
	e.ok(http.MethodPut, "/acct/cnt/big", map[string]string{"x-ms-blob-type": blob.BlockBlob}, body+"y")
	if got := e.keys("x"); len(got) != 1 {
		t.Fatalf("data items for a body over the threshold: %v", got)
	}
}

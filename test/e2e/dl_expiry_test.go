package e2e

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/cerulean-storage/cerulean/internal/extent"
)

// TestDLExpiredFilesGone: files past their expiry are gone for every
// operation, not only for reads: a directory holding only expired files
// is deleted without recursive=true (Path Delete) and is an empty
// destination for a directory rename, and the collector frees the content
// of an expired file whose name is never reused.
func TestDLExpiredFilesGone(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("expgone")
	for _, d := range []string{"d", "t", "src"} {
		_, err := fs.NewDirectoryClient(d).Create(e.ctx, nil)
		must(t, err)
	}
	big := bytes.Repeat([]byte("e"), 200<<10) // a chunk of its own, not inline
	for _, p := range []string{"d/x", "t/y", "keep"} {
		f := fs.NewFileClient(p)
		_, err := f.Create(e.ctx, &file.CreateOptions{Expiry: file.CreateExpiryValues{ExpiryType: file.CreateExpiryTypeRelativeToNow, ExpiresOn: "60000"}})
		must(t, err)
		must(t, f.UploadBuffer(e.ctx, big, nil))
	}
	resp, out := e.raw(http.MethodDelete, "/expgone/d?recursive=false", nil, nil)
	if resp.StatusCode != http.StatusConflict || resp.Header.Get("x-ms-error-code") != "DirectoryNotEmpty" {
		t.Fatalf("delete before expiry: %d %s", resp.StatusCode, out)
	}
	_, err := e.app.Blob.CollectGarbage(e.ctx)
	must(t, err)

	e.clock.Advance(61 * time.Second)
	resp, out = e.raw(http.MethodDelete, "/expgone/d?recursive=false", nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("delete of a directory holding only an expired file: %d %s", resp.StatusCode, out)
	}
	_, err = fs.NewDirectoryClient("src").Rename(e.ctx, "t", nil)
	must(t, err)
	// x (its directory deleted), y (its directory replaced) and keep (in
	// the root, its name never reused) are each freed once.
	// The first run releases the references, a run after the data
	// items' grace frees them (extent.GCGrace; on a store only this
	// server uses, the first run frees them already: extent.TrackViews);
	// the sum counts each once.
	n1, err := e.app.Blob.CollectGarbage(e.ctx)
	must(t, err)
	e.clock.Advance(extent.GCGrace + time.Second)
	n2, err := e.app.Blob.CollectGarbage(e.ctx)
	must(t, err)
	if n1+n2 != 3 {
		t.Fatalf("collected %d+%d data items, want 3", n1, n2)
	}
	if n, err := e.app.Blob.CollectGarbage(e.ctx); err != nil || n != 0 {
		t.Fatalf("second collection: %d %v", n, err)
	}
}

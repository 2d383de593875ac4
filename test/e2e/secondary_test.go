package e2e

import (
	"io"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// The {account}-secondary endpoint serves reads of the same data, signed
// with the account's own key, and refuses writes (403, as Azure's RA-GRS
// secondary answers "Write operations are not allowed").
func TestSecondaryEndpointIsReadOnly(t *testing.T) {
	e := start(t)
	e.container("geo")
	_, err := e.c.UploadBuffer(e.ctx, "geo", "a.txt", []byte("replicated"), nil)
	must(t, err)
	sec := client(t, e.app.BlobURL+"-secondary", app.DevKey)

	resp, err := sec.DownloadStream(e.ctx, "geo", "a.txt", nil)
	must(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "replicated" {
		t.Fatalf("secondary read %q", got)
	}
	page, err := sec.NewListBlobsFlatPager("geo", nil).NextPage(e.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 1 {
		t.Fatalf("secondary listing: %d items", len(page.Segment.BlobItems))
	}
	_, err = sec.UploadBuffer(e.ctx, "geo", "b.txt", []byte("x"), nil)
	wantCode(t, err, 403, bloberror.InsufficientAccountPermissions)
	_, err = sec.DeleteBlob(e.ctx, "geo", "a.txt", nil)
	wantCode(t, err, 403, bloberror.InsufficientAccountPermissions)
	_, err = sec.CreateContainer(e.ctx, "other", nil)
	wantCode(t, err, 403, bloberror.InsufficientAccountPermissions)
	// Nothing was written through the secondary.
	_, err = e.c.DownloadStream(e.ctx, "geo", "b.txt", nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	if _, err := e.c.DownloadStream(e.ctx, "geo", "a.txt", nil); err != nil {
		t.Fatalf("primary blob gone after a refused secondary delete: %v", err)
	}
}

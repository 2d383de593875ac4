package e2e

import (
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestDLCopyPropertiesOnPath: a copy onto a path of a hierarchical
// account keeps the x-ms-copy-* properties as on a flat account: Get
// Blob Properties and List Blobs (include=copy) report them, Set Blob
// Metadata keeps them, Set Blob Properties clears them ("Get Blob
// Properties": absent once the blob is modified after the copy with Set
// Blob Properties, Put Blob or Put Block List).
func TestDLCopyPropertiesOnPath(t *testing.T) {
	e := startDL(t, true)
	e.mkfs("copies")
	bs := client(t, e.app.BlobURL, app.DevKey)
	bc := bs.ServiceClient().NewContainerClient("copies")
	_, err := bs.UploadBuffer(e.ctx, "copies", "src/a.txt", []byte("copied content"), nil)
	must(t, err)
	src := bc.NewBlobClient("src/a.txt").URL()
	dst := bc.NewBlobClient("dst/b.txt")
	cp, err := dst.StartCopyFromURL(e.ctx, src, nil)
	must(t, err)
	p, err := dst.GetProperties(e.ctx, nil)
	must(t, err)
	if p.CopyID == nil || *p.CopyID != *cp.CopyID || p.CopySource == nil || *p.CopySource != src || p.CopyStatus == nil || *p.CopyStatus != blob.CopyStatusTypeSuccess ||
		p.CopyProgress == nil || *p.CopyProgress != "14/14" || p.CopyCompletionTime == nil {
		t.Fatalf("copy properties of the path: id %v src %v status %v progress %v completion %v", p.CopyID, p.CopySource, p.CopyStatus, p.CopyProgress, p.CopyCompletionTime)
	}
	// The copy is done: Abort Copy Blob finds no pending copy, as on a
	// flat account, and a path that is not there is 404.
	_, err = dst.AbortCopyFromURL(e.ctx, *cp.CopyID, nil)
	wantCode(t, err, http.StatusConflict, bloberror.NoPendingCopyOperation)
	_, err = bc.NewBlobClient("dst/none").AbortCopyFromURL(e.ctx, *cp.CopyID, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	_, err = dst.SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v")}, nil)
	must(t, err)
	if p, err = dst.GetProperties(e.ctx, nil); err != nil || p.CopyID == nil {
		t.Fatalf("after Set Blob Metadata: %v %v", p.CopyID, err)
	}
	_, err = dst.SetHTTPHeaders(e.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain")}, nil)
	must(t, err)
	if p, err = dst.GetProperties(e.ctx, nil); err != nil || p.CopyID != nil || p.CopyStatus != nil {
		t.Fatalf("after Set Blob Properties: %v %v %v", p.CopyID, p.CopyStatus, err)
	}
}

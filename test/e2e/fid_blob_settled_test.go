package e2e

import (
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// TestFidBlobReadIfNoneMatchAny: a read with If-None-Match: * is 400
// UnsatisfiableCondition on Get Blob and Get Blob Properties, as Azure answers it (azure-cli's recorded live test
// test_storage_blob_oauth: "storage blob show --if-none-match *" fails
// with ErrorCode:UnsatisfiableCondition); writes keep their meaning
// (create only if absent).
func TestFidBlobReadIfNoneMatchAny(t *testing.T) {
	b := newBlobT(t)
	b.put("x", []byte("exists"), nil)
	star := &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}
	_, err := b.bb("x").DownloadStream(b.ctx, &blob.DownloadStreamOptions{AccessConditions: star})
	wantCode(t, err, http.StatusBadRequest, "UnsatisfiableCondition")
	_, err = b.bb("x").GetProperties(b.ctx, &blob.GetPropertiesOptions{AccessConditions: star})
	wantCode(t, err, http.StatusBadRequest, "")
	// A write with If-None-Match: * still means "only if absent".
	_, err = b.bb("x").Upload(b.ctx, bxBody([]byte("again")), &blockblob.UploadOptions{AccessConditions: star})
	wantCode(t, err, http.StatusConflict, bloberror.BlobAlreadyExists)
	_, err = b.bb("y").Upload(b.ctx, bxBody([]byte("new")), &blockblob.UploadOptions{AccessConditions: star})
	must(t, err)
}

// TestFidBlobSnapshotLeaseAndTags: a snapshot reports no lease (no
// x-ms-lease-state or -status on Get Blob Properties, no LeaseStatus or
// LeaseState in List Blobs with include=snapshots, while its base blob
// has them), and Get Blob Tags on a snapshot returns the tags the blob
// had when it was taken: both as in the azure-sdk-for-js recordings
// "createSnapshot" and "get blob tags should work with a snapshot".
func TestFidBlobSnapshotLeaseAndTags(t *testing.T) {
	b := newBlobT(t)
	b.put("s", []byte("Hello World"), nil)
	_, err := b.bb("s").SetTags(b.ctx, map[string]string{"tag1": "val1", "tag2": "val2"}, nil)
	must(t, err)
	snap := b.snapshot("s", nil)
	p, err := b.snap("s", snap).GetProperties(b.ctx, nil)
	must(t, err)
	if p.LeaseState != nil || p.LeaseStatus != nil {
		t.Fatalf("snapshot lease %v %v", p.LeaseState, p.LeaseStatus)
	}
	bp := b.props(b.bb("s"))
	if bp.LeaseState == nil || bp.LeaseStatus == nil {
		t.Fatal("base blob without lease state")
	}
	page, err := b.cli.ServiceClient().NewContainerClient(b.cont).NewListBlobsFlatPager(&container.ListBlobsFlatOptions{
		Include: container.ListBlobsInclude{Snapshots: true}}).NextPage(b.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 2 {
		t.Fatalf("%d items", len(page.Segment.BlobItems))
	}
	for _, it := range page.Segment.BlobItems {
		isSnap := it.Snapshot != nil && *it.Snapshot != ""
		if hasLease := it.Properties.LeaseState != nil || it.Properties.LeaseStatus != nil; hasLease == isSnap {
			t.Fatalf("snapshot %v: lease %v %v", isSnap, it.Properties.LeaseState, it.Properties.LeaseStatus)
		}
	}
	_, err = b.bb("s").SetTags(b.ctx, map[string]string{"after": "snapshot"}, nil)
	must(t, err)
	if got := b.tags(b.snap("s", snap)); got != "tag1=val1,tag2=val2" {
		t.Fatalf("snapshot tags %s", got)
	}
}

// TestFidBlobRelativeCopySource: x-ms-copy-source must be a URL; a path
// ("/account/container/blob", the form of versions before 2012-02-12)
// is 400 InvalidHeaderValue on Copy Blob, Copy Blob From URL and Put
// Blob From URL, as the service answers it
// (Azure/azure-storage-node#594).
func TestFidBlobRelativeCopySource(t *testing.T) {
	b := newBlobT(t)
	b.put("src", []byte("x"), nil)
	rel := "/devstoreaccount1/" + b.cont + "/src"
	_, err := b.bb("d1").StartCopyFromURL(b.ctx, rel, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidHeaderValue)
	_, err = b.bb("d2").CopyFromURL(b.ctx, rel, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidHeaderValue)
	_, err = b.bb("d3").UploadBlobFromURL(b.ctx, rel, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidHeaderValue)
	_, err = b.bb("d4").StartCopyFromURL(b.ctx, "ftp://127.0.0.1/devstoreaccount1/"+b.cont+"/src", nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidHeaderValue)
	for _, n := range []string{"d1", "d2", "d3", "d4"} {
		_, err = b.bb(n).GetProperties(b.ctx, nil)
		wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	}
}

package e2e

import (
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
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

package e2e

import (
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
)

// The Blob operations README's "Not supported yet" lists answer, through
// the SDK, 501 NotImplemented with a message naming the operation (not a
// generic 400 InvalidQueryParameterValue about comp), which the SDK does
// not retry.
func TestUnsupportedOperationsThroughSDK(t *testing.T) {
	e := start(t)
	e.container("ctr")
	_, err := e.c.UploadBuffer(e.ctx, "ctr", "b", []byte("x"), nil)
	must(t, err)
	bc := e.c.ServiceClient().NewContainerClient("ctr").NewBlobClient("b")
	pc := e.c.ServiceClient().NewContainerClient("ctr").NewPageBlobClient("p")
	for _, tc := range []struct {
		op   string
		call func() error
	}{
		{"Incremental Copy Blob", func() error {
			_, err := pc.StartCopyIncremental(e.ctx, e.app.BlobURL+"/ctr/src", "2026-01-01T00:00:00.0000000Z", nil)
			return err
		}},
	} {
		err := tc.call()
		wantCode(t, err, 501, "NotImplemented")
		if !strings.Contains(err.Error(), tc.op+" is not supported") {
			t.Errorf("%s: message does not name it: %v", tc.op, err)
		}
	}
	// The blob is untouched.
	if _, err := bc.GetProperties(e.ctx, &blob.GetPropertiesOptions{}); err != nil {
		t.Fatal(err)
	}
}

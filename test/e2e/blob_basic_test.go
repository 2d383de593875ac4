package e2e

import (
	"bytes"
	"io"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
)

func TestPutGetBlob(t *testing.T) {
	e := start(t)
	e.container("cont1")
	data := []byte("hello, cerulean")
	_, err := e.c.UploadBuffer(e.ctx, "cont1", "dir/a b.txt", data, nil)
	must(t, err)
	resp, err := e.c.DownloadStream(e.ctx, "cont1", "dir/a b.txt", nil)
	must(t, err)
	got, _ := io.ReadAll(resp.Body)
	if !bytes.Equal(got, data) {
		t.Fatalf("got %q", got)
	}
	_, err = e.c.DownloadStream(e.ctx, "cont1", "missing", nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = e.c.DownloadStream(e.ctx, "nocontainer", "x", nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	// ranged
	resp, err = e.c.DownloadStream(e.ctx, "cont1", "dir/a b.txt", &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 7, Count: 5}})
	must(t, err)
	got, _ = io.ReadAll(resp.Body)
	if string(got) != "ceru" && string(got) != "cerul" {
		t.Fatalf("range got %q", got)
	}
}

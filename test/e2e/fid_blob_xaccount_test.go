package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

const fidOtherAccount = "otheracct"

var fidOtherKey = base64.StdEncoding.EncodeToString([]byte("the other account's key, 32 byte"))

// TestFidBlobCrossAccountCopy: Copy Blob, Copy Blob From URL, Put Blob
// From URL and Put Block From URL read a source in another account
// served by the same server, as Azure does, when that account's SAS or
// the container's public access authorizes it (Copy Blob reference,
// "Authorization"); the destination's Shared Key grants nothing there.
func TestFidBlobCrossAccountCopy(t *testing.T) {
	clk := clock.NewFake(time.Now())
	cfg := backendConfig(t)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort = 0, -1, -1, -1
	cfg.Clock, cfg.GCEvery = clk, time.Hour
	devKey, _ := base64.StdEncoding.DecodeString(app.DevKey)
	otherKey, _ := base64.StdEncoding.DecodeString(fidOtherKey)
	cfg.Accounts = []auth.Account{{Name: app.DevAccount, Keys: [][]byte{devKey}}, {Name: fidOtherAccount, Keys: [][]byte{otherKey}}}
	a, err := app.Start(cfg)
	must(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	ctx := context.Background()
	root := a.BlobURL[:strings.LastIndex(a.BlobURL, "/")]
	dev := client(t, root+"/"+app.DevAccount, app.DevKey)
	ocred, err := azblob.NewSharedKeyCredential(fidOtherAccount, fidOtherKey)
	must(t, err)
	other, err := azblob.NewClientWithSharedKeyCredential(root+"/"+fidOtherAccount, ocred, clientOptions())
	must(t, err)

	_, err = dev.CreateContainer(ctx, "dst", nil)
	must(t, err)
	_, err = other.CreateContainer(ctx, "priv", nil)
	must(t, err)
	_, err = other.CreateContainer(ctx, "pub", &container.CreateOptions{Access: to.Ptr(container.PublicAccessTypeBlob)})
	must(t, err)
	data := []byte("bytes that live in the other account")
	for _, c := range []string{"priv", "pub"} {
		_, err = other.UploadBuffer(ctx, c, "src", data, nil)
		must(t, err)
	}
	privURL := other.ServiceClient().NewContainerClient("priv").NewBlobClient("src").URL()
	pubURL := other.ServiceClient().NewContainerClient("pub").NewBlobClient("src").URL()
	signed := func(key *azblob.SharedKeyCredential) string {
		qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ContainerName: "priv", BlobName: "src",
			Permissions: "r", ExpiryTime: time.Now().Add(time.Hour)}.SignWithSharedKey(key)
		must(t, err)
		return privURL + "?" + qp.Encode()
	}
	withSAS := signed(ocred)
	dcred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	wrongKey := signed(dcred)

	dst := dev.ServiceClient().NewContainerClient("dst")
	read := func(name string) []byte {
		t.Helper()
		r, err := dst.NewBlobClient(name).DownloadStream(ctx, nil)
		must(t, err)
		defer r.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(r.Body)
		return b.Bytes()
	}
	// A private source: refused without its own authorization, or with a
	// SAS signed by the destination account's key.
	for _, src := range []string{privURL, wrongKey} {
		_, err = dst.NewBlobClient("c0").StartCopyFromURL(ctx, src, nil)
		wantCode(t, err, http.StatusForbidden, bloberror.CannotVerifyCopySource)
		_, err = dst.NewBlockBlobClient("c0").UploadBlobFromURL(ctx, src, nil)
		wantCode(t, err, http.StatusForbidden, bloberror.CannotVerifyCopySource)
	}
	_, err = dst.NewBlobClient("c0").GetProperties(ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)

	// Authorized by the source account's SAS, or public.
	for i, src := range []string{withSAS, pubURL} {
		n := string(rune('a' + i))
		r, err := dst.NewBlobClient("copy-"+n).StartCopyFromURL(ctx, src, nil)
		must(t, err)
		if *r.CopyStatus != blob.CopyStatusTypeSuccess {
			t.Fatalf("copy status %v", *r.CopyStatus)
		}
		_, err = dst.NewBlobClient("sync-"+n).CopyFromURL(ctx, src, nil)
		must(t, err)
		_, err = dst.NewBlockBlobClient("put-"+n).UploadBlobFromURL(ctx, src, nil)
		must(t, err)
		bid := base64.StdEncoding.EncodeToString([]byte("block-01"))
		_, err = dst.NewBlockBlobClient("blk-"+n).StageBlockFromURL(ctx, bid, src, nil)
		must(t, err)
		_, err = dst.NewBlockBlobClient("blk-"+n).CommitBlockList(ctx, []string{bid}, &blockblob.CommitBlockListOptions{})
		must(t, err)
		for _, name := range []string{"copy-", "sync-", "put-", "blk-"} {
			if got := read(name + n); !bytes.Equal(got, data) {
				t.Fatalf("%s%s: %q", name, n, got)
			}
		}
	}
	// A missing blob in the other account is 404 CannotVerifyCopySource.
	_, err = dst.NewBlobClient("c1").StartCopyFromURL(ctx, other.ServiceClient().NewContainerClient("pub").NewBlobClient("missing").URL(), nil)
	wantCode(t, err, http.StatusNotFound, bloberror.CannotVerifyCopySource)
	// So is one in a container the other account does not have.
	_, err = dst.NewBlobClient("c1").StartCopyFromURL(ctx, other.ServiceClient().NewContainerClient("nocont").NewBlobClient("src").URL(), nil)
	wantCode(t, err, http.StatusNotFound, bloberror.CannotVerifyCopySource)
	// The source is untouched and still the other account's alone.
	_, err = dev.ServiceClient().NewContainerClient("priv").NewBlobClient("src").GetProperties(ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.ContainerNotFound)
}

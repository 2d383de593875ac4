package e2e

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/auth"
)

// TestCopySourceAuthorization: with --oauth basic, a copy whose private
// source lives in another account of the server is authorized by an
// Entra ID token in x-ms-copy-source-authorization (Copy Blob From URL,
// Put Blob From URL, Put Block From URL: "Only the bearer scheme is
// supported"); without it the source is refused, and an expired token or
// another scheme is refused too.
func TestCopySourceAuthorization(t *testing.T) {
	cert, pool := selfSigned(t)
	cfg := backendConfig(t)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort, cfg.SMBPort, cfg.MetricsPort = 0, -1, -1, -1, -1, -1
	cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	cfg.OAuth = true
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
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	opts := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}}
	ctx := context.Background()
	root := a.BlobURL[:strings.LastIndex(a.BlobURL, "/")]
	dcred, _ := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	dev, err := azblob.NewClientWithSharedKeyCredential(root+"/"+app.DevAccount, dcred, opts)
	must(t, err)
	ocred, _ := azblob.NewSharedKeyCredential(fidOtherAccount, fidOtherKey)
	other, err := azblob.NewClientWithSharedKeyCredential(root+"/"+fidOtherAccount, ocred, opts)
	must(t, err)
	_, err = dev.CreateContainer(ctx, "dst", nil)
	must(t, err)
	_, err = other.CreateContainer(ctx, "priv", nil)
	must(t, err)
	data := []byte("read with the caller's own token")
	_, err = other.UploadBuffer(ctx, "priv", "src", data, nil)
	must(t, err)
	src := other.ServiceClient().NewContainerClient("priv").NewBlobClient("src").URL()

	token := func(exp time.Time) *string {
		tok, err := fakeToken{exp: exp, aud: "https://storage.azure.com"}.GetToken(ctx, policy.TokenRequestOptions{})
		must(t, err)
		return to.Ptr("Bearer " + tok.Token)
	}
	good, expired := token(time.Now().Add(time.Hour)), token(time.Now().Add(-time.Hour))
	dst := dev.ServiceClient().NewContainerClient("dst")
	read := func(name string) string {
		resp, err := dst.NewBlobClient(name).DownloadStream(ctx, nil)
		must(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		must(t, err)
		return string(b)
	}
	refused := func(what string, err error, status int) {
		t.Helper()
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != status || re.ErrorCode != string(bloberror.CannotVerifyCopySource) {
			t.Fatalf("%s: %v, want %d CannotVerifyCopySource", what, err, status)
		}
	}

	// Put Blob From URL.
	_, err = dst.NewBlockBlobClient("a").UploadBlobFromURL(ctx, src, &blockblob.UploadBlobFromURLOptions{CopySourceAuthorization: good})
	must(t, err)
	if got := read("a"); got != string(data) {
		t.Fatalf("Put Blob From URL copied %q", got)
	}
	// Copy Blob From URL.
	_, err = dst.NewBlobClient("b").CopyFromURL(ctx, src, &blob.CopyFromURLOptions{CopySourceAuthorization: good})
	must(t, err)
	if got := read("b"); got != string(data) {
		t.Fatalf("Copy Blob From URL copied %q", got)
	}
	// Put Block From URL, then commit.
	id := base64.StdEncoding.EncodeToString([]byte("blk-0001"))
	_, err = dst.NewBlockBlobClient("c").StageBlockFromURL(ctx, id, src, &blockblob.StageBlockFromURLOptions{CopySourceAuthorization: good})
	must(t, err)
	_, err = dst.NewBlockBlobClient("c").CommitBlockList(ctx, []string{id}, nil)
	must(t, err)
	if got := read("c"); got != string(data) {
		t.Fatalf("Put Block From URL copied %q", got)
	}

	// Without a token the private source in another account is refused.
	_, err = dst.NewBlockBlobClient("d").UploadBlobFromURL(ctx, src, nil)
	refused("no token", err, http.StatusForbidden)
	// An expired token, or a scheme other than Bearer.
	_, err = dst.NewBlockBlobClient("d").UploadBlobFromURL(ctx, src, &blockblob.UploadBlobFromURLOptions{CopySourceAuthorization: expired})
	refused("expired token", err, http.StatusUnauthorized)
	_, err = dst.NewBlobClient("d").CopyFromURL(ctx, src, &blob.CopyFromURLOptions{CopySourceAuthorization: to.Ptr("SharedKey " + fidOtherAccount + ":c2ln")})
	refused("another scheme", err, http.StatusBadRequest)
	if _, err := dst.NewBlobClient("d").GetProperties(ctx, nil); err == nil {
		t.Fatal("a refused copy wrote its destination")
	}
}

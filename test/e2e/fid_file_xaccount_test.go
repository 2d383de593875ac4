package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	blobsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	filesas "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

// xaccountEnv is a server with Blob and File for the development account
// and fidOtherAccount, and clients of both accounts.
type xaccountEnv struct {
	app             *app.App
	devBlob, oBlob  *azblob.Client
	devFile, oFile  *service.Client
	oBlobKey        *azblob.SharedKeyCredential
	oFileKey        *service.SharedKeyCredential
	devFileKey      *service.SharedKeyCredential
	blobRoot, fRoot string
}

func startXAccount(t *testing.T, tlsCfg *tls.Config, oauth bool, hc *http.Client) *xaccountEnv {
	t.Helper()
	cfg := backendConfig(t)
	cfg.BlobPort, cfg.FilePort, cfg.QueuePort, cfg.TablePort, cfg.SMBPort, cfg.MetricsPort = 0, 0, -1, -1, -1, -1
	cfg.Clock, cfg.GCEvery = clock.NewFake(time.Now()), time.Hour
	cfg.TLS, cfg.OAuth = tlsCfg, oauth
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
	e := &xaccountEnv{app: a}
	e.blobRoot = a.BlobURL[:strings.LastIndex(a.BlobURL, "/")]
	e.fRoot = a.FileURL[:strings.LastIndex(a.FileURL, "/")]
	core := azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}
	if hc != nil {
		core.Transport = hc
	}
	blobFor := func(acct, key string) (*azblob.Client, *azblob.SharedKeyCredential) {
		cred, err := azblob.NewSharedKeyCredential(acct, key)
		must(t, err)
		c, err := azblob.NewClientWithSharedKeyCredential(e.blobRoot+"/"+acct, cred, &azblob.ClientOptions{ClientOptions: core})
		must(t, err)
		return c, cred
	}
	fileFor := func(acct, key string) (*service.Client, *service.SharedKeyCredential) {
		cred, err := service.NewSharedKeyCredential(acct, key)
		must(t, err)
		c, err := service.NewClientWithSharedKeyCredential(e.fRoot+"/"+acct, cred, &service.ClientOptions{ClientOptions: core})
		must(t, err)
		return c, cred
	}
	e.devBlob, _ = blobFor(app.DevAccount, app.DevKey)
	e.oBlob, e.oBlobKey = blobFor(fidOtherAccount, fidOtherKey)
	e.devFile, e.devFileKey = fileFor(app.DevAccount, app.DevKey)
	e.oFile, e.oFileKey = fileFor(fidOtherAccount, fidOtherKey)
	return e
}

// fileSAS returns u with a file SAS granting read signed with key.
func fileSAS(t *testing.T, key *service.SharedKeyCredential, shareName, path, u string) string {
	t.Helper()
	qp, err := filesas.SignatureValues{Protocol: filesas.ProtocolHTTPSandHTTP, ShareName: shareName, FilePath: path,
		Permissions: (&filesas.FilePermissions{Read: true}).String(), ExpiryTime: time.Now().Add(time.Hour)}.SignWithSharedKey(key)
	must(t, err)
	return u + "?" + qp.Encode()
}

func readFile(t *testing.T, f *file.Client) []byte {
	t.Helper()
	r, err := f.DownloadStream(context.Background(), nil)
	must(t, err)
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	must(t, err)
	return b
}

// TestFidFileCrossAccountCopy: Copy File and Put Range From URL read a file
// or a blob of another account served by the same server, as Azure does
// (Copy File reference: "If you're copying a file from another storage
// account, you must authorize the source file via a shared access
// signature"; a blob source "in any account" must be public or carry a
// SAS), with that account's keys; the destination's Shared Key grants
// nothing there. Copy Blob reads a file of another account the same way.
func TestFidFileCrossAccountCopy(t *testing.T) {
	e := startXAccount(t, nil, false, nil)
	ctx := context.Background()
	data := []byte("file bytes kept by the other account")

	// Sources in the other account: a file, a private and a public blob.
	osh := e.oFile.NewShareClient("src")
	_, err := osh.Create(ctx, nil)
	must(t, err)
	of := osh.NewRootDirectoryClient().NewFileClient("f.txt")
	_, err = of.Create(ctx, int64(len(data)), nil)
	must(t, err)
	_, err = of.UploadRange(ctx, 0, bxBody(data), nil)
	must(t, err)
	_, err = e.oBlob.CreateContainer(ctx, "priv", nil)
	must(t, err)
	_, err = e.oBlob.CreateContainer(ctx, "pub", &container.CreateOptions{Access: to.Ptr(container.PublicAccessTypeBlob)})
	must(t, err)
	for _, c := range []string{"priv", "pub"} {
		_, err = e.oBlob.UploadBuffer(ctx, c, "b", data, nil)
		must(t, err)
	}
	privBlob := e.oBlob.ServiceClient().NewContainerClient("priv").NewBlobClient("b").URL()
	pubBlob := e.oBlob.ServiceClient().NewContainerClient("pub").NewBlobClient("b").URL()
	qp, err := blobsas.BlobSignatureValues{Protocol: blobsas.ProtocolHTTPSandHTTP, ContainerName: "priv", BlobName: "b",
		Permissions: "r", ExpiryTime: time.Now().Add(time.Hour)}.SignWithSharedKey(e.oBlobKey)
	must(t, err)
	privBlobSAS := privBlob + "?" + qp.Encode()
	fileURL := of.URL()
	fileWithSAS := fileSAS(t, e.oFileKey, "src", "f.txt", fileURL)
	fileWrongKey := fileSAS(t, e.devFileKey, "src", "f.txt", fileURL)

	dsh := e.devFile.NewShareClient("dst")
	_, err = dsh.Create(ctx, nil)
	must(t, err)
	root := dsh.NewRootDirectoryClient()

	// Refused: no SAS (401, as an unauthenticated read of the source), a
	// SAS signed with the destination account's key (403), a private
	// blob without SAS (401). Nothing is written.
	for _, c := range []struct {
		src    string
		status int
	}{{fileURL, http.StatusUnauthorized}, {fileWrongKey, http.StatusForbidden}, {privBlob, http.StatusUnauthorized}} {
		_, err = root.NewFileClient("refused").StartCopyFromURL(ctx, c.src, nil)
		wantCode(t, err, c.status, bloberror.CannotVerifyCopySource)
	}
	_, err = root.NewFileClient("refused").GetProperties(ctx, nil)
	wantCode(t, err, http.StatusNotFound, "ResourceNotFound")

	// Copy File from the other account's file, private blob and public blob.
	for i, src := range []string{fileWithSAS, privBlobSAS, pubBlob} {
		f := root.NewFileClient("copy" + string(rune('a'+i)))
		r, err := f.StartCopyFromURL(ctx, src, nil)
		must(t, err)
		if r.CopyStatus == nil || *r.CopyStatus != file.CopyStatusTypeSuccess {
			t.Fatalf("copy %d: status %v", i, r.CopyStatus)
		}
		if got := readFile(t, f); !bytes.Equal(got, data) {
			t.Fatalf("copy %d wrote %q", i, got)
		}
	}

	// Put Range From URL: a file source needs its SAS in any account.
	pr := root.NewFileClient("ranges")
	_, err = pr.Create(ctx, int64(len(data)), nil)
	must(t, err)
	_, err = pr.UploadRangeFromURL(ctx, fileURL, 0, 0, int64(len(data)), nil)
	wantCode(t, err, http.StatusUnauthorized, bloberror.CannotVerifyCopySource)
	_, err = pr.UploadRangeFromURL(ctx, fileWithSAS, 0, 0, int64(len(data)), nil)
	must(t, err)
	if got := readFile(t, pr); !bytes.Equal(got, data) {
		t.Fatalf("Put Range From URL wrote %q", got)
	}

	// Copy Blob from the other account's file: its SAS, not the
	// destination's Shared Key.
	_, err = e.devBlob.CreateContainer(ctx, "dstc", nil)
	must(t, err)
	bc := e.devBlob.ServiceClient().NewContainerClient("dstc").NewBlobClient("fromfile")
	_, err = bc.StartCopyFromURL(ctx, fileURL, nil)
	wantCode(t, err, http.StatusUnauthorized, bloberror.CannotVerifyCopySource)
	_, err = bc.StartCopyFromURL(ctx, fileWithSAS, nil)
	must(t, err)
	r, err := bc.DownloadStream(ctx, nil)
	must(t, err)
	got, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if !bytes.Equal(got, data) {
		t.Fatalf("Copy Blob from a file of another account wrote %q", got)
	}
}

// TestFileCopySourceBearer: Put Range From URL reads a blob or a file of
// another account with the caller's bearer token in
// x-ms-copy-source-authorization (Put Range From URL reference: "Only the
// bearer scheme is supported for Microsoft Entra"; azfile
// TestFileUploadRangeFromURLCopySourceAuthBlob); a bad or expired token is
// refused and writes nothing.
func TestFileCopySourceBearer(t *testing.T) {
	cert, pool := selfSigned(t)
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	e := startXAccount(t, &tls.Config{Certificates: []tls.Certificate{cert}}, true, hc)
	ctx := context.Background()
	data := []byte("read with the caller's token")
	_, err := e.oBlob.CreateContainer(ctx, "priv", nil)
	must(t, err)
	_, err = e.oBlob.UploadBuffer(ctx, "priv", "b", data, nil)
	must(t, err)
	blobURL := e.oBlob.ServiceClient().NewContainerClient("priv").NewBlobClient("b").URL()
	osh := e.oFile.NewShareClient("src")
	_, err = osh.Create(ctx, nil)
	must(t, err)
	of := osh.NewRootDirectoryClient().NewFileClient("f")
	_, err = of.Create(ctx, int64(len(data)), nil)
	must(t, err)
	_, err = of.UploadRange(ctx, 0, bxBody(data), nil)
	must(t, err)

	token := func(exp time.Time) *string {
		tok, err := fakeToken{exp: exp, aud: "https://storage.azure.com"}.GetToken(ctx, policy.TokenRequestOptions{})
		must(t, err)
		return to.Ptr("Bearer " + tok.Token)
	}
	dsh := e.devFile.NewShareClient("dst")
	_, err = dsh.Create(ctx, nil)
	must(t, err)
	for _, src := range []string{blobURL, of.URL()} {
		f := dsh.NewRootDirectoryClient().NewFileClient("d")
		_, err = f.Create(ctx, int64(len(data)), nil)
		must(t, err)
		_, err = f.UploadRangeFromURL(ctx, src, 0, 0, int64(len(data)), &file.UploadRangeFromURLOptions{CopySourceAuthorization: token(time.Now().Add(-time.Hour))})
		wantCode(t, err, http.StatusUnauthorized, bloberror.CannotVerifyCopySource)
		_, err = f.UploadRangeFromURL(ctx, src, 0, 0, int64(len(data)), &file.UploadRangeFromURLOptions{CopySourceAuthorization: to.Ptr("Basic eDp5")})
		wantCode(t, err, http.StatusBadRequest, bloberror.CannotVerifyCopySource)
		if got := readFile(t, f); !bytes.Equal(got, make([]byte, len(data))) {
			t.Fatalf("a refused Put Range From URL wrote %q", got)
		}
		_, err = f.UploadRangeFromURL(ctx, src, 0, 0, int64(len(data)), &file.UploadRangeFromURLOptions{CopySourceAuthorization: token(time.Now().Add(time.Hour))})
		must(t, err)
		if got := readFile(t, f); !bytes.Equal(got, data) {
			t.Fatalf("Put Range From URL from %s wrote %q", src, got)
		}
		_, err = f.Delete(ctx, nil)
		must(t, err)
	}
}

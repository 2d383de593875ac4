package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	blobservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	fileservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestAnonymousPrivateResources: an anonymous request to a private
// resource is answered the same whether the resource exists or not, on
// every service and at every x-ms-version, so an anonymous caller learns
// nothing of what an account holds: 401 NoAuthenticationInformation,
// except Blob reads (Get Blob, Get Blob Properties, List Blobs, Get
// Container Properties) at versions before 2019-12-12, which Azure
// answers 404 ResourceNotFound (azure-storage-cpp#397, maintainer: "by
// design so that malicious users cannot detect if a container exists";
// from 2019-12-12 401 NoAuthenticationInformation, as azure-sdk-for-net's
// recorded BlobBaseClientTests ExistsAsync_Error shows).
func TestAnonymousPrivateResources(t *testing.T) {
	a, _ := startApp4(t, 0, 0, 0, 0)
	ctx := context.Background()
	bcred, err := blobservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	bsvc, err := blobservice.NewClientWithSharedKeyCredential(a.BlobURL, bcred, nil)
	must(t, err)
	_, err = bsvc.NewContainerClient("priv").Create(ctx, nil)
	must(t, err)
	_, err = bsvc.NewContainerClient("priv").NewBlockBlobClient("b").UploadBuffer(ctx, []byte("x"), nil)
	must(t, err)
	qcred, err := azqueue.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	qsvc, err := azqueue.NewServiceClientWithSharedKeyCredential(a.QueueURL, qcred, nil)
	must(t, err)
	_, err = qsvc.CreateQueue(ctx, "privq", nil)
	must(t, err)
	tcred, err := aztables.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	tsvc, err := aztables.NewServiceClientWithSharedKey(a.TableURL, tcred, nil)
	must(t, err)
	_, err = tsvc.CreateTable(ctx, "privt", nil)
	must(t, err)
	fcred, err := fileservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	fsvc, err := fileservice.NewClientWithSharedKeyCredential(a.FileURL, fcred, nil)
	must(t, err)
	_, err = fsvc.NewShareClient("privs").Create(ctx, nil)
	must(t, err)
	_, err = fsvc.NewShareClient("privs").NewRootDirectoryClient().NewFileClient("f").Create(ctx, 1, nil)
	must(t, err)

	type probe struct {
		name, method string
		// urls of an existing resource and of missing ones
		urls []string
		// blobRead: a read Azure answers 404 before 2019-12-12
		blobRead bool
	}
	probes := []probe{
		{"Get Blob", http.MethodGet, []string{a.BlobURL + "/priv/b", a.BlobURL + "/priv/nob", a.BlobURL + "/nocont/b"}, true},
		{"Get Blob Properties", http.MethodHead, []string{a.BlobURL + "/priv/b", a.BlobURL + "/priv/nob", a.BlobURL + "/nocont/b"}, true},
		{"List Blobs", http.MethodGet, []string{a.BlobURL + "/priv?restype=container&comp=list", a.BlobURL + "/nocont?restype=container&comp=list"}, true},
		{"Get Container Properties", http.MethodGet, []string{a.BlobURL + "/priv?restype=container", a.BlobURL + "/nocont?restype=container"}, true},
		{"Delete Blob", http.MethodDelete, []string{a.BlobURL + "/priv/b", a.BlobURL + "/priv/nob", a.BlobURL + "/nocont/b"}, false},
		{"List Containers", http.MethodGet, []string{a.BlobURL + "?comp=list"}, false},
		{"Peek Messages", http.MethodGet, []string{a.QueueURL + "/privq/messages?peekonly=true", a.QueueURL + "/noq/messages?peekonly=true"}, false},
		{"Query Entities", http.MethodGet, []string{a.TableURL + "/privt()", a.TableURL + "/not()"}, false},
		{"Get File", http.MethodGet, []string{a.FileURL + "/privs/f", a.FileURL + "/privs/nof", a.FileURL + "/nos/f"}, false},
	}
	for _, v := range []string{"", "2009-09-19", "2019-07-07", "2019-12-12", "2025-01-05"} {
		for _, p := range probes {
			want := "401 NoAuthenticationInformation"
			if p.blobRead && (v == "" || v < "2019-12-12") {
				want = "404 ResourceNotFound"
			}
			for _, u := range p.urls {
				req, err := http.NewRequest(p.method, u, nil)
				must(t, err)
				if v != "" {
					req.Header.Set("x-ms-version", v)
				}
				resp, err := http.DefaultClient.Do(req)
				must(t, err)
				resp.Body.Close()
				if got := fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code")); got != want {
					t.Errorf("%s, version %q, %s: %s, want %s", p.name, v, u, got, want)
				}
			}
		}
	}
}

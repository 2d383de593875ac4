package e2e

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	bsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	blobservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestSASMalformedSignature: a SAS whose sig is not a well-formed
// signature (a bad percent escape the query parser drops, a ';' in it,
// not base64, base64 of the wrong length, empty) is a bad SAS: 403
// AuthenticationFailed with AuthenticationErrorDetail "Signature fields
// not well formed.", as a wrong signature is, never an anonymous request.
// The escape and ';' forms used to be dropped with the parameter and the
// request served as anonymous: the public blob was read with 200, the
// queue, table and file services answered 401 NoAuthenticationInformation.
// Failed before the fix.
func TestSASMalformedSignature(t *testing.T) {
	a, _ := startApp4(t, 0, 0, 0, 0)
	ctx := context.Background()
	cred, err := blobservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	svc, err := blobservice.NewClientWithSharedKeyCredential(a.BlobURL, cred, nil)
	must(t, err)
	pub := svc.NewContainerClient("pub")
	_, err = pub.Create(ctx, &container.CreateOptions{Access: to.Ptr(container.PublicAccessTypeBlob)})
	must(t, err)
	_, err = pub.NewBlockBlobClient("b").UploadBuffer(ctx, []byte("public"), nil)
	must(t, err)
	qcred, err := azqueue.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	qsvc, err := azqueue.NewServiceClientWithSharedKeyCredential(a.QueueURL, qcred, nil)
	must(t, err)
	_, err = qsvc.CreateQueue(ctx, "sigq", nil)
	must(t, err)

	good, err := bsas.BlobSignatureValues{Protocol: bsas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().UTC().Add(time.Hour),
		ContainerName: "pub", BlobName: "b", Permissions: (&bsas.BlobPermissions{Read: true}).String()}.SignWithSharedKey(cred)
	must(t, err)
	// The token without its sig, to which each case appends one.
	var rest []string
	for _, kv := range strings.Split(good.Encode(), "&") {
		if !strings.HasPrefix(kv, "sig=") {
			rest = append(rest, kv)
		}
	}
	unsigned := strings.Join(rest, "&")
	sigs := map[string]string{
		"bad escape":   "sig=%zz",
		"semicolon":    "sig=abc;def",
		"not base64":   "sig=not*base64!",
		"wrong length": "sig=" + base64.StdEncoding.EncodeToString([]byte("sixteen bytes!!!")),
		"empty":        "sig=",
	}
	get := func(u string) (int, string, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, u, nil)
		must(t, err)
		req.Header.Set("x-ms-version", "2023-11-03")
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("x-ms-error-code"), string(b)
	}
	for name, sig := range sigs {
		for _, u := range []string{
			a.BlobURL + "/pub/b?" + unsigned + "&" + sig,
			a.QueueURL + "/sigq/messages?" + unsigned + "&" + sig,
			a.TableURL + "/sigt()?" + unsigned + "&" + sig,
			a.FileURL + "/sigs/f?" + unsigned + "&" + sig,
		} {
			st, code, body := get(u)
			// The Table service's OData errors carry no detail element.
			detail := strings.HasPrefix(u, a.TableURL) || strings.Contains(body, "Signature fields not well formed.")
			if st != http.StatusForbidden || code != "AuthenticationFailed" || !detail {
				t.Errorf("%s, %s: %d %s %s; want 403 AuthenticationFailed, signature not well formed", name, u, st, code, body)
			}
		}
	}
	// The well-formed token reads the blob.
	if st, code, body := get(a.BlobURL + "/pub/b?" + good.Encode()); st != http.StatusOK || body != "public" {
		t.Fatalf("good SAS: %d %s %s", st, code, body)
	}
}

package e2e

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestSV2026DynamicCrossTenantUserDelegationSAS: user delegation SAS
// tokens azblob 1.8.3 signs for the 2026-04-06 features validate: a key
// for a delegated user's tenant (KeyInfo.DelegatedUserTid, skdutid,
// "cross-tenant Principal-Bound User Delegation SAS") and a dynamic SAS
// that signs request headers and query parameters (srh, srq): the
// request must carry the signed values, else 403 AuthenticationFailed.
func TestSV2026DynamicCrossTenantUserDelegationSAS(t *testing.T) {
	a, opts := startTLS(t, true)
	ctx := context.Background()
	cred := fakeToken{exp: time.Now().Add(time.Hour), aud: "https://storage.azure.com"}
	// The SDK names the account of a user delegation credential from the
	// host of the service URL: a production-style URL.
	pu, _ := url.Parse(a.BlobURL)
	svc, err := service.NewClient("https://"+app.DevAccount+".blob.localhost:"+pu.Port()+"/", cred, &service.ClientOptions{ClientOptions: productionStyle(t, opts, pu.Host)})
	must(t, err)
	_, err = svc.CreateContainer(ctx, "dynsas", nil)
	must(t, err)
	payload := []byte("dynamic")
	_, err = svc.NewContainerClient("dynsas").NewBlockBlobClient("b").UploadBuffer(ctx, payload, nil)
	must(t, err)
	now := time.Now().UTC()
	info := service.KeyInfo{Start: to.Ptr(now.Add(-time.Minute).Format(time.RFC3339)), Expiry: to.Ptr(now.Add(time.Hour).Format(time.RFC3339)),
		DelegatedUserTenantID: to.Ptr("00000000-0000-0000-0000-0000000000aa")}
	udc, err := svc.GetUserDelegationCredential(ctx, info, nil)
	must(t, err)
	sign := func(hdr, qry map[string]string) string {
		q, err := sas.BlobSignatureValues{
			Version: "2026-04-06", Protocol: sas.ProtocolHTTPS, StartTime: now.Add(-time.Minute), ExpiryTime: now.Add(30 * time.Minute),
			Permissions: (&sas.BlobPermissions{Read: true}).String(), ContainerName: "dynsas", BlobName: "b",
			SignedRequestHeaders: hdr, SignedRequestQueryParameters: qry,
		}.SignWithUserDelegation(udc)
		must(t, err)
		return q.Encode()
	}
	// Through the SDK: it sends x-ms-version 2026-12-06.
	sdkRead := func(token string) error {
		c, err := blob.NewClientWithNoCredential(a.BlobURL+"/dynsas/b?"+token, &blob.ClientOptions{ClientOptions: opts})
		must(t, err)
		r, err := c.DownloadStream(ctx, nil)
		if err != nil {
			return err
		}
		defer r.Body.Close()
		got, _ := io.ReadAll(r.Body)
		if string(got) != string(payload) {
			t.Fatalf("read %q", got)
		}
		return nil
	}
	if tok := sign(nil, nil); !strings.Contains(tok, "skdutid=00000000-0000-0000-0000-0000000000aa") {
		t.Fatalf("no skdutid in %s", tok)
	}
	must(t, sdkRead(sign(nil, nil)))
	must(t, sdkRead(sign(map[string]string{"x-ms-version": "2026-12-06"}, nil)))
	wantCode(t, sdkRead(sign(map[string]string{"x-ms-version": "2025-01-05"}, nil)), 403, "AuthenticationFailed")

	// Signed query parameters, on a raw GET.
	hc := opts.Transport.(*http.Client)
	raw := func(token, extra string) int {
		u := a.BlobURL + "/dynsas/b?" + token + extra
		if _, err := url.Parse(u); err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodGet, u, nil)
		must(t, err)
		req.Header.Set("x-ms-version", "2026-12-06")
		resp, err := hc.Do(req)
		must(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	tok := sign(nil, map[string]string{"timeout": "30"})
	if s := raw(tok, "&timeout=30"); s != 200 {
		t.Fatalf("srq timeout=30 sent: %d", s)
	}
	if s := raw(tok, "&timeout=31"); s != 403 {
		t.Fatalf("srq timeout=30 signed, 31 sent: %d, want 403", s)
	}
	if s := raw(tok, ""); s != 403 {
		t.Fatalf("srq timeout=30 signed, none sent: %d, want 403", s)
	}
}

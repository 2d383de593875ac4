package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// productionStyle returns client options whose transport sends every
// request to the server at addr whatever the URL's host, so that
// production-style URLs (https://devstoreaccount1.blob.localhost:PORT/…,
// the account in the host) reach it; the server's certificate is checked
// for 127.0.0.1.
func productionStyle(t *testing.T, base azcore.ClientOptions, addr string) azcore.ClientOptions {
	t.Helper()
	hc := base.Transport.(*http.Client)
	tr := hc.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: tr.TLSClientConfig.RootCAs, ServerName: "127.0.0.1"}
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	out := base
	out.Transport = &http.Client{Timeout: hc.Timeout, Transport: tr}
	return out
}

// TestUserDelegationSAS: with --oauth basic, Get User Delegation Key
// answers a bearer-token caller, and SAS tokens the Go SDK signs with the
// key (sas.BlobSignatureValues.SignWithUserDelegation) authorize exactly
// what they grant, over production-style and path-style URLs; tampered,
// expired and wrong-key tokens get 403; Shared Key cannot get a key.
func TestUserDelegationSAS(t *testing.T) {
	a, opts := startTLS(t, true)
	ctx := context.Background()
	u, _ := url.Parse(a.BlobURL)
	prodURL := "https://" + app.DevAccount + ".blob.localhost:" + u.Port() + "/"
	popts := productionStyle(t, opts, u.Host)
	cred := fakeToken{exp: time.Now().Add(time.Hour), aud: "https://storage.azure.com"}

	svc, err := service.NewClient(prodURL, cred, &service.ClientOptions{ClientOptions: popts})
	must(t, err)
	_, err = svc.CreateContainer(ctx, "udk", nil)
	must(t, err)
	payload := []byte("delegated bytes")
	_, err = svc.NewContainerClient("udk").NewBlockBlobClient("doc.txt").UploadBuffer(ctx, payload, nil)
	must(t, err)

	now := time.Now().UTC()
	info := service.KeyInfo{Start: to.Ptr(now.Add(-time.Minute).Format(time.RFC3339)), Expiry: to.Ptr(now.Add(time.Hour).Format(time.RFC3339))}
	udc, err := svc.GetUserDelegationCredential(ctx, info, nil)
	must(t, err)

	read := func(sasURL string, o azcore.ClientOptions) ([]byte, error) {
		c, err := blob.NewClientWithNoCredential(sasURL, &blob.ClientOptions{ClientOptions: o})
		if err != nil {
			return nil, err
		}
		resp, err := c.DownloadStream(ctx, nil)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}
	blobSAS := func(perms sas.BlobPermissions, expiry time.Time) string {
		q, err := sas.BlobSignatureValues{
			Protocol: sas.ProtocolHTTPS, StartTime: now.Add(-time.Minute), ExpiryTime: expiry,
			Permissions: perms.String(), ContainerName: "udk", BlobName: "doc.txt",
		}.SignWithUserDelegation(udc)
		must(t, err)
		return q.Encode()
	}
	good := blobSAS(sas.BlobPermissions{Read: true}, now.Add(30*time.Minute))
	if !strings.Contains(good, "skoid=") || !strings.Contains(good, "sp=r&") {
		t.Fatalf("not a user delegation SAS: %s", good)
	}

	// Production-style and path-style URLs both take the token.
	for name, target := range map[string]struct {
		url  string
		opts azcore.ClientOptions
	}{
		"production-style": {prodURL + "udk/doc.txt?" + good, popts},
		"path-style":       {a.BlobURL + "/udk/doc.txt?" + good, opts},
	} {
		got, err := read(target.url, target.opts)
		if err != nil || string(got) != string(payload) {
			t.Fatalf("%s read with a user delegation SAS: %q %v", name, got, err)
		}
	}

	// The SAS grants read only: a write is refused.
	bc, err := azblob.NewClientWithNoCredential(prodURL+"?"+good, &azblob.ClientOptions{ClientOptions: popts})
	must(t, err)
	_, err = bc.ServiceClient().NewContainerClient("udk").NewBlockBlobClient("doc.txt").UploadBuffer(ctx, []byte("x"), nil)
	if err == nil {
		t.Fatal("a read-only user delegation SAS wrote a blob")
	}

	forbidden := func(name, sasURL string, code bloberror.Code) {
		t.Helper()
		_, err := read(sasURL, popts)
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusForbidden || (code != "" && re.ErrorCode != string(code)) {
			t.Fatalf("%s: %v, want 403 %s", name, err, code)
		}
	}
	// Tampered: the permissions widened after signing.
	forbidden("tampered sp", prodURL+"udk/doc.txt?"+strings.Replace(good, "sp=r", "sp=rw", 1), bloberror.AuthenticationFailed)
	// Tampered: another key object id.
	forbidden("tampered skoid", prodURL+"udk/doc.txt?"+strings.Replace(good, "skoid=", "skoid=1", 1), bloberror.AuthenticationFailed)
	// Expired SAS.
	forbidden("expired", prodURL+"udk/doc.txt?"+blobSAS(sas.BlobPermissions{Read: true}, now.Add(-time.Second)), bloberror.AuthenticationFailed)
	// A key this server never issued: the same fields, another value.
	fake := strings.Replace(good, "sig=", "sig=A", 1)
	forbidden("wrong key", prodURL+"udk/doc.txt?"+fake, bloberror.AuthenticationFailed)

	// A container SAS lists the container.
	cq, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPS, ExpiryTime: now.Add(30 * time.Minute),
		Permissions: (&sas.ContainerPermissions{List: true, Read: true}).String(), ContainerName: "udk"}.SignWithUserDelegation(udc)
	must(t, err)
	cc, err := container.NewClientWithNoCredential(prodURL+"udk?"+cq.Encode(), &container.ClientOptions{ClientOptions: popts})
	must(t, err)
	page, err := cc.NewListBlobsFlatPager(nil).NextPage(ctx)
	if err != nil || len(page.Segment.BlobItems) != 1 || *page.Segment.BlobItems[0].Name != "doc.txt" {
		t.Fatalf("list with a container user delegation SAS: %v", err)
	}

	// Shared Key cannot get a user delegation key.
	sk, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	skc, err := service.NewClientWithSharedKeyCredential(prodURL, sk, &service.ClientOptions{ClientOptions: popts})
	must(t, err)
	_, err = skc.GetUserDelegationCredential(ctx, info, nil)
	var re *azcore.ResponseError
	const bearerOnly = "Only authentication scheme Bearer is supported"
	if !errors.As(err, &re) || re.StatusCode != http.StatusForbidden || re.ErrorCode != string(bloberror.AuthenticationFailed) || !strings.Contains(err.Error(), bearerOnly) {
		t.Fatalf("Get User Delegation Key with Shared Key: %v", err)
	}
	// Nor can a SAS, even an account SAS granting everything: the same
	// 403 AuthenticationFailed with the Bearer-only detail (Get User
	// Delegation Key: "only ... Microsoft Entra ID").
	asas, err := sas.AccountSignatureValues{Protocol: sas.ProtocolHTTPS, ExpiryTime: now.Add(time.Hour),
		Permissions:   (&sas.AccountPermissions{Read: true, Write: true, Delete: true, List: true, Add: true, Create: true, Update: true, Process: true}).String(),
		ResourceTypes: (&sas.AccountResourceTypes{Service: true, Container: true, Object: true}).String()}.SignWithSharedKey(sk)
	must(t, err)
	sasc, err := service.NewClientWithNoCredential(prodURL+"?"+asas.Encode(), &service.ClientOptions{ClientOptions: popts})
	must(t, err)
	_, err = sasc.GetUserDelegationCredential(ctx, info, nil)
	if !errors.As(err, &re) || re.StatusCode != http.StatusForbidden || re.ErrorCode != string(bloberror.AuthenticationFailed) || !strings.Contains(err.Error(), bearerOnly) {
		t.Fatalf("Get User Delegation Key with an account SAS: %v", err)
	}
	// The Shared Key client works on the production-style URL otherwise.
	if _, err := skc.GetProperties(ctx, nil); err != nil {
		t.Fatalf("Shared Key over a production-style URL: %v", err)
	}
	// A key may not outlive seven days.
	_, err = svc.GetUserDelegationCredential(ctx, service.KeyInfo{Start: info.Start, Expiry: to.Ptr(now.Add(8 * 24 * time.Hour).Format(time.RFC3339))}, nil)
	if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest {
		t.Fatalf("a key expiring in 8 days: %v", err)
	}
	// An expired key's SAS is refused even while the SAS itself is valid.
	short := service.KeyInfo{Start: to.Ptr(now.Add(-2 * time.Minute).Format(time.RFC3339)), Expiry: to.Ptr(now.Add(-time.Minute).Format(time.RFC3339))}
	if old, err := svc.GetUserDelegationCredential(ctx, short, nil); err == nil {
		q, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPS, ExpiryTime: now.Add(time.Hour), Permissions: "r", ContainerName: "udk", BlobName: "doc.txt"}.SignWithUserDelegation(old)
		must(t, err)
		forbidden("expired key", prodURL+"udk/doc.txt?"+q.Encode(), bloberror.AuthenticationFailed)
	} else if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest {
		t.Fatalf("a key already expired: %v", err)
	}
}

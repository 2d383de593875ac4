package e2e

// HTTPS endpoints (cerulean serve --tls-cert/--tls-key): every service
// answers the SDKs over TLS, a SAS that demands HTTPS is honoured, and
// what depends on the connection (metadata names as sent, endpoint URLs
// in listings) works as over plain HTTP.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	blobsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// selfSigned returns a server certificate for 127.0.0.1 and localhost and
// a pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "cerulean test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err)
	leaf, err := x509.ParseCertificate(der)
	must(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

func TestHTTPS(t *testing.T) {
	a, opts := startTLS(t, false)
	for _, u := range []string{a.BlobURL, a.QueueURL, a.TableURL, a.FileURL} {
		if !strings.HasPrefix(u, "https://127.0.0.1:") {
			t.Fatalf("endpoint %s", u)
		}
	}
	if cs := a.ConnectionString(app.DevKey); !strings.HasPrefix(cs, "DefaultEndpointsProtocol=https;") || !strings.Contains(cs, "BlobEndpoint=https://") {
		t.Fatalf("connection string %s", cs)
	}
	ctx := context.Background()

	// Blob: metadata names keep their case (the tap reads the request
	// under TLS), and listings name the https endpoint.
	bcred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	bc, err := azblob.NewClientWithSharedKeyCredential(a.BlobURL, bcred, &azblob.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = bc.CreateContainer(ctx, "tls", nil)
	must(t, err)
	_, err = bc.UploadBuffer(ctx, "tls", "b", []byte("over TLS"), &azblob.UploadBufferOptions{Metadata: map[string]*string{"Author": to.Ptr("ann")}})
	must(t, err)
	p, err := bc.ServiceClient().NewContainerClient("tls").NewBlobClient("b").GetProperties(ctx, nil)
	must(t, err)
	if v, ok := p.Metadata["Author"]; !ok || *v != "ann" {
		t.Fatalf("metadata over TLS: %v", p.Metadata)
	}
	pager := bc.NewListContainersPager(nil)
	page, err := pager.NextPage(ctx)
	must(t, err)
	if page.ServiceEndpoint == nil || !strings.HasPrefix(*page.ServiceEndpoint, "https://") {
		t.Fatalf("ServiceEndpoint %v", page.ServiceEndpoint)
	}

	// A SAS that allows HTTPS only is good over TLS.
	qp, err := blobsas.BlobSignatureValues{
		Protocol: blobsas.ProtocolHTTPS, ExpiryTime: time.Now().UTC().Add(time.Hour),
		ContainerName: "tls", BlobName: "b", Permissions: (&blobsas.BlobPermissions{Read: true}).String(),
	}.SignWithSharedKey(bcred)
	must(t, err)
	sb, err := blob.NewClientWithNoCredential(a.BlobURL+"/tls/b?"+qp.Encode(), &blob.ClientOptions{ClientOptions: opts})
	must(t, err)
	r, err := sb.DownloadStream(ctx, nil)
	must(t, err)
	r.Body.Close()

	// Queue, Table and File answer over TLS too.
	qcred, err := azqueue.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	qc, err := azqueue.NewServiceClientWithSharedKeyCredential(a.QueueURL, qcred, &azqueue.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = qc.CreateQueue(ctx, "tls", nil)
	must(t, err)
	_, err = qc.NewQueueClient("tls").EnqueueMessage(ctx, "m", nil)
	must(t, err)
	tcred, err := aztables.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	tc, err := aztables.NewServiceClientWithSharedKey(a.TableURL, tcred, &aztables.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = tc.CreateTable(ctx, "tls", nil)
	must(t, err)
	fcred, err := service.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	fc, err := service.NewClientWithSharedKeyCredential(a.FileURL, fcred, &service.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = fc.CreateShare(ctx, "tls", nil)
	must(t, err)

	// Plain HTTP to a TLS port is told so, as Go's own HTTPS servers do.
	plain := &http.Client{Timeout: 10 * time.Second}
	resp, err := plain.Get(strings.Replace(a.BlobURL, "https://", "http://", 1) + "?comp=list")
	must(t, err)
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), "HTTPS server") {
		t.Fatalf("plain HTTP to the TLS port: %d %q", resp.StatusCode, msg)
	}
}

// TestSASHTTPSOnlyOverHTTP: over plain HTTP, a SAS that allows HTTPS only
// is refused with 403 AuthorizationProtocolMismatch.
func TestSASHTTPSOnlyOverHTTP(t *testing.T) {
	e := start(t)
	_, err := e.c.CreateContainer(e.ctx, "plain", nil)
	must(t, err)
	_, err = e.c.UploadBuffer(e.ctx, "plain", "b", []byte("x"), nil)
	must(t, err)
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	qp, err := blobsas.BlobSignatureValues{
		Protocol: blobsas.ProtocolHTTPS, ExpiryTime: time.Now().UTC().Add(time.Hour),
		ContainerName: "plain", BlobName: "b", Permissions: (&blobsas.BlobPermissions{Read: true}).String(),
	}.SignWithSharedKey(cred)
	must(t, err)
	sb, err := blob.NewClientWithNoCredential(e.app.BlobURL+"/plain/b?"+qp.Encode(), &blob.ClientOptions{ClientOptions: clientOptions().ClientOptions})
	must(t, err)
	_, err = sb.DownloadStream(e.ctx, nil)
	wantCode(t, err, http.StatusForbidden, bloberror.AuthorizationProtocolMismatch)
}

// fakeToken is a TokenCredential handing out unsigned Entra ID-shaped
// tokens (the server's basic OAuth mode does not verify signatures).
type fakeToken struct {
	exp time.Time
	aud string
}

func (f fakeToken) GetToken(ctx context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	enc := base64.RawURLEncoding.EncodeToString
	hdr, _ := json.Marshal(map[string]string{"typ": "JWT", "alg": "RS256"})
	body, _ := json.Marshal(map[string]any{
		"aud": f.aud, "iss": "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/",
		"tid": "72f988bf-86f1-41af-91ab-2d7cd011db47", "nbf": time.Now().Add(-time.Hour).Unix(), "exp": f.exp.Unix(),
		"oid": "00000000-0000-0000-0000-000000000001",
	})
	return azcore.AccessToken{Token: enc(hdr) + "." + enc(body) + "." + enc([]byte("sig")), ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// startTLS runs a server with HTTPS on every service (OAuth basic mode
// when oauth) and returns it with client options trusting its
// certificate.
func startTLS(t *testing.T, oauth bool) (*app.App, azcore.ClientOptions) {
	t.Helper()
	cert, pool := selfSigned(t)
	cfg := backendConfig(t)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort, cfg.SMBPort, cfg.MetricsPort = 0, 0, 0, 0, -1, -1
	cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	cfg.OAuth = oauth
	a, err := app.Start(cfg)
	must(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return a, azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}
}

// TestOAuthBasic: with --oauth basic, every service's SDK client built
// on a TokenCredential works; an expired token is 401
// InvalidAuthenticationInfo with Azure's challenge; without the mode a
// bearer token is refused.
func TestOAuthBasic(t *testing.T) {
	a, opts := startTLS(t, true)
	ctx := context.Background()
	cred := fakeToken{exp: time.Now().Add(time.Hour), aud: "https://storage.azure.com"}

	bc, err := azblob.NewClient(a.BlobURL, cred, &azblob.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = bc.CreateContainer(ctx, "oauth", nil)
	must(t, err)
	_, err = bc.UploadBuffer(ctx, "oauth", "b", []byte("token"), nil)
	must(t, err)
	qc, err := azqueue.NewServiceClient(a.QueueURL, cred, &azqueue.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = qc.CreateQueue(ctx, "oauth", nil)
	must(t, err)
	tc, err := aztables.NewServiceClient(a.TableURL, cred, &aztables.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = tc.CreateTable(ctx, "oauth", nil)
	must(t, err)
	fc, err := service.NewClient(a.FileURL, cred, &service.ClientOptions{ClientOptions: opts, FileRequestIntent: to.Ptr(service.ShareTokenIntentBackup)})
	must(t, err)
	_, err = fc.CreateShare(ctx, "oauth", nil)
	must(t, err)

	expired, err := azblob.NewClient(a.BlobURL, fakeToken{exp: time.Now().Add(-time.Hour), aud: "https://storage.azure.com"}, &azblob.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = expired.UploadBuffer(ctx, "oauth", "c", []byte("x"), nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized || re.ErrorCode != "InvalidAuthenticationInfo" {
		t.Fatalf("expired token: %v", err)
	}
	if !strings.Contains(re.RawResponse.Header.Get("WWW-Authenticate"), "resource_id=https://storage.azure.com") {
		t.Fatalf("WWW-Authenticate %q", re.RawResponse.Header.Get("WWW-Authenticate"))
	}
	if _, err := bc.ServiceClient().NewContainerClient("oauth").NewBlobClient("c").GetProperties(ctx, nil); err == nil {
		t.Fatal("a request with an expired token wrote a blob")
	}
	wrongAud, err := azblob.NewClient(a.BlobURL, fakeToken{exp: time.Now().Add(time.Hour), aud: "https://vault.azure.net"}, &azblob.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = wrongAud.CreateContainer(ctx, "other", nil)
	if !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized {
		t.Fatalf("token for another audience: %v", err)
	}

	// Without the mode, a bearer token is an unsupported scheme.
	b, opts2 := startTLS(t, false)
	off, err := azblob.NewClient(b.BlobURL, cred, &azblob.ClientOptions{ClientOptions: opts2})
	must(t, err)
	_, err = off.CreateContainer(ctx, "oauth", nil)
	if !errors.As(err, &re) || re.ErrorCode != "InvalidAuthenticationInfo" {
		t.Fatalf("bearer token without --oauth: %v", err)
	}
}

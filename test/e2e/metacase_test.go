package e2e

// Metadata response headers on the wire: x-ms-meta-{name} with the prefix
// in lower case and the name as stored, as Azure sends them. Go's client
// canonicalizes header names when it parses a response, so these tests
// read the raw bytes off the connection. The Python SDKs collect metadata
// from the headers that start with "x-ms-meta-" exactly: a canonicalized
// X-Ms-Meta-Name left them with no metadata at all.

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// wireTap records every byte the server sends on the client's connections.
type wireTap struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

type tapConn struct {
	net.Conn
	tap *wireTap
}

func (c tapConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.tap.mu.Lock()
	c.tap.buf.Write(p[:n])
	c.tap.mu.Unlock()
	return n, err
}

func (w *wireTap) client() *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return tapConn{Conn: c, tap: w}, nil
		},
	}}
}

// take returns what was received since the last take.
func (w *wireTap) take() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.buf.String()
	w.buf.Reset()
	return s
}

func wantMetaHeader(t *testing.T, what, raw, line string) {
	t.Helper()
	if !strings.Contains(raw, "\r\n"+line+"\r\n") {
		t.Errorf("%s: no %q header line in\n%s", what, line, raw)
	}
}

func TestMetadataHeaderCase(t *testing.T) {
	a, _ := startApp4(t, 0, 0, -1, 0)
	tap := &wireTap{}
	opts := azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: tap.client()}
	ctx := context.Background()
	meta := map[string]*string{"origin": to.Ptr("tap"), "MixedCase": to.Ptr("v")}

	bcred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	bc, err := azblob.NewClientWithSharedKeyCredential(a.BlobURL, bcred, &azblob.ClientOptions{ClientOptions: opts})
	must(t, err)
	cc := bc.ServiceClient().NewContainerClient("metacase")
	_, err = cc.Create(ctx, &container.CreateOptions{Metadata: meta})
	must(t, err)
	_, err = cc.NewBlockBlobClient("b").Upload(ctx, fiBody([]byte("x")), &blockblob.UploadOptions{Metadata: meta})
	must(t, err)
	tap.take()
	_, err = cc.GetProperties(ctx, nil)
	must(t, err)
	wantMetaHeader(t, "Get Container Properties", tap.take(), "x-ms-meta-origin: tap")
	_, err = cc.NewBlobClient("b").GetProperties(ctx, nil)
	must(t, err)
	raw := tap.take()
	wantMetaHeader(t, "Get Blob Properties", raw, "x-ms-meta-origin: tap")
	// Names keep the case they were sent in (server/rawnames.go).
	wantMetaHeader(t, "Get Blob Properties", raw, "x-ms-meta-MixedCase: v")

	fcred, err := service.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	fs, err := service.NewClientWithSharedKeyCredential(a.FileURL, fcred, &service.ClientOptions{ClientOptions: opts})
	must(t, err)
	sh := fs.NewShareClient("metacase")
	_, err = sh.Create(ctx, &share.CreateOptions{Metadata: meta})
	must(t, err)
	_, err = sh.NewDirectoryClient("d").Create(ctx, &directory.CreateOptions{Metadata: meta})
	must(t, err)
	_, err = sh.NewRootDirectoryClient().NewFileClient("f").Create(ctx, 1, &file.CreateOptions{Metadata: meta})
	must(t, err)
	tap.take()
	_, err = sh.GetProperties(ctx, nil)
	must(t, err)
	wantMetaHeader(t, "Get Share Properties", tap.take(), "x-ms-meta-origin: tap")
	_, err = sh.NewDirectoryClient("d").GetProperties(ctx, nil)
	must(t, err)
	wantMetaHeader(t, "Get Directory Properties", tap.take(), "x-ms-meta-origin: tap")
	_, err = sh.NewRootDirectoryClient().NewFileClient("f").GetProperties(ctx, nil)
	must(t, err)
	raw = tap.take()
	wantMetaHeader(t, "Get File Properties", raw, "x-ms-meta-origin: tap")
	wantMetaHeader(t, "Get File Properties", raw, "x-ms-meta-MixedCase: v")

	qcred, err := azqueue.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	qs, err := azqueue.NewServiceClientWithSharedKeyCredential(a.QueueURL, qcred, &azqueue.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = qs.CreateQueue(ctx, "metacase", &azqueue.CreateOptions{Metadata: meta})
	must(t, err)
	tap.take()
	_, err = qs.NewQueueClient("metacase").GetProperties(ctx, nil)
	must(t, err)
	wantMetaHeader(t, "Get Queue Metadata", tap.take(), "x-ms-meta-origin: tap")
}

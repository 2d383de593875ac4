package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

// dlEnv is a server with a dfs endpoint and a datalake SDK client on it.
type dlEnv struct {
	t     *testing.T
	app   *app.App
	clock *clock.Fake
	ctx   context.Context
	svc   *service.Client
	cred  *azdatalake.SharedKeyCredential
	// hc sends the raw requests (a client trusting the server's
	// certificate under TLS).
	hc   *http.Client
	opts *service.ClientOptions
}

// startDL starts a server whose dfs endpoint listens on a free port, its
// accounts hierarchical when hns is set, on backendConfig's backend.
func startDL(t *testing.T, hns bool) *dlEnv {
	t.Helper()
	return startDLWith(t, hns, nil)
}

// startDLWith is startDL with more configuration (TLS, OAuth) by tune.
func startDLWith(t *testing.T, hns bool, tune func(*app.Config) *http.Client) *dlEnv {
	t.Helper()
	clk := clock.NewFake(time.Now())
	cfg := backendConfig(t)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort, cfg.DFSPort, cfg.SMBPort, cfg.MetricsPort = 0, -1, -1, -1, 0, -1, -1
	cfg.HierarchicalNamespace = hns
	cfg.Clock, cfg.GCEvery = clk, time.Hour
	hc := &http.Client{Timeout: 60 * time.Second}
	if tune != nil {
		hc = tune(&cfg)
	}
	a, err := app.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	cred, err := azdatalake.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	opts := &service.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}}
	svc, err := service.NewClientWithSharedKeyCredential(a.DFSURL, cred, opts)
	must(t, err)
	return &dlEnv{t: t, app: a, clock: clk, ctx: context.Background(), svc: svc, cred: cred, hc: hc, opts: opts}
}

// fs returns a client of filesystem name.
func (e *dlEnv) fs(name string) *filesystem.Client { return e.svc.NewFileSystemClient(name) }

// mkfs creates filesystem name through the SDK.
func (e *dlEnv) mkfs(name string) *filesystem.Client {
	e.t.Helper()
	c := e.fs(name)
	_, err := c.Create(e.ctx, nil)
	must(e.t, err)
	return c
}

// raw sends a Shared Key request to the dfs endpoint; path is the part
// after the account ("/fs/dir?resource=directory"). It returns the
// response with its body read.
func (e *dlEnv) raw(method, path string, hdr map[string]string, body []byte) (*http.Response, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.app.DFSURL+path, bytes.NewReader(body))
	must(e.t, err)
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2023-11-03")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if len(body) > 0 {
		req.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	signRaw(req)
	resp, err := e.hc.Do(req)
	must(e.t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	must(e.t, err)
	return resp, out
}

// softDeleted is a container of a hierarchical account written through
// azblob, with the Blob service's soft delete on for 7 days.
type softDeleted struct {
	t  *testing.T
	e  *dlEnv
	bs *azblob.Client
	bc *container.Client
}

func newSoftDeleted(t *testing.T, e *dlEnv, name string) *softDeleted {
	t.Helper()
	_, err := e.svc.SetProperties(e.ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7))}})
	must(t, err)
	bs := client(t, e.app.BlobURL, app.DevKey)
	_, err = bs.CreateContainer(e.ctx, name, nil)
	must(t, err)
	return &softDeleted{t: t, e: e, bs: bs, bc: bs.ServiceClient().NewContainerClient(name)}
}

// put uploads body as blob name.
func (s *softDeleted) put(name, body string) {
	s.t.Helper()
	_, err := s.bc.NewBlockBlobClient(name).UploadBuffer(s.e.ctx, []byte(body), nil)
	must(s.t, err)
}

// del deletes blob name a second of the clock after the last step, so
// each deletion has its own time.
func (s *softDeleted) del(name string) {
	s.t.Helper()
	s.e.clock.Advance(time.Second)
	_, err := s.bc.NewBlobClient(name).Delete(s.e.ctx, nil)
	must(s.t, err)
}

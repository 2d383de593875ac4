// Package e2e drives a real Cerulean server, started in-process exactly as
// `cerulean serve` starts it, with the official Azure SDKs for Go.
package e2e

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

type env struct {
	t     *testing.T
	app   *app.App
	clock *clock.Fake
	c     *azblob.Client
	ctx   context.Context
}

// start runs a server on a temporary directory with a fake clock set to
// the real time (the SDK signs with the real time) and returns an SDK
// client with retries off, so every status reaches the test.
func start(t *testing.T) *env {
	t.Helper()
	a, clk := startApp(t, 0, -1, -1)
	return &env{t: t, app: a, clock: clk, c: client(t, a.BlobURL, app.DevKey), ctx: context.Background()}
}

func clientOptions() *azblob.ClientOptions {
	return &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry:     policy.RetryOptions{MaxRetries: -1},
		Transport: &http.Client{Timeout: 60 * time.Second},
	}}
}

func client(t *testing.T, url, key string) *azblob.Client {
	t.Helper()
	return clientAs(t, url, app.DevAccount, key)
}

// clientAs is client for another account than the dev account.
func clientAs(t *testing.T, url, account, key string) *azblob.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(account, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := azblob.NewClientWithSharedKeyCredential(url, cred, clientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantCode asserts err is an Azure response error with status and code.
func wantCode(t *testing.T, err error, status int, code bloberror.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %d %s, got success", status, code)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
	if re.StatusCode != status || (code != "" && re.ErrorCode != string(code)) {
		t.Fatalf("want %d %s, got %d %s", status, code, re.StatusCode, re.ErrorCode)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) container(name string) {
	e.t.Helper()
	_, err := e.c.CreateContainer(e.ctx, name, nil)
	must(e.t, err)
}

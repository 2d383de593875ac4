package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// benchServer starts a server (backendConfig's store) with Blob and dfs
// ports, hierarchical or flat.
func benchServer(b *testing.B, hns bool) *app.App {
	b.Helper()
	cfg := backendConfig(b)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort, cfg.DFSPort, cfg.SMBPort, cfg.MetricsPort = 0, -1, -1, -1, 0, -1, -1
	cfg.HierarchicalNamespace, cfg.GCEvery = hns, time.Hour
	a, err := app.Start(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	return a
}

// flushEvery is how many appends (or blocks) one flush (or Put Block
// List) commits in the upload benchmarks.
const flushEvery = 16

// benchAppendFlush uploads size-byte appends to one file through the
// datalake SDK, flushing every flushEvery appends (the last flush is in
// the timing): the Data Lake upload path.
func benchAppendFlush(b *testing.B, size int) {
	a := benchServer(b, true)
	cred, _ := azdatalake.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	svc, err := service.NewClientWithSharedKeyCredential(a.DFSURL, cred, &service.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}, Transport: &http.Client{Timeout: time.Minute}}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	fs := svc.NewFileSystemClient("bench")
	if _, err := fs.Create(ctx, nil); err != nil {
		b.Fatal(err)
	}
	f := fs.NewFileClient("upload")
	if _, err := f.Create(ctx, nil); err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat([]byte("d"), size)
	var pos int64
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.AppendData(ctx, pos, streaming.NopCloser(bytes.NewReader(data)), nil); err != nil {
			b.Fatal(err)
		}
		pos += int64(size)
		if (i+1)%flushEvery == 0 || i == b.N-1 {
			if _, err := f.FlushData(ctx, pos, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// benchPutBlock uploads size-byte blocks to one blob of a flat account
// through azblob, committing every flushEvery blocks with Put Block List
// (the blob's committed blocks and the new ones): the Blob upload path
// the append/flush figures stand beside.
func benchPutBlock(b *testing.B, size int) {
	a := benchServer(b, false)
	cred, _ := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	c, err := azblob.NewClientWithSharedKeyCredential(a.BlobURL, cred, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}, Transport: &http.Client{Timeout: time.Minute}}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.CreateContainer(ctx, "bench", nil); err != nil {
		b.Fatal(err)
	}
	bb := c.ServiceClient().NewContainerClient("bench").NewBlockBlobClient("upload")
	data := bytes.Repeat([]byte("d"), size)
	var ids []string
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%08d", i)))
		if _, err := bb.StageBlock(ctx, id, streaming.NopCloser(bytes.NewReader(data)), nil); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
		if (i+1)%flushEvery == 0 || i == b.N-1 {
			if _, err := bb.CommitBlockList(ctx, ids, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkDLAppendFlush64K(b *testing.B) { benchAppendFlush(b, 64<<10) }
func BenchmarkDLAppendFlush1M(b *testing.B)  { benchAppendFlush(b, 1<<20) }
func BenchmarkDLAppendFlush4M(b *testing.B)  { benchAppendFlush(b, 4<<20) }
func BenchmarkDLPutBlock64K(b *testing.B)    { benchPutBlock(b, 64<<10) }
func BenchmarkDLPutBlock1M(b *testing.B)     { benchPutBlock(b, 1<<20) }
func BenchmarkDLPutBlock4M(b *testing.B)     { benchPutBlock(b, 4<<20) }

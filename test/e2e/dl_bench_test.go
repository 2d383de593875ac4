package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// benchDL starts a hierarchical server for a benchmark (backendConfig's
// store; the embedded store skips fsync there) and returns a client of a
// new filesystem holding directory "d" with n empty files, each with a
// blob index tag when tagged.
func benchDL(b *testing.B, n int, tagged ...bool) *filesystem.Client {
	b.Helper()
	cfg := backendConfig(b)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort, cfg.DFSPort, cfg.SMBPort, cfg.MetricsPort = -1, -1, -1, -1, 0, -1, -1
	cfg.HierarchicalNamespace, cfg.GCEvery = true, time.Hour
	a, err := app.Start(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
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
	if _, err := fs.NewDirectoryClient("d").Create(ctx, nil); err != nil {
		b.Fatal(err)
	}
	bcred, _ := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	bcli, err := azblob.NewClientWithSharedKeyCredential(a.DFSURL, bcred, nil)
	if err != nil {
		b.Fatal(err)
	}
	blobs := bcli.ServiceClient().NewContainerClient("bench")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				name := fmt.Sprintf("d/f%05d", i)
				if _, err := fs.NewFileClient(name).Create(ctx, nil); err != nil {
					errs <- err
					return
				}
				if len(tagged) > 0 && tagged[0] {
					// The dfs port answers the Blob API of the account too.
					if _, err := blobs.NewBlockBlobClient(name).SetTags(ctx, map[string]string{"n": fmt.Sprint(i)}, nil); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	return fs
}

// benchRename renames directory d of n files (tagged: each with an
// index tag) to e and back, through the SDK (Path - Create with
// x-ms-rename-source), one rename per op.
func benchRename(b *testing.B, n int, tagged bool) {
	fs := benchDL(b, n, tagged)
	ctx := context.Background()
	names := [2]string{"d", "e"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := fs.NewDirectoryClient(names[i%2]).Rename(ctx, names[(i+1)%2], nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDLRenameDir20(b *testing.B)   { benchRename(b, 20, false) }
func BenchmarkDLRenameDir2000(b *testing.B) { benchRename(b, 2000, false) }

// The same with every file tagged: the tag index keeps entries on the
// chain above tagged files, and a rename still moves one entry
// (docs/datalake.md, "Blob index tags on paths").
func BenchmarkDLRenameTaggedDir20(b *testing.B)   { benchRename(b, 20, true) }
func BenchmarkDLRenameTaggedDir2000(b *testing.B) { benchRename(b, 2000, true) }

// BenchmarkDLListPaths lists a directory of 2,000 files recursively
// through the SDK's pager (one page of 2,000), reporting paths/s.
func BenchmarkDLListPaths(b *testing.B) {
	fs := benchDL(b, 2000)
	ctx := context.Background()
	b.ResetTimer()
	paths := 0
	for i := 0; i < b.N; i++ {
		pager := fs.NewListPathsPager(true, nil)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				b.Fatal(err)
			}
			paths += len(page.Paths)
		}
	}
	b.ReportMetric(float64(paths)/b.Elapsed().Seconds(), "paths/s")
}

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
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// benchDL starts a hierarchical server for a benchmark (backendConfig's
// store; the embedded store skips fsync there) and returns a client of a
// new filesystem holding directory "d" with n empty files.
func benchDL(b *testing.B, n int) *filesystem.Client {
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
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if _, err := fs.NewFileClient(fmt.Sprintf("d/f%05d", i)).Create(ctx, nil); err != nil {
					errs <- err
					return
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

// benchRename renames directory d of n files to e and back, through the
// SDK (Path - Create with x-ms-rename-source), one rename per op.
func benchRename(b *testing.B, n int) {
	fs := benchDL(b, n)
	ctx := context.Background()
	names := [2]string{"d", "e"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := fs.NewDirectoryClient(names[i%2]).Rename(ctx, names[(i+1)%2], nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDLRenameDir20(b *testing.B)   { benchRename(b, 20) }
func BenchmarkDLRenameDir2000(b *testing.B) { benchRename(b, 2000) }

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

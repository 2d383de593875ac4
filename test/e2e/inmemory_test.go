package e2e

// --in-memory with --extent-memory-limit: a write that would take the
// bodies held in memory past the limit fails as Azurite's in-memory mode
// fails it (409 MemoryExtentStoreAtSizeLimit, Azure/Azurite
// src/common/persistence/MemoryExtentStore.ts) and changes nothing;
// deleting or overwriting blobs gives the room back once the collector
// has run. These tests start their own in-memory server whatever backend
// the rest of the suite runs on.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/extent"
)

const memLimitCode = "MemoryExtentStoreAtSizeLimit"

// startInMemory starts an in-memory server with the given limit (bytes)
// on the Blob and File ports, with a fake clock at the real time.
func startInMemory(t *testing.T, limit int64) (*app.App, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Now())
	a, err := app.Start(app.Config{InMemory: true, ExtentMemoryLimit: limit, Clock: clk, GCEvery: time.Hour,
		BlobPort: 0, QueuePort: -1, TablePort: -1, FilePort: 0, SMBPort: -1, MetricsPort: -1})
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
	return a, clk
}

func randomBody(t *testing.T, n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func TestInMemoryExtentLimit(t *testing.T) {
	const limit = 1 << 20
	const size = 600 << 10 // over extent.InlineMax: held by the chunk store
	if size <= extent.InlineMax {
		t.Fatal("size must exceed InlineMax")
	}
	a, clk := startInMemory(t, limit)
	ctx := context.Background()
	c := client(t, a.BlobURL, app.DevKey)
	if _, err := c.CreateContainer(ctx, "mem", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("mem")
	put := func(name string, body []byte) error {
		_, err := cc.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(body)), nil)
		return err
	}
	get := func(name string) []byte {
		t.Helper()
		resp, err := cc.NewBlobClient(name).DownloadStream(ctx, nil)
		if err != nil {
			t.Fatalf("download %s: %v", name, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	collect := func() {
		t.Helper()
		// Collect as if GCGrace had passed, then come back: the SDK signs
		// with the real time, which must stay within 15 minutes of the
		// server's.
		now := clk.Now()
		clk.Advance(extent.GCGrace + time.Minute)
		if _, err := a.Blob.CollectGarbage(ctx); err != nil {
			t.Fatal(err)
		}
		clk.Set(now)
	}

	first := randomBody(t, size)
	must(t, put("a", first))
	// A second body does not fit: 409 with Azurite's code, nothing stored.
	wantCode(t, put("b", randomBody(t, size)), 409, memLimitCode)
	_, err := cc.NewBlobClient("b").GetProperties(ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	// An overwrite that does not fit leaves the previous blob intact.
	wantCode(t, put("a", randomBody(t, size)), 409, memLimitCode)
	if !bytes.Equal(get("a"), first) {
		t.Fatal("blob a changed by a failed overwrite")
	}
	// The same limit holds for blocks, and small blobs (kept with the
	// metadata) still work.
	_, err = cc.NewBlockBlobClient("blocks").StageBlock(ctx, "YmxvY2sx", streaming.NopCloser(bytes.NewReader(randomBody(t, size))), nil)
	wantCode(t, err, 409, memLimitCode)
	must(t, put("small", []byte("fits")))

	// Deleting frees the room once the collector has run.
	_, err = cc.NewBlobClient("a").Delete(ctx, nil)
	must(t, err)
	collect()
	second := randomBody(t, size)
	must(t, put("b", second))
	// Overwriting with a smaller body frees the difference: 600 KiB and
	// then 300 KiB of the next body fit where 600 KiB did not.
	must(t, put("b", second[:size/2]))
	collect()
	third := randomBody(t, size)
	must(t, put("c", third))
	if !bytes.Equal(get("b"), second[:size/2]) || !bytes.Equal(get("c"), third) {
		t.Fatal("blob content differs")
	}
	if !bytes.Equal(get("small"), []byte("fits")) {
		t.Fatal("small blob differs")
	}
}

// TestInMemoryExtentLimitFile: a Put Range past the limit fails the same
// way and leaves the file's bytes as they were.
func TestInMemoryExtentLimitFile(t *testing.T) {
	const limit = 1 << 20
	const size = 600 << 10
	a, _ := startInMemory(t, limit)
	ctx := context.Background()
	svc := fileClient(t, a.FileURL, app.DevKey)
	sh := svc.NewShareClient("memshare")
	if _, err := sh.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	f := fileAt(sh, "f")
	if _, err := f.Create(ctx, 2*size, nil); err != nil {
		t.Fatal(err)
	}
	first := randomBody(t, size)
	if _, err := f.UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader(first)), nil); err != nil {
		t.Fatal(err)
	}
	_, err := f.UploadRange(ctx, size, streaming.NopCloser(bytes.NewReader(randomBody(t, size))), nil)
	wantCode(t, err, 409, memLimitCode)
	resp, err := f.DownloadStream(ctx, &file.DownloadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:size], first) || !bytes.Equal(got[size:], make([]byte, size)) {
		t.Fatal("file bytes changed by a failed Put Range")
	}
}

// TestInMemoryExtentLimitMultiChunk: a body of several chunks that fails
// past the limit after its first chunks were stored gives their room back
// at once, not hours later when the orphan sweep would find them.
func TestInMemoryExtentLimitMultiChunk(t *testing.T) {
	const limit = extent.ChunkMax + extent.ChunkMax/2
	a, _ := startInMemory(t, limit)
	ctx := context.Background()
	c := client(t, a.BlobURL, app.DevKey)
	if _, err := c.CreateContainer(ctx, "mem", nil); err != nil {
		t.Fatal(err)
	}
	bb := c.ServiceClient().NewContainerClient("mem").NewBlockBlobClient("big")
	_, err := bb.Upload(ctx, streaming.NopCloser(bytes.NewReader(randomBody(t, 2*extent.ChunkMax))), nil)
	wantCode(t, err, 409, memLimitCode)
	body := randomBody(t, extent.ChunkMax+extent.ChunkMax/4)
	if _, err := bb.Upload(ctx, streaming.NopCloser(bytes.NewReader(body)), nil); err != nil {
		t.Fatalf("upload after a failed one: %v", err)
	}
}

// TestInMemoryWritesNothingToDisk: with InMemory a data directory that is
// configured anyway is never created, whatever the services store; and
// PostgreSQL cannot be combined with it.
func TestInMemoryWritesNothingToDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	a, err := app.Start(app.Config{InMemory: true, DataDir: dir, BlobPort: 0, QueuePort: -1, TablePort: -1, FilePort: 0, SMBPort: -1, MetricsPort: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := client(t, a.BlobURL, app.DevKey)
	if _, err := c.CreateContainer(ctx, "disk", nil); err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{10, 100 << 10, 9 << 20} { // inline, one chunk, two chunks
		if _, err := c.UploadBuffer(ctx, "disk", fmt.Sprint("b", i), randomBody(t, n), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("data directory: %v, want it absent", err)
	}
	if _, err := app.Start(app.Config{InMemory: true, Postgres: "postgres://localhost/x", BlobPort: 0, QueuePort: -1, TablePort: -1, FilePort: -1, SMBPort: -1, MetricsPort: -1}); err == nil {
		t.Fatal("InMemory with Postgres started")
	}
}

// TestInMemoryRefusedWriteFreesRoom: the body of a write refused after
// its upload (a failed precondition, a lease it does not hold) gives its
// room back with the refusal (extent.Staged.Finish), not only once the
// orphan sweep runs.
func TestInMemoryRefusedWriteFreesRoom(t *testing.T) {
	const limit = 2 << 20
	const size = 600 << 10
	a, clk := startInMemory(t, limit)
	ctx := context.Background()
	c := client(t, a.BlobURL, app.DevKey)
	if _, err := c.CreateContainer(ctx, "mem", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("mem")
	must(t, func() error {
		_, err := cc.NewBlockBlobClient("a").Upload(ctx, streaming.NopCloser(bytes.NewReader(randomBody(t, size))), nil)
		return err
	}())
	star := azcore.ETagAny
	_, err := cc.NewBlockBlobClient("a").Upload(ctx, streaming.NopCloser(bytes.NewReader(randomBody(t, size))),
		&blockblob.UploadOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: &star}}})
	wantCode(t, err, 409, bloberror.BlobAlreadyExists)
	// The refused body's room came back with the refusal: 600 KiB stored
	// plus 900 KiB fit under 2 MiB, which they would not if the refused
	// 600 KiB were still held for the sweeper.
	big := randomBody(t, 900<<10)
	putBig := func(name string) error {
		_, err := cc.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(big)), nil)
		return err
	}
	must(t, putBig("b"))
	// So did a refused Put Block's (a lease it does not hold).
	lc, err := lease.NewBlobClient(cc.NewBlobClient("b"), nil)
	must(t, err)
	_, err = lc.AcquireLease(ctx, 15, nil)
	must(t, err)
	_, err = cc.NewBlockBlobClient("b").StageBlock(ctx, base64.StdEncoding.EncodeToString([]byte("block-01")), streaming.NopCloser(bytes.NewReader(randomBody(t, 300<<10))), nil)
	wantCode(t, err, 412, bloberror.LeaseIDMissing)
	_, err = lc.ReleaseLease(ctx, nil)
	must(t, err)
	// 1.5 MiB stored + 400 KiB fit under 2 MiB only without the refused
	// 300 KiB block.
	_, err = cc.NewBlockBlobClient("c").Upload(ctx, streaming.NopCloser(bytes.NewReader(randomBody(t, 400<<10))), nil)
	must(t, err)
	// Nothing is left for the sweeper.
	now := clk.Now()
	clk.Advance(extent.OrphanGrace + time.Minute)
	n, err := a.Blob.SweepOrphans(ctx)
	clk.Set(now)
	if err != nil || n != 0 {
		t.Fatalf("SweepOrphans = %d, %v; want nothing left by the refused writes", n, err)
	}
}

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
)

// Durability and snapshot isolation against the background collector and
// orphan sweeper (Azure: an acknowledged write is durable; Get Blob
// returns the blob as it was when the read began). Uploads and downloads
// here outlast both grace periods on the fake clock, which is moved
// forward only around direct collector calls (the SDK signs with the real
// time) while a request is in flight.

// pinBytes returns n bytes that differ in every chunk.
func pinBytes(seed byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*13+i/extent.ChunkMax) ^ seed
	}
	return b
}

// pinBody is a request body that calls hook(i) when the sender reaches
// offset pauses[i], i.e. while the request is in flight with the bytes
// before it sent.
type pinBody struct {
	data   []byte
	pos    int64
	pauses []int64
	next   int
	hook   func(i int)
}

func (b *pinBody) Read(p []byte) (int, error) {
	if b.pos >= int64(len(b.data)) {
		return 0, io.EOF
	}
	if b.next < len(b.pauses) && b.pos == b.pauses[b.next] {
		b.next++
		b.hook(b.next - 1)
	}
	end := int64(len(b.data))
	if b.next < len(b.pauses) && b.pauses[b.next] < end {
		end = b.pauses[b.next]
	}
	end = min(end, b.pos+int64(len(p)))
	n := copy(p, b.data[b.pos:end])
	b.pos += int64(n)
	return n, nil
}

func (b *pinBody) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		off += b.pos
	case io.SeekEnd:
		off += int64(len(b.data))
	}
	if off < 0 {
		return 0, errors.New("negative position")
	}
	b.pos = off
	return off, nil
}

func (b *pinBody) Close() error { return nil }

// smallWindow is an HTTP client whose connections receive into a 64 KiB
// socket buffer, for the downloads these tests hold open: with the
// kernel's receive-buffer autotuning (Linux's tcp_rmem reaches 32 MiB on
// some machines) the server could send a whole body into the socket and
// close its reader, ending its pins legitimately, before the test
// overwrites the blob. With the window held small the server stays
// inside the body, a few MiB at most past what the test has read.
func smallWindow() *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(64 << 10)
			}
			return c, err
		}}}
}

// slowBlob is b seen through a client on a smallWindow.
func slowBlob(t *testing.T, b *blockblob.Client) *blockblob.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	c, err := blockblob.NewClientWithSharedKeyCredential(b.URL(), cred, &blockblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}, Transport: smallWindow()}})
	must(t, err)
	return c
}

// pinGC runs the collector and the orphan sweeper with the clock at
// time.Now()+ahead, then sets it back, and returns what they freed.
func (e *env) pinGC(ahead time.Duration) (collected, swept int) {
	e.t.Helper()
	e.clock.Set(time.Now().Add(ahead))
	defer e.clock.Set(time.Now())
	collected, err := e.app.Blob.CollectGarbage(e.ctx)
	must(e.t, err)
	swept, err = e.app.Blob.SweepOrphans(e.ctx)
	must(e.t, err)
	return collected, swept
}

// Uploads slower than the sweeper's grace period: the bodies of a Put
// Blob, two Put Block and an Append Block each stream across hours of the
// clock, with the collector and the sweeper running far ahead between
// their chunks, and hours pass between the blocks and the Put Block List.
// Every byte is read back.
func TestPinSlowUploadsSurviveSweeper(t *testing.T) {
	e := start(t)
	e.container("pins")
	cc := e.c.ServiceClient().NewContainerClient("pins")
	const chunk = extent.ChunkMax
	hours := time.Duration(0)
	gcDuring := func(what string) func(int) {
		return func(i int) {
			// Chunks sent a moment ago look a further 7 hours old at
			// every pause: together, days of a slow upload.
			hours += extent.OrphanGrace + time.Hour
			if _, swept := e.pinGC(hours); swept != 0 {
				t.Errorf("%s, pause %d: the sweeper removed %d chunks", what, i, swept)
			}
		}
	}
	// The sender is at least one chunk (socket buffers) ahead of the
	// server at a pause, so the later pauses come after the server has
	// written whole chunks of the body.
	whole := pinBytes(1, 5*chunk+1000)
	bb := cc.NewBlockBlobClient("slow-put-blob")
	_, err := bb.Upload(e.ctx, &pinBody{data: whole, pauses: []int64{2 * chunk, 3 * chunk, 4 * chunk, 5 * chunk}, hook: gcDuring("Put Blob")}, nil)
	must(t, err)

	blocks := [][]byte{pinBytes(2, 3*chunk+500), pinBytes(3, 3*chunk+700)}
	bl := cc.NewBlockBlobClient("slow-blocks")
	var ids []string
	for i, data := range blocks {
		id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "block-%03d", i))
		ids = append(ids, id)
		_, err := bl.StageBlock(e.ctx, id, &pinBody{data: data, pauses: []int64{2 * chunk, 3 * chunk}, hook: gcDuring(fmt.Sprintf("Put Block %d", i))}, nil)
		must(t, err)
		gcDuring("between the blocks")(i)
	}
	_, err = bl.CommitBlockList(e.ctx, ids, nil)
	must(t, err)
	gcDuring("after the commit")(0)

	appended := pinBytes(4, 3*chunk+300)
	ab := cc.NewAppendBlobClient("slow-append")
	_, err = ab.Create(e.ctx, nil)
	must(t, err)
	_, err = ab.AppendBlock(e.ctx, &pinBody{data: appended, pauses: []int64{2 * chunk, 3 * chunk}, hook: gcDuring("Append Block")}, nil)
	must(t, err)

	if got := e.btRead(ab.BlobClient()); !bytes.Equal(got, appended) {
		t.Fatalf("Append Block read back %d bytes, differing from the %d appended", len(got), len(appended))
	}
	if got := e.btRead(bb.BlobClient()); !bytes.Equal(got, whole) {
		t.Fatalf("Put Blob read back %d bytes, differing from the %d uploaded", len(got), len(whole))
	}
	if got := e.btRead(bl.BlobClient()); !bytes.Equal(got, append(append([]byte{}, blocks[0]...), blocks[1]...)) {
		t.Fatalf("Put Block List read back %d bytes, differing from the blocks", len(got))
	}
}

// A download started before the blob is overwritten returns the version
// it started on, byte for byte, although the collector and the sweeper
// run far past their grace periods while it streams.
func TestPinDownloadSurvivesOverwriteAndGC(t *testing.T) {
	e := start(t)
	e.container("pins")
	bb := e.c.ServiceClient().NewContainerClient("pins").NewBlockBlobClient("big")
	old := pinBytes(4, 5*extent.ChunkMax+77)
	_, err := bb.Upload(e.ctx, streaming.NopCloser(bytes.NewReader(old)), nil)
	must(t, err)

	resp, err := slowBlob(t, bb).DownloadStream(e.ctx, nil)
	must(t, err)
	defer resp.Body.Close()
	first := make([]byte, 1<<20)
	_, err = io.ReadFull(resp.Body, first)
	must(t, err)

	// Overwritten, then collected an hour and swept days later: the old
	// version's items are released, but the download still holds them.
	_, err = bb.Upload(e.ctx, streaming.NopCloser(bytes.NewReader(pinBytes(5, 3*extent.ChunkMax))), nil)
	must(t, err)
	if collected, swept := e.pinGC(time.Hour); collected != 0 || swept != 0 {
		t.Errorf("while the download streams: collected %d, swept %d", collected, swept)
	}
	if collected, swept := e.pinGC(3 * extent.OrphanGrace); collected != 0 || swept != 0 {
		t.Errorf("while the download streams, days later: collected %d, swept %d", collected, swept)
	}

	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("download after the overwrite: %v (after %d bytes)", err, len(first)+len(rest))
	}
	if got := append(first, rest...); !bytes.Equal(got, old) {
		t.Fatalf("download returned %d bytes, not the %d of the version it started on", len(got), len(old))
	}
	if got := e.btRead(bb.BlobClient()); !bytes.Equal(got, pinBytes(5, 3*extent.ChunkMax)) {
		t.Fatal("the new version reads back wrong")
	}
}

// The same for Get File: a download started before the file is deleted
// returns its bytes in full, although the collector and the sweeper run
// far past their grace periods while it streams.
func TestPinFileDownloadSurvivesDeleteAndGC(t *testing.T) {
	e := startFile(t)
	s := e.share()
	const size = 24 << 20 // six 4 MiB Put Range chunks
	data := pinBytes(6, size)
	f := e.mkfile(s, "big", size)
	must(t, f.UploadBuffer(e.ctx, data, &file.UploadBufferOptions{Concurrency: 2, ChunkSize: 4 << 20}))

	fcred, err := file.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	slow, err := file.NewClientWithSharedKeyCredential(f.URL(), fcred, &file.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}, Transport: smallWindow()}})
	must(t, err)
	resp, err := slow.DownloadStream(e.ctx, nil)
	must(t, err)
	defer resp.Body.Close()
	first := make([]byte, 1<<20)
	_, err = io.ReadFull(resp.Body, first)
	must(t, err)

	_, err = f.Delete(e.ctx, nil)
	must(t, err)
	gc := func(ahead time.Duration) (int, int) {
		e.clock.Set(time.Now().Add(ahead))
		defer e.clock.Set(time.Now())
		collected, err := e.app.Blob.CollectGarbage(e.ctx)
		must(t, err)
		swept, err := e.app.Blob.SweepOrphans(e.ctx)
		must(t, err)
		return collected, swept
	}
	for _, ahead := range []time.Duration{time.Hour, 3 * extent.OrphanGrace} {
		if collected, swept := gc(ahead); collected != 0 || swept != 0 {
			t.Errorf("while the download streams, %v ahead: collected %d, swept %d", ahead, collected, swept)
		}
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("download after the delete: %v (after %d bytes)", err, len(first)+len(rest))
	}
	if got := append(first, rest...); !bytes.Equal(got, data) {
		t.Fatalf("download returned %d bytes, not the %d of the deleted file", len(got), len(data))
	}
}

// A blob of many small blocks keeps its bytes in the kv store (inline
// items), read on demand past the first 4 MiB: a download across an
// overwrite and the collector still returns all of them.
func TestPinDownloadOfSmallBlocksSurvivesOverwrite(t *testing.T) {
	e := start(t)
	e.container("pins")
	bb := e.c.ServiceClient().NewContainerClient("pins").NewBlockBlobClient("small-blocks")
	const blocks, size = 256, 64 << 10 // inline items, 16 MiB in all
	var ids []string
	var old []byte
	for i := range blocks {
		data := pinBytes(byte(i), size)
		id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "block-%04d", i))
		_, err := bb.StageBlock(e.ctx, id, streaming.NopCloser(bytes.NewReader(data)), nil)
		must(t, err)
		ids = append(ids, id)
		old = append(old, data...)
	}
	_, err := bb.CommitBlockList(e.ctx, ids, nil)
	must(t, err)

	resp, err := slowBlob(t, bb).DownloadStream(e.ctx, nil)
	must(t, err)
	defer resp.Body.Close()
	first := make([]byte, 1<<20)
	_, err = io.ReadFull(resp.Body, first)
	must(t, err)
	_, err = bb.Upload(e.ctx, streaming.NopCloser(bytes.NewReader([]byte("new"))), nil)
	must(t, err)
	// The items the download read ahead with the blob's record may go;
	// those it has still to read stay.
	if collected, _ := e.pinGC(time.Hour); collected >= blocks {
		t.Errorf("while the download streams: collected all %d items", collected)
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("download after the overwrite: %v (after %d bytes)", err, len(first)+len(rest))
	}
	if got := append(first, rest...); !bytes.Equal(got, old) {
		t.Fatalf("download returned %d bytes, not the %d of the version it started on", len(got), len(old))
	}
}

// Two processes sharing one PostgreSQL database: a download streaming
// from one survives an overwrite through the other and the other's
// collector and sweeper running far ahead, because each process's
// collector pass publishes its pins. Only PostgreSQL is shared by
// several processes; two apps in this test process stand for them (each
// has its own chunk store and pins).
func TestPinDownloadAcrossProcesses(t *testing.T) {
	if os.Getenv(pgtest.EnvVar) == "" {
		t.Skip("several processes share a store only on PostgreSQL: set " + pgtest.EnvVar)
	}
	dsn, _ := pgtest.Schema(t)
	clk := clock.NewFake(time.Now())
	startOn := func() *app.App {
		cfg := app.Config{DataDir: t.TempDir(), NoSync: true, Postgres: dsn, PostgresMaxConns: 8,
			BlobPort: 0, QueuePort: -1, TablePort: -1, FilePort: -1, Clock: clk, GCEvery: time.Hour}
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
		return a
	}
	reader, writer := startOn(), startOn()
	ctx := context.Background()
	rc := client(t, reader.BlobURL, app.DevKey)
	wc := client(t, writer.BlobURL, app.DevKey)
	_, err := rc.CreateContainer(ctx, "pins", nil)
	must(t, err)
	old := pinBytes(7, 4*extent.ChunkMax+3)
	_, err = rc.UploadBuffer(ctx, "pins", "big", old, nil)
	must(t, err)

	resp, err := slowBlob(t, rc.ServiceClient().NewContainerClient("pins").NewBlockBlobClient("big")).DownloadStream(ctx, nil)
	must(t, err)
	defer resp.Body.Close()
	first := make([]byte, 1<<20)
	_, err = io.ReadFull(resp.Body, first)
	must(t, err)
	_, err = wc.UploadBuffer(ctx, "pins", "big", []byte("overwritten elsewhere"), nil)
	must(t, err)

	// The writer's collector and sweeper run far ahead. The reader's
	// own pass (which would keep the items itself) only sweeps here, as
	// every pass publishes the process's pins and renews its lease, the
	// way its periodic pass does each minute.
	for _, ahead := range []time.Duration{time.Hour, 3 * extent.OrphanGrace} {
		clk.Set(time.Now().Add(ahead))
		_, err := reader.Blob.SweepOrphans(ctx)
		must(t, err)
		collected, err := writer.Blob.CollectGarbage(ctx)
		must(t, err)
		swept, err := writer.Blob.SweepOrphans(ctx)
		must(t, err)
		if collected != 0 || swept != 0 {
			t.Errorf("%v ahead, while the download streams: the other process collected %d, swept %d", ahead, collected, swept)
		}
		clk.Set(time.Now())
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("download after the overwrite elsewhere: %v (after %d bytes)", err, len(first)+len(rest))
	}
	if got := append(first, rest...); !bytes.Equal(got, old) {
		t.Fatalf("download returned %d bytes, not the %d of the version it started on", len(got), len(old))
	}
}

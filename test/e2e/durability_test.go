//go:build linux

package e2e

// Crash durability of the embedded store, through the official SDKs: the
// server runs on errorfs (internal/vfs/errorfs), which simulates a power
// cut at a chosen fsync (file or directory) and returns what the disk
// would then hold. The test walks the crash over every sync that a short
// workload issues (server start included) — a Put Blob, a Put Block
// List, a table batch, a queue put, receive and delete, a file Put
// Range — then starts a server on what the crash left and checks that
// it starts, that every acknowledged operation is there and that no
// unacknowledged one is half there.

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
	"github.com/cerulean-storage/cerulean/internal/vfs"
	"github.com/cerulean-storage/cerulean/internal/vfs/errorfs"
)

// Workload data: bodies above extent.InlineMax (64 KiB) go to chunk
// files, the small ones stay in the kv store.
var (
	duBlob   = duBytes(1, 100<<10)
	duBlock1 = duBytes(2, 80<<10)
	duBlock2 = duBytes(3, 1000)
	duRange  = duBytes(4, 96<<10)
	duSmall  = duBytes(5, 700)
)

const duFileSize = 256 << 10

func duBytes(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*131 + i*7 + i>>9)
	}
	return b
}

// duAcks records which workload steps were acknowledged.
type duAcks map[string]bool

// duClients are SDK clients of one server.
type duClients struct {
	blob  *azblob.Client
	queue *azqueue.ServiceClient
	table *aztables.ServiceClient
	file  *service.Client
}

func duStart(t *testing.T, dir string, fsys vfs.FS, clk *clock.Fake) (*app.App, *duClients, error) {
	cfg := app.Config{
		DataDir: dir, FS: fsys, LogSize: 1 << 20,
		NoSync:   fsys == nil, // the restarted server: its durability is not under test
		BlobPort: 0, QueuePort: 0, TablePort: 0, FilePort: 0, SMBPort: -1, MetricsPort: -1,
		Clock: clk, GCEvery: time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), // crashes log errors by design
	}
	a, err := app.Start(cfg)
	if err != nil {
		return nil, nil, err
	}
	return a, &duClients{
		blob:  client(t, a.BlobURL, app.DevKey),
		queue: quClient(t, a.QueueURL, app.DevKey),
		table: tbService(t, a.TableURL, app.DevKey),
		file:  fileClient(t, a.FileURL, app.DevKey),
	}, nil
}

func duStop(a *app.App) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = a.Close(ctx) // fails after a crash: the disk is gone
}

// duWorkload runs every step, whatever fails, and records the
// acknowledged ones.
func duWorkload(ctx context.Context, c *duClients) duAcks {
	acks := duAcks{}
	step := func(name string, err error) { acks[name] = err == nil }
	ok := func(_ any, err error) error { return err }

	step("container", ok(c.blob.CreateContainer(ctx, "duc", nil)))
	step("putblob", ok(c.blob.UploadBuffer(ctx, "duc", "b1", duBlob, nil)))
	step("putsmall", ok(c.blob.UploadBuffer(ctx, "duc", "small", duSmall, nil)))
	bb := c.blob.ServiceClient().NewContainerClient("duc").NewBlockBlobClient("b2")
	id1, id2 := duBlockID(1), duBlockID(2)
	step("block1", ok(bb.StageBlock(ctx, id1, streaming.NopCloser(bytes.NewReader(duBlock1)), nil)))
	step("block2", ok(bb.StageBlock(ctx, id2, streaming.NopCloser(bytes.NewReader(duBlock2)), nil)))
	step("blocklist", ok(bb.CommitBlockList(ctx, []string{id1, id2}, nil)))

	step("table", ok(c.table.CreateTable(ctx, "dutable", nil)))
	tc := c.table.NewClient("dutable")
	var batch []aztables.TransactionAction
	for i := range 3 {
		ent := fmt.Sprintf(`{"PartitionKey":"p","RowKey":"r%d","N":%d}`, i, i)
		batch = append(batch, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: []byte(ent)})
	}
	step("batch", ok(tc.SubmitTransaction(ctx, batch, nil)))

	step("queue", ok(c.queue.CreateQueue(ctx, "duqueue", nil)))
	q := c.queue.NewQueueClient("duqueue")
	step("put1", ok(q.EnqueueMessage(ctx, "one", nil)))
	step("put2", ok(q.EnqueueMessage(ctx, "two", nil)))
	got, err := q.DequeueMessage(ctx, &azqueue.DequeueMessageOptions{VisibilityTimeout: to.Ptr(int32(1))})
	step("receive", err)
	if err == nil && len(got.Messages) == 1 && *got.Messages[0].MessageText == "one" {
		m := got.Messages[0]
		acks["delete1 sent"] = true
		step("delete1", ok(q.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil)))
	} else {
		acks["delete1"], acks["delete1 sent"] = false, false
	}

	step("share", ok(c.file.CreateShare(ctx, "dushare", nil)))
	fc := c.file.NewShareClient("dushare").NewRootDirectoryClient().NewFileClient("f")
	step("file", ok(fc.Create(ctx, duFileSize, nil)))
	step("range", ok(fc.UploadRange(ctx, 4096, streaming.NopCloser(bytes.NewReader(duRange)), nil)))
	return acks
}

func duBlockID(n int) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "block-%03d", n))
}

// duVerify checks the restarted server against the acknowledgements.
func duVerify(ctx context.Context, c *duClients, clk *clock.Fake, acks duAcks) error {
	// blob: acknowledged → whole; otherwise whole or absent.
	blobIs := func(name string, want []byte, acked bool) error {
		r, err := c.blob.DownloadStream(ctx, "duc", name, nil)
		if err != nil {
			if acked {
				return fmt.Errorf("acknowledged blob %s: %w", name, err)
			}
			return nil
		}
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil || !bytes.Equal(b, want) {
			return fmt.Errorf("blob %s: %d bytes (%v), want its %d bytes", name, len(b), err, len(want))
		}
		return nil
	}
	if err := blobIs("b1", duBlob, acks["putblob"]); err != nil {
		return err
	}
	if err := blobIs("small", duSmall, acks["putsmall"]); err != nil {
		return err
	}
	if err := blobIs("b2", append(bytes.Clone(duBlock1), duBlock2...), acks["blocklist"]); err != nil {
		return err
	}
	if acks["block1"] && acks["block2"] && !acks["blocklist"] {
		// Staged blocks survive too: committing them now works.
		bb := c.blob.ServiceClient().NewContainerClient("duc").NewBlockBlobClient("b2")
		if _, err := bb.CommitBlockList(ctx, []string{duBlockID(1), duBlockID(2)}, nil); err != nil {
			return fmt.Errorf("committing acknowledged staged blocks after the crash: %w", err)
		}
		if err := blobIs("b2", append(bytes.Clone(duBlock1), duBlock2...), true); err != nil {
			return err
		}
	}

	// table batch: all three entities or none.
	n := 0
	pager := c.table.NewClient("dutable").NewListEntitiesPager(nil)
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			if acks["table"] {
				return fmt.Errorf("acknowledged table: %w", err)
			}
			break
		}
		n += len(p.Entities)
	}
	if (acks["batch"] && n != 3) || (n != 0 && n != 3) {
		return fmt.Errorf("table batch: %d of 3 entities (acknowledged %v)", n, acks["batch"])
	}

	// queue: the messages visible once the receive's visibility timeout
	// has passed.
	clk.Advance(time.Minute)
	var texts []string
	peek, err := c.queue.NewQueueClient("duqueue").PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	if err != nil {
		if acks["queue"] {
			return fmt.Errorf("acknowledged queue: %w", err)
		}
	} else {
		for _, m := range peek.Messages {
			texts = append(texts, *m.MessageText)
		}
	}
	has := func(s string) bool { return strings.Contains(","+strings.Join(texts, ",")+",", ","+s+",") }
	switch {
	case len(texts) > 2:
		return fmt.Errorf("queue holds %q", texts)
	case acks["put1"] && !acks["delete1 sent"] && !has("one"):
		return fmt.Errorf("acknowledged message one lost: %q", texts)
	case acks["delete1"] && has("one"):
		return fmt.Errorf("deleted message one is back: %q", texts)
	case acks["put2"] && !has("two"):
		return fmt.Errorf("acknowledged message two lost: %q", texts)
	}

	// file range: the new bytes or the zeros before, never a mix.
	fc := c.file.NewShareClient("dushare").NewRootDirectoryClient().NewFileClient("f")
	r, err := fc.DownloadStream(ctx, nil)
	if err != nil {
		if acks["file"] {
			return fmt.Errorf("acknowledged file: %w", err)
		}
		return nil
	}
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil || len(b) != duFileSize {
		return fmt.Errorf("file: %d bytes (%v)", len(b), err)
	}
	zeros := make([]byte, duFileSize)
	want := bytes.Clone(zeros)
	copy(want[4096:], duRange)
	switch {
	case bytes.Equal(b, want):
	case acks["range"]:
		return errors.New("acknowledged Put Range lost")
	case !bytes.Equal(b, zeros):
		return errors.New("unacknowledged Put Range half there")
	}
	return nil
}

// TestCrashAtEverySync walks a simulated power cut over every fsync of
// the workload.
func TestCrashAtEverySync(t *testing.T) {
	if os.Getenv(pgtest.EnvVar) != "" {
		t.Skip("crashes the embedded store's files")
	}
	// A power cut loses every unsynced write, or only some: the kernel
	// may have written back any dirty page with its latest bytes (here
	// every other page, chosen differently at each sync).
	t.Run("unsynced lost", func(t *testing.T) { duCrashWalk(t, false) })
	t.Run("some unsynced pages kept", func(t *testing.T) { duCrashWalk(t, true) })
}

func duCrashWalk(t *testing.T, keepSome bool) {
	ctx := context.Background()
	for k := 1; ; k++ {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		efs, err := errorfs.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		if keepSome {
			efs.SetKeep(func(path string, page int64) bool { return (int64(len(path))+page+int64(k))%2 == 0 })
		}
		syncs := 0
		where := ""
		efs.SetHook(func(op errorfs.Op, path string) errorfs.Action {
			if op != errorfs.OpSync && op != errorfs.OpSyncDir {
				return errorfs.Action{}
			}
			if syncs++; syncs == k {
				where = op.String() + " " + path
				return errorfs.Action{Crash: true}
			}
			return errorfs.Action{}
		})
		clk := clock.NewFake(time.Now())
		acks := duAcks{}
		a, c, err := duStart(t, dir, efs, clk)
		if err == nil {
			acks = duWorkload(ctx, c)
			duStop(a)
		} else if efs.Crashed() == nil {
			t.Fatalf("start failed without a crash: %v", err)
		}
		img := efs.Crashed()
		last := img == nil // the workload did fewer than k syncs
		if last {
			img = efs.Crash() // a power cut after it all
			where = "after the workload"
		}
		after := filepath.Join(t.TempDir(), "after")
		if err := img.WriteTo(after); err != nil {
			t.Fatal(err)
		}
		clk2 := clock.NewFake(time.Now())
		a2, c2, err := duStart(t, after, nil, clk2)
		if err != nil {
			t.Fatalf("crash at sync %d (%s): the server does not start: %v", k, where, err)
		}
		err = duVerify(ctx, c2, clk2, acks)
		duStop(a2)
		if err != nil {
			t.Fatalf("crash at sync %d (%s), acknowledged %v: %v", k, where, acks, err)
		}
		if last {
			t.Logf("%d sync points walked; acknowledged %v", k-1, acks)
			for name, ok := range acks {
				if !ok {
					t.Fatalf("without a crash, step %s failed", name)
				}
			}
			return
		}
	}
}

// TestFaultAtEveryOp walks a single failure over every write (cut
// short: half written, then EIO), fsync, directory sync and rename of
// the workload: the failed request gets an error, the ones after it
// succeed again, and after a power cut at the end every acknowledged
// operation is there and no other one half there.
func TestFaultAtEveryOp(t *testing.T) {
	if os.Getenv(pgtest.EnvVar) != "" {
		t.Skip("injects faults into the embedded store's files")
	}
	ctx := context.Background()
	for k := 1; ; k++ {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		efs, err := errorfs.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		var ops atomic.Int32
		started := false
		where := ""
		efs.SetHook(func(op errorfs.Op, path string) errorfs.Action {
			if !started || (op != errorfs.OpWrite && op != errorfs.OpSync && op != errorfs.OpSyncDir && op != errorfs.OpRename) {
				return errorfs.Action{}
			}
			if int(ops.Add(1)) != k {
				return errorfs.Action{}
			}
			where = op.String() + " " + path
			if op == errorfs.OpWrite {
				return errorfs.Action{Short: true, Err: syscall.EIO}
			}
			return errorfs.Action{Err: syscall.EIO}
		})
		clk := clock.NewFake(time.Now())
		a, c, err := duStart(t, dir, efs, clk)
		if err != nil {
			t.Fatal(err)
		}
		started = true // faults in the workload only: TestCrashAtEverySync covers the start
		acks := duWorkload(ctx, c)
		faulted := int(ops.Load()) >= k
		failed := 0
		for _, ok := range acks {
			if !ok {
				failed++
			}
		}
		// One failed operation fails one request (and the steps that
		// need it); the server goes on.
		_, perr := c.blob.UploadBuffer(ctx, "duc", "b1", duBlob, nil)
		if perr != nil && acks["container"] && faulted {
			t.Fatalf("fault at op %d (%s): a write after it fails too: %v", k, where, perr)
		}
		if perr == nil {
			acks["putblob"] = true
		}
		done := int(ops.Load()) < k
		img := efs.Crash()
		duStop(a)
		after := filepath.Join(t.TempDir(), "after")
		if err := img.WriteTo(after); err != nil {
			t.Fatal(err)
		}
		clk2 := clock.NewFake(time.Now())
		a2, c2, err := duStart(t, after, nil, clk2)
		if err != nil {
			t.Fatalf("fault at op %d (%s): the server does not start after a power cut: %v", k, where, err)
		}
		err = duVerify(ctx, c2, clk2, acks)
		duStop(a2)
		if err != nil {
			t.Fatalf("fault at op %d (%s), acknowledged %v: %v", k, where, acks, err)
		}
		if done {
			if failed > 0 || perr != nil {
				t.Fatalf("without a fault, %d steps failed: %v", failed, acks)
			}
			t.Logf("%d operations walked", k-1)
			return
		}
		if faulted && failed == 0 {
			t.Errorf("fault at op %d (%s) failed no request", k, where)
		}
	}
}

// TestDiskFull: while every write to the store's files fails with
// ENOSPC (and bbolt's commits fail), each service answers 503 ServerBusy (Azure has no disk-full
// code; see server.ToAzure), reads still return the stored data, and
// once space returns writes succeed again, and everything acknowledged
// survives a power cut.
func TestDiskFull(t *testing.T) {
	if os.Getenv(pgtest.EnvVar) != "" {
		t.Skip("fills the embedded store's disk")
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	efs, err := errorfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	var full atomic.Bool
	efs.SetHook(func(op errorfs.Op, path string) errorfs.Action {
		if full.Load() && (op == errorfs.OpWrite || op == errorfs.OpCreate || op == errorfs.OpSync) {
			return errorfs.Action{Err: syscall.ENOSPC}
		}
		return errorfs.Action{}
	})
	clk := clock.NewFake(time.Now())
	a, c, err := duStart(t, dir, efs, clk)
	if err != nil {
		t.Fatal(err)
	}
	defer duStop(a)
	acks := duWorkload(ctx, c)
	for name, ok := range acks {
		if !ok {
			t.Fatalf("step %s failed before the disk filled", name)
		}
	}

	full.Store(true)
	if err := efs.FreezeOSFiles(true); err != nil { // bbolt cannot grow or commit either
		t.Fatal(err)
	}
	busy := func(what string, err error) {
		t.Helper()
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != 503 || re.ErrorCode != "ServerBusy" {
			t.Errorf("%s on a full disk: %v, want 503 ServerBusy", what, err)
		}
	}
	ok := func(_ any, err error) error { return err }
	busy("Put Blob (chunked)", ok(c.blob.UploadBuffer(ctx, "duc", "full1", duBlob, nil)))
	busy("Put Blob (inline)", ok(c.blob.UploadBuffer(ctx, "duc", "full2", duSmall, nil)))
	busy("Insert Entity", ok(c.table.NewClient("dutable").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"full"}`), nil)))
	busy("Put Message", ok(c.queue.NewQueueClient("duqueue").EnqueueMessage(ctx, "full", nil)))
	fc := c.file.NewShareClient("dushare").NewRootDirectoryClient().NewFileClient("f")
	busy("Put Range", ok(fc.UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader(duRange)), nil)))
	// Reads go on, and show exactly what was stored.
	if err := duVerify(ctx, c, clk, acks); err != nil {
		t.Fatalf("reads on a full disk: %v", err)
	}

	full.Store(false)
	if err := efs.FreezeOSFiles(false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.blob.UploadBuffer(ctx, "duc", "after", duBlob, nil); err != nil {
		t.Fatalf("Put Blob once space returned: %v", err)
	}
	if _, err := c.table.NewClient("dutable2").CreateTable(ctx, nil); err != nil {
		t.Fatalf("Create Table once space returned: %v", err)
	}
	img := efs.Crash()
	after := filepath.Join(t.TempDir(), "after")
	if err := img.WriteTo(after); err != nil {
		t.Fatal(err)
	}
	clk2 := clock.NewFake(time.Now())
	a2, c2, err := duStart(t, after, nil, clk2)
	if err != nil {
		t.Fatal(err)
	}
	defer duStop(a2)
	r, err := c2.blob.DownloadStream(ctx, "duc", "after", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil || !bytes.Equal(b, duBlob) {
		t.Fatalf("blob written after the disk full: %d bytes, %v", len(b), err)
	}
	for _, name := range []string{"full1", "full2"} {
		if _, err := c2.blob.DownloadStream(ctx, "duc", name, nil); err == nil {
			t.Errorf("blob %s, refused on the full disk, exists", name)
		}
	}
	if _, err := c2.table.NewClient("dutable2").GetAccessPolicy(ctx, nil); err != nil {
		t.Errorf("table created once space returned: %v", err)
	}
	// And the data stored before the disk filled is intact.
	if err := duVerify(ctx, c2, clk2, acks); err != nil {
		t.Fatalf("after the disk full and a power cut: %v", err)
	}
}

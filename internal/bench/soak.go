package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// SoakOptions configure Soak.
type SoakOptions struct {
	BlobURL, QueueURL, TableURL, FileURL string
	Account, Key                         string
	Duration                             time.Duration // whole run (default 60 min)
	Window                               time.Duration // report period (default 5 min)
	Rate                                 int           // operations started per second (default 390)
	Workers                              int           // concurrent clients (default 16)
	Blobs                                int           // blob names overwritten in turn (default 2,000)
	Abusive                              int           // abusive connections opened per second on the blob port (default 22)
	// MetricsURL is the server's Prometheus endpoint (--metrics-port):
	// each window reports its RSS, heap, goroutines and descriptors.
	MetricsURL string
	// DataDir is the server's data directory: each window reports its
	// size on disk and apparent size.
	DataDir string
	// MaxDrift is the largest allowed ratio of the write p99 over the last
	// quarter of the run to the first quarter's (default 1.5).
	MaxDrift float64
}

func (o *SoakOptions) defaults() {
	if o.Duration <= 0 {
		o.Duration = 60 * time.Minute
	}
	if o.Window <= 0 {
		o.Window = 5 * time.Minute
	}
	if o.Rate <= 0 {
		o.Rate = 390
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.Blobs <= 0 {
		o.Blobs = 2000
	}
	if o.Abusive < 0 {
		o.Abusive = 0
	}
	if o.MaxDrift <= 0 {
		o.MaxDrift = 1.5
	}
}

// soakOp is one kind of operation of the mix.
type soakOp struct {
	name   string
	weight int
	write  bool
	fn     func(ctx context.Context, rng *rand.Rand) error
}

// soakWindow collects one report period's latencies.
type soakWindow struct {
	mu     sync.Mutex
	lat    map[string][]time.Duration
	errs   map[string]int
	first  map[string]string
	writes []time.Duration
}

func newWindow() *soakWindow {
	return &soakWindow{lat: map[string][]time.Duration{}, errs: map[string]int{}, first: map[string]string{}}
}

func (w *soakWindow) add(op *soakOp, d time.Duration, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.errs[op.name]++
		if _, ok := w.first[op.name]; !ok {
			w.first[op.name] = err.Error()
		}
		return
	}
	w.lat[op.name] = append(w.lat[op.name], d)
	if op.write {
		w.writes = append(w.writes, d)
	}
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(float64(len(sorted)-1)*p)]
}

// ErrSoakDrift is returned by Soak when the write p99 drifted beyond
// SoakOptions.MaxDrift.
var ErrSoakDrift = errors.New("write latency drifted")

// Soak runs the steady mixed load of docs/benchmarks.md ("Soak") against a
// running server for o.Duration and writes, every o.Window, each
// operation's count, errors, p50 and p99, the abusive connections made,
// and the server's RSS, heap, goroutines, descriptors and data directory
// size. The mix: overwrites of o.Blobs blobs of 1 KiB to 1 MiB, block
// uploads, Get Blob, leases, queue put/get/delete, table upsert and point
// read, file create/write/read, and abusive connections (closed at once,
// garbage, or a header left unfinished). At the end it compares the p99 of
// the writes in the last quarter of the run with the first quarter's and
// returns ErrSoakDrift when the ratio exceeds o.MaxDrift, or an error when
// any operation failed.
func Soak(ctx context.Context, o SoakOptions, out io.Writer) error {
	o.defaults()
	blobs, err := Client(o.BlobURL, o.Account, o.Key, o.Workers)
	if err != nil {
		return err
	}
	qs, err := QueueClient(o.QueueURL, o.Account, o.Key, o.Workers)
	if err != nil {
		return err
	}
	ts, err := TableClient(o.TableURL, o.Account, o.Key, o.Workers)
	if err != nil {
		return err
	}
	fsvc, err := fileService(o.FileURL, o.Account, o.Key, o.Workers)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("soak%d", time.Now().UnixNano())
	if _, err := blobs.CreateContainer(ctx, name, nil); err != nil {
		return fmt.Errorf("create container: %w", err)
	}
	q := qs.NewQueueClient(name)
	if _, err := q.Create(ctx, nil); err != nil {
		return fmt.Errorf("create queue: %w", err)
	}
	if _, err := ts.CreateTable(ctx, name, nil); err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	tc := ts.NewClient(name)
	sh := fsvc.NewShareClient(name)
	if _, err := sh.Create(ctx, nil); err != nil {
		return fmt.Errorf("create share: %w", err)
	}
	root := sh.NewRootDirectoryClient()
	cc := blobs.ServiceClient().NewContainerClient(name)

	bodies := map[int][]byte{}
	for _, n := range []int{1 << 10, 64 << 10, 1 << 20} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i * 7)
		}
		bodies[n] = b
	}
	size := func(rng *rand.Rand) []byte {
		switch p := rng.IntN(100); {
		case p < 70:
			return bodies[1<<10]
		case p < 95:
			return bodies[64<<10]
		default:
			return bodies[1<<20]
		}
	}
	blobName := func(rng *rand.Rand) string { return fmt.Sprintf("b%05d", rng.IntN(o.Blobs)) }
	var queued atomic.Int64
	ops := []*soakOp{
		{name: "Put Blob (overwrite)", weight: 30, write: true, fn: func(ctx context.Context, rng *rand.Rand) error {
			_, err := blobs.UploadBuffer(ctx, name, blobName(rng), size(rng), nil)
			return err
		}},
		{name: "Get Blob", weight: 25, fn: func(ctx context.Context, rng *rand.Rand) error {
			r, err := blobs.DownloadStream(ctx, name, blobName(rng), nil)
			if err != nil {
				if strings.Contains(err.Error(), "BlobNotFound") {
					return nil // not written yet
				}
				return err
			}
			_, err = io.Copy(io.Discard, r.Body)
			r.Body.Close()
			return err
		}},
		{name: "Put Block x2 + Put Block List", weight: 5, write: true, fn: func(ctx context.Context, rng *rand.Rand) error {
			bb := cc.NewBlockBlobClient(fmt.Sprintf("blocks%03d", rng.IntN(200)))
			var ids []string
			for i := range 2 {
				id := blockID(i)
				if _, err := bb.StageBlock(ctx, id, streaming.NopCloser(bytes.NewReader(bodies[64<<10])), nil); err != nil {
					return err
				}
				ids = append(ids, id)
			}
			_, err := bb.CommitBlockList(ctx, ids, nil)
			return err
		}},
		{name: "Lease acquire + release", weight: 5, write: true, fn: func(ctx context.Context, rng *rand.Rand) error {
			bb := cc.NewBlockBlobClient(fmt.Sprintf("leased%03d", rng.IntN(100)))
			if _, err := bb.UploadBuffer(ctx, bodies[1<<10], nil); err != nil && !strings.Contains(err.Error(), "LeaseIdMissing") {
				return err // LeaseIdMissing: another worker holds its lease now
			}
			lc, err := lease.NewBlobClient(bb, nil)
			if err != nil {
				return err
			}
			if _, err := lc.AcquireLease(ctx, 15, nil); err != nil {
				if strings.Contains(err.Error(), "LeaseAlreadyPresent") {
					return nil // another worker holds it
				}
				return err
			}
			_, err = lc.ReleaseLease(ctx, nil)
			return err
		}},
		{name: "Queue put + get + delete", weight: 15, write: true, fn: func(ctx context.Context, rng *rand.Rand) error {
			if _, err := q.EnqueueMessage(ctx, "soak message", nil); err != nil {
				return err
			}
			queued.Add(1)
			got, err := q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(1)), VisibilityTimeout: to.Ptr(int32(30))})
			if err != nil {
				return err
			}
			for _, m := range got.Messages {
				if _, err := q.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
					return err
				}
				queued.Add(-1)
			}
			return nil
		}},
		{name: "Table upsert", weight: 8, write: true, fn: func(ctx context.Context, rng *rand.Rand) error {
			e := fmt.Sprintf(`{"PartitionKey":"p%d","RowKey":"r%04d","N":%d,"Name":"soak"}`, rng.IntN(10), rng.IntN(1000), rng.IntN(1e6))
			_, err := tc.UpsertEntity(ctx, []byte(e), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
			return err
		}},
		{name: "Table get", weight: 7, fn: func(ctx context.Context, rng *rand.Rand) error {
			_, err := tc.GetEntity(ctx, fmt.Sprintf("p%d", rng.IntN(10)), fmt.Sprintf("r%04d", rng.IntN(1000)), nil)
			if err != nil && strings.Contains(err.Error(), "ResourceNotFound") {
				return nil
			}
			return err
		}},
		{name: "File create + write 64 KiB", weight: 3, write: true, fn: func(ctx context.Context, rng *rand.Rand) error {
			fc := root.NewFileClient(fmt.Sprintf("f%03d", rng.IntN(200)))
			if _, err := fc.Create(ctx, 64<<10, nil); err != nil {
				return err
			}
			_, err := fc.UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader(bodies[64<<10])), nil)
			return err
		}},
		{name: "File read", weight: 2, fn: func(ctx context.Context, rng *rand.Rand) error {
			r, err := root.NewFileClient(fmt.Sprintf("f%03d", rng.IntN(200))).DownloadStream(ctx, nil)
			if err != nil {
				if strings.Contains(err.Error(), "ResourceNotFound") {
					return nil
				}
				return err
			}
			_, err = io.Copy(io.Discard, r.Body)
			r.Body.Close()
			return err
		}},
	}
	total := 0
	for _, op := range ops {
		total += op.weight
	}
	pick := func(rng *rand.Rand) *soakOp {
		n := rng.IntN(total)
		for _, op := range ops {
			if n < op.weight {
				return op
			}
			n -= op.weight
		}
		return ops[len(ops)-1]
	}

	ctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	var cur atomic.Pointer[soakWindow]
	cur.Store(newWindow())
	var behind, abusive atomic.Int64
	work := make(chan struct{}, o.Workers)
	var wg sync.WaitGroup
	for w := range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for range work {
				op := pick(rng)
				t0 := time.Now()
				err := op.fn(ctx, rng)
				if ctx.Err() != nil {
					return // the run ended mid-operation: not a failure
				}
				cur.Load().add(op, time.Since(t0), err)
			}
		}()
	}
	// The pacer starts Rate operations a second; when every worker is
	// busy it counts the operation as not started (behind) rather than
	// queueing it, so a slow server is seen, not hidden.
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(work)
		tick := time.NewTicker(time.Second / time.Duration(o.Rate))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				select {
				case work <- struct{}{}:
				default:
					behind.Add(1)
				}
			}
		}
	}()
	if o.Abusive > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			abuse(ctx, o.BlobURL, o.Abusive, &abusive)
		}()
	}

	start := time.Now()
	var windows []*soakWindow
	fmt.Fprintf(out, "soak: %v at %d operations/s, %d workers, report every %v\n", o.Duration, o.Rate, o.Workers, o.Window)
	tick := time.NewTicker(o.Window)
	defer tick.Stop()
	failed := 0
	last := start
	report := func() {
		last = time.Now()
		w := cur.Swap(newWindow())
		windows = append(windows, w)
		fmt.Fprintf(out, "== %v\n", time.Since(start).Round(time.Second))
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, op := range ops {
			l := w.lat[op.name]
			slices.Sort(l)
			fmt.Fprintf(out, "  %-32s %7d ok %4d errors  p50 %-9v p99 %v\n", op.name, len(l), w.errs[op.name],
				percentile(l, .5).Round(10*time.Microsecond), percentile(l, .99).Round(10*time.Microsecond))
			if e, ok := w.first[op.name]; ok {
				fmt.Fprintf(out, "    first error: %.300s\n", e)
			}
			failed += w.errs[op.name]
		}
		fmt.Fprintf(out, "  not started (all workers busy) %d, abusive connections so far %d\n", behind.Swap(0), abusive.Load())
		if o.MetricsURL != "" {
			fmt.Fprintf(out, "  server: %s\n", serverStats(o.MetricsURL))
		}
		if o.DataDir != "" {
			onDisk, apparent := dirSize(o.DataDir)
			fmt.Fprintf(out, "  data directory: %.1f MiB on disk, %.1f MiB apparent\n", float64(onDisk)/(1<<20), float64(apparent)/(1<<20))
		}
	}
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
			report()
		}
	}
	wg.Wait()
	// The operations finished since the last report: a window of their
	// own unless it is too short to say anything.
	if time.Since(last) > o.Window/2 {
		report()
	} else {
		w := cur.Load()
		for name, n := range w.errs {
			failed += n
			fmt.Fprintf(out, "  %s: %d errors after the last report, first: %.300s\n", name, n, w.first[name])
		}
	}
	cleanup, cancelCleanup := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancelCleanup()
	_, _ = blobs.DeleteContainer(cleanup, name, nil)
	_, _ = q.Delete(cleanup, nil)
	_, _ = ts.DeleteTable(cleanup, name, nil)
	_, _ = sh.Delete(cleanup, nil)

	k := max(1, len(windows)/4)
	if len(windows) < 2 {
		return errors.New("soak: too short to compare the first and last quarter (at least two windows)")
	}
	firstQ, lastQ := writesOf(windows[:k]), writesOf(windows[len(windows)-k:])
	p1, p2 := percentile(firstQ, .99), percentile(lastQ, .99)
	ratio := float64(p2) / float64(max(p1, 1))
	fmt.Fprintf(out, "write p99: first %d windows %v, last %d windows %v: %.2f× (bound %.2f×)\n", k, p1.Round(10*time.Microsecond), k, p2.Round(10*time.Microsecond), ratio, o.MaxDrift)
	if failed > 0 {
		return fmt.Errorf("soak: %d operations failed", failed)
	}
	if ratio > o.MaxDrift {
		return fmt.Errorf("%w: %.2f× > %.2f×", ErrSoakDrift, ratio, o.MaxDrift)
	}
	return nil
}

func writesOf(ws []*soakWindow) []time.Duration {
	var all []time.Duration
	for _, w := range ws {
		all = append(all, w.writes...)
	}
	slices.Sort(all)
	return all
}

// blockID is block i's id: the ids of one blob are base64 of equal length.
func blockID(i int) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "block-%05d", i))
}

// abuse opens perSec connections a second to rawURL's host, each one of:
// closed at once, a line of garbage, or a request header left unfinished
// for a second. It counts them in n.
func abuse(ctx context.Context, rawURL string, perSec int, n *atomic.Int64) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return
	}
	tick := time.NewTicker(time.Second / time.Duration(perSec))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		go func(kind int) {
			c, err := net.DialTimeout("tcp", u.Host, time.Second)
			if err != nil {
				return
			}
			defer c.Close()
			n.Add(1)
			switch kind {
			case 0:
			case 1:
				_, _ = c.Write([]byte("\x16\x03\x01 not http at all\r\n\r\n"))
				_ = c.SetReadDeadline(time.Now().Add(time.Second))
				_, _ = io.Copy(io.Discard, c)
			default:
				_, _ = c.Write([]byte("GET /devstoreaccount1?comp=list HTTP/1.1\r\nHost: x\r\nx-ms-ver"))
				time.Sleep(time.Second)
			}
		}(i % 3)
	}
}

// serverStats reads the resident set, heap in use, goroutines and open
// descriptors from a Prometheus text endpoint.
func serverStats(metricsURL string) string {
	resp, err := http.Get(metricsURL)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer resp.Body.Close()
	want := map[string]string{
		"process_resident_memory_bytes": "RSS",
		"go_memstats_heap_inuse_bytes":  "heap in use",
		"go_goroutines":                 "goroutines",
		"process_open_fds":              "descriptors",
	}
	got := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 {
			if _, ok := want[f[0]]; ok {
				v, _ := strconv.ParseFloat(f[1], 64)
				got[f[0]] = v
			}
		}
	}
	return fmt.Sprintf("RSS %.0f MiB, heap in use %.0f MiB, %.0f goroutines, %.0f descriptors",
		got["process_resident_memory_bytes"]/(1<<20), got["go_memstats_heap_inuse_bytes"]/(1<<20), got["go_goroutines"], got["process_open_fds"])
}

// dirSize returns the bytes dir's files occupy on disk (st_blocks) and
// their apparent size.
func dirSize(dir string) (onDisk, apparent int64) {
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		apparent += fi.Size()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			onDisk += st.Blocks * 512
		}
		return nil
	})
	return onDisk, apparent
}

// fileService returns an azfile service client with SDK retries off.
func fileService(url, account, key string, conns int) (*service.Client, error) {
	cred, err := service.NewSharedKeyCredential(account, key)
	if err != nil {
		return nil, err
	}
	return service.NewClientWithSharedKeyCredential(url, cred, &service.ClientOptions{ClientOptions: sdkOptions(conns)})
}

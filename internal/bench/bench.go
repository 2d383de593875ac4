// Package bench is Cerulean's load generator: it drives a Blob endpoint
// (Cerulean, Azurite or Azure) through the official Azure SDK for Go with
// concurrent clients and reports throughput and latency percentiles.
package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// Result is one measured workload.
type Result struct {
	Name     string
	Ops      int64
	Errors   int64
	Elapsed  time.Duration
	P50, P95 time.Duration
	P99      time.Duration
	Bytes    int64
	// ServerCPU is the user plus system CPU the server process used while
	// the workload ran (-server-pid; 0 when not measured).
	ServerCPU time.Duration
}

// CPUPerOp is the server's CPU per operation (0 when not measured).
func (r Result) CPUPerOp() time.Duration {
	if r.Ops == 0 {
		return 0
	}
	return r.ServerCPU / time.Duration(r.Ops)
}

// OpsPerSec is the throughput.
func (r Result) OpsPerSec() float64 { return float64(r.Ops) / r.Elapsed.Seconds() }

// MBps is the byte throughput in MB/s (10^6 bytes).
func (r Result) MBps() float64 { return float64(r.Bytes) / r.Elapsed.Seconds() / 1e6 }

func (r Result) String() string {
	if r.Bytes > 0 && r.Ops < 100 {
		return fmt.Sprintf("%-28s %8.1f MB/s  (%d bytes in %v, errors %d)", r.Name, r.MBps(), r.Bytes, r.Elapsed.Round(time.Millisecond), r.Errors)
	}
	cpu := ""
	if r.ServerCPU > 0 {
		cpu = fmt.Sprintf("  server CPU %.1f µs/op", float64(r.CPUPerOp().Nanoseconds())/1e3)
	}
	return fmt.Sprintf("%-28s %9.0f ops/s  p50 %-9v p95 %-9v p99 %-9v (ops %d, errors %d)%s", r.Name, r.OpsPerSec(), r.P50.Round(time.Microsecond), r.P95.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.Ops, r.Errors, cpu)
}

// Client returns an azblob client for url with a connection pool sized
// for the given concurrency and SDK retries off (a failure is counted,
// not hidden).
func Client(url, account, key string, conns int) (*azblob.Client, error) {
	cred, err := azblob.NewSharedKeyCredential(account, key)
	if err != nil {
		return nil, err
	}
	opts := &azblob.ClientOptions{ClientOptions: sdkOptions(conns)}
	return azblob.NewClientWithSharedKeyCredential(url, cred, opts)
}

// sdkOptions are the Azure SDK client options every workload uses: a
// connection pool sized for conns concurrent clients, and retries off (a
// failure is counted, not hidden).
func sdkOptions(conns int) azcore.ClientOptions {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns * 2,
		IdleConnTimeout:     90 * time.Second,
	}
	return azcore.ClientOptions{
		Transport: &http.Client{Transport: tr},
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}
}

// rate, when above 0 (-rate), paces Run: its n workers together start
// rate operations a second (open loop, each worker on its own
// schedule), so that two servers compared serve the same load rather
// than as much as each can: their CPU per operation is then not
// confounded by how busy the machine's other processes keep the cores.
var rate float64

// Run runs fn from n goroutines until d has passed and returns the result.
func Run(ctx context.Context, name string, n int, d time.Duration, fn func(ctx context.Context, worker int, i int64) error) Result {
	var ops, errs atomic.Int64
	lats := make([][]time.Duration, n)
	var wg sync.WaitGroup
	cpu0 := meter.read()
	start := time.Now()
	deadline := start.Add(d)
	var firstErr atomic.Value
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := int64(0); time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				if rate > 0 {
					// Worker w's i-th operation is the (i*n+w)-th of the run.
					at := start.Add(time.Duration(float64(i*int64(n)+int64(w)) / rate * float64(time.Second)))
					if wait := time.Until(at); wait > 0 {
						time.Sleep(wait)
					}
					if !time.Now().Before(deadline) {
						break
					}
				}
				t0 := time.Now()
				if err := fn(ctx, w, i); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				lats[w] = append(lats[w], time.Since(t0))
				ops.Add(1)
			}
		}(w)
	}
	wg.Wait()
	el := time.Since(start)
	cpu := meter.read() - cpu0
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[int(float64(len(all)-1)*p)]
	}
	if e := firstErr.Load(); e != nil {
		fmt.Fprintf(os.Stderr, "%s: first error: %s\n", name, e)
	}
	return Result{Name: name, Ops: ops.Load(), Errors: errs.Load(), Elapsed: el, P50: pct(0.50), P95: pct(0.95), P99: pct(0.99), ServerCPU: cpu}
}

// Small runs Put Blob then Get Blob of size-byte blobs with n clients,
// each writing keys names in turn (so all but its first keys writes are
// overwrites). With several endpoints (front ends sharing one database), worker w uses
// cs[w % len(cs)]; writes and reads of one worker may so go to different
// front ends only when their counts differ, which they do not here.
func Small(ctx context.Context, cs []*azblob.Client, container string, n, size, keys int, d time.Duration) ([]Result, error) {
	c := cs[0]
	if _, err := c.CreateContainer(ctx, container, nil); err != nil && !strings.Contains(err.Error(), "ContainerAlreadyExists") {
		return nil, err
	}
	body := make([]byte, size)
	_, _ = rand.Read(body)
	keys = max(1, keys)
	written := make([]int64, n)
	put := Run(ctx, fmt.Sprintf("Put Blob %d B (%d clients)", size, n), n, d, func(ctx context.Context, w int, i int64) error {
		_, err := cs[w%len(cs)].UploadBuffer(ctx, container, fmt.Sprintf("b%d-%d", w, i%int64(keys)), body, nil)
		if err == nil && i < int64(keys) {
			written[w] = i + 1
		}
		return err
	})
	get := Run(ctx, fmt.Sprintf("Get Blob %d B (%d clients)", size, n), n, d, func(ctx context.Context, w int, i int64) error {
		// read through the next front end: another process than the writer's
		resp, err := cs[(w+1)%len(cs)].DownloadStream(ctx, container, fmt.Sprintf("b%d-%d", w, i%max(1, written[w])), nil)
		if err != nil {
			return err
		}
		m, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && m != int64(size) {
			err = fmt.Errorf("got %d bytes, want %d", m, size)
		}
		return err
	})
	return []Result{put, get}, nil
}

// Large uploads total bytes in blockSize blocks (parallel, as the SDK's
// UploadStream does) and downloads them back.
func Large(ctx context.Context, c *azblob.Client, container string, total, blockSize int64, conc int) ([]Result, error) {
	if _, err := c.CreateContainer(ctx, container, nil); err != nil && !strings.Contains(err.Error(), "ContainerAlreadyExists") {
		return nil, err
	}
	src := &patternReader{n: total}
	t0 := time.Now()
	_, err := c.UploadStream(ctx, container, "large", src, &blockblob.UploadStreamOptions{BlockSize: blockSize, Concurrency: conc})
	up := Result{Name: fmt.Sprintf("Upload %d MiB (%d MiB blocks)", total>>20, blockSize>>20), Ops: 1, Elapsed: time.Since(t0), Bytes: total}
	if err != nil {
		return nil, err
	}
	t0 = time.Now()
	resp, err := c.DownloadStream(ctx, container, "large", nil)
	if err != nil {
		return nil, err
	}
	m, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	down := Result{Name: fmt.Sprintf("Download %d MiB", total>>20), Ops: 1, Elapsed: time.Since(t0), Bytes: m}
	if err != nil {
		return nil, err
	}
	if m != total {
		return nil, fmt.Errorf("downloaded %d bytes, want %d", m, total)
	}
	return []Result{up, down}, nil
}

// patternReader yields n bytes of a non-constant pattern, cheaply (a
// precomputed 1 MiB block, so the client does not dominate the measurement).
type patternReader struct{ n, off int64 }

// pattern is built on first use, not at program start: the server
// binary links this package, and its start time is measured.
var pattern = sync.OnceValue(func() []byte {
	b := make([]byte, 1<<20+251)
	for i := range b {
		b[i] = byte(i * 31 >> 3)
	}
	return b
})

func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	if int64(len(b)) > p.n-p.off {
		b = b[:p.n-p.off]
	}
	start := int(p.off % 251)
	m := copy(b, pattern()[start:])
	p.off += int64(m)
	return m, nil
}

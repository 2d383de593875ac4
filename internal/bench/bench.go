// Package bench is Cerulean's load generator: it drives a Blob endpoint
// (Cerulean, Azurite or Azure) through the official Azure SDK for Go with
// concurrent clients and reports throughput and latency percentiles.
package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/profile"
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

// Main is `cerulean bench`.
func Main(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	url := fs.String("url", "", "Blob account URL, e.g. http://127.0.0.1:10000/devstoreaccount1; several comma-separated URLs spread the clients over front ends sharing one database (default: start an in-process server on a temporary directory)")
	queueURL := fs.String("queue-url", "", "Queue account URL for -workloads queue (default: the in-process server)")
	tableURL := fs.String("table-url", "", "Table account URL for -workloads table (default: the in-process server)")
	fileURL := fs.String("file-url", "", "File account URL for -workloads file (default: the in-process server)")
	workloads := fs.String("workloads", "blob,large", "comma-separated: blob (1 KiB put/get), large (big upload/download), queue (put-get-delete), table (insert, point read, filtered query), tablepoint (insert and point read only), file (big file with parallel 4 MiB Put Range calls, read back), soak (-duration of steady mixed load, see -soak-*; alone), scale (fills of -scale-sizes items, see -scale-*; alone)")
	account := fs.String("account", app.DevAccount, "account name")
	key := fs.String("key", app.DevKey, "account key")
	clients := fs.Int("clients", 16, "concurrent clients")
	dur := fs.Duration("duration", 10*time.Second, "duration of each timed workload")
	size := fs.Int("size", 1024, "small blob size in bytes")
	fs.Float64Var(&rate, "rate", 0, "operations started per second by all clients together (open loop; 0: each client as fast as it can), for comparing servers' CPU per operation at one load")
	keys := fs.Int("keys", 1000, "blob: names each client writes in turn (all its later writes are overwrites)")
	large := fs.Int64("large", 256, "large upload/download size in MiB")
	block := fs.Int64("block", 8, "large upload block size in MiB")
	data := fs.String("data", "", "data directory of the in-process server (default: a temporary directory)")
	pg := fs.String("postgres", "", "run the in-process server on this PostgreSQL DSN instead of the embedded store")
	versioning := fs.Bool("versioning", false, "turn blob versioning on in the in-process server (as cerulean serve --blob-versioning)")
	inMemory := fs.Bool("in-memory", false, "run the in-process server on the in-memory store (as cerulean serve --in-memory)")
	soakRate := fs.Int("soak-rate", 390, "soak: operations started per second")
	soakWindow := fs.Duration("soak-window", 5*time.Minute, "soak: report period")
	soakAbusive := fs.Int("soak-abusive", 22, "soak: abusive connections per second")
	soakDrift := fs.Float64("soak-max-drift", 1.5, "soak: fail when the write p99 of the last quarter exceeds the first quarter's by more than this factor")
	metricsURL := fs.String("metrics-url", "", "soak, scale: the server's metrics base URL (--metrics-port), for RSS, heap, goroutines and descriptors (default: the in-process server's)")
	soakData := fs.String("server-data", "", "soak, scale: the server's data directory, whose size each report gives (default: the in-process server's)")
	scaleSizes := fs.String("scale-sizes", "10000,100000,1000000", "scale: comma-separated item counts")
	scaleSamples := fs.Int("scale-samples", 1000, "scale: point operations timed per size")
	scaleLimit := fs.Duration("scale-fill-limit", 10*time.Minute, "scale: a fill slower than this ends that service's larger sizes")
	scaleServices := fs.String("scale-services", "blob,table,queue", "scale: which services")
	ceiling := fs.Bool("ceiling", false, "also run the blob, queue and tablepoint workloads against the ceiling (the floor server of -floor, in this process) and report each figure as a share of it")
	rounds := fs.Int("rounds", 1, "with -ceiling: runs of each, alternating target and ceiling")
	serverPID := fs.Int("server-pid", 0, "measure this process's user+system CPU over each timed workload and report it per operation (the server's PID with -url; Linux /proc)")
	floor := fs.String("floor", "", "serve the CPU floor (a bare net/http server answering the blob, queue and tablepoint workloads without auth or storage) on this address until killed, instead of running workloads")
	webhook := fs.String("webhook", "", "serve an Event Grid webhook receiver on this address until killed (both validation handshakes, 200 to every notification), printing the events received and their delivery latency every -webhook-period, instead of running workloads")
	webhookPeriod := fs.Duration("webhook-period", 5*time.Second, "with -webhook: report period")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (client and in-process server) to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *floor != "" {
		return http.ListenAndServe(*floor, Floor(*size))
	}
	if *webhook != "" {
		r := &WebhookReceiver{}
		stop := make(chan struct{})
		defer close(stop)
		go r.Report(os.Stdout, *webhookPeriod, stop)
		return http.ListenAndServe(*webhook, r)
	}
	if *serverPID != 0 {
		if _, err := ProcessCPU(*serverPID); err != nil {
			return fmt.Errorf("-server-pid: %w", err)
		}
		meter = &cpuMeter{pid: *serverPID}
	}
	want := map[string]bool{}
	for _, w := range strings.Split(*workloads, ",") {
		switch w = strings.TrimSpace(w); w {
		case "blob", "large", "queue", "table", "tablepoint", "file", "soak", "scale":
			want[w] = true
		case "":
		default:
			return fmt.Errorf("-workloads: unknown workload %q", w)
		}
	}
	stop, err := profile.CPU(*cpuprofile)
	if err != nil {
		return err
	}
	defer stop()
	if *url == "" {
		dir := *data
		if dir == "" {
			tmp, err := os.MkdirTemp("", "cerulean-bench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			dir = tmp
		}
		a, err := app.Start(app.Config{DataDir: dir, Postgres: *pg, BlobPort: 0, QueuePort: 0, TablePort: 0, FilePort: 0, MetricsPort: 0, BlobVersioning: *versioning, InMemory: *inMemory})
		if err != nil {
			return err
		}
		defer a.Close(context.Background())
		*url = a.BlobURL
		if *queueURL == "" {
			*queueURL = a.QueueURL
		}
		if *tableURL == "" {
			*tableURL = a.TableURL
		}
		if *fileURL == "" {
			*fileURL = a.FileURL
		}
		if *metricsURL == "" {
			*metricsURL = a.MetricsURL
		}
		if *soakData == "" && *pg == "" {
			*soakData = dir
		}
		store := "embedded store in " + dir
		if *pg != "" {
			store = "PostgreSQL"
		} else if *inMemory {
			store = "in-memory store"
		}
		fmt.Fprintf(out, "in-process server on %s, %s (durable writes)\n", *url, store)
	}
	ctx := context.Background()
	if want["scale"] {
		if len(want) > 1 {
			return errors.New("-workloads scale runs alone")
		}
		var sizes []int
		for _, f := range strings.Split(*scaleSizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				return fmt.Errorf("-scale-sizes: %q is not a count", f)
			}
			sizes = append(sizes, n)
		}
		mu := *metricsURL
		if mu != "" {
			mu = strings.TrimSuffix(mu, "/") + "/metrics"
		}
		return Scale(ctx, ScaleOptions{BlobURL: *url, QueueURL: *queueURL, TableURL: *tableURL, Account: *account, Key: *key,
			Sizes: sizes, Clients: *clients, Samples: *scaleSamples, FillLimit: *scaleLimit, MetricsURL: mu, DataDir: *soakData,
			Services: strings.Split(*scaleServices, ",")}, out)
	}
	if want["soak"] {
		if len(want) > 1 {
			return errors.New("-workloads soak runs alone")
		}
		if *queueURL == "" || *tableURL == "" || *fileURL == "" {
			return errors.New("-workloads soak needs -queue-url, -table-url and -file-url with an external -url")
		}
		mu := *metricsURL
		if mu != "" {
			mu = strings.TrimSuffix(mu, "/") + "/metrics"
		}
		return Soak(ctx, SoakOptions{BlobURL: *url, QueueURL: *queueURL, TableURL: *tableURL, FileURL: *fileURL,
			Account: *account, Key: *key, Duration: *dur, Window: *soakWindow, Rate: *soakRate, Workers: *clients,
			Abusive: *soakAbusive, MetricsURL: mu, DataDir: *soakData, MaxDrift: *soakDrift}, out)
	}
	o := runOpts{account: *account, key: *key, clients: *clients, size: *size, keys: *keys, dur: *dur, large: *large, block: *block, want: want}
	t := target{url: *url, queue: *queueURL, table: *tableURL, file: *fileURL}
	var res []Result
	if *ceiling {
		var err error
		if res, err = ceilingRuns(ctx, t, o, *rounds, out); err != nil {
			return err
		}
	} else {
		rs, err := runWorkloads(ctx, t, o)
		for _, r := range rs {
			fmt.Fprintln(out, r)
		}
		if err != nil {
			return err
		}
		res = rs
	}
	var errCount int64
	for _, r := range res {
		errCount += r.Errors
	}
	if errCount > 0 {
		return errors.New("some operations failed")
	}
	return nil
}

// target is the endpoints one run of the workloads drives.
type target struct{ url, queue, table, file string }

// runOpts are the workload settings shared by every target.
type runOpts struct {
	account, key  string
	clients, size int
	keys          int
	dur           time.Duration
	large, block  int64
	want          map[string]bool
}

// runWorkloads runs the wanted workloads against t.
func runWorkloads(ctx context.Context, t target, o runOpts) ([]Result, error) {
	want := o.want
	var res []Result
	if want["blob"] || want["large"] {
		var cs []*azblob.Client
		for _, u := range strings.Split(t.url, ",") {
			c, err := Client(strings.TrimSpace(u), o.account, o.key, o.clients)
			if err != nil {
				return nil, err
			}
			cs = append(cs, c)
		}
		c := cs[0]
		container := fmt.Sprintf("bench%d", time.Now().UnixNano())
		if want["blob"] {
			rs, err := Small(ctx, cs, container, o.clients, o.size, o.keys, o.dur)
			if err != nil {
				return res, err
			}
			res = append(res, rs...)
		}
		if want["large"] {
			rs, err := Large(ctx, c, container, o.large<<20, o.block<<20, 4)
			if err != nil {
				return res, err
			}
			res = append(res, rs...)
		}
	}
	if want["queue"] {
		if t.queue == "" {
			return nil, errors.New("-workloads queue needs -queue-url with an external -url")
		}
		r, err := QueueWorkload(ctx, t.queue, o.account, o.key, o.clients, o.dur)
		if err != nil {
			return res, err
		}
		res = append(res, r)
	}
	if want["table"] || want["tablepoint"] {
		if t.table == "" {
			return nil, errors.New("-workloads table needs -table-url with an external -url")
		}
		rs, err := TableWorkloadWith(ctx, t.table, o.account, o.key, TableOptions{Clients: o.clients, Time: o.dur, PointOnly: !want["table"]})
		if err != nil {
			return res, err
		}
		res = append(res, rs...)
	}
	if want["file"] {
		if t.file == "" {
			return nil, errors.New("-workloads file needs -file-url with an external -url")
		}
		rs, err := FileWorkload(ctx, t.file, o.account, o.key, o.large<<20, 4<<20, 8)
		if err != nil {
			return res, err
		}
		res = append(res, rs...)
	}
	return res, nil
}

// ceilingRuns runs the workloads against t and against the ceiling (the
// Floor handler served from this process: the same client and requests,
// answered without authentication, storage or durability) rounds times
// each, alternating which goes first, prints every result and then each
// workload's median as a share of the ceiling's (issue: the yardstick of
// docs/benchmarks.md, "Against the ceiling"). The ceiling answers the
// blob, queue and tablepoint workloads; others run on t only.
func ceilingRuns(ctx context.Context, t target, o runOpts, rounds int, out io.Writer) ([]Result, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: Floor(o.size)}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	cu := "http://" + ln.Addr().String() + "/" + o.account
	co := o
	co.want = map[string]bool{}
	for w := range o.want {
		switch w {
		case "blob", "queue", "tablepoint":
			co.want[w] = true
		case "table":
			co.want["tablepoint"] = true
		}
	}
	var all []Result
	got := map[string][2][]float64{}
	var names []string
	run := func(which int) error {
		tt, oo, label := t, o, "target "
		if which == 1 {
			tt, oo, label = target{url: cu, queue: cu, table: cu}, co, "ceiling"
		}
		saved := meter
		if which == 1 {
			meter = nil // the ceiling runs in this process, not in -server-pid
		}
		rs, err := runWorkloads(ctx, tt, oo)
		meter = saved
		for _, r := range rs {
			fmt.Fprintf(out, "%s  %v\n", label, r)
			v := got[r.Name]
			if v[0] == nil && v[1] == nil {
				names = append(names, r.Name)
			}
			v[which] = append(v[which], r.OpsPerSec())
			got[r.Name] = v
		}
		all = append(all, rs...)
		return err
	}
	for r := range max(1, rounds) {
		first := r % 2
		if err := run(first); err != nil {
			return all, err
		}
		if err := run(1 - first); err != nil {
			return all, err
		}
	}
	fmt.Fprintf(out, "\n%-40s %12s %12s %6s\n", "workload (medians)", "ops/s", "ceiling", "share")
	for _, n := range names {
		v := got[n]
		if len(v[0]) == 0 || len(v[1]) == 0 {
			continue
		}
		a, c := median(v[0]), median(v[1])
		fmt.Fprintf(out, "%-40s %12.0f %12.0f %5.0f%%\n", n, a, c, 100*a/c)
	}
	return all, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

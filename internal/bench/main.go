// Main, on top: cerulean-bench's command line, and the workloads,
// ceiling runs and soak or scale runs it chooses.

package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/profile"
)

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
// workload's median as a share of the ceiling's (the yardstick of
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

package multiproc

import (
	"bytes"
	"context"
	"crypto/md5"
	cryptorand "crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// pgServer controls the PostgreSQL server scripts/with-postgres.sh
// started, through pg_ctl.
type pgServer struct {
	bin, data, user, log string
	opts                 string // pg_ctl start -o: the options the server was started with
}

// pgEnv names the variables scripts/with-postgres.sh exports for tests
// that stop and start the server.
var pgEnv = []string{"CERULEAN_TEST_PGBIN", "CERULEAN_TEST_PGDATA", "CERULEAN_TEST_PGUSER", "CERULEAN_TEST_PGLOG"}

// pgServerFromEnv returns the server's controls, or why it cannot.
func pgServerFromEnv() (*pgServer, error) {
	var missing []string
	for _, v := range pgEnv {
		if os.Getenv(v) == "" {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s not set (scripts/with-postgres.sh exports them)", strings.Join(missing, ", "))
	}
	p := &pgServer{bin: os.Getenv("CERULEAN_TEST_PGBIN"), data: os.Getenv("CERULEAN_TEST_PGDATA"), user: os.Getenv("CERULEAN_TEST_PGUSER"), log: os.Getenv("CERULEAN_TEST_PGLOG")}
	if _, err := os.Stat(filepath.Join(p.bin, "pg_ctl")); err != nil {
		return nil, err
	}
	// postmaster.opts holds the command line of the last start: the binary,
	// then every argument in double quotes. pg_ctl restart starts the
	// server again with them; so does start below, minus -D.
	b, err := os.ReadFile(filepath.Join(p.data, "postmaster.opts"))
	if err != nil {
		return nil, err
	}
	args := regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(string(b), -1)
	var opts []string
	for i := 0; i < len(args); i++ {
		if args[i][1] == "-D" {
			i++
			continue
		}
		opts = append(opts, "'"+strings.ReplaceAll(args[i][1], "'", `'\''`)+"'")
	}
	if len(opts) == 0 {
		return nil, fmt.Errorf("no options in %s: %q", filepath.Join(p.data, "postmaster.opts"), b)
	}
	p.opts = strings.Join(opts, " ")
	return p, nil
}

// ctl runs pg_ctl -D data args..., as the server's user.
func (p *pgServer) ctl(timeout time.Duration, args ...string) (string, error) {
	argv := append([]string{filepath.Join(p.bin, "pg_ctl"), "-D", p.data}, args...)
	if u, err := user.Current(); err != nil || u.Username != p.user {
		argv = append([]string{"runuser", "-u", p.user, "--"}, argv...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = 5 * time.Second // the server must not hold pg_ctl's output open
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out), nil
}

func (p *pgServer) stop() error {
	_, err := p.ctl(90*time.Second, "-m", "fast", "-w", "-t", "60", "stop")
	return err
}

func (p *pgServer) start() error {
	_, err := p.ctl(90*time.Second, "-w", "-t", "60", "-l", p.log, "-o", p.opts, "start")
	return err
}

// running reports whether the server runs (pg_ctl status exits 0).
func (p *pgServer) running() bool {
	_, err := p.ctl(20*time.Second, "status")
	return err == nil
}

// restartProofSchema is pgtest.Schema for a test that restarts the
// server: pgtest keeps one connection for the whole test, which the
// restart kills, so this one connects afresh to create the schema and to
// drop it at cleanup.
func restartProofSchema(t *testing.T) string {
	t.Helper()
	base := pgtest.BaseDSN(t)
	var b [6]byte
	_, _ = cryptorand.Read(b[:])
	schema := "cerulean_test_" + hex.EncodeToString(b[:])
	exec := func(sql string) error {
		var err error
		for range 30 { // the server may be starting: retry for about 30 s
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			var conn *pgx.Conn
			if conn, err = pgx.Connect(ctx, base); err == nil {
				_, err = conn.Exec(ctx, sql)
				_ = conn.Close(ctx)
			}
			cancel()
			if err == nil {
				return nil
			}
			time.Sleep(time.Second)
		}
		return err
	}
	if err := exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("%s is set but creating a schema failed: %v", pgtest.EnvVar, err)
	}
	t.Cleanup(func() {
		if err := exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	dsn, err := pgtest.WithParams(base, map[string]string{"search_path": schema, "application_name": schema})
	must(t, "schema DSN", err)
	return dsn
}

// outcome sorts the result of one request.
type outcome int

const (
	okOutcome    outcome = iota
	cleanFailure         // 503 ServerBusy or 500 InternalError
	badFailure           // anything else
)

func classifyErr(err error) (outcome, string) {
	if err == nil {
		return okOutcome, "ok"
	}
	st, code := status(err)
	switch {
	case st == http.StatusServiceUnavailable && code == "ServerBusy", st == http.StatusInternalServerError && code == "InternalError":
		return cleanFailure, fmt.Sprintf("%d %s", st, code)
	case st != 0:
		return badFailure, fmt.Sprintf("%d %s", st, code)
	}
	return badFailure, err.Error()
}

// request is one HTTP request of the workload.
type request struct {
	node       int
	what       string
	start, end time.Time
	size       int // request body bytes
	outcome    outcome
	desc       string
}

// version is one write of a blob: its bytes' MD5, and whether the service
// acknowledged it.
type blobVersion struct {
	md5   [16]byte
	size  int
	acked bool
}

// blobHistory is every write of one blob name, in the order its (only)
// writer sent them.
type blobHistory struct {
	node     int
	versions []blobVersion
}

// allowed returns the MD5s the blob may hold at the end: those of the last
// acknowledged write and of the writes after it (their outcome is unknown);
// must reports whether the blob must exist.
func (h *blobHistory) allowed() (md5s [][16]byte, must bool) {
	from := 0
	for i, v := range h.versions {
		if v.acked {
			from, must = i, true
		}
	}
	for _, v := range h.versions[from:] {
		md5s = append(md5s, v.md5)
	}
	return md5s, must
}

// content returns the deterministic bytes of write seq of writer w.
func content(w, seq, size int) []byte {
	rng := rand.New(rand.NewPCG(uint64(w)+1, uint64(seq)+1))
	b := make([]byte, size)
	for i := 0; i < size; i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < size; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// TestDatabaseRestart: writers on every process upload blobs with
// Content-MD5 (Put Blob, and Put Block ×3 + Put Block List, each to a new
// name, and overwrites of one blob per writer) while readers check
// acknowledged blobs. Then the PostgreSQL server itself is stopped
// (pg_ctl -m fast stop), kept down for 2 s under load, and started again.
// Every request must answer in bounded time, and those that fail must fail
// cleanly (503 ServerBusy or 500 InternalError); none may succeed while the
// database is down. The processes must recover by themselves (same PIDs)
// within a bounded time, every acknowledged write must be readable
// afterwards, and every stored blob's bytes must match its Content-MD5 (no
// torn or corrupt objects; the outcome of a failed write is either nothing
// or the whole write).
func TestDatabaseRestart(t *testing.T) {
	skipShort(t)
	if os.Getenv(pgtest.EnvVar) == "" {
		t.Skipf("%s is not set: run: bash scripts/with-postgres.sh go test -count=1 -v ./test/multiproc/", pgtest.EnvVar)
	}
	pg, err := pgServerFromEnv()
	if err != nil {
		t.Skipf("the database restart needs a server of its own (other tests would see it stop): "+
			"bash scripts/with-postgres.sh --exclusive go test -run TestDatabaseRestart ./test/multiproc/ (%v)", err)
	}
	c := startCluster(t, restartProofSchema(t), blobSvc, metricsSvc)
	// Runs before the cluster's cleanups (the schema is dropped then).
	t.Cleanup(func() {
		if !pg.running() {
			t.Errorf("PostgreSQL was left stopped; starting it")
			if err := pg.start(); err != nil {
				t.Errorf("starting PostgreSQL again: %v", err)
			}
		}
	})
	ctx := ctxFor(t, 2*time.Minute)
	const (
		writersPerNode = 2
		warmup         = 3 * time.Second // load before the stop
		down           = 2 * time.Second // load while the database is down
		after          = 4 * time.Second // load after every process recovered
		opTimeout      = 20 * time.Second
		hangBound      = 10 * time.Second // the longest a request may take
		recoverBound   = 20 * time.Second // from the restart to serving again
		ctr            = "dbrestart"
	)
	_, err = c.Blob(0).CreateContainer(ctx, ctr, nil)
	must(t, "create container", err)
	var pids [nodes]int
	for i := range nodes {
		pids[i], _ = c.Alive(i)
	}

	var (
		mu       sync.Mutex
		requests []request
		blobs    = map[string]*blobHistory{}
		acked    []string // unique blobs acknowledged, for the readers
	)
	record := func(node int, what string, size int, start time.Time, err error) outcome {
		o, desc := classifyErr(err)
		mu.Lock()
		requests = append(requests, request{node, what, start, time.Now(), size, o, desc})
		mu.Unlock()
		return o
	}
	write := func(name string, node int, v blobVersion) {
		mu.Lock()
		defer mu.Unlock()
		h := blobs[name]
		if h == nil {
			h = &blobHistory{node: node}
			blobs[name] = h
		}
		h.versions = append(h.versions, v)
		if v.acked && !strings.HasPrefix(name, "hot-") {
			acked = append(acked, name)
		}
	}
	var badReads []string
	var cutReads []time.Time // starts of downloads whose body broke off after a 200

	stop := make(chan struct{})
	var wg sync.WaitGroup
	halt := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
	})
	defer halt()
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	pause := func(d time.Duration) {
		select {
		case <-stop:
		case <-time.After(d):
		}
	}

	for w := range nodes * writersPerNode {
		node := w % nodes
		cc := c.Blob(node).ServiceClient().NewContainerClient(ctr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			size := func() int {
				if rng.IntN(8) == 0 {
					return 1<<20 + rng.IntN(256<<10) // several chunk parts
				}
				return 1 + rng.IntN(200<<10) // inline or one chunk
			}
			hot := fmt.Sprintf("hot-%d", w)
			for seq := 0; seq < 10000 && !stopped(); seq++ {
				octx, cancel := context.WithTimeout(ctx, opTimeout)
				switch seq % 3 {
				case 0, 1: // Put Blob with Content-MD5, to a new name or the hot blob
					name := fmt.Sprintf("put-%d-%d", w, seq)
					if seq%3 == 1 {
						name = hot
					}
					data := content(w, seq, size())
					sum := md5.Sum(data)
					start := time.Now()
					// Upload, not UploadBuffer: UploadBuffer refuses a
					// precomputed MD5 (bloberror.UnsupportedChecksum) even
					// when it sends a single Put Blob.
					_, err := cc.NewBlockBlobClient(name).Upload(octx, streamingBody(data), &blockblob.UploadOptions{TransactionalValidation: blob.TransferValidationTypeMD5(sum[:])})
					o := record(node, "put blob", len(data), start, err)
					write(name, node, blobVersion{md5: sum, size: len(data), acked: o == okOutcome})
				case 2: // Put Block ×3 with Content-MD5, Put Block List with the blob's MD5
					name := fmt.Sprintf("blocks-%d-%d", w, seq)
					bb := cc.NewBlockBlobClient(name)
					var all []byte
					var ids []string
					staged := true
					for b := range 3 {
						data := content(w, seq*10+b, size())
						sum := md5.Sum(data)
						id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "block-%06d", b))
						start := time.Now()
						_, err := bb.StageBlock(octx, id, streamingBody(data), &blockblob.StageBlockOptions{TransactionalValidation: blob.TransferValidationTypeMD5(sum[:])})
						if record(node, "put block", len(data), start, err) != okOutcome {
							staged = false
							break
						}
						all = append(all, data...)
						ids = append(ids, id)
					}
					if !staged {
						break // nothing committed: the blob must not exist
					}
					sum := md5.Sum(all)
					start := time.Now()
					_, err := bb.CommitBlockList(octx, ids, &blockblob.CommitBlockListOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentMD5: sum[:]}})
					o := record(node, "put block list", 0, start, err)
					write(name, node, blobVersion{md5: sum, size: len(all), acked: o == okOutcome})
				}
				cancel()
				pause(10 * time.Millisecond)
			}
		}()
	}
	for node := range nodes {
		cc := c.Blob(node).ServiceClient().NewContainerClient(ctr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(node), 11))
			for n := 0; n < 10000 && !stopped(); n++ {
				mu.Lock()
				var name string
				var want blobVersion
				if len(acked) > 0 {
					name = acked[rng.IntN(len(acked))]
					want = blobs[name].versions[len(blobs[name].versions)-1]
				}
				mu.Unlock()
				if name == "" {
					pause(20 * time.Millisecond)
					continue
				}
				octx, cancel := context.WithTimeout(ctx, opTimeout)
				start := time.Now()
				resp, err := cc.NewBlockBlobClient(name).DownloadStream(octx, nil)
				if record(node, "get blob", 0, start, err) == okOutcome {
					got, rerr := io.ReadAll(resp.Body)
					resp.Body.Close()
					switch {
					case rerr != nil:
						mu.Lock()
						cutReads = append(cutReads, start)
						mu.Unlock()
					case md5.Sum(got) != want.md5 || !bytes.Equal(resp.ContentMD5, want.md5[:]):
						mu.Lock()
						badReads = append(badReads, fmt.Sprintf("get %s through node %d: %d bytes with MD5 %x, Content-MD5 %x; acknowledged: %d bytes with MD5 %x", name, node, len(got), md5.Sum(got), resp.ContentMD5, want.size, want.md5))
						mu.Unlock()
					}
				}
				cancel()
				pause(10 * time.Millisecond)
			}
		}()
	}

	t0 := time.Now()
	pause(warmup)
	stopAt := time.Now()
	must(t, "pg_ctl stop", pg.stop())
	downAt := time.Now()
	// A balancer polling /readyz takes every process out while the
	// database is down.
	for i := range nodes {
		if code, body := c.waitReady(i, http.StatusServiceUnavailable, down); code != http.StatusServiceUnavailable {
			t.Errorf("node %d: /readyz with PostgreSQL down: %d %q", i, code, body)
		}
	}
	pause(down)
	startAt := time.Now()
	must(t, "pg_ctl start", pg.start())
	upAt := time.Now()
	t.Logf("PostgreSQL stopped (pg_ctl -m fast stop) at %v, down at %v, started again at %v, accepting connections at %v",
		stopAt.Sub(t0).Round(time.Millisecond), downAt.Sub(t0).Round(time.Millisecond), startAt.Sub(t0).Round(time.Millisecond), upAt.Sub(t0).Round(time.Millisecond))

	// Every process serves again by itself: a read and a write each.
	var recovered [nodes]time.Duration
	for i := range nodes {
		cc := c.Blob(i).ServiceClient().NewContainerClient(ctr)
		deadline := upAt.Add(recoverBound)
		for {
			octx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := cc.GetProperties(octx, nil)
			if err == nil {
				_, err = cc.NewBlockBlobClient(fmt.Sprintf("probe-%d", i)).UploadBuffer(octx, []byte("probe"), nil)
			}
			cancel()
			if err == nil {
				recovered[i] = time.Since(upAt)
				break
			}
			if o, desc := classifyErr(err); o != cleanFailure {
				t.Errorf("node %d after the restart: %s", i, desc)
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d still failing %v after PostgreSQL came back: %v\n%s", i, recoverBound, err, tail(c.nodes[i].logPath, 20))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for i := range nodes {
		if code, body := c.waitReady(i, http.StatusOK, recoverBound); code != http.StatusOK {
			t.Errorf("node %d: /readyz after the restart: %d %q", i, code, body)
		}
	}
	recoveredAt := time.Now()
	t.Logf("every process served a read and a write again within %v of the restart (per process %v)", time.Since(upAt).Round(time.Millisecond), recovered)
	pause(after)
	halt()
	for i := range nodes {
		if pid, alive := c.Alive(i); !alive || pid != pids[i] {
			t.Errorf("node %d: pid %d alive %v, was pid %d: the process did not survive the database restart", i, pid, alive, pids[i])
		}
	}

	// The requests: all answered in bounded time, failures clean, none
	// succeeded while the database was down, and writes succeeded through
	// every process after the restart.
	type tally struct {
		ok, clean, bad int
		slowest        time.Duration
	}
	phases := []struct {
		name     string
		from, to time.Time
	}{
		{"before the stop", t0, stopAt},
		{"while stopping", stopAt, downAt},
		{"while down", downAt, startAt},
		{"while starting", startAt, upAt},
		{"recovering", upAt, recoveredAt},
		{"after recovery", recoveredAt, time.Now().Add(time.Hour)},
	}
	tallies := make([]tally, len(phases))
	okWritesAfter := make([]int, nodes)
	var bad []string
	// Failures by request kind, outcome and error, with their body sizes.
	type group struct{ n, minSize, maxSize int }
	groups := map[string]*group{}
	errKind := regexp.MustCompile(`(connection reset by peer|broken pipe|EOF|timeout|refused)`)
	downFails, downOK := 0, 0
	for _, r := range requests {
		p := 0
		for p < len(phases)-1 && !r.start.Before(phases[p].to) {
			p++
		}
		tl := &tallies[p]
		d := r.end.Sub(r.start)
		tl.slowest = max(tl.slowest, d)
		if r.outcome != okOutcome {
			kind := r.desc
			if m := errKind.FindString(r.desc); m != "" && r.outcome == badFailure {
				kind = "transport error: " + m
			}
			key := r.what + ": " + kind
			g := groups[key]
			if g == nil {
				g = &group{minSize: r.size}
				groups[key] = g
			}
			g.n++
			g.minSize, g.maxSize = min(g.minSize, r.size), max(g.maxSize, r.size)
		}
		switch r.outcome {
		case okOutcome:
			tl.ok++
		case cleanFailure:
			tl.clean++
		default:
			tl.bad++
			if len(bad) < 10 {
				bad = append(bad, fmt.Sprintf("%s (%d bytes) through node %d at %v (%s): %s", r.what, r.size, r.node, r.start.Sub(t0).Round(time.Millisecond), phases[p].name, r.desc))
			}
		}
		if d > hangBound {
			t.Errorf("%s through node %d at %v took %v (> %v): %s", r.what, r.node, r.start.Sub(t0).Round(time.Millisecond), d.Round(time.Millisecond), hangBound, r.desc)
		}
		if !r.start.Before(downAt) && !r.end.After(startAt) {
			if r.outcome == okOutcome {
				downOK++
				t.Errorf("%s through node %d succeeded while PostgreSQL was down (%v to %v)", r.what, r.node, r.start.Sub(t0).Round(time.Millisecond), r.end.Sub(t0).Round(time.Millisecond))
			} else {
				downFails++
			}
		}
		if r.outcome == okOutcome && r.start.After(upAt) && r.what != "get blob" {
			okWritesAfter[r.node]++
		}
	}
	for p, tl := range tallies {
		t.Logf("%-16s %5d ok, %4d × 503/500, %d other failures; slowest %v", phases[p].name+":", tl.ok, tl.clean, tl.bad, tl.slowest.Round(time.Millisecond))
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g := groups[k]
		t.Logf("failures: %4d × %s (request bodies %d to %d bytes)", g.n, k, g.minSize, g.maxSize)
	}
	for _, b := range bad {
		t.Errorf("unclean failure (want 503 ServerBusy or 500 InternalError): %s", b)
	}
	if downFails < 20 {
		t.Errorf("only %d requests were sent while PostgreSQL was down", downFails)
	}
	for i, n := range okWritesAfter {
		if n == 0 {
			t.Errorf("no write through node %d succeeded after the restart", i)
		}
	}
	for _, b := range badReads {
		t.Errorf("read of an acknowledged blob: %s", b)
	}
	// A download already streaming its 200 when the database went away
	// can only break off; one that started after the recovery must not.
	for _, at := range cutReads {
		if at.After(recoveredAt) {
			t.Errorf("a download started at %v, after the recovery, broke off mid-body", at.Sub(t0).Round(time.Millisecond))
		}
	}

	// The checker: every acknowledged write is there, and every stored
	// blob holds exactly the bytes its Content-MD5 names.
	listed := map[string]*container.BlobItem{}
	pager := c.Blob(1).NewListBlobsFlatPager(ctr, nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		must(t, "list blobs", err)
		for _, it := range page.Segment.BlobItems {
			listed[*it.Name] = it
		}
	}
	names := make([]string, 0, len(listed))
	for n := range listed {
		names = append(names, n)
	}
	sort.Strings(names)
	var ackedCount, unknownPresent, unknownAbsent int
	for name, h := range blobs {
		_, mustExist := h.allowed()
		_, present := listed[name]
		switch {
		case mustExist && !present:
			t.Errorf("blob %s: acknowledged, but missing after the restart", name)
		case mustExist:
			ackedCount++
		case present:
			unknownPresent++
		default:
			unknownAbsent++
		}
	}
	var checked, checkedBytes int
	for k, name := range names {
		if strings.HasPrefix(name, "probe-") {
			continue
		}
		it := listed[name]
		h := blobs[name]
		if h == nil {
			t.Errorf("blob %s exists, but no write of it was sent (or all its blocks were not staged)", name)
			continue
		}
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		resp, err := c.Blob(k%nodes).DownloadStream(octx, ctr, name, nil)
		if err != nil {
			cancel()
			t.Errorf("checker: get %s: %v", name, err)
			continue
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			t.Errorf("checker: get %s: %v", name, err)
			continue
		}
		sum := md5.Sum(got)
		checked++
		checkedBytes += len(got)
		if !bytes.Equal(resp.ContentMD5, sum[:]) || !bytes.Equal(it.Properties.ContentMD5, sum[:]) {
			t.Errorf("blob %s: %d bytes with MD5 %x, but Content-MD5 %x (listing: %x)", name, len(got), sum, resp.ContentMD5, it.Properties.ContentMD5)
			continue
		}
		md5s, _ := h.allowed()
		if !slices.Contains(md5s, sum) {
			t.Errorf("blob %s holds %d bytes with MD5 %x: neither its last acknowledged write nor a later one (%d writes)", name, len(got), sum, len(h.versions))
		}
	}
	t.Logf("checker: %d blobs read back (%.1f MiB), each matching its Content-MD5 and a write that may be its last; %d acknowledged blobs all present; of writes that failed, %d left the whole new blob, %d left nothing; %d downloads broke off mid-body during the outage",
		checked, float64(checkedBytes)/(1<<20), ackedCount, unknownPresent, unknownAbsent, len(cutReads))
}

// streamingBody wraps b for the SDK's io.ReadSeekCloser bodies.
func streamingBody(b []byte) io.ReadSeekCloser {
	return readSeekNopCloser{bytes.NewReader(b)}
}

type readSeekNopCloser struct{ *bytes.Reader }

func (readSeekNopCloser) Close() error { return nil }

// TestServeWithoutDatabase: `cerulean serve --postgres` with a database
// that is down, missing or misspelled exits non-zero, promptly, with a log
// line that names the problem (and no password).
func TestServeWithoutDatabase(t *testing.T) {
	skipShort(t)
	base := os.Getenv(pgtest.EnvVar)
	if base == "" {
		t.Skipf("%s is not set: run: bash scripts/with-postgres.sh go test -count=1 -v ./test/multiproc/", pgtest.EnvVar)
	}
	bin := binary(t)
	u, err := url.Parse(base)
	must(t, "parse "+pgtest.EnvVar, err)
	u.Path = "/cerulean_no_such_database"
	const secret = "s3cret-pw"
	cases := []struct {
		name string
		dsn  string
		want []string
	}{
		{"database down (nothing listens on port 1)", "postgres://cerulean:" + secret + "@127.0.0.1:1/x?sslmode=disable", []string{"cerulean:", "PostgreSQL", "127.0.0.1", "connection refused"}},
		{"no such database", u.String(), []string{"cerulean:", "PostgreSQL", "cerulean_no_such_database", "does not exist"}},
		{"malformed DSN", "postgres://cerulean:" + secret + "@127.0.0.1:notaport/x", []string{"cerulean:", "PostgreSQL"}},
	}
	for _, tc := range cases {
		port, err := freePort()
		must(t, "free port", err)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, bin, "serve", "--host", "127.0.0.1", "--data", t.TempDir(), "--postgres", tc.dsn,
			"--blob-port", strconv.Itoa(port), "--queue-port", "-1", "--table-port", "-1", "--file-port", "-1", "--dfs-port", "-1", "--smb-port", "-1")
		cmd.Env = childEnv()
		cmd.SysProcAttr = procAttr()
		cmd.WaitDelay = 5 * time.Second
		start := time.Now()
		out, err := cmd.CombinedOutput()
		took := time.Since(start)
		timedOut := ctx.Err() != nil
		cancel()
		var exit *exec.ExitError
		switch {
		case timedOut:
			t.Errorf("%s: still running after %v:\n%s", tc.name, took.Round(time.Millisecond), out)
			continue
		case err == nil:
			t.Errorf("%s: exited with status 0:\n%s", tc.name, out)
			continue
		case !errors.As(err, &exit):
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		log := string(out)
		for _, w := range tc.want {
			if !strings.Contains(log, w) {
				t.Errorf("%s: the log does not say %q:\n%s", tc.name, w, log)
			}
		}
		if strings.Contains(log, secret) {
			t.Errorf("%s: the log shows the password:\n%s", tc.name, log)
		}
		if strings.Contains(log, "ready") || strings.Contains(log, "listening") {
			t.Errorf("%s: the process reported serving:\n%s", tc.name, log)
		}
		lines := strings.Split(strings.TrimSpace(log), "\n")
		t.Logf("%s: exit status %d after %v: %s", tc.name, exit.ExitCode(), took.Round(time.Millisecond), lines[len(lines)-1])
	}
}

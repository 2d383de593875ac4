// Package crash runs SIGKILL crash trials against a real `cerulean serve`:
// mixed load on the Blob, Table, Queue and File services, the process
// killed mid-flight, restarted on the same data, and every acknowledged
// write checked byte for byte. Azure's promise is that a write, once
// acknowledged, is durable and seen by every later read; the same holds
// here for a process crash.
//
// It runs only when CERULEAN_CRASH_TRIALS is set (scripts/crash-test.sh N
// sets it), on the embedded store, or on PostgreSQL when
// CERULEAN_TEST_POSTGRES is set too (scripts/with-postgres.sh).
package crash

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	azfileservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
)

const (
	envTrials = "CERULEAN_CRASH_TRIALS"
	envPort   = "CERULEAN_CRASH_PORT" // first of four consecutive ports

	ctrName   = "crash"
	tableName = "crash"
	queueName = "crash"
	shareName = "crash"

	// visibility is the visibility timeout of the queue consumer's
	// dequeues: long enough that a message is never due again while its
	// consumer still works on it, short enough that abandoned messages
	// come back within a trial.
	visibility = 2 * time.Second
	maxRange   = 4 << 20 // Put Range's limit
	opTimeout  = 60 * time.Second
)

// server is one `cerulean serve` process on fixed ports.
type server struct {
	bin, data, dsn, log string
	port                int
	extra               []string // more serve flags
	cmd                 *exec.Cmd
	exited              chan struct{}
}

func (s *server) start(t *testing.T) {
	t.Helper()
	args := []string{"serve", "--host", "127.0.0.1", "--data", s.data, "--log-level", "warn",
		"--blob-port", strconv.Itoa(s.port), "--queue-port", strconv.Itoa(s.port + 1),
		"--table-port", strconv.Itoa(s.port + 2), "--file-port", strconv.Itoa(s.port + 3),
		"--dfs-port", "-1", "--smb-port", "-1", "--metrics-port", "-1", "--share-soft-delete", "7"}
	if s.dsn != "" {
		args = append(args, "--postgres", s.dsn, "--postgres-max-conns", "8")
	}
	args = append(args, s.extra...)
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(logf, "=== %s: starting\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(s.bin, args...)
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	s.cmd, s.exited = cmd, exited
	probe := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(60 * time.Second)
	for p := s.port; p < s.port+4; p++ {
		for {
			resp, err := probe.Get(fmt.Sprintf("http://127.0.0.1:%d/%s", p, app.DevAccount))
			if err == nil {
				resp.Body.Close()
				if resp.Header.Get("x-ms-request-id") == "" {
					s.kill()
					t.Fatalf("port %d answers, but not as a storage service (another program holds it?)", p)
				}
				break
			}
			select {
			case <-exited:
				t.Fatalf("cerulean serve exited before serving:\n%s", tail(s.log, 20))
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				s.kill()
				t.Fatalf("port %d not answering after 60s:\n%s", p, tail(s.log, 20))
			}
		}
	}
}

// kill ends the process with SIGKILL: no shutdown, requests in flight are
// cut.
func (s *server) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
	s.cmd = nil
}

// stop ends the process gracefully (SIGTERM).
func (s *server) stop(t *testing.T) {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		t.Errorf("cerulean serve did not exit within 30s of SIGTERM")
		s.kill()
	}
	s.cmd = nil
}

func childEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CERULEAN_") {
			out = append(out, kv)
		}
	}
	return out
}

func tail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	ls := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return string(bytes.Join(ls, []byte("\n")))
}

func buildBinary(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	bin := filepath.Join(t.TempDir(), "cerulean")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/cerulean")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/cerulean: %v\n%s", err, out)
	}
	return bin
}

// clients are SDK clients of the four services, retries off so every
// outcome reaches the test.
type clients struct {
	tr    *http.Transport
	blob  *azblob.Client
	table *aztables.Client
	queue *azqueue.QueueClient
	share *directory.Client // the share's root directory
	files *azfileservice.Client
}

func newClients(t *testing.T, port int) *clients {
	t.Helper()
	tr := &http.Transport{DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext, MaxIdleConnsPerHost: 8}
	opts := azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: &http.Client{Transport: tr, Timeout: opTimeout}}
	u := func(p int) string { return fmt.Sprintf("http://127.0.0.1:%d/%s", p, app.DevAccount) }
	c := &clients{tr: tr}
	bcred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	c.blob, err = azblob.NewClientWithSharedKeyCredential(u(port), bcred, &azblob.ClientOptions{ClientOptions: opts})
	must(t, err)
	qcred, err := azqueue.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	qs, err := azqueue.NewServiceClientWithSharedKeyCredential(u(port+1), qcred, &azqueue.ClientOptions{ClientOptions: opts})
	must(t, err)
	c.queue = qs.NewQueueClient(queueName)
	tcred, err := aztables.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	ts, err := aztables.NewServiceClientWithSharedKey(u(port+2), tcred, &aztables.ClientOptions{ClientOptions: opts})
	must(t, err)
	c.table = ts.NewClient(tableName)
	fcred, err := azfileservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	fs, err := azfileservice.NewClientWithSharedKeyCredential(u(port+3), fcred, &azfileservice.ClientOptions{ClientOptions: opts})
	must(t, err)
	c.share = fs.NewShareClient(shareName).NewRootDirectoryClient()
	c.files = fs
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// content returns the deterministic bytes of seed.
func content(seed uint64, size int) []byte {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	b := make([]byte, size)
	for i := 0; i < size; i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < size; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// drawSize draws a blob or file size: mostly small, some of several MiB,
// a few of max.
func drawSize(rng *rand.Rand, max int) int {
	switch r := rng.IntN(100); {
	case r < 60:
		return 1<<10 + rng.IntN(63<<10)
	case r < 90:
		return 64<<10 + rng.IntN(960<<10)
	case r < 97:
		return 1<<20 + rng.IntN(3<<20)
	default:
		return max
	}
}

// state is what the model knows of an object (or of one group of objects
// written atomically).
type state int

const (
	absent   state = iota // must not exist
	present               // must exist with exactly its content
	unknown               // the write got no answer: whole or nothing
	deleting              // present, then a delete got no answer: whole or nothing
)

type blobObj struct {
	seed    uint64
	size    int
	st      state
	touched bool // written or deleted in the current trial
}

type entity struct {
	group int
	data  string
	n     int64
}

type tableGroup struct {
	keys    []string // PartitionKey/RowKey
	st      state
	touched bool
}

type fileRegion struct {
	off, n int
	st     state // present: the bytes; absent: zeros; unknown: either
}

type fileObj struct {
	seed    uint64
	size    int
	st      state // of the file itself (Create)
	regions []fileRegion
	touched bool
}

type delivery struct {
	end         time.Time // the Get Messages answer came back
	nextVisible time.Time
}

type qmsg struct {
	st         state // put: present (acked) or unknown; absent after an acked delete
	deliveries []delivery
	deletedAt  time.Time // the acked delete's answer
	events     []string  // for the report of a violation
}

// model is everything the test wrote and what each outcome allows.
type model struct {
	mu       sync.Mutex
	blobs    map[string]*blobObj
	groups   []*tableGroup
	entities map[string]entity
	files    map[string]*fileObj
	msgs     map[string]*qmsg
	conts    map[string]*contObj // the container deleter's (container_delete_test.go)
	sdShares map[string]*sdShare // the share soft deleter's (share_softdelete_test.go)
	errs     []string

	ops, acked, unknowns int // write requests and their outcomes
	dequeues             int // Get Messages requests
	ackedBytes           int64
}

func (m *model) violation(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.errs = append(m.errs, fmt.Sprintf(format, args...))
}

// outcome counts one write request and reports whether it was acknowledged.
func (m *model) outcome(err error, bytes int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops++
	if err == nil {
		m.acked++
		m.ackedBytes += int64(bytes)
		return true
	}
	m.unknowns++
	return false
}

func stateOf(acked bool) state {
	if acked {
		return present
	}
	return unknown
}

// trialSetup is the number of trials (CERULEAN_CRASH_TRIALS; the test is
// skipped without it) and the first of a trial server's ports: offset
// after CERULEAN_CRASH_PORT (default 21210), so that each trial's server
// has ports of its own.
func trialSetup(t *testing.T, offset int) (trials, port int) {
	t.Helper()
	trials, _ = strconv.Atoi(os.Getenv(envTrials))
	if trials <= 0 {
		t.Skipf("%s is not set: run bash scripts/crash-test.sh N", envTrials)
	}
	port = 21210
	if p := os.Getenv(envPort); p != "" {
		var err error
		if port, err = strconv.Atoi(p); err != nil {
			t.Fatalf("%s: %v", envPort, err)
		}
	}
	return trials, port + offset
}

// TestCrashTrials: see the package comment.
func TestCrashTrials(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crash trials run real servers for minutes")
	}
	trials, port := trialSetup(t, 0)
	srv := &server{bin: buildBinary(t), data: filepath.Join(t.TempDir(), "data"), log: filepath.Join(t.TempDir(), "cerulean.log"), port: port}
	backend := "embedded store (fsync on, as cerulean serve runs)"
	if os.Getenv(pgtest.EnvVar) != "" {
		srv.dsn, _ = pgtest.Schema(t)
		backend = "PostgreSQL backend"
	}
	t.Cleanup(func() {
		srv.stop(t)
		if t.Failed() {
			t.Logf("server log (last lines):\n%s", tail(srv.log, 40))
		}
	})
	srv.start(t)
	ctx := context.Background()
	cl := newClients(t, port)
	_, err := cl.blob.CreateContainer(ctx, ctrName, nil)
	must(t, err)
	_, err = cl.table.CreateTable(ctx, nil)
	must(t, err)
	_, err = cl.queue.Create(ctx, nil)
	must(t, err)
	createShare(t, port)

	m := &model{blobs: map[string]*blobObj{}, entities: map[string]entity{}, files: map[string]*fileObj{}, msgs: map[string]*qmsg{}, conts: map[string]*contObj{}, sdShares: map[string]*sdShare{}}
	seed := uint64(time.Now().UnixNano())
	t.Logf("%d trials on the %s, seed %d", trials, backend, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	start := time.Now()
	var loadTime, restartTime time.Duration
	done := 0
	for trial := 1; trial <= trials; trial++ {
		done = trial
		cl := newClients(t, port)
		d := time.Duration(300+rng.IntN(2200)) * time.Millisecond
		inflight := runLoad(m, cl, trial, rng.Uint64(), d, srv)
		loadTime += d
		cl.tr.CloseIdleConnections()
		rs := time.Now()
		srv.start(t)
		restartTime += time.Since(rs)
		cl = newClients(t, port)
		verify(t, m, cl, false)
		cl.tr.CloseIdleConnections()
		if len(m.errs) > 0 {
			break
		}
		if trials <= 10 || trial%10 == 0 {
			t.Logf("trial %d: killed after %v with %d requests in flight; restarted and verified", trial, d, inflight)
		}
	}
	if len(m.errs) == 0 {
		cl = newClients(t, port)
		verify(t, m, cl, true)
		drainQueue(t, m, cl)
	}
	for i, e := range m.errs {
		if i == 30 {
			t.Errorf("... and %d more", len(m.errs)-30)
			break
		}
		t.Error(e)
	}
	var nBlobs, nEntities, nFiles int
	for _, b := range m.blobs {
		if b.st == present {
			nBlobs++
		}
	}
	for _, g := range m.groups {
		if g.st == present {
			nEntities += len(g.keys)
		}
	}
	for _, f := range m.files {
		if f.st == present {
			nFiles++
		}
	}
	nMsgs := len(m.msgs)
	nFilled, nReclaimed := 0, 0
	for _, c := range m.conts {
		if !c.filling {
			nFilled++
		}
		if c.checked {
			nReclaimed++
		}
	}
	t.Logf("container deleter: %d containers filled, %d deleted and found reclaimed after a restart", nFilled, nReclaimed)
	t.Logf("share soft deleter: %s", sdSummary(m))
	t.Logf("crash trials: %d SIGKILLs on the %s in %v (load %v, restarts %v): %d write requests, %d acknowledged (%.1f MiB), %d without answer, and %d Get Messages; at the end %d blobs, %d entities, %d files, %d queue messages put, all checked byte for byte; violations (lost, torn or duplicated): %d",
		done, backend, time.Since(start).Round(time.Second), loadTime.Round(time.Millisecond), restartTime.Round(time.Millisecond),
		m.ops, m.acked, float64(m.ackedBytes)/(1<<20), m.unknowns, m.dequeues, nBlobs, nEntities, nFiles, nMsgs, len(m.errs))
}

// createShare creates the share (the file clients above address a
// directory, not the share).
func createShare(t *testing.T, port int) {
	t.Helper()
	cred, err := azfileservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	fs, err := azfileservice.NewClientWithSharedKeyCredential(fmt.Sprintf("http://127.0.0.1:%d/%s", port+3, app.DevAccount), cred, nil)
	must(t, err)
	_, err = fs.CreateShare(context.Background(), shareName, nil)
	must(t, err)
}

// runLoad runs the writers for d, then kills the server while they are
// busy and waits for them. It returns how many requests were cut.
func runLoad(m *model, cl *clients, trial int, seed uint64, d time.Duration, srv *server) int {
	stop := make(chan struct{})
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	var wg sync.WaitGroup
	var inflightMu sync.Mutex
	inflight := 0
	busy := func(delta int) {
		inflightMu.Lock()
		inflight += delta
		inflightMu.Unlock()
	}
	workers := []func(rng *rand.Rand){
		func(rng *rand.Rand) { blobWriter(m, cl, trial, rng, stopped, busy) },
		func(rng *rand.Rand) { tableWriter(m, cl, trial, rng, stopped, busy) },
		func(rng *rand.Rand) { queueProducer(m, cl, trial, stopped, busy) },
		func(rng *rand.Rand) { queueConsumer(m, cl, rng, stopped, busy) },
		func(rng *rand.Rand) { fileWriter(m, cl, trial, rng, stopped, busy) },
		func(rng *rand.Rand) { containerDeleter(m, cl, trial, rng, stopped, busy) },
		func(rng *rand.Rand) { shareSoftDeleter(m, cl, trial, rng, stopped, busy) },
	}
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w(rand.New(rand.NewPCG(seed, uint64(i))))
		}()
	}
	time.Sleep(d)
	close(stop)
	inflightMu.Lock()
	cut := inflight
	inflightMu.Unlock()
	srv.kill()
	wg.Wait()
	return cut
}

type stopFn func() bool
type busyFn func(int)

func blobWriter(m *model, cl *clients, trial int, rng *rand.Rand, stopped stopFn, busy busyFn) {
	cc := cl.blob.ServiceClient().NewContainerClient(ctrName)
	for seq := 0; !stopped(); seq++ {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		switch r := rng.IntN(100); {
		case r < 30: // Delete Blob of an acknowledged blob of an earlier trial
			m.mu.Lock()
			var name string
			for n, b := range m.blobs { // map order: a random one
				if b.st == present && !b.touched {
					name = n
					break
				}
			}
			m.mu.Unlock()
			if name == "" {
				break
			}
			busy(1)
			_, err := cc.NewBlobClient(name).Delete(ctx, nil)
			busy(-1)
			acked := m.outcome(err, 0)
			m.mu.Lock()
			b := m.blobs[name]
			b.touched = true
			if acked {
				b.st = absent
			} else {
				b.st = deleting
			}
			m.mu.Unlock()
		case r < 70: // Put Blob with Content-MD5
			name := fmt.Sprintf("put-%d-%d", trial, seq)
			b := &blobObj{seed: rng.Uint64(), size: drawSize(rng, 20<<20), st: unknown, touched: true}
			data := content(b.seed, b.size)
			sum := md5.Sum(data)
			m.mu.Lock()
			m.blobs[name] = b
			m.mu.Unlock()
			busy(1)
			_, err := cc.NewBlockBlobClient(name).Upload(ctx, nopCloser(data), &blockblob.UploadOptions{TransactionalValidation: blob.TransferValidationTypeMD5(sum[:])})
			busy(-1)
			acked := m.outcome(err, len(data))
			m.mu.Lock()
			b.st = stateOf(acked)
			m.mu.Unlock()
		default: // Put Block ×k, Put Block List
			name := fmt.Sprintf("blocks-%d-%d", trial, seq)
			b := &blobObj{seed: rng.Uint64(), size: drawSize(rng, 20<<20), st: absent, touched: true}
			data := content(b.seed, b.size)
			m.mu.Lock()
			m.blobs[name] = b
			m.mu.Unlock()
			bb := cc.NewBlockBlobClient(name)
			// At least three blocks, of at most 4 MiB.
			blockSize := min(maxRange, (len(data)+2)/3)
			var ids []string
			ok := true
			for off := 0; off < len(data) && ok; off += blockSize {
				part := data[off:min(off+blockSize, len(data))]
				sum := md5.Sum(part)
				id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "block-%06d", len(ids)))
				busy(1)
				_, err := bb.StageBlock(ctx, id, nopCloser(part), &blockblob.StageBlockOptions{TransactionalValidation: blob.TransferValidationTypeMD5(sum[:])})
				busy(-1)
				ok = m.outcome(err, len(part))
				ids = append(ids, id)
			}
			if !ok {
				break // never committed: the blob must not exist
			}
			sum := md5.Sum(data)
			m.mu.Lock()
			b.st = unknown
			m.mu.Unlock()
			busy(1)
			_, err := bb.CommitBlockList(ctx, ids, &blockblob.CommitBlockListOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentMD5: sum[:]}})
			busy(-1)
			acked := m.outcome(err, 0)
			m.mu.Lock()
			b.st = stateOf(acked)
			m.mu.Unlock()
		}
		cancel()
	}
}

func tableWriter(m *model, cl *clients, trial int, rng *rand.Rand, stopped stopFn, busy busyFn) {
	for seq := 0; !stopped(); seq++ {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		n := 1
		pk := "single"
		if rng.IntN(2) == 0 {
			n = 2 + rng.IntN(9)
			pk = fmt.Sprintf("batch-%d-%d", trial, seq)
		}
		g := &tableGroup{st: unknown, touched: true}
		var bodies [][]byte
		m.mu.Lock()
		gid := len(m.groups)
		m.groups = append(m.groups, g)
		for i := range n {
			rk := fmt.Sprintf("%d-%d-%d", trial, seq, i)
			payload := base64.StdEncoding.EncodeToString(content(rng.Uint64(), 50+rng.IntN(1500)))
			e := entity{group: gid, data: payload, n: rng.Int64()}
			key := pk + "/" + rk
			g.keys = append(g.keys, key)
			m.entities[key] = e
			b, _ := json.Marshal(map[string]any{"PartitionKey": pk, "RowKey": rk, "Data": e.data, "N": strconv.FormatInt(e.n, 10), "N@odata.type": "Edm.Int64"})
			bodies = append(bodies, b)
		}
		m.mu.Unlock()
		var err error
		size := 0
		for _, b := range bodies {
			size += len(b)
		}
		busy(1)
		if n == 1 {
			_, err = cl.table.AddEntity(ctx, bodies[0], nil)
		} else {
			actions := make([]aztables.TransactionAction, n)
			for i, b := range bodies {
				actions[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: b}
			}
			_, err = cl.table.SubmitTransaction(ctx, actions, nil)
		}
		busy(-1)
		acked := m.outcome(err, size)
		m.mu.Lock()
		g.st = stateOf(acked)
		m.mu.Unlock()
		cancel()
	}
}

func queueProducer(m *model, cl *clients, trial int, stopped stopFn, busy busyFn) {
	for seq := 0; !stopped(); seq++ {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		text := fmt.Sprintf("m-%d-%d", trial, seq)
		q := &qmsg{st: unknown}
		m.mu.Lock()
		m.msgs[text] = q
		m.mu.Unlock()
		busy(1)
		_, err := cl.queue.EnqueueMessage(ctx, text, nil)
		busy(-1)
		acked := m.outcome(err, len(text))
		m.mu.Lock()
		if q.st == unknown {
			// Unless the consumer already got it (and maybe deleted it)
			// between the put's commit and its answer here.
			q.st = stateOf(acked)
		}
		q.events = append(q.events, fmt.Sprintf("put %v at %s", errOrOK(err), time.Now().Format(time.StampMicro)))
		m.mu.Unlock()
		cancel()
		time.Sleep(5 * time.Millisecond)
	}
}

// received checks one delivery of text against what came before: a
// message must not be delivered while an earlier delivery keeps it
// invisible, nor after an acknowledged delete.
func (m *model) received(text string, start, end time.Time, nextVisible time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.msgs[text]
	if q == nil {
		m.errs = append(m.errs, fmt.Sprintf("queue: message %q delivered, but never put", text))
		return
	}
	for _, d := range q.deliveries {
		// The server answered by end; the earlier delivery hid the message
		// until nextVisible (whole seconds, rounded down, in the answer).
		if end.Before(d.nextVisible) {
			m.errs = append(m.errs, fmt.Sprintf("queue: message %q delivered again at %v, before the visibility of an earlier delivery ended (%v)", text, end.Format(time.RFC3339Nano), d.nextVisible.Format(time.RFC3339)))
		}
	}
	if q.st == absent && start.After(q.deletedAt) {
		m.errs = append(m.errs, fmt.Sprintf("queue: message %q delivered at %v, after its delete was acknowledged at %v", text, end.Format(time.RFC3339Nano), q.deletedAt.Format(time.RFC3339Nano)))
	}
	if q.st == unknown || q.st == deleting {
		q.st = present // the put took effect; the delete did not
	}
	q.deliveries = append(q.deliveries, delivery{end: end, nextVisible: nextVisible})
	q.events = append(q.events, fmt.Sprintf("delivered %s-%s until %s", start.Format(time.StampMicro), end.Format(time.StampMicro), nextVisible.Format(time.Stamp)))
}

func queueConsumer(m *model, cl *clients, rng *rand.Rand, stopped stopFn, busy busyFn) {
	for !stopped() {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		start := time.Now()
		busy(1)
		resp, err := cl.queue.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr[int32](4), VisibilityTimeout: to.Ptr(int32(visibility / time.Second))})
		busy(-1)
		end := time.Now()
		m.mu.Lock()
		m.dequeues++
		m.mu.Unlock()
		if err != nil {
			cancel()
			continue
		}
		if len(resp.Messages) == 0 {
			cancel()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		for _, msg := range resp.Messages {
			m.received(*msg.MessageText, start, end, *msg.TimeNextVisible)
		}
		for _, msg := range resp.Messages {
			if rng.IntN(5) == 0 {
				m.mu.Lock()
				if q := m.msgs[*msg.MessageText]; q != nil {
					q.events = append(q.events, "abandoned")
				}
				m.mu.Unlock()
				continue // abandoned: due again after its visibility timeout
			}
			busy(1)
			_, err := cl.queue.DeleteMessage(ctx, *msg.MessageID, *msg.PopReceipt, nil)
			busy(-1)
			acked := m.outcome(err, 0)
			m.mu.Lock()
			if q := m.msgs[*msg.MessageText]; q != nil {
				if acked {
					q.st, q.deletedAt = absent, time.Now()
				} else if q.st == present {
					q.st = deleting
				}
				q.events = append(q.events, fmt.Sprintf("delete %v at %s", errOrOK(err), time.Now().Format(time.StampMicro)))
			}
			m.mu.Unlock()
		}
		cancel()
	}
}

func fileWriter(m *model, cl *clients, trial int, rng *rand.Rand, stopped stopFn, busy busyFn) {
	for seq := 0; !stopped(); seq++ {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		name := fmt.Sprintf("f-%d-%d", trial, seq)
		f := &fileObj{seed: rng.Uint64(), size: drawSize(rng, 10<<20), st: unknown, touched: true}
		for off := 0; off < f.size; off += maxRange {
			f.regions = append(f.regions, fileRegion{off: off, n: min(maxRange, f.size-off), st: absent})
		}
		data := content(f.seed, f.size)
		m.mu.Lock()
		m.files[name] = f
		m.mu.Unlock()
		fc := cl.share.NewFileClient(name)
		busy(1)
		_, err := fc.Create(ctx, int64(f.size), nil)
		busy(-1)
		acked := m.outcome(err, 0)
		m.mu.Lock()
		f.st = stateOf(acked)
		m.mu.Unlock()
		// Ranges in a random order, each one Put Range.
		order := rng.Perm(len(f.regions))
		for _, i := range order {
			if !acked || stopped() {
				break
			}
			r := &f.regions[i]
			m.mu.Lock()
			r.st = unknown
			m.mu.Unlock()
			busy(1)
			_, err := fc.UploadRange(ctx, int64(r.off), nopCloser(data[r.off:r.off+r.n]), nil)
			busy(-1)
			acked = m.outcome(err, r.n)
			m.mu.Lock()
			r.st = stateOf(acked)
			m.mu.Unlock()
		}
		cancel()
	}
}

type readSeekNopCloser struct{ *bytes.Reader }

func (readSeekNopCloser) Close() error { return nil }

func nopCloser(b []byte) io.ReadSeekCloser { return readSeekNopCloser{bytes.NewReader(b)} }

// verify checks the service state against the model after a restart:
// every object's existence (by listing) and the bytes of those written or
// deleted in the last trial (all when full). Outcomes left unknown are
// then settled by what was found: from now on they must stay so.
func verify(t *testing.T, m *model, cl *clients, full bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	m.mu.Lock()
	defer m.mu.Unlock()
	bad := func(format string, args ...any) { m.errs = append(m.errs, fmt.Sprintf(format, args...)) }

	// Containers deleted (or not) around the kill.
	verifyContainers(ctx, m, cl, bad)
	verifySoftDeletedShares(ctx, m, cl, bad)

	// Blobs.
	listed := map[string]int64{}
	pager := cl.blob.NewListBlobsFlatPager(ctrName, nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("list blobs: %v", err)
		}
		for _, it := range page.Segment.BlobItems {
			listed[*it.Name] = *it.Properties.ContentLength
		}
	}
	for name := range listed {
		if m.blobs[name] == nil {
			bad("blob %s exists, but was never written", name)
		}
	}
	names := make([]string, 0, len(m.blobs))
	for name := range m.blobs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b := m.blobs[name]
		size, found := listed[name]
		switch {
		case b.st == present && !found:
			bad("blob %s: acknowledged (%d bytes), missing after the restart", name, b.size)
			continue
		case b.st == absent && found:
			bad("blob %s: exists (%d bytes) though its delete was acknowledged or it was never committed", name, size)
			continue
		case !found:
			b.st, b.touched = absent, false
			continue
		case size != int64(b.size):
			bad("blob %s: %d bytes, want %d", name, size, b.size)
			continue
		}
		if b.touched || full || b.st != present {
			resp, err := cl.blob.DownloadStream(ctx, ctrName, name, nil)
			if err != nil {
				t.Fatalf("get blob %s: %v", name, err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("get blob %s: %v", name, err)
			}
			if !bytes.Equal(got, content(b.seed, b.size)) {
				bad("blob %s: %d bytes differ from the %d written", name, len(got), b.size)
				continue
			}
		}
		b.st, b.touched = present, false
	}

	// Entities, group by group (a batch is all or nothing).
	got := map[string]entity{}
	tp := cl.table.NewListEntitiesPager(nil)
	for tp.More() {
		page, err := tp.NextPage(ctx)
		if err != nil {
			t.Fatalf("query entities: %v", err)
		}
		for _, raw := range page.Entities {
			var e struct {
				PartitionKey, RowKey, Data, N string
			}
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatalf("entity %s: %v", raw, err)
			}
			n, err := strconv.ParseInt(e.N, 10, 64)
			if err != nil {
				bad("entity %s/%s: N %q: %v", e.PartitionKey, e.RowKey, e.N, err)
			}
			got[e.PartitionKey+"/"+e.RowKey] = entity{data: e.Data, n: n}
		}
	}
	for key := range got {
		if _, ok := m.entities[key]; !ok {
			bad("entity %s exists, but was never inserted", key)
		}
	}
	for _, g := range m.groups {
		found := 0
		for _, key := range g.keys {
			if e, ok := got[key]; ok {
				found++
				want := m.entities[key]
				if e.data != want.data || e.n != want.n {
					bad("entity %s: properties differ from those inserted", key)
				}
			}
		}
		switch {
		case g.st == present && found != len(g.keys):
			bad("table: %d of %d acknowledged entities present (%s...)", found, len(g.keys), g.keys[0])
		case g.st == absent && found != 0:
			bad("table: %d entities present of a write found absent before (%s...)", found, g.keys[0])
		case found != 0 && found != len(g.keys):
			bad("table: batch torn: %d of %d entities present (%s...)", found, len(g.keys), g.keys[0])
		case found == 0:
			g.st = absent
		default:
			g.st = present
		}
		g.touched = false
	}

	// Files.
	flisted := map[string]int64{}
	fp := cl.share.NewListFilesAndDirectoriesPager(nil)
	for fp.More() {
		page, err := fp.NextPage(ctx)
		if err != nil {
			t.Fatalf("list files: %v", err)
		}
		for _, f := range page.Segment.Files {
			flisted[*f.Name] = *f.Properties.ContentLength
		}
	}
	for name := range flisted {
		if m.files[name] == nil {
			bad("file %s exists, but was never created", name)
		}
	}
	fnames := make([]string, 0, len(m.files))
	for name := range m.files {
		fnames = append(fnames, name)
	}
	sort.Strings(fnames)
	for _, name := range fnames {
		f := m.files[name]
		size, found := flisted[name]
		anyWritten := false
		for _, r := range f.regions {
			anyWritten = anyWritten || r.st == present
		}
		switch {
		case (f.st == present || anyWritten) && !found:
			bad("file %s: acknowledged, missing after the restart", name)
			continue
		case f.st == absent && found:
			bad("file %s: exists, but was found absent after an earlier crash", name)
			continue
		case !found:
			f.st, f.touched = absent, false
			continue
		case size != int64(f.size):
			bad("file %s: %d bytes, want %d", name, size, f.size)
			continue
		}
		if f.touched || full {
			resp, err := cl.share.NewFileClient(name).DownloadStream(ctx, nil)
			if err != nil {
				t.Fatalf("get file %s: %v", name, err)
			}
			data, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("get file %s: %v", name, err)
			}
			want := content(f.seed, f.size)
			for i := range f.regions {
				r := &f.regions[i]
				g, w := data[r.off:r.off+r.n], want[r.off:r.off+r.n]
				written, zero := bytes.Equal(g, w), allZero(g)
				switch {
				case r.st == present && !written:
					bad("file %s: acknowledged range %d-%d differs from the bytes written", name, r.off, r.off+r.n-1)
				case r.st == absent && !zero:
					bad("file %s: range %d-%d never written (or found unwritten before) is not zeros", name, r.off, r.off+r.n-1)
				case !written && !zero:
					bad("file %s: range %d-%d torn: neither its bytes nor zeros", name, r.off, r.off+r.n-1)
				case written:
					r.st = present
				default:
					r.st = absent
				}
			}
		}
		f.st, f.touched = present, false
	}
}

// errOrOK describes the outcome of a request.
func errOrOK(err error) string {
	if err == nil {
		return "ok"
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return fmt.Sprintf("%d %s", re.StatusCode, re.ErrorCode)
	}
	return "no answer"
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// drainQueue waits until every dequeued message is due again, then reads
// the queue empty: every acknowledged message not deleted must be there,
// once, and nothing else.
func drainQueue(t *testing.T, m *model, cl *clients) {
	t.Helper()
	m.mu.Lock()
	due := time.Now()
	for _, q := range m.msgs {
		for _, d := range q.deliveries {
			if d.nextVisible.After(due) {
				due = d.nextVisible
			}
		}
	}
	m.mu.Unlock()
	// TimeNextVisible is whole seconds: a second more covers the fraction.
	time.Sleep(time.Until(due) + time.Second + 100*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	seen := map[string]bool{}
	for {
		start := time.Now()
		resp, err := cl.queue.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr[int32](32), VisibilityTimeout: to.Ptr[int32](600)})
		if err != nil {
			t.Fatalf("drain: get messages: %v", err)
		}
		if len(resp.Messages) == 0 {
			break
		}
		for _, msg := range resp.Messages {
			text := *msg.MessageText
			if seen[text] {
				m.violation("queue: message %q delivered twice while draining", text)
			}
			seen[text] = true
			m.received(text, start, time.Now(), *msg.TimeNextVisible)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for text, q := range m.msgs {
		if q.st == present && !seen[text] {
			m.errs = append(m.errs, fmt.Sprintf("queue: message %q acknowledged and never deleted, but lost: %s", text, strings.Join(q.events, "; ")))
		}
	}
	t.Logf("queue drained: %d messages left, every one expected", len(seen))
}

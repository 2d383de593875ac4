// Package multiproc proves that several `cerulean serve` processes sharing
// one PostgreSQL database behave as one consistent server: it builds the
// real binary, starts three processes on loopback ports against one fresh
// schema and drives them concurrently with the Azure SDKs (and, for SMB,
// with smbtorture and the go-smb2 client).
//
// Run it with a private PostgreSQL:
//
//	bash scripts/with-postgres.sh go test -count=1 -v ./test/multiproc/
//
// Without CERULEAN_TEST_POSTGRES the tests skip; with it set but the
// database unreachable they fail.
package multiproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake"
	dlservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	azfileservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
)

// nodes is how many processes a cluster runs.
const nodes = 3

// service names a listener of `cerulean serve`; its flag is --<name>-port.
// A cluster starts the services it is asked for and passes -1 for the
// others (for smb, -1 and 0 both disable it). Testing another service is: start the cluster with it and add a
// client constructor next to Blob, Queue and Table below.
type service string

const (
	blobSvc  service = "blob"
	queueSvc service = "queue"
	tableSvc service = "table"
	fileSvc  service = "file"
	dfsSvc   service = "dfs" // Data Lake Storage Gen2
	smbSvc   service = "smb" // SMB2/3, not HTTP: probed with an SMB session
	// metricsSvc is the metrics and health listener, probed on /healthz.
	metricsSvc service = "metrics"
)

var allServices = []service{blobSvc, queueSvc, tableSvc, fileSvc, dfsSvc, smbSvc, metricsSvc}

// The binary is built once per test run, on first use.
var (
	binDir  string
	binOnce sync.Once
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cerulean-multiproc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binary builds ./cmd/cerulean from the module root into binDir.
func binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		start := time.Now()
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			binErr = fmt.Errorf("go env GOMOD: %w", err)
			return
		}
		gomod := strings.TrimSpace(string(out))
		if gomod == "" || gomod == os.DevNull {
			binErr = errors.New("go env GOMOD: not inside the module")
			return
		}
		binPath = filepath.Join(binDir, "cerulean")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/cerulean")
		cmd.Dir = filepath.Dir(gomod)
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/cerulean: %w\n%s", err, out)
			return
		}
		fmt.Fprintf(os.Stderr, "multiproc: built %s in %v\n", binPath, time.Since(start).Round(time.Millisecond))
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// node is one `cerulean serve` process.
type node struct {
	idx      int
	services []service
	ports    map[service]int
	logPath  string

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{} // closed when the current process has exited
	waitErr  error
	stopping bool // the test ended this process on purpose
}

// cluster is nodes processes sharing one PostgreSQL schema.
type cluster struct {
	t     *testing.T
	bin   string
	dsn   string
	env   []string // added to every process's environment
	dir   string
	nodes []*node
	// tls, when the layout asks for bearer tokens, holds the server's
	// certificate files and the clients' roots (see newClusterTLS).
	tls *clusterTLS

	mu         sync.Mutex
	transports []*http.Transport
}

// newCluster starts the processes with the given services listening and
// waits until every one answers. Everything is stopped at cleanup, before
// the schema is dropped.
func newCluster(t *testing.T, services ...service) *cluster {
	t.Helper()
	skipShort(t)
	if os.Getenv(pgtest.EnvVar) == "" {
		t.Skipf("%s is not set: these tests run %d cerulean processes on one PostgreSQL database; run: bash scripts/with-postgres.sh go test -count=1 -v ./test/multiproc/", pgtest.EnvVar, nodes)
	}
	dsn, _ := pgtest.Schema(t) // fails the test when the database is unreachable
	return startCluster(t, dsn, services...)
}

// layout is what the processes of a mixed cluster run: services[i] are
// the listeners of process i; env is added to every process's environment
// (hidden settings such as CERULEAN_SMB_LIVENESS).
type layout struct {
	services [nodes][]service
	env      []string
	// bearer serves the HTTP services over HTTPS with a certificate the
	// clients trust and accepts bearer tokens (--oauth basic).
	bearer bool
}

// newMixedCluster is newCluster with a different set of services per
// process.
func newMixedCluster(t *testing.T, l layout) *cluster {
	t.Helper()
	skipShort(t)
	if os.Getenv(pgtest.EnvVar) == "" {
		t.Skipf("%s is not set: these tests run %d cerulean processes on one PostgreSQL database; run: bash scripts/with-postgres.sh go test -count=1 -v ./test/multiproc/", pgtest.EnvVar, nodes)
	}
	dsn, _ := pgtest.Schema(t)
	return startLayout(t, dsn, l)
}

// startCluster starts the processes on the schema dsn names (see
// newCluster).
func startCluster(t *testing.T, dsn string, services ...service) *cluster {
	t.Helper()
	var l layout
	for i := range l.services {
		l.services[i] = services
	}
	return startLayout(t, dsn, l)
}

// startLayout starts the processes of l on the schema dsn names.
func startLayout(t *testing.T, dsn string, l layout) *cluster {
	t.Helper()
	c := &cluster{t: t, bin: binary(t), dsn: dsn, env: l.env, dir: t.TempDir()}
	// Registered after the schema's cleanup, so it runs before the
	// schema is dropped.
	t.Cleanup(c.stopAll)
	if l.bearer {
		c.tls = newClusterTLS(t, c.dir)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, nodes)
	for i := range nodes {
		n := &node{idx: i, services: l.services[i], logPath: filepath.Join(c.dir, fmt.Sprintf("node%d.log", i))}
		c.nodes = append(c.nodes, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.startFresh(n)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cerulean processes ready in %v", nodes, time.Since(start).Round(time.Millisecond))
	return c
}

// startFresh starts n on free ports, trying new ones when another program
// took a port between choosing and binding it.
func (c *cluster) startFresh(n *node) error {
	var err error
	for range 3 {
		n.ports = map[service]int{}
		for _, s := range n.services {
			p, perr := freePort()
			if perr != nil {
				return perr
			}
			n.ports[s] = p
		}
		if err = c.start(n); err == nil {
			return nil
		}
		if !strings.Contains(err.Error(), "address already in use") {
			return err
		}
	}
	return err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs n's process on n.ports and waits until every listener answers
// (HTTP, or an SMB session for smb).
func (c *cluster) start(n *node) error {
	args := []string{"serve", "--host", "127.0.0.1", "--data", filepath.Join(c.dir, "data"),
		"--log-level", "warn", "--postgres", c.dsn, "--postgres-max-conns", "8"}
	for _, s := range allServices {
		port := -1
		if p, ok := n.ports[s]; ok {
			port = p
		}
		args = append(args, "--"+string(s)+"-port", strconv.Itoa(port))
	}
	if c.tls != nil {
		args = append(args, "--tls-cert", c.tls.certFile, "--tls-key", c.tls.keyFile, "--oauth", "basic")
	}
	logf, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "=== %s: starting node %d\n", time.Now().Format(time.RFC3339Nano), n.idx)
	cmd := exec.Command(c.bin, args...)
	cmd.Env = append(childEnv(), c.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	exited := make(chan struct{})
	n.mu.Lock()
	n.cmd, n.exited, n.stopping = cmd, exited, false
	n.mu.Unlock()
	go func() {
		err := cmd.Wait()
		logf.Close()
		n.mu.Lock()
		n.waitErr = err
		n.mu.Unlock()
		close(exited)
	}()

	deadline := time.Now().Add(60 * time.Second)
	probe := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: c.tlsClient()}}
	for _, s := range n.services {
		if s == smbSvc {
			if err := c.waitSMB(n, exited, deadline); err != nil {
				return err
			}
			continue
		}
		url := fmt.Sprintf("%s://127.0.0.1:%d/%s", c.scheme(), n.ports[s], app.DevAccount)
		if s == metricsSvc {
			url = fmt.Sprintf("http://127.0.0.1:%d/healthz", n.ports[s])
		}
		for {
			resp, err := probe.Get(url)
			if err == nil {
				resp.Body.Close()
				if s == metricsSvc && resp.StatusCode != http.StatusOK || s != metricsSvc && resp.Header.Get("x-ms-request-id") == "" {
					c.signal(n, syscall.SIGKILL)
					return fmt.Errorf("node %d: port %d answers, but not as a storage service (another program took it?)", n.idx, n.ports[s])
				}
				break // any storage answer (even 403): the listener serves
			}
			select {
			case <-exited:
				return fmt.Errorf("node %d exited before serving (%v):\n%s", n.idx, n.waitErr, tail(n.logPath, 20))
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				c.signal(n, syscall.SIGKILL)
				return fmt.Errorf("node %d: %s service not answering after 60s:\n%s", n.idx, s, tail(n.logPath, 20))
			}
		}
	}
	select {
	case <-exited:
		return fmt.Errorf("node %d exited right after starting (%v):\n%s", n.idx, n.waitErr, tail(n.logPath, 20))
	default:
	}
	return nil
}

// childEnv is the test's environment without CERULEAN_* variables, so only
// the flags configure the processes.
func childEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CERULEAN_") {
			out = append(out, kv)
		}
	}
	return out
}

// signal sends sig to n's process, marking the exit as intended, and waits
// for it to exit (up to wait; then it is killed).
func (c *cluster) signal(n *node, sig syscall.Signal) {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.stopping = true
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		c.t.Errorf("node %d did not exit within 20s of %v; killing it", n.idx, sig)
		_ = cmd.Process.Kill()
		<-exited
	}
}

// Kill ends process i with SIGKILL: no graceful shutdown, in-flight
// requests are cut.
func (c *cluster) Kill(i int) { c.signal(c.nodes[i], syscall.SIGKILL) }

// Restart starts process i again on its previous ports.
func (c *cluster) Restart(i int) {
	c.t.Helper()
	if err := c.start(c.nodes[i]); err != nil {
		c.t.Fatalf("restarting node %d: %v", i, err)
	}
}

// stopAll ends every process gracefully (SIGTERM) and reports processes
// that died on their own or did not shut down cleanly.
func (c *cluster) stopAll() {
	c.mu.Lock()
	for _, tr := range c.transports {
		tr.CloseIdleConnections()
	}
	c.mu.Unlock()
	for _, n := range c.nodes {
		n.mu.Lock()
		cmd, exited, stopping := n.cmd, n.exited, n.stopping
		n.mu.Unlock()
		if cmd == nil {
			continue
		}
		select {
		case <-exited:
			if !stopping {
				c.t.Errorf("node %d exited by itself (%v):\n%s", n.idx, n.waitErr, tail(n.logPath, 30))
			}
			continue
		default:
		}
		c.signal(n, syscall.SIGTERM)
		n.mu.Lock()
		err := n.waitErr
		n.mu.Unlock()
		if err != nil {
			c.t.Errorf("node %d: unclean shutdown on SIGTERM: %v\n%s", n.idx, err, tail(n.logPath, 30))
		}
	}
	if c.t.Failed() {
		for _, n := range c.nodes {
			c.t.Logf("node %d log (last lines):\n%s", n.idx, tail(n.logPath, 30))
		}
	}
}

// tail returns the last lines of a file.
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

// url is the account URL of service s on process i.
func (c *cluster) url(i int, s service) string {
	p, ok := c.nodes[i].ports[s]
	if !ok {
		c.t.Fatalf("the cluster was started without the %s service", s)
	}
	return fmt.Sprintf("%s://127.0.0.1:%d/%s", c.scheme(), p, app.DevAccount)
}

// clientOptions gives each SDK client its own connection pool (as a
// separate client machine would have) and turns retries off, so every
// status and transport error reaches the test.
func (c *cluster) clientOptions() azcore.ClientOptions {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     30 * time.Second,
		TLSClientConfig:     c.tlsClient(),
	}
	c.mu.Lock()
	c.transports = append(c.transports, tr)
	c.mu.Unlock()
	return azcore.ClientOptions{
		Retry:     policy.RetryOptions{MaxRetries: -1},
		Transport: &http.Client{Transport: tr, Timeout: 30 * time.Second},
	}
}

// Blob returns a new Blob service client of process i.
// waitReady polls process i's /readyz until it answers want or d has
// passed, and returns the last answer.
func (c *cluster) waitReady(i int, want int, d time.Duration) (int, string) {
	c.t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", c.nodes[i].ports[metricsSvc])
	deadline := time.Now().Add(d)
	for {
		code, body := 0, ""
		resp, err := hc.Get(url)
		if err != nil {
			body = err.Error()
		} else {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			code, body = resp.StatusCode, string(b)
		}
		if code == want || time.Now().After(deadline) {
			return code, body
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *cluster) Blob(i int) *azblob.Client {
	c.t.Helper()
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if err != nil {
		c.t.Fatal(err)
	}
	cl, err := azblob.NewClientWithSharedKeyCredential(c.url(i, blobSvc), cred, &azblob.ClientOptions{ClientOptions: c.clientOptions()})
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

// DFS returns a new datalake service client of process i's dfs endpoint.
func (c *cluster) DFS(i int) *dlservice.Client {
	c.t.Helper()
	cred, err := azdatalake.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if err != nil {
		c.t.Fatal(err)
	}
	cl, err := dlservice.NewClientWithSharedKeyCredential(c.url(i, dfsSvc), cred, &dlservice.ClientOptions{ClientOptions: c.clientOptions()})
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

// Queue returns a new Queue service client of process i.
func (c *cluster) Queue(i int) *azqueue.ServiceClient {
	c.t.Helper()
	cred, err := azqueue.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if err != nil {
		c.t.Fatal(err)
	}
	cl, err := azqueue.NewServiceClientWithSharedKeyCredential(c.url(i, queueSvc), cred, &azqueue.ClientOptions{ClientOptions: c.clientOptions()})
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

// Table returns a new Table service client of process i.
func (c *cluster) Table(i int) *aztables.ServiceClient {
	c.t.Helper()
	cred, err := aztables.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if err != nil {
		c.t.Fatal(err)
	}
	cl, err := aztables.NewServiceClientWithSharedKey(c.url(i, tableSvc), cred, &aztables.ClientOptions{ClientOptions: c.clientOptions()})
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

// File returns a new File service (REST) client of process i.
func (c *cluster) File(i int) *azfileservice.Client {
	c.t.Helper()
	cred, err := azfileservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if err != nil {
		c.t.Fatal(err)
	}
	cl, err := azfileservice.NewClientWithSharedKeyCredential(c.url(i, fileSvc), cred, &azfileservice.ClientOptions{ClientOptions: c.clientOptions()})
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

// Alive reports whether process i is the one the test started last and
// still runs (it did not exit, and nobody restarted it).
func (c *cluster) Alive(i int) (pid int, alive bool) {
	n := c.nodes[i]
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.mu.Unlock()
	if cmd == nil {
		return 0, false
	}
	select {
	case <-exited:
		return cmd.Process.Pid, false
	default:
		return cmd.Process.Pid, true
	}
}

// ctx returns a context bounded by d, canceled at cleanup.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// status returns the HTTP status and x-ms-error-code of a failed SDK call
// (0, "" for success or a transport error).
func status(err error) (int, string) {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode, re.ErrorCode
	}
	return 0, ""
}

// wantCode fails unless err is an Azure error with status and code.
func wantCode(t *testing.T, what string, err error, code int, errCode string) {
	t.Helper()
	st, ec := status(err)
	if err == nil || st != code || ec != errCode {
		t.Errorf("%s: want %d %s, got %v", what, code, errCode, errOrOK(err))
	}
}

func errOrOK(err error) any {
	if err == nil {
		return "success"
	}
	if st, ec := status(err); st != 0 {
		return fmt.Sprintf("%d %s", st, ec)
	}
	return err
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// skipShort skips a multi-process test under go test -short (the quick
// subset of README "Running the tests").
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: several server processes on PostgreSQL")
	}
}

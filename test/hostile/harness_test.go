// Package hostile is the hostile-input suite (docs/security.md): probes
// that send a real Cerulean server — started in-process exactly as
// `cerulean serve` starts it, with short limits — forged credentials,
// path tricks, oversized and malformed input, slow and flooding clients
// and garbage on every port. Each probe asserts the refusal (the exact
// status and error code) and that the server still answers a normal
// request on every service afterwards. It runs on the embedded store, on
// PostgreSQL when CERULEAN_TEST_POSTGRES is set and on the in-memory
// stores when CERULEAN_TEST_BACKEND=memory, as test/e2e does. Every loop
// is bounded in count and time; all traffic goes to 127.0.0.1.
package hostile

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// Short limits, so that the slow-client probes finish in seconds.
const (
	headerTimeout = time.Second
	bodyWindow    = time.Second
	bodyMinBytes  = 4096
	version       = "2021-12-02"
	otherAccount  = "hostileother"
)

// otherKey is the second account's key, random per run.
var otherKey = func() []byte {
	k := make([]byte, 64)
	_, _ = rand.Read(k)
	return k
}()

func devKey() []byte {
	k, _ := base64.StdEncoding.DecodeString(app.DevKey)
	return k
}

// srv is a running server with every front door open.
type srv struct {
	t   *testing.T
	a   *app.App
	clk *clock.Fake
	// host:port of each listener, by name: blob, queue, table, file, dfs,
	// smb, metrics.
	addr map[string]string
}

// backendConfig is the store part of an app.Config, chosen as test/e2e
// chooses it: embedded in a temporary directory, PostgreSQL in a fresh
// schema when CERULEAN_TEST_POSTGRES is set, in memory when
// CERULEAN_TEST_BACKEND=memory.
func backendConfig(t testing.TB) app.Config {
	t.Helper()
	switch b := os.Getenv(testenv.BackendEnv); b {
	case "", "embedded", "postgres":
	case "memory":
		if os.Getenv(pgtest.EnvVar) != "" {
			t.Fatalf("%s=memory and %s exclude each other", testenv.BackendEnv, pgtest.EnvVar)
		}
		return app.Config{InMemory: true}
	default:
		t.Fatalf("%s=%q: want memory, embedded or postgres", testenv.BackendEnv, b)
	}
	cfg := app.Config{DataDir: t.TempDir(), NoSync: true}
	if os.Getenv(pgtest.EnvVar) != "" {
		dsn, _ := pgtest.Schema(t)
		cfg.Postgres = dsn
		cfg.PostgresMaxConns = 8
	}
	return cfg
}

// start runs a server on 127.0.0.1 with all listeners on free ports, the
// dev account and a second one, the short limits above (mod may change the
// config) and a fake clock at the real time (signatures carry the real
// time), closed when the test ends. It creates container "cont" with blob "b"
// in both accounts.
func start(t *testing.T, mod func(*app.Config)) *srv {
	t.Helper()
	cfg := backendConfig(t)
	clk := clock.NewFake(time.Now())
	cfg.Host = "127.0.0.1"
	cfg.Clock, cfg.GCEvery = clk, time.Hour
	cfg.Accounts = []auth.Account{
		{Name: app.DevAccount, Keys: [][]byte{devKey()}},
		{Name: otherAccount, Keys: [][]byte{otherKey}},
	}
	cfg.HTTPLimits = server.Limits{HeaderTimeout: headerTimeout, BodyWindow: bodyWindow, BodyMinBytes: bodyMinBytes}
	if mod != nil {
		mod(&cfg)
	}
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
	s := &srv{t: t, a: a, clk: clk, addr: map[string]string{"smb": a.SMBAddr}}
	for name, u := range map[string]string{"blob": a.BlobURL, "queue": a.QueueURL, "table": a.TableURL, "file": a.FileURL, "dfs": a.DFSURL, "metrics": a.MetricsURL} {
		if u == "" {
			continue
		}
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		s.addr[name] = pu.Host
	}
	for _, acct := range []string{app.DevAccount, otherAccount} {
		s.must(s.do("blob", "PUT", "/"+acct+"/cont?restype=container", nil, nil, acct), 201)
		s.must(s.do("blob", "PUT", "/"+acct+"/cont/b", http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}, []byte("secret of "+acct), acct), 201)
	}
	return s
}

// reply is what a probe got back: the status (0: no answer, the
// connection was closed), the x-ms-error-code and the body.
type reply struct {
	status int
	code   string
	body   string
	err    error
}

func (r reply) String() string {
	b := r.body
	if len(b) > 300 {
		b = b[:300] + "…"
	}
	return fmt.Sprintf("%d %s %q (err %v)", r.status, r.code, b, r.err)
}

// keyOf returns the key of a configured account ("" when not one).
func keyOf(acct string) []byte {
	switch acct {
	case app.DevAccount:
		return devKey()
	case otherAccount:
		return otherKey
	}
	return nil
}

var kinds = map[string]auth.Service{"blob": auth.Blob, "dfs": auth.Blob, "queue": auth.Queue, "table": auth.Table, "file": auth.File}

// request renders a raw HTTP/1.1 request: target is sent exactly as given
// (no cleaning, no escaping). When signAs names an account the request is
// signed with its Shared Key, with x-ms-date now (unless hdr sets it) and
// x-ms-version (unless hdr sets it).
func (s *srv) request(svc, method, target string, hdr http.Header, body []byte, signAs string) []byte {
	s.t.Helper()
	h := http.Header{}
	for k, v := range hdr {
		h[http.CanonicalHeaderKey(k)] = v
	}
	if h.Get("X-Ms-Version") == "" {
		h.Set("X-Ms-Version", version)
	}
	if signAs != "" && h.Get("X-Ms-Date") == "" && h.Get("Date") == "" {
		h.Set("X-Ms-Date", time.Now().UTC().Format(http.TimeFormat))
	}
	if svc == "table" && h.Get("Accept") == "" {
		h.Set("Accept", "application/json;odata=nometadata")
	}
	if h.Get("Content-Length") == "" && (len(body) > 0 || method == "PUT" || method == "POST") {
		h.Set("Content-Length", fmt.Sprint(len(body)))
	}
	head := func() []byte {
		var b bytes.Buffer
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, target, s.addr[svc])
		_ = h.Write(&b)
		b.WriteString("\r\n")
		return b.Bytes()
	}
	if signAs != "" {
		r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head())))
		if err != nil {
			s.t.Fatalf("signing %s %q: %v", method, target, err)
		}
		sts := auth.StringToSign(r, kinds[svc], auth.SharedKey, signAs, auth.CultureOrder)
		key := keyOf(signAs)
		if key == nil {
			key = devKey()
		}
		h.Set("Authorization", "SharedKey "+signAs+":"+auth.ComputeSignature(key, sts))
	}
	return append(head(), body...)
}

// do sends one request (see request) on a new connection and reads the
// answer, within 15 s.
func (s *srv) do(svc, method, target string, hdr http.Header, body []byte, signAs string) reply {
	s.t.Helper()
	return s.send(svc, s.request(svc, method, target, hdr, body, signAs), method == "HEAD")
}

// send writes raw bytes to a new connection to svc's port and reads one
// HTTP answer, within 15 s.
func (s *srv) send(svc string, raw []byte, head bool) reply {
	s.t.Helper()
	return s.sendHalf(svc, raw, head, false)
}

// sendHalf is send; with halfClose the client shuts its side after
// writing, for a request that declares a body it never sends (the
// server's drain of the refused body then ends at once instead of
// waiting a progress window).
func (s *srv) sendHalf(svc string, raw []byte, head, halfClose bool) reply {
	s.t.Helper()
	c, err := net.DialTimeout("tcp", s.addr[svc], 5*time.Second)
	if err != nil {
		s.t.Fatalf("dial %s: %v", svc, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(15 * time.Second))
	go func() {
		_, _ = c.Write(raw)
		if halfClose {
			_ = c.(*net.TCPConn).CloseWrite()
		}
	}()
	return readReply(c, head)
}

func readReply(c net.Conn, head bool) reply {
	req := &http.Request{Method: "GET"}
	if head {
		req.Method = "HEAD"
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		return reply{err: err}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return reply{status: resp.StatusCode, code: resp.Header.Get("x-ms-error-code"), body: string(b), err: err}
}

// must fails the test unless r has the status.
func (s *srv) must(r reply, status int) {
	s.t.Helper()
	if r.status != status {
		s.t.Fatalf("want %d, got %v", status, r)
	}
}

// want asserts a refusal: the status and, when code is set, the
// x-ms-error-code.
func want(t *testing.T, what string, r reply, status int, code string) {
	t.Helper()
	if r.status != status || (code != "" && r.code != code) {
		t.Errorf("%s: want %d %s, got %v", what, status, code, r)
	}
}

// alive asserts that every front door still serves a normal request: a
// signed read on each HTTP service, the stored blob unchanged, the health
// endpoint, and an SMB2 NEGOTIATE answered.
func (s *srv) alive() {
	s.t.Helper()
	for _, c := range []struct{ svc, target string }{
		{"blob", "/" + app.DevAccount + "?comp=list"},
		{"queue", "/" + app.DevAccount + "?comp=list"},
		{"table", "/" + app.DevAccount + "/Tables"},
		{"file", "/" + app.DevAccount + "?comp=list"},
		{"dfs", "/" + app.DevAccount + "?resource=account"},
	} {
		if r := s.do(c.svc, "GET", c.target, nil, nil, app.DevAccount); r.status != 200 {
			s.t.Fatalf("after the probe, %s GET %s: %v", c.svc, c.target, r)
		}
	}
	for _, acct := range []string{app.DevAccount, otherAccount} {
		if r := s.do("blob", "GET", "/"+acct+"/cont/b", nil, nil, acct); r.status != 200 || r.body != "secret of "+acct {
			s.t.Fatalf("after the probe, blob of %s: %v", acct, r)
		}
	}
	if r := s.send("metrics", []byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"), false); r.status != 200 {
		s.t.Fatalf("after the probe, /healthz: %v", r)
	}
	if err := smbNegotiate(s.addr["smb"]); err != nil {
		s.t.Fatalf("after the probe, SMB: %v", err)
	}
}

// within runs f and fails the test if it takes longer than d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	took := time.Since(start)
	if took > d {
		t.Errorf("%s took %s, more than %s", what, took, d)
	}
	if took > time.Second {
		t.Logf("%s took %s", what, took)
	}
}

func b64(k []byte) string { return base64.StdEncoding.EncodeToString(k) }

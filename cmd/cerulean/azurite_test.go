package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// The binary under test, built once, with Azurite's program names linked
// to it as a container image or npm's bin links would.
var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func binary(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "cerulean-bin-")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "cerulean"), ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
			return
		}
		for n := range azuriteEntries {
			if buildErr = os.Symlink("cerulean", filepath.Join(binDir, n)); buildErr != nil {
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// proc is a running server process and the endpoints its start lines
// announced.
type proc struct {
	cmd       *exec.Cmd
	endpoints map[string]string // "Blob" → http://host:port
	lines     []string
	stderr    *strings.Builder
}

var listening = regexp.MustCompile(`^Azurite (\w+) service is successfully listening at (\S+)$`)

// start runs the binary under name with args and waits for its Azurite
// start lines (want: how many services must announce themselves).
func start(t *testing.T, name string, env []string, want int, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary(t, name), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	p := &proc{cmd: cmd, endpoints: map[string]string{}, stderr: &strings.Builder{}}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	sc := bufio.NewScanner(out)
	deadline := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	for len(p.endpoints) < want && sc.Scan() {
		line := sc.Text()
		p.lines = append(p.lines, line)
		if m := listening.FindStringSubmatch(line); m != nil {
			p.endpoints[m[1]] = m[2]
		}
	}
	if len(p.endpoints) < want {
		t.Fatalf("%s %v: %d services announced, want %d; stdout %q; stderr %s", name, args, len(p.endpoints), want, p.lines, p.stderr)
	}
	go func() { // keep draining stdout
		for sc.Scan() {
		}
	}()
	return p
}

// exitOf runs the binary to completion and returns its exit status and
// standard error.
func exitOf(t *testing.T, name string, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary(t, name), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), stderr.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, stderr.String()
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		t.Fatalf("%s %v did not exit; stderr %s", name, args, stderr.String())
		return 0, ""
	}
}

// useAll drives Blob, Queue and Table through the Go SDKs at the
// announced endpoints, with the given account.
func useAll(t *testing.T, p *proc, account, key string, opts policy.ClientOptions) {
	t.Helper()
	ctx := context.Background()
	if u, ok := p.endpoints["Blob"]; ok {
		cred, _ := azblob.NewSharedKeyCredential(account, key)
		c, err := azblob.NewClientWithSharedKeyCredential(u+"/"+account, cred, &azblob.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateContainer(ctx, "ctr", nil); err != nil {
			t.Fatalf("create container: %v", err)
		}
		if _, err := c.UploadBuffer(ctx, "ctr", "b", []byte("hello"), nil); err != nil {
			t.Fatalf("upload: %v", err)
		}
	}
	if u, ok := p.endpoints["Queue"]; ok {
		cred, _ := azqueue.NewSharedKeyCredential(account, key)
		c, err := azqueue.NewServiceClientWithSharedKeyCredential(u+"/"+account, cred, &azqueue.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateQueue(ctx, "que", nil); err != nil {
			t.Fatalf("create queue: %v", err)
		}
	}
	if u, ok := p.endpoints["Table"]; ok {
		cred, _ := aztables.NewSharedKeyCredential(account, key)
		c, err := aztables.NewServiceClientWithSharedKey(u+"/"+account, cred, &aztables.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateTable(ctx, "tbl", nil); err != nil {
			t.Fatalf("create table: %v", err)
		}
	}
}

// hostPort returns the host:port of an announced endpoint URL.
func hostPort(t *testing.T, u string) string {
	t.Helper()
	i := strings.Index(u, "://")
	if i < 0 {
		t.Fatalf("endpoint %q", u)
	}
	return u[i+3:]
}

func TestAzuriteCommandLines(t *testing.T) {
	debugLog := filepath.Join(t.TempDir(), "logs", "debug.log")
	for _, tc := range []struct {
		name, prog string
		args       []string
		services   []string
	}{
		// Testcontainers-go: entrypoint azurite, the host flags.
		{"testcontainers", "azurite", []string{"--blobHost", "127.0.0.1", "--queueHost", "127.0.0.1", "--tableHost", "127.0.0.1", "--blobPort", "0", "--queuePort", "0", "--tablePort", "0"}, []string{"Blob", "Queue", "Table"}},
		// docker-compose / Aspire style: -l and the = form, the no-op flags.
		{"compose", "azurite", []string{"-l", "LOC", "--blobHost=127.0.0.1", "--blobPort=0", "--queuePort=0", "--tablePort=0", "--skipApiVersionCheck", "--loose", "--disableTelemetry", "-s", "--blobKeepAliveTimeout", "10"}, []string{"Blob", "Queue", "Table"}},
		{"blob only", "azurite-blob", []string{"--blobPort", "0", "--location", "LOC"}, []string{"Blob"}},
		{"queue only", "azurite-queue", []string{"--queuePort", "0", "-l", "LOC"}, []string{"Queue"}},
		{"table only", "azurite-table", []string{"--tablePort", "0", "-l", "LOC"}, []string{"Table"}},
		// The subcommand form, with File asked for in the same style.
		{"subcommand with file", "cerulean", []string{"azurite", "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--filePort", "0", "-l", "LOC", "-d", debugLog}, []string{"Blob", "Queue", "Table", "File"}},
		// The Data Lake Storage Gen2 endpoint, asked for like File.
		{"blob with dfs", "azurite-blob", []string{"--blobPort", "0", "--dfsPort", "0", "-l", "LOC"}, []string{"Blob", "DFS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{}, tc.args...)
			for i, a := range args {
				if a == "LOC" {
					args[i] = t.TempDir()
				}
			}
			p := start(t, tc.prog, nil, len(tc.services), args...)
			for _, s := range tc.services {
				if _, ok := p.endpoints[s]; !ok {
					t.Fatalf("%s not announced: %q", s, p.lines)
				}
				if strings.HasSuffix(p.endpoints[s], ":0") {
					t.Fatalf("port 0 announced instead of the bound port: %q", p.lines)
				}
			}
			if len(p.endpoints) != len(tc.services) {
				t.Fatalf("announced %v, want only %v", p.endpoints, tc.services)
			}
			if tc.prog == "azurite-blob" && !strings.Contains(strings.Join(p.lines, "\n"), "Azurite Blob service successfully listens on http://") {
				t.Fatalf("azurite-blob's own start line missing: %q", p.lines)
			}
			useAll(t, p, app.DevAccount, app.DevKey, policy.ClientOptions{})
			// Names from the other entry points are not served.
			if tc.prog == "azurite-blob" {
				for _, s := range []string{"Queue", "Table"} {
					if _, ok := p.endpoints[s]; ok {
						t.Fatalf("%s served by azurite-blob", s)
					}
				}
			}
		})
	}
	if fi, err := os.Stat(debugLog); err != nil || fi.Size() == 0 {
		t.Fatalf("-d debug log not written: %v", err)
	}
}

func TestAzuriteDataSurvivesRestart(t *testing.T) {
	loc := t.TempDir()
	p := start(t, "azurite-blob", nil, 1, "--blobPort", "0", "-l", loc)
	useAll(t, p, app.DevAccount, app.DevKey, policy.ClientOptions{})
	_ = p.cmd.Process.Signal(os.Interrupt)
	_ = p.cmd.Wait()
	if p.cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("exit status %d after SIGINT; stderr %s", p.cmd.ProcessState.ExitCode(), p.stderr)
	}
	p = start(t, "azurite", nil, 3, "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "-l", loc)
	cred, _ := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	c, _ := azblob.NewClientWithSharedKeyCredential(p.endpoints["Blob"]+"/"+app.DevAccount, cred, nil)
	resp, err := c.DownloadStream(context.Background(), "ctr", "b", nil)
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	defer resp.Body.Close()
	var buf [16]byte
	n, _ := resp.Body.Read(buf[:])
	if string(buf[:n]) != "hello" {
		t.Fatalf("after restart read %q", buf[:n])
	}
}

func TestAzuriteAccountsEnv(t *testing.T) {
	k1 := base64.StdEncoding.EncodeToString([]byte("key-one-0123456789"))
	k2 := base64.StdEncoding.EncodeToString([]byte("key-two-0123456789"))
	env := []string{"AZURITE_ACCOUNTS=acct1:" + k1 + ";acct2:" + k2 + ":" + k1}
	for _, args := range [][]string{
		{"azurite", "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "-l"},
		{"cerulean", "serve", "--blob-port", "0", "--queue-port", "0", "--table-port", "0", "--file-port", "-1", "--dfs-port", "-1", "--smb-port", "-1", "--data"},
	} {
		t.Run(args[0], func(t *testing.T) {
			a := append(append([]string{}, args[1:]...), t.TempDir())
			if args[0] == "cerulean" {
				// serve logs its endpoints on stderr; find them there.
				cmd := exec.Command(binary(t, "cerulean"), a...)
				cmd.Env = append(os.Environ(), env...)
				errp, _ := cmd.StderrPipe()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
				sc := bufio.NewScanner(errp)
				p := &proc{endpoints: map[string]string{}}
				re := regexp.MustCompile(`service=(\w+) endpoint=(\S+)/acct1`)
				for len(p.endpoints) < 3 && sc.Scan() {
					if m := re.FindStringSubmatch(sc.Text()); m != nil {
						p.endpoints[strings.ToUpper(m[1][:1])+m[1][1:]] = m[2]
					}
				}
				go func() {
					for sc.Scan() {
					}
				}()
				useAll(t, p, "acct1", k1, policy.ClientOptions{})
				useAll(t, &proc{endpoints: map[string]string{"Blob": p.endpoints["Blob"]}}, "acct2", k1, policy.ClientOptions{})
				return
			}
			p := start(t, args[0], env, 3, a...)
			useAll(t, p, "acct1", k1, policy.ClientOptions{})
			// acct2's second key signs too.
			useAll(t, &proc{endpoints: map[string]string{"Blob": p.endpoints["Blob"]}}, "acct2", k1, policy.ClientOptions{})
			// The dev account is not served when AZURITE_ACCOUNTS names others.
			cred, _ := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
			c, _ := azblob.NewClientWithSharedKeyCredential(p.endpoints["Blob"]+"/"+app.DevAccount, cred, &azblob.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
			if _, err := c.CreateContainer(context.Background(), "xyz", nil); err == nil {
				t.Fatal("dev account served beside AZURITE_ACCOUNTS")
			}
		})
	}
}

// selfSigned returns a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func TestAzuriteTLSFromPFX(t *testing.T) {
	cert, key := selfSigned(t)
	pfx, err := pkcs12.Modern.Encode(key, cert, nil, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cert.pfx")
	if err := os.WriteFile(path, pfx, 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, "azurite", nil, 3, "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "-l", t.TempDir(), "--cert", path, "--pwd", "s3cret")
	if !strings.HasPrefix(p.endpoints["Blob"], "https://") {
		t.Fatalf("not HTTPS: %v", p.endpoints)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	useAll(t, p, app.DevAccount, app.DevKey, policy.ClientOptions{Transport: &http.Client{Transport: tr}})

	code, stderr := exitOf(t, "azurite", nil, "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "-l", t.TempDir(), "--cert", path, "--pwd", "wrong")
	if code != 2 || !strings.Contains(stderr, "wrong password") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("wrong PFX password: exit %d, stderr %q", code, stderr)
	}
}

func TestAzuriteBadInput(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, busyPort, _ := net.SplitHostPort(busy.Addr().String())
	unusable := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(unusable, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"unknown flag", nil, []string{"--blobPort", "0", "--frobnicate"}, "frobnicate"},
		{"port in use", nil, []string{"--blobPort", busyPort, "--queuePort", "0", "--tablePort", "0", "-l", t.TempDir()}, "address already in use"},
		{"unusable location", nil, []string{"--blobPort", "0", "-l", unusable}, "--location"},
		{"bad accounts", []string{"AZURITE_ACCOUNTS=acct1"}, []string{"--blobPort", "0", "-l", t.TempDir()}, "AZURITE_ACCOUNTS"},
		{"debug without file", nil, []string{"--blobPort", "0", "-d"}, "-d"},
		{"memory with location", nil, []string{"--inMemoryPersistence", "-l", t.TempDir()}, "--inMemoryPersistence"},
		{"limit without memory", nil, []string{"--extentMemoryLimit", "10"}, "--extentMemoryLimit"},
		{"oauth without cert", nil, []string{"--oauth", "basic"}, "--oauth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := exitOf(t, "azurite", tc.env, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
	// Nothing listens after a failed start: the queue port of "port in use"
	// was 0, so check the busy port is still only ours.
	if c, err := net.DialTimeout("tcp", busy.Addr().String(), time.Second); err == nil {
		c.Close()
	}
}

func TestHealth(t *testing.T) {
	p := start(t, "azurite", nil, 4, "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--dfsPort", "0", "-l", t.TempDir())
	port := func(s string) string { _, p, _ := net.SplitHostPort(hostPort(t, p.endpoints[s])); return p }
	code, stderr := exitOf(t, "cerulean", nil, "health", "--blob-port", port("Blob"), "--queue-port", port("Queue"), "--table-port", port("Table"), "--dfs-port", port("DFS"))
	if code != 0 {
		t.Fatalf("health of a running server: exit %d: %s", code, stderr)
	}
	// Only the blob port given and the others refused: still healthy.
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	_, freePort, _ := net.SplitHostPort(free.Addr().String())
	free.Close()
	code, stderr = exitOf(t, "cerulean", nil, "health", "--blob-port", port("Blob"), "--queue-port", freePort, "--table-port", "-1", "--dfs-port", "-1")
	if code != 0 {
		t.Fatalf("health with a service not served: exit %d: %s", code, stderr)
	}
	// Nothing served: unhealthy.
	code, _ = exitOf(t, "cerulean", nil, "health", "--blob-port", freePort, "--queue-port", "-1", "--table-port", "-1", "--dfs-port", "-1")
	if code == 0 {
		t.Fatal("health with nothing listening exited 0")
	}
	// A wrong key answers 403: unhealthy.
	bad := base64.StdEncoding.EncodeToString([]byte("not the key"))
	code, _ = exitOf(t, "cerulean", []string{"CERULEAN_ACCOUNTS=" + app.DevAccount + ":" + bad}, "health", "--blob-port", port("Blob"), "--queue-port", "-1", "--table-port", "-1", "--dfs-port", "-1")
	if code == 0 {
		t.Fatal("health with a wrong key exited 0")
	}
}

// Azurite's --inMemoryPersistence: nothing in the working directory, and
// --extentMemoryLimit (MiB) refuses a body past it with Azurite's 409.
func TestAzuriteInMemory(t *testing.T) {
	p := start(t, "azurite", nil, 3, "--blobPort", "0", "--queuePort", "0", "--tablePort", "0", "--inMemoryPersistence", "--extentMemoryLimit", "1")
	useAll(t, p, app.DevAccount, app.DevKey, policy.ClientOptions{})
	cred, _ := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	c, _ := azblob.NewClientWithSharedKeyCredential(p.endpoints["Blob"]+"/"+app.DevAccount, cred, &azblob.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	_, err := c.UploadBuffer(context.Background(), "ctr", "big", make([]byte, 3<<20), &azblob.UploadBufferOptions{BlockSize: 4 << 20})
	if err == nil || !strings.Contains(err.Error(), "MemoryExtentStoreAtSizeLimit") {
		t.Fatalf("3 MiB upload with a 1 MiB limit: %v", err)
	}
	entries, err := os.ReadDir(p.cmd.Dir)
	if err != nil || len(entries) != 0 {
		t.Fatalf("in-memory mode wrote to its directory: %v %v", entries, err)
	}
	if code, stderr := exitOf(t, "azurite", nil, "--inMemoryPersistence", "--extentMemoryLimit", "0"); code != 2 || !strings.Contains(stderr, "extentMemoryLimit") {
		t.Fatalf("--extentMemoryLimit 0: exit %d %q", code, stderr)
	}
}

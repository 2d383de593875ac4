// Package smb holds the SMB front end's integration tests: a Cerulean
// server started in-process with the File service and the SMB listener,
// driven by real SMB clients (Debian's smbclient and smbtorture, and the
// go-smb2 client library) and cross-checked with the REST SDK (azfile) on
// the same shares and files.
//
// smbclient and smbtorture are external programs. When one is missing
// the tests that need it skip, unless the environment variable CI is set
// (CI installs them with scripts/install-smb-clients.sh): then they fail.
package smb

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
	gosmb2 "github.com/hirochachacha/go-smb2"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// env is a running server with the File service over REST and SMB.
type env struct {
	t   *testing.T
	app *app.App
	svc *service.Client
	ctx context.Context
	// port is the SMB port, as smbclient's -p wants it.
	port string
}

// start runs a server with only the File service and SMB, on the
// embedded store in a temporary directory (or PostgreSQL when
// CERULEAN_TEST_POSTGRES is set, or in memory when
// CERULEAN_TEST_BACKEND=memory, as the other end-to-end tests do), with
// the real clock: SMB handles live by the server's heartbeat.
func start(t *testing.T) *env {
	t.Helper()
	return startWith(t, nil)
}

// startWith is start with a last say on the configuration (nil: none).
func startWith(t *testing.T, configure func(*app.Config)) *env {
	t.Helper()
	cfg := app.Config{DataDir: t.TempDir(), NoSync: true, BlobPort: -1, QueuePort: -1, TablePort: -1, FilePort: 0, SMBPort: 0,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if os.Getenv(pgtest.EnvVar) != "" {
		dsn, _ := pgtest.Schema(t)
		cfg.Postgres, cfg.PostgresMaxConns = dsn, 8
	} else if testenv.InMemory() {
		cfg.InMemory, cfg.DataDir = true, ""
	}
	if configure != nil {
		configure(&cfg)
	}
	a, err := app.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	cred, err := service.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.NewClientWithSharedKeyCredential(a.FileURL, cred, &service.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry:     policy.RetryOptions{MaxRetries: -1},
		Transport: &http.Client{Timeout: 60 * time.Second},
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(a.SMBAddr)
	return &env{t: t, app: a, svc: svc, ctx: context.Background(), port: port}
}

// share creates a share and returns its client.
func (e *env) share(name string) *share.Client {
	e.t.Helper()
	sc := e.svc.NewShareClient(name)
	if _, err := sc.Create(e.ctx, nil); err != nil {
		e.t.Fatal(err)
	}
	return sc
}

// upload creates a file over REST with content.
func (e *env) upload(sc *share.Client, path string, content []byte) {
	e.t.Helper()
	fc := sc.NewRootDirectoryClient().NewFileClient(path)
	if strings.Contains(path, "/") {
		dir, base := filepath.Split(path)
		fc = sc.NewDirectoryClient(strings.TrimSuffix(dir, "/")).NewFileClient(base)
	}
	if _, err := fc.Create(e.ctx, int64(len(content)), nil); err != nil {
		e.t.Fatal(err)
	}
	if len(content) > 0 {
		if err := fc.UploadBuffer(e.ctx, content, nil); err != nil {
			e.t.Fatal(err)
		}
	}
}

// download reads a file over REST.
func (e *env) download(sc *share.Client, path string) ([]byte, error) {
	fc := fileClient(sc, path)
	resp, err := fc.DownloadStream(e.ctx, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func fileClient(sc *share.Client, path string) *file.Client {
	if i := strings.LastIndex(path, "/"); i >= 0 {
		return sc.NewDirectoryClient(path[:i]).NewFileClient(path[i+1:])
	}
	return sc.NewRootDirectoryClient().NewFileClient(path)
}

// list returns the names in a directory over REST.
func (e *env) list(dc *directory.Client) []string {
	e.t.Helper()
	var names []string
	pager := dc.NewListFilesAndDirectoriesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, d := range page.Segment.Directories {
			names = append(names, *d.Name+"/")
		}
		for _, f := range page.Segment.Files {
			names = append(names, *f.Name)
		}
	}
	return names
}

func hasCode(err error, code fileerror.Code) bool { return fileerror.HasCode(err, code) }

// need finds an external program, skipping the test when it is missing
// (failing it when CI is set).
func need(t *testing.T, prog string) string {
	t.Helper()
	path, err := exec.LookPath(prog)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (CI installs it with scripts/install-smb-clients.sh)", prog)
		}
		t.Skipf("%s is not installed", prog)
	}
	return path
}

// smbclient runs smbclient against a share with the dev account and the
// given protocol (-m), in dir, with the commands cmds (-c), and returns
// its combined output. The key is passed in an authentication file
// (smbclient -A), not on the command line, where any process list shows it.
func (e *env) smbclient(shareName, proto, dir, cmds string, key ...string) (string, error) {
	e.t.Helper()
	bin := need(e.t, "smbclient")
	k := app.DevKey
	if len(key) > 0 {
		k = key[0]
	}
	authFile := filepath.Join(e.t.TempDir(), "auth")
	if err := os.WriteFile(authFile, []byte("username = "+app.DevAccount+"\npassword = "+k+"\ndomain = AZURE\n"), 0o600); err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "//127.0.0.1/"+shareName, "-p", e.port, "-A", authFile, "-m", proto, "-c", cmds)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+e.t.TempDir()) // no user smb.conf
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mount connects go-smb2 to a share (a new TCP connection and session).
func (e *env) mount(shareName string) *gosmb2.Share {
	e.t.Helper()
	nc, err := net.Dial("tcp", e.app.SMBAddr)
	if err != nil {
		e.t.Fatal(err)
	}
	d := &gosmb2.Dialer{Initiator: &gosmb2.NTLMInitiator{User: app.DevAccount, Password: app.DevKey}}
	s, err := d.DialContext(e.ctx, nc)
	if err != nil {
		nc.Close()
		e.t.Fatalf("go-smb2 session: %v", err)
	}
	fs, err := s.Mount(shareName)
	if err != nil {
		e.t.Fatalf("go-smb2 mount: %v", err)
	}
	e.t.Cleanup(func() {
		_ = fs.Umount()
		_ = s.Logoff()
		nc.Close()
	})
	return fs
}

// ntStatus reports whether err (from go-smb2) carries the NTSTATUS code.
func ntStatus(err error, code uint32) bool {
	var re *gosmb2.ResponseError
	return errors.As(err, &re) && re.Code == code
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func mustEqual(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes differ from the %d expected", what, len(got), len(want))
	}
}

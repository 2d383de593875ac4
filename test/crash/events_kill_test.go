package crash

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
)

// TestEventsSurviveSIGKILL: blob writes committed while the webhook
// fails are not lost when `cerulean serve` is killed with SIGKILL before
// delivering them: after a restart on the same data they arrive, each
// once and in commit order, after the events delivered before the kill
// (whose position was written before the first retry's wait).
// On PostgreSQL (CERULEAN_TEST_POSTGRES) the restarted process uses the
// same database.
func TestEventsSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs the binary")
	}
	var mu sync.Mutex
	down := false
	var got []string // request ids of the events accepted, in order
	failed := 0
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var evs []struct {
			EventType string `json:"eventType"`
			Data      struct {
				ValidationCode string `json:"validationCode"`
				RequestID      string `json:"requestId"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &evs); err != nil || len(evs) != 1 {
			http.Error(w, "want an array of one event", http.StatusBadRequest)
			return
		}
		if r.Header.Get("aeg-event-type") == "SubscriptionValidation" {
			_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": evs[0].Data.ValidationCode})
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if down {
			failed++
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		got = append(got, evs[0].Data.RequestID)
	}))
	defer hook.Close()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	bin := buildBinary(t)
	dsn := ""
	if os.Getenv(pgtest.EnvVar) != "" {
		dsn, _ = pgtest.Schema(t)
	}
	srv := &eventServer{server: server{bin: bin, data: filepath.Join(dir, "data"), dsn: dsn, log: filepath.Join(dir, "serve.log"), port: port}, hook: hook.URL}
	srv.start(t)
	defer srv.kill()

	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	c, err := azblob.NewClientWithSharedKeyCredential(fmt.Sprintf("http://127.0.0.1:%d/%s", port, app.DevAccount), cred,
		&azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	must(t, err)
	ctx := context.Background()
	_, err = c.CreateContainer(ctx, "evkill", nil)
	must(t, err)
	var acked []string
	put := func(name string) {
		resp, err := c.UploadBuffer(ctx, "evkill", name, []byte(name), nil)
		must(t, err)
		acked = append(acked, *resp.RequestID)
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			mu.Lock()
			ok := cond()
			mu.Unlock()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s: got %v, %d failed\n%s", what, got, failed, tail(srv.log, 20))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	put("a")
	put("b")
	waitFor("the first two events", func() bool { return len(got) == 2 })
	mu.Lock()
	down = true
	mu.Unlock()
	put("c")
	put("d")
	// Delivery is at least once: the position of delivered events is
	// written lazily, at the latest before a failed delivery's first
	// retry wait (events.Deliverer.deliver's beforeWait). A second
	// failed attempt of c's event therefore follows that write, and a
	// kill after it must deliver nothing twice; a kill after the first
	// attempt may still deliver b again (seen under -race load).
	waitFor("a retried failed delivery", func() bool { return failed >= 2 })
	srv.kill()
	mu.Lock()
	down = false
	mu.Unlock()
	srv.start(t)
	waitFor("every event", func() bool { return len(got) >= 4 })
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, ",") != strings.Join(acked, ",") {
		t.Fatalf("events %v, writes acknowledged %v: want each once, in order", got, acked)
	}
}

// eventServer is `cerulean serve` with the Blob port only and a webhook
// subscription (--event-webhook).
type eventServer struct {
	server
	hook string
}

func (s *eventServer) start(t *testing.T) {
	t.Helper()
	args := []string{"serve", "--host", "127.0.0.1", "--data", s.data, "--log-level", "warn",
		"--blob-port", strconv.Itoa(s.port), "--queue-port", "-1", "--table-port", "-1", "--file-port", "-1",
		"--dfs-port", "-1", "--smb-port", "-1", "--metrics-port", "-1", "--event-webhook", s.hook}
	if s.dsn != "" {
		args = append(args, "--postgres", s.dsn, "--postgres-max-conns", "8")
	}
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	must(t, err)
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
	for {
		resp, err := probe.Get(fmt.Sprintf("http://127.0.0.1:%d/%s", s.port, app.DevAccount))
		if err == nil {
			resp.Body.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("cerulean serve exited before serving:\n%s", tail(s.log, 20))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			t.Fatalf("not answering after 60s:\n%s", tail(s.log, 20))
		}
	}
}

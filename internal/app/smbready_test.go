package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestReadyzSMBListenerDead: /readyz answers 200 while the SMB listener
// accepts and 503 naming it once it has stopped accepting (closed under
// the server, not by Close), while the store still answers.
func TestReadyzSMBListenerDead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, err := Start(Config{DataDir: t.TempDir(), BlobPort: -1, QueuePort: -1, TablePort: -1, FilePort: -1, DFSPort: -1, SMBPort: 0, SMBListener: ln, MetricsPort: 0, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = a.Close(ctx) // Serve's error (the closed listener) is expected
	}()
	readyz := func() (int, string) {
		t.Helper()
		resp, err := http.Get(a.MetricsURL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := readyz(); code != 200 {
		t.Fatalf("readyz with the SMB listener up: %d %q", code, body)
	}
	ln.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, body := readyz()
		if code == 503 {
			if !strings.Contains(body, "SMB listener") {
				t.Fatalf("readyz body %q does not name the SMB listener", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz still %d %q after the SMB listener died", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSMBLimitsWired: app.Config.SMBLimits reach the SMB server: with a
// cap of two connections per address the third is closed at once, and
// with a 1 s pre-authentication deadline a silent connection is
// closed then.
func TestSMBLimitsWired(t *testing.T) {
	a, err := Start(Config{DataDir: t.TempDir(), BlobPort: -1, QueuePort: -1, TablePort: -1, FilePort: -1, DFSPort: -1, SMBPort: 0, MetricsPort: -1, NoSync: true,
		SMBLimits: SMBLimits{MaxConnsPerAddr: 2, PreauthTimeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	closedAfter := func(nc net.Conn) time.Duration {
		t.Helper()
		start := time.Now()
		_ = nc.SetReadDeadline(start.Add(5 * time.Second))
		if _, err := nc.Read(make([]byte, 1)); err == nil || strings.Contains(err.Error(), "timeout") {
			t.Fatalf("read: %v, want the connection closed", err)
		}
		return time.Since(start)
	}
	var conns []net.Conn
	for range 3 {
		nc, err := net.Dial("tcp", a.SMBAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		conns = append(conns, nc)
	}
	if d := closedAfter(conns[2]); d > 500*time.Millisecond {
		t.Fatalf("the third connection from one address was closed after %v, not at once", d)
	}
	if d := closedAfter(conns[0]); d < 300*time.Millisecond {
		t.Fatalf("a silent connection was closed after %v, before its deadline", d)
	}
}

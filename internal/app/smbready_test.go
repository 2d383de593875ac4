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

package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestHealthSMB: cerulean health checks the SMB port with a NEGOTIATE
// and the server's /readyz; once the SMB listener has stopped accepting,
// health fails and says why.
func TestHealthSMB(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Start(app.Config{DataDir: t.TempDir(), BlobPort: 0, QueuePort: -1, TablePort: -1, FilePort: -1, DFSPort: -1, SMBListener: ln, MetricsPort: 0, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	}()
	_, smbPort, _ := net.SplitHostPort(a.SMBAddr)
	_, blobPort, _ := net.SplitHostPort(a.Endpoints()["blob"])
	metricsPort := a.MetricsURL[strings.LastIndexByte(a.MetricsURL, ':')+1:]
	probe := func() (string, error) {
		var out, errOut bytes.Buffer
		err := healthCommand([]string{"--blob-port", blobPort, "--queue-port", "-1", "--table-port", "-1", "--dfs-port", "-1",
			"--smb-port", smbPort, "--metrics-port", metricsPort, "--timeout", "2s"}, &out, &errOut)
		return out.String(), err
	}
	out, err := probe()
	if err != nil || !strings.Contains(out, "smb 127.0.0.1:"+smbPort+": ok") || !strings.Contains(out, "/readyz: ok") {
		t.Fatalf("health with a live SMB listener: %v\n%s", err, out)
	}
	ln.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err = probe()
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health still passes after the SMB listener died:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(out, "503 SMB listener") {
		t.Fatalf("health output does not name the dead SMB listener:\n%s", out)
	}
}

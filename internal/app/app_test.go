package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseAccounts(t *testing.T) {
	accts, err := ParseAccounts("a1:" + DevKey + ";a2:" + DevKey + ":" + DevKey)
	if err != nil || len(accts) != 2 || accts[0].Name != "a1" || len(accts[1].Keys) != 2 {
		t.Fatalf("ParseAccounts: %+v %v", accts, err)
	}
	accts, err = ParseAccounts("a1:" + DevKey + ":hns;a2:" + DevKey + ":" + DevKey + ":hns;a3:" + DevKey)
	if err != nil || len(accts) != 3 || len(accts[0].Keys) != 1 || len(accts[1].Keys) != 2 {
		t.Fatalf("ParseAccounts with hns: %+v %v", accts, err)
	}
	if got := HierarchicalAccounts("a1:" + DevKey + ":hns;a2:" + DevKey + ":" + DevKey + ":hns;a3:" + DevKey); strings.Join(got, ",") != "a1,a2" {
		t.Fatalf("HierarchicalAccounts: %v", got)
	}
	for _, bad := range []string{"", "a1", "a1:", "a1:!!!", "a1:hns", "a1:" + DevKey + ";a1:" + DevKey, ":" + DevKey, "a:b:c:d"} {
		if _, err := ParseAccounts(bad); err == nil {
			t.Errorf("ParseAccounts(%q) accepted", bad)
		}
	}
}

func TestStartAndClose(t *testing.T) {
	a, err := Start(Config{DataDir: t.TempDir(), BlobPort: 0, QueuePort: -1, TablePort: -1, FilePort: -1, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	eps := a.Endpoints()
	if eps["blob"] == "" || eps["queue"] != "" || !strings.HasPrefix(a.BlobURL, "http://127.0.0.1:") {
		t.Fatalf("endpoints %v, blob URL %q", eps, a.BlobURL)
	}
	cs := a.ConnectionString(DevKey)
	if !strings.Contains(cs, "AccountName=devstoreaccount1") || !strings.Contains(cs, "BlobEndpoint="+a.BlobURL) {
		t.Fatalf("connection string %q", cs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMetricsEndpoints: requests to a service show in /metrics; /healthz
// and /readyz answer; readiness reads the store.
func TestMetricsEndpoints(t *testing.T) {
	a, err := Start(Config{DataDir: t.TempDir(), BlobPort: 0, QueuePort: -1, TablePort: -1, FilePort: -1, SMBPort: -1, MetricsPort: 0, NoSync: true})
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
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// An anonymous List Containers is refused after routing: it counts
	// under its operation.
	code, _ := get(a.BlobURL + "?comp=list")
	if code < 400 {
		t.Fatalf("anonymous List Containers: %d", code)
	}
	if c, body := get(a.MetricsURL + "/healthz"); c != 200 || body != "ok\n" {
		t.Fatalf("healthz: %d %q", c, body)
	}
	if c, body := get(a.MetricsURL + "/readyz"); c != 200 {
		t.Fatalf("readyz: %d %q", c, body)
	}
	_, body := get(a.MetricsURL + "/metrics")
	want := fmt.Sprintf(`cerulean_requests_total{code="%d",operation="listContainers",service="blob"} 1`, code)
	if !strings.Contains(body, want) {
		t.Fatalf("metrics lack %q:\n%s", want, body)
	}
	// Every operation of the route tables is listed, requested or not.
	for _, want := range []string{
		`cerulean_operation_info{operation="putBlob",service="blob"} 1`,
		`cerulean_operation_info{operation="clearMessages",service="queue"} 1`,
		`cerulean_operation_info{operation="insertEntity",service="table"} 1`,
		`cerulean_operation_info{operation="putRange",service="file"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// A connection string for a server listening on every address names
// loopback, which a client can dial, not the wildcard.
func TestClientAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0:10000":   "127.0.0.1:10000",
		"[::]:10000":      "[::1]:10000",
		"127.0.0.1:10000": "127.0.0.1:10000",
		"10.1.2.3:10001":  "10.1.2.3:10001",
	} {
		if got := ClientAddr(in); got != want {
			t.Errorf("ClientAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

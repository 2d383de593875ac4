// Package image tests the container image (deploy/Dockerfile) with the
// command lines that users' Azurite configurations pass: Testcontainers'
// azurite module (entrypoint azurite, host flags), docker-compose and .NET
// Aspire (-l /data and host flags), the single-service programs, and the
// image's own default command. scripts/image-test.sh builds the image,
// starts dockerd when needed and runs this package with
// CERULEAN_TEST_IMAGE set to the image's tag; without it the tests skip.
//
// Containers run with --network host only (no Docker bridge network), so
// the services listen on this machine's loopback; the tests use the
// default ports 10000-10004 and 10445 as the command lines do (and
// 29000-29002 for the health check on other ports), and fail early if
// something else holds the defaults.
package image

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

const (
	account = "devstoreaccount1"
	key     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

var noRetry = policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}

func image(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the image tests start containers")
	}
	img := os.Getenv("CERULEAN_TEST_IMAGE")
	if img == "" {
		t.Skip("CERULEAN_TEST_IMAGE not set (scripts/image-test.sh sets it)")
	}
	return img
}

func docker(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// run starts a container (detached, host network, health checked every
// second) and removes it when the test ends.
func run(t *testing.T, name string, runArgs []string, cmd ...string) {
	t.Helper()
	for _, p := range []int{10000, 10001, 10002, 10003, 10004, 10445} {
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p), 200*time.Millisecond); err == nil {
			c.Close()
			t.Fatalf("port %d is already in use on this machine", p)
		}
	}
	runOver(t, name, runArgs, cmd...)
}

// runOver starts a container as run does, without first checking that
// the default ports are free.
func runOver(t *testing.T, name string, runArgs []string, cmd ...string) {
	t.Helper()
	args := append([]string{"run", "-d", "--name", name, "--network", "host", "--health-interval", "1s"}, runArgs...)
	args = append(args, image(t))
	docker(t, append(args, cmd...)...)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := exec.Command("docker", "logs", name).CombinedOutput()
			t.Logf("logs of %s:\n%s", name, out)
		}
		_ = exec.Command("docker", "rm", "-f", name).Run()
	})
}

// waitLog waits for each line fragment in the container's output, as
// Testcontainers' wait.ForLog does.
func waitLog(t *testing.T, name string, fragments ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ := exec.Command("docker", "logs", name).CombinedOutput()
		missing := ""
		for _, f := range fragments {
			if !strings.Contains(string(out), f) {
				missing = f
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never printed %q; output:\n%s", name, missing, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitHealthy waits for Docker's health status of the container to be
// healthy (the image's HEALTHCHECK runs cerulean health).
func waitHealthy(t *testing.T, name string) {
	t.Helper()
	waitHealth(t, name, "healthy")
}

// waitHealth waits for Docker's health status of the container to be
// want.
func waitHealth(t *testing.T, name, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		status := docker(t, "inspect", "-f", "{{.State.Health.Status}}", name)
		if status == want {
			return
		}
		if time.Now().After(deadline) {
			out, _ := exec.Command("docker", "inspect", "-f", "{{json .State.Health}}", name).CombinedOutput()
			t.Fatalf("%s health status %q after 60 s, want %q; %s", name, status, want, out)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// blobRoundTrip writes a blob if write, then reads it back.
func blobRoundTrip(t *testing.T, write bool) {
	t.Helper()
	ctx := context.Background()
	cred, _ := azblob.NewSharedKeyCredential(account, key)
	c, err := azblob.NewClientWithSharedKeyCredential("http://127.0.0.1:10000/"+account, cred, &azblob.ClientOptions{ClientOptions: noRetry})
	if err != nil {
		t.Fatal(err)
	}
	if write {
		if _, err := c.CreateContainer(ctx, "images", nil); err != nil {
			t.Fatalf("create container: %v", err)
		}
		if _, err := c.UploadBuffer(ctx, "images", "kept.txt", []byte("kept across restarts"), nil); err != nil {
			t.Fatalf("upload: %v", err)
		}
	}
	resp, err := c.DownloadStream(ctx, "images", "kept.txt", nil)
	if err != nil {
		t.Fatalf("download: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "kept across restarts" {
		t.Fatalf("read %q", body)
	}
}

func queueAndTable(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	qcred, _ := azqueue.NewSharedKeyCredential(account, key)
	q, err := azqueue.NewServiceClientWithSharedKeyCredential("http://127.0.0.1:10001/"+account, qcred, &azqueue.ClientOptions{ClientOptions: noRetry})
	if err != nil {
		t.Fatal(err)
	}
	qc := q.NewQueueClient("jobs")
	if _, err := qc.Create(ctx, nil); err != nil {
		t.Fatalf("create queue: %v", err)
	}
	if _, err := qc.EnqueueMessage(ctx, "hello", nil); err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	got, err := qc.DequeueMessage(ctx, nil)
	if err != nil || len(got.Messages) != 1 || *got.Messages[0].MessageText != "hello" {
		t.Fatalf("dequeue: %v %+v", err, got)
	}
	tcred, _ := aztables.NewSharedKeyCredential(account, key)
	ts, err := aztables.NewServiceClientWithSharedKey("http://127.0.0.1:10002/"+account, tcred, &aztables.ClientOptions{ClientOptions: noRetry})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.CreateTable(ctx, "people", nil); err != nil {
		t.Fatalf("create table: %v", err)
	}
	tc := ts.NewClient("people")
	if _, err := tc.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","Name":"Ada"}`), nil); err != nil {
		t.Fatalf("add entity: %v", err)
	}
	if _, err := tc.GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatalf("get entity: %v", err)
	}
}

func refused(t *testing.T, port int) {
	t.Helper()
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		c.Close()
		t.Fatalf("port %d is served", port)
	}
}

// Testcontainers-go's azurite module: entrypoint azurite, the host flags,
// waits for "… service is successfully listening" and the ports.
func TestTestcontainersCommandLine(t *testing.T) {
	run(t, "cerulean-tc", []string{"--entrypoint", "azurite"}, "--blobHost", "0.0.0.0", "--queueHost", "0.0.0.0", "--tableHost", "0.0.0.0")
	waitLog(t, "cerulean-tc", "Blob service is successfully listening", "Queue service is successfully listening", "Table service is successfully listening")
	// The module's port wait strategy runs this inside the container.
	docker(t, "exec", "cerulean-tc", "/bin/sh", "-c", "true && (cat /proc/net/tcp* | awk '{print $2}' | grep -i :2710 || nc -vz -w 1 localhost 10000)")
	blobRoundTrip(t, true)
	queueAndTable(t)
	refused(t, 10003) // File only when asked for
	waitHealthy(t, "cerulean-tc")
}

// docker-compose files and .NET Aspire pass -l /data with the host flags;
// the data directory is bind-mounted, and a new container on it finds the
// data.
func TestComposeCommandLineKeepsData(t *testing.T) {
	dir := t.TempDir()
	// The image runs as uid 10000: the bind-mounted directory must be
	// writable by it, as documented in README.
	if err := os.Chown(dir, 10000, 10000); err != nil {
		t.Fatal(err)
	}
	cmd := []string{"azurite", "-l", "/data", "--blobHost", "0.0.0.0", "--queueHost", "0.0.0.0", "--tableHost", "0.0.0.0", "--loose", "--skipApiVersionCheck", "--disableTelemetry"}
	run(t, "cerulean-compose", []string{"-v", dir + ":/data"}, cmd...)
	waitLog(t, "cerulean-compose", "Azurite Blob service is successfully listening at http://0.0.0.0:10000")
	blobRoundTrip(t, true)
	waitHealthy(t, "cerulean-compose")
	// docker restart: SIGTERM, then the same container starts again.
	docker(t, "restart", "-t", "20", "cerulean-compose")
	waitHealthy(t, "cerulean-compose")
	blobRoundTrip(t, false)
	// A new container on the same directory.
	docker(t, "rm", "-f", "cerulean-compose")
	run(t, "cerulean-compose2", []string{"-v", dir + ":/data"}, cmd...)
	waitLog(t, "cerulean-compose2", "Table service is successfully listening")
	blobRoundTrip(t, false)
}

// The image's default command serves every service, File and SMB
// included, on all interfaces.
func TestDefaultCommand(t *testing.T) {
	run(t, "cerulean-default", nil)
	waitHealthy(t, "cerulean-default")
	blobRoundTrip(t, true)
	queueAndTable(t)
	cred, _ := service.NewSharedKeyCredential(account, key)
	fs, err := service.NewClientWithSharedKeyCredential("http://127.0.0.1:10003/"+account, cred, &service.ClientOptions{ClientOptions: noRetry})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.CreateShare(context.Background(), "share", nil); err != nil {
		t.Fatalf("create share: %v", err)
	}
	c, err := net.DialTimeout("tcp", "127.0.0.1:10445", time.Second)
	if err != nil {
		t.Fatalf("SMB port: %v", err)
	}
	c.Close()
}

// azurite-blob serves Blob only.
func TestBlobOnly(t *testing.T) {
	run(t, "cerulean-blob", nil, "azurite-blob", "--blobHost", "0.0.0.0")
	waitLog(t, "cerulean-blob", "Azurite Blob service successfully listens on")
	blobRoundTrip(t, true)
	refused(t, 10001)
	refused(t, 10002)
	waitHealthy(t, "cerulean-blob")
}

// A bad command line exits 2 at once with one line naming the problem.
func TestBadFlagExits2(t *testing.T) {
	img := image(t)
	cmd := exec.Command("docker", "run", "--rm", "--network", "host", img, "azurite", "--blobPort", "0", "--frobnicate")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "frobnicate") {
		t.Fatalf("exit %v, output %q", err, out)
	}
}

// The image stays small: a static binary over scratch.
func TestImageSize(t *testing.T) {
	img := image(t)
	var size int64
	fmt.Sscan(docker(t, "image", "inspect", "-f", "{{.Size}}", img), &size)
	if size <= 0 || size > 30<<20 {
		t.Fatalf("image size %d bytes, want at most 30 MiB", size)
	}
	if user := docker(t, "image", "inspect", "-f", "{{.Config.User}}", img); user == "" || strings.HasPrefix(user, "0") || user == "root" {
		t.Fatalf("image runs as %q, want a non-root user", user)
	}
}

// The HEALTHCHECK checks the ports the server opened, whatever the command
// line: a server on other ports than 10000-10004 turns healthy, and a
// container whose server is not running stays unhealthy even while
// another server answers on the default ports on the same (host) network.
func TestHealthCheckCustomPorts(t *testing.T) {
	run(t, "cerulean-ports", nil, "azurite", "--blobPort", "29000", "--queuePort", "29001", "--tablePort", "29002")
	waitLog(t, "cerulean-ports", "Blob service is successfully listening at http://127.0.0.1:29000", "Table service is successfully listening at http://127.0.0.1:29002")
	refused(t, 10000)
	waitHealthy(t, "cerulean-ports")
	// Another server on the default ports.
	runOver(t, "cerulean-decoy", nil, "cerulean", "serve", "--in-memory", "--file-port", "-1", "--dfs-port", "-1", "--smb-port", "-1")
	waitHealthy(t, "cerulean-decoy")
	// The same image with no server in it: the decoy's answers on
	// 10000-10002 are not its health.
	runOver(t, "cerulean-noserver", []string{"--entrypoint", "/bin/busybox"}, "sleep", "600")
	waitHealth(t, "cerulean-noserver", "unhealthy")
	if status := docker(t, "inspect", "-f", "{{.State.Health.Status}}", "cerulean-ports"); status != "healthy" {
		t.Fatalf("custom ports beside the decoy: %s", status)
	}
	// serve with the port flags' rule: 0 is any free port.
	docker(t, "rm", "-f", "cerulean-decoy")
	run(t, "cerulean-serve-free", nil, "cerulean", "serve", "--in-memory", "--blob-port", "0", "--queue-port", "0", "--table-port", "-1", "--file-port", "-1", "--dfs-port", "-1", "--smb-port", "-1")
	waitHealthy(t, "cerulean-serve-free")
}

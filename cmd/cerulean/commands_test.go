package main

import (
	"context"

	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// cerulean --help lists every command, one line each, and every command
// it lists runs (its --help answers without "unknown command").
func TestHelpListsEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		var out, errb bytes.Buffer
		if err := runCommand("cerulean", args, &out, &errb); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		text := out.String()
		for _, name := range []string{"serve", "azurite", "azurite-blob", "azurite-queue", "azurite-table", "health", "compact", "install-links", "version", "help"} {
			if n := len(regexp.MustCompile(`(?m)^  `+regexp.QuoteMeta(name)+`\b[^-]`).FindAllString(text, -1)); n != 1 {
				t.Errorf("%v: command %s listed %d times:\n%s", args, name, n, text)
			}
		}
		// The flags of serve follow, with the port rule.
		if !strings.Contains(text, "--blob-port int") || !strings.Contains(text, "-1: off, 0: any free port") {
			t.Errorf("%v: serve's flags missing:\n%s", args, text)
		}
	}
	for _, c := range commands() {
		if c.name == "install-links" {
			continue // takes a directory; TestInstallLinks
		}
		var out, errb bytes.Buffer
		if err := runCommand("cerulean", []string{c.name, "--help"}, &out, &errb); err != nil {
			t.Errorf("%s --help: %v", c.name, err)
		}
	}
	var out, errb bytes.Buffer
	err := runCommand("cerulean", []string{"frobnicate"}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "azurite-blob") || !strings.Contains(err.Error(), "--help") {
		t.Fatalf("unknown command error names the commands: %v", err)
	}
}

// Azurite's help names each setting once (-l, --location) and says each
// default once.
func TestAzuriteHelpPrintsEachDefaultOnce(t *testing.T) {
	var out, errb bytes.Buffer
	if err := runCommand("cerulean", []string{"azurite", "--help"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, line := range strings.Split(text, "\n") {
		if strings.Count(line, "default") > 1 {
			t.Errorf("default given twice: %q", line)
		}
	}
	for _, alias := range []string{"-l, --location", "-d, --debug", "-s, --silent", "-L, --loose"} {
		if strings.Count(text, alias) != 1 {
			t.Errorf("%q not listed once:\n%s", alias, text)
		}
	}
	if strings.Contains(text, "\n  --location") {
		t.Errorf("--location listed apart from -l:\n%s", text)
	}
}

// serveLog starts `cerulean serve` with args and returns its log lines up
// to the ready line.
func serveLog(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	cmd := exec.Command(binary(t, "cerulean"), append([]string{"serve"}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	errp, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	deadline := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	sc := bufio.NewScanner(errp)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.Contains(sc.Text(), "msg=ready") {
			go func() {
				for sc.Scan() {
				}
			}()
			return lines
		}
	}
	t.Fatalf("serve %v never got ready: %q", args, lines)
	return nil
}

// One rule on every port flag: -1 is off, 0 any free port (logged).
func TestPortFlagsOneRule(t *testing.T) {
	off := []string{"--in-memory", "--queue-port", "-1", "--table-port", "-1", "--file-port", "-1", "--dfs-port", "-1"}
	lines := strings.Join(serveLog(t, nil, append(off, "--blob-port", "0", "--smb-port", "0", "--metrics-port", "0")...), "\n")
	for _, want := range []string{
		`service=blob endpoint=http://127\.0\.0\.1:[1-9][0-9]*/devstoreaccount1`,
		`service=smb endpoint=//127\.0\.0\.1:[1-9][0-9]*/<share>`,
		`service=metrics endpoint=http://127\.0\.0\.1:[1-9][0-9]*/metrics`,
	} {
		if !regexp.MustCompile(want).MatchString(lines) {
			t.Errorf("port 0: no line matching %s in\n%s", want, lines)
		}
	}
	lines = strings.Join(serveLog(t, nil, append(off, "--blob-port", "0", "--smb-port", "-1", "--metrics-port", "-1")...), "\n")
	if strings.Contains(lines, "service=smb") || strings.Contains(lines, "service=metrics") {
		t.Errorf("port -1 still listens:\n%s", lines)
	}
	for _, flag := range []string{"--smb-port", "--metrics-port", "--blob-port"} {
		code, stderr := exitOf(t, "cerulean", nil, append([]string{"serve", "--in-memory", flag, "-2"}, off...)...)
		if code != 2 || !strings.Contains(stderr, flag+" -2") {
			t.Errorf("%s -2: exit %d %q", flag, code, stderr)
		}
	}
}

// waitFile waits for path to exist.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s never written", path)
}

// The health file: every command line form writes the ports it opened,
// health checks those (not 10000-10004), the server that wrote it must be
// the one running, and the file goes when the server stops.
func TestHealthFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "health.json")
	env := []string{healthFileEnv + "=" + file}
	p := start(t, "azurite-blob", env, 1, "--blobPort", "0", "-l", t.TempDir())
	var st healthState
	body, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(body, &st) != nil {
		t.Fatalf("health file: %v %q", err, body)
	}
	if st.PID != p.cmd.Process.Pid || "http://"+st.Endpoints["blob"] != p.endpoints["Blob"] || len(st.Endpoints) != 1 {
		t.Fatalf("health file %+v, server pid %d endpoints %v", st, p.cmd.Process.Pid, p.endpoints)
	}
	if code, stderr := exitOf(t, "cerulean", env, "health"); code != 0 {
		t.Fatalf("health of azurite-blob on a free port: exit %d %s", code, stderr)
	}
	// The same ports, answered, but not by the process that wrote the
	// file: unhealthy.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	stale := st
	stale.PID = gone.Process.Pid
	other := filepath.Join(dir, "other.json")
	b, _ := json.Marshal(stale)
	if err := os.WriteFile(other, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stderr := exitOf(t, "cerulean", []string{healthFileEnv + "=" + other}, "health"); code == 0 || !strings.Contains(stderr, "not running") {
		t.Fatalf("health with a file of a gone process: exit %d %s", code, stderr)
	}
	// A server that stops removes its file: unhealthy.
	_ = p.cmd.Process.Signal(os.Interrupt)
	_ = p.cmd.Wait()
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("health file left after a clean stop: %v", err)
	}
	if code, stderr := exitOf(t, "cerulean", env, "health"); code == 0 || !strings.Contains(stderr, "does not exist") {
		t.Fatalf("health after the server stopped: exit %d %s", code, stderr)
	}
	// serve, every service on a free port, SMB included.
	serveLog(t, env, "--data", t.TempDir(), "--blob-port", "0", "--queue-port", "0", "--table-port", "0", "--file-port", "0", "--dfs-port", "0", "--smb-port", "0")
	waitFile(t, file)
	code, stderr := exitOf(t, "cerulean", env, "health")
	if code != 0 {
		t.Fatalf("health of serve on free ports: exit %d %s", code, stderr)
	}
	body, _ = os.ReadFile(file)
	for _, svc := range []string{`"blob"`, `"queue"`, `"table"`, `"file"`, `"dfs"`, `"smb"`} {
		if !strings.Contains(string(body), svc) {
			t.Errorf("health file lacks %s: %s", svc, body)
		}
	}
}

// install-links makes Azurite's names links to the binary, again
// harmlessly, and refuses to replace a file of another program.
func TestInstallLinks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bin")
	var out, errb bytes.Buffer
	for i := 0; i < 2; i++ {
		if err := runCommand("cerulean", []string{"install-links", dir}, &out, &errb); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	self, _ := os.Executable()
	self, _ = filepath.EvalSymlinks(self)
	for n := range azuriteEntries {
		if target, err := os.Readlink(filepath.Join(dir, n)); err != nil || target != self {
			t.Errorf("%s -> %q, %v; want %s", n, target, err, self)
		}
	}
	os.Remove(filepath.Join(dir, "azurite"))
	if err := os.WriteFile(filepath.Join(dir, "azurite"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := runCommand("cerulean", []string{"install-links", dir}, &out, &errb); err == nil || !strings.Contains(err.Error(), "not a link") {
		t.Fatalf("over another program: %v", err)
	}
	if err := runCommand("cerulean", []string{"install-links"}, &out, &errb); err == nil {
		t.Fatal("install-links without a directory accepted")
	}
}

// The server's binary links no Azure SDK and no Apache Arrow (which
// azblob brings): the load generator is cmd/cerulean-bench, and health
// signs its requests itself.
func TestServerLinksNoClientSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/Azure/azure-sdk-for-go/") || strings.HasPrefix(pkg, "github.com/apache/arrow-go/") {
			t.Errorf("cmd/cerulean links %s", pkg)
		}
	}
}

// TestCompactCommand: cerulean compact shrinks a data directory's
// meta.db after deletes and keeps what was not deleted; it refuses a
// directory a server has open, and one without a store.
func TestCompactCommand(t *testing.T) {
	dir := t.TempDir()
	a, err := app.Start(app.Config{DataDir: dir, BlobPort: -1, QueuePort: 0, TablePort: -1, FilePort: -1, DFSPort: -1, SMBPort: -1, MetricsPort: -1})
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := runCommand("cerulean", []string{"compact", "--data", dir, "--wait", "100ms"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("compact of a directory in use: %v", err)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runCommand("cerulean", []string{"compact", "--data", dir}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`meta\.db: [\d.]+ MiB -> [\d.]+ MiB in `).MatchString(out.String()) {
		t.Fatalf("output %q", out.String())
	}
	// The store opens again after compaction.
	a, err = app.Start(app.Config{DataDir: dir, BlobPort: -1, QueuePort: 0, TablePort: -1, FilePort: -1, DFSPort: -1, SMBPort: -1, MetricsPort: -1})
	if err != nil {
		t.Fatalf("start after compact: %v", err)
	}
	_ = a.Close(context.Background())
	if err := runCommand("cerulean", []string{"compact", "--data", t.TempDir()}, &out, &errb); err == nil || !strings.Contains(err.Error(), "no embedded store") {
		t.Fatalf("compact of an empty directory: %v", err)
	}
}

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestVersionAndUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if err := runCommand("cerulean", []string{"version"}, &out, &errb); err != nil || !strings.HasPrefix(out.String(), "cerulean ") {
		t.Fatalf("version: %q %v", out.String(), err)
	}
	if err := runCommand("cerulean", []string{"frobnicate"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("unknown command: %v", err)
	}
	if err := runCommand("cerulean", []string{"serve", "--log-level", "loud"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "--log-level") {
		t.Fatalf("bad log level: %v", err)
	}
	if err := runCommand("cerulean", []string{"serve", "--accounts", "acct:not base64!"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "--accounts") {
		t.Fatalf("bad accounts: %v", err)
	}
}

func TestEnvDefaults(t *testing.T) {
	t.Setenv("CERULEAN_BLOB_PORT", "12345")
	t.Setenv("CERULEAN_LOG_LEVEL", "debug")
	if got := envInt("blob-port", 10000); got != 12345 {
		t.Fatalf("envInt = %d", got)
	}
	if got := env("log-level", "info"); got != "debug" {
		t.Fatalf("env = %q", got)
	}
	t.Setenv("CERULEAN_BLOB_PORT", "x")
	if got := envInt("blob-port", 10000); got != 10000 {
		t.Fatalf("envInt with a bad value = %d, want the default", got)
	}
}

func TestRedactDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@db:5432/x?sslmode=disable": "postgres://u:xxxxx@db:5432/x?sslmode=disable",
		"postgres://u@db/x":                             "postgres://u@db/x",
		"host=db password=secret":                       "(DSN with password)",
	} {
		if got := redactDSN(in); got != want {
			t.Errorf("redactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUPNRecheck(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 0, "2s": 2 * time.Second, "15m": 15 * time.Minute} {
		if got, err := upnRecheck(in); err != nil || got != want {
			t.Errorf("upnRecheck(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"2", "0s", "-2s", "soon"} {
		if _, err := upnRecheck(in); err == nil {
			t.Errorf("upnRecheck(%q) accepted", in)
		}
	}
}

func TestSMBLiveness(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 0, "3s": time.Second, "90s": 30 * time.Second} {
		if got, err := smbLiveness(in); err != nil || got != want {
			t.Errorf("smbLiveness(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"3", "-3s", "10ms", "soon"} {
		if _, err := smbLiveness(in); err == nil {
			t.Errorf("smbLiveness(%q) accepted", in)
		}
	}
}

// TestHTTPLimitsFlags: the limit flags of serve map onto server.Limits,
// 0 turning the cap and the progress rule off, and bad values are usage
// errors.
func TestHTTPLimitsFlags(t *testing.T) {
	l, err := httpLimits(100, time.Second, 2*time.Second, "1M")
	if err != nil || l.MaxConns != 100 || l.HeaderTimeout != time.Second || l.BodyWindow != 2*time.Second || l.BodyMinBytes != 1<<20 {
		t.Fatalf("httpLimits: %+v %v", l, err)
	}
	l, err = httpLimits(0, time.Second, 0, "64K")
	if err != nil || l.MaxConns != -1 || l.BodyWindow != -1 {
		t.Fatalf("off: %+v %v", l, err)
	}
	for _, bad := range []struct {
		header time.Duration
		bytes  string
	}{{0, "64K"}, {time.Second, "x"}, {time.Second, "0"}} {
		if _, err := httpLimits(1, bad.header, time.Second, bad.bytes); err == nil {
			t.Fatalf("httpLimits(%v, %q) accepted", bad.header, bad.bytes)
		}
	}
}

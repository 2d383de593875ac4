package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestConsolePortFlag: the console is off by default (-1), its port
// comes from --console-port or CERULEAN_CONSOLE_PORT, a port out of
// range is refused, and --help describes it.
func TestConsolePortFlag(t *testing.T) {
	f := serveFlags(io.Discard)
	if err := f.Parse(nil); err != nil || *f.consolePort != -1 {
		t.Fatalf("default: %v %v, want -1", *f.consolePort, err)
	}
	f = serveFlags(io.Discard)
	if err := f.Parse([]string{"--console-port", "10010"}); err != nil || *f.consolePort != 10010 {
		t.Fatalf("--console-port: %v %v", *f.consolePort, err)
	}
	t.Setenv("CERULEAN_CONSOLE_PORT", "10011")
	if f = serveFlags(io.Discard); *f.consolePort != 10011 {
		t.Fatalf("CERULEAN_CONSOLE_PORT=10011 gave %d", *f.consolePort)
	}
	if err := runCommand("cerulean", []string{"--console-port", "70000"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "console-port") {
		t.Fatalf("port 70000: %v", err)
	}
	var out bytes.Buffer
	if err := runCommand("cerulean", []string{"--help"}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "--console-port") {
		t.Fatalf("--help does not describe --console-port: %v", err)
	}
}

package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestClockControlFlag: --clock-control is off by default, turned on by
// the flag or CERULEAN_CLOCK_CONTROL, and --help describes it.
func TestClockControlFlag(t *testing.T) {
	f := serveFlags(io.Discard)
	if err := f.Parse(nil); err != nil || *f.clockControl {
		t.Fatalf("default: %v %v, want off", *f.clockControl, err)
	}
	f = serveFlags(io.Discard)
	if err := f.Parse([]string{"--clock-control"}); err != nil || !*f.clockControl {
		t.Fatalf("--clock-control: %v %v", *f.clockControl, err)
	}
	t.Setenv("CERULEAN_CLOCK_CONTROL", "true")
	if f = serveFlags(io.Discard); !*f.clockControl {
		t.Fatal("CERULEAN_CLOCK_CONTROL=true left it off")
	}
	var out bytes.Buffer
	if err := runCommand("cerulean", []string{"--help"}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "--clock-control") || !strings.Contains(out.String(), "/.cerulean/clock/advance") {
		t.Fatalf("--help does not describe --clock-control: %v", err)
	}
}

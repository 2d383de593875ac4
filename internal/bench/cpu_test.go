package bench

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with a space and a parenthesis, utime 250 and stime
	// 75 ticks: 3.25 s.
	line := []byte("4242 (cer ulean) x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 9 0 100 1000 200 18446744073709551615\n")
	got, err := parseStatCPU(line)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3250 * time.Millisecond; got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := parseStatCPU([]byte("4242 (short) S 1 2")); err == nil {
		t.Fatal("a truncated line parsed")
	}
	if _, err := parseStatCPU([]byte("no name at all")); err == nil {
		t.Fatal("a line without the name parsed")
	}
}

// TestProcessCPUMoves: the figure for this very process grows while it
// burns CPU as the kernel's own account of it (getrusage) does, so the
// meter reads the right fields. It spins until getrusage shows 200 ms of
// CPU, however long that takes on a loaded machine.
func TestProcessCPUMoves(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	rusage := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	before, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	r0 := rusage()
	x := 0
	for deadline := time.Now().Add(time.Minute); rusage()-r0 < 200*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatal("the process got under 200 ms of CPU in a minute")
		}
		for i := 0; i < 1e5; i++ {
			x += i
		}
	}
	after, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	r := rusage() - r0
	// /proc counts in clock ticks (10 ms here): allow two of them and
	// other goroutines' CPU on either side.
	if d := after - before; d < r/2 || d > 2*r+20*time.Millisecond {
		t.Fatalf("%v of CPU by getrusage showed as %v in /proc (x=%d)", r, d, x)
	}
}

// TestRunPaced: with -rate, Run's workers together start that many
// operations a second, not as many as they can.
func TestRunPaced(t *testing.T) {
	rate = 100
	defer func() { rate = 0 }()
	r := Run(context.Background(), "paced", 4, 300*time.Millisecond, func(context.Context, int, int64) error { return nil })
	// 30 slots in 300 ms; fewer only when a loaded machine starved the
	// workers past the deadline, never more.
	if r.Ops < 5 || r.Ops > 30 {
		t.Fatalf("%d operations in 300 ms at 100/s", r.Ops)
	}
}

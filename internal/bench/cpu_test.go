package bench

import (
	"os"
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
// burns CPU, so the meter reads the right fields.
func TestProcessCPUMoves(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	before, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
		for i := 0; i < 1e5; i++ {
			x += i
		}
	}
	after, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if d := after - before; d < 100*time.Millisecond {
		t.Fatalf("300 ms of spinning showed as %v of CPU (x=%d)", d, x)
	}
}

package bench

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestSoakShort runs the soak for a few seconds against an in-process
// server: every operation of the mix succeeds (a failure fails the run),
// every window reports each operation, the server's figures and the data
// directory, and the drift bound is applied (here loose: two one-second
// windows on a shared machine say nothing about drift, a 1e-9 bound must
// trip it).
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and drives it for seconds")
	}
	var out bytes.Buffer
	err := Main([]string{"-workloads", "soak", "-duration", "4s", "-soak-window", "1s", "-soak-rate", "60", "-soak-abusive", "5", "-clients", "4", "-soak-max-drift", "1000"}, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"Put Blob (overwrite)", "Get Blob", "Put Block List", "Lease acquire", "Queue put", "Table upsert", "Table get", "File create", "File read", "server: RSS", "data directory:", "write p99: first"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(s, "abusive connections so far 0\n") && strings.Count(s, "==") > 2 {
		t.Error("no abusive connection was made")
	}
	out.Reset()
	err = Main([]string{"-workloads", "soak", "-duration", "2s", "-soak-window", "500ms", "-soak-rate", "40", "-soak-abusive", "0", "-clients", "4", "-soak-max-drift", "1e-9"}, &out)
	if !errors.Is(err, ErrSoakDrift) {
		t.Fatalf("a bound of 1e-9 gave %v, want ErrSoakDrift\n%s", err, out.String())
	}
}

// TestAbuse: the abusive connections reach the server at the rate asked.
func TestAbuse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var n atomic.Int64
	abuse(ctx, "http://"+ln.Addr().String()+"/devstoreaccount1", 20, &n)
	time.Sleep(100 * time.Millisecond)
	if n.Load() < 10 || accepted.Load() < 10 {
		t.Fatalf("%d connections counted, %d accepted in 1 s at 20/s", n.Load(), accepted.Load())
	}
}

package hostile

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestGarbageOnEveryPort: random bytes, a TLS ClientHello and an HTTP/2
// preface sent to every port (Blob, Queue, Table, File, dfs, SMB,
// metrics) are refused: an HTTP port answers 400 (or, for bytes that
// never end a request line, closes at the header timeout), SMB closes;
// nothing panics or hangs, and every front door still serves a normal
// request afterwards.
func TestGarbageOnEveryPort(t *testing.T) {
	s := start(t, nil)
	rng := rand.New(rand.NewSource(7))
	payloads := map[string][]byte{
		"TLS ClientHello": {0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03},
		"HTTP/2 preface":  []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
		"newlines":        []byte(strings.Repeat("\r\n", 1000)),
	}
	for _, n := range []int{1, 16, 1 << 10, 64 << 10} {
		b := make([]byte, n)
		rng.Read(b)
		payloads[fmt.Sprintf("%d random bytes", n)] = b
	}
	// The ports run in parallel: a probe that never ends a request
	// line waits out the header timeout.
	var wg sync.WaitGroup
	for _, port := range []string{"blob", "queue", "table", "file", "dfs", "smb", "metrics"} {
		for name, p := range payloads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				garbage(t, s.addr[port], port, name, p)
			}()
		}
	}
	wg.Wait()
	s.alive()
}

func firstLine(b []byte) string {
	l, _, _ := strings.Cut(string(b), "\n")
	return l
}

// garbage sends p to addr and reads to the end: the server must answer
// (an HTTP port: 400, 431, or 404 for the HTTP/2 preface, which net/http
// hands to the handler as a request for "*") and close, or close, within
// the bound.
func garbage(t *testing.T, addr, port, name string, p []byte) {
	what := port + " <- " + name
	if port == "smb" && len(p) < 4 {
		// Less than a frame header, then nothing: held until the
		// pre-authentication deadline, which TestSMBLimits probes.
		return
	}
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Error(err)
		return
	}
	defer c.Close()
	start := time.Now()
	bound := headerTimeout + 4*time.Second
	if port == "smb" {
		bound = 4 * time.Second
	}
	_ = c.SetDeadline(start.Add(bound))
	go func() { _, _ = c.Write(p) }()
	got, err := io.ReadAll(io.LimitReader(c, 1<<20))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("%s: still open after %s", what, time.Since(start))
		return
	}
	if port == "smb" || len(got) == 0 {
		return
	}
	line := firstLine(got)
	ok := strings.HasPrefix(line, "HTTP/1.1 400 ") || strings.HasPrefix(line, "HTTP/1.0 400 ") || strings.HasPrefix(line, "HTTP/1.1 431 ")
	if name == "HTTP/2 preface" {
		ok = strings.HasPrefix(line, "HTTP/1.1 404 ") || strings.HasPrefix(line, "HTTP/1.1 400 ") && port == "metrics"
	}
	if !ok {
		t.Errorf("%s: answered %q", what, line)
	}
}

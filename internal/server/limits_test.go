package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

// limitServer listens for blob (XML errors) and table (JSON errors) on
// loopback with lim and a handler that reads the whole body and answers
// 201 with the byte count; it returns the two addresses.
func limitServer(t *testing.T, lim Limits) (*Server, string, string) {
	t.Helper()
	s := New(Config{Clock: clock.Real{}, Accounts: testAccounts, Limits: lim})
	h := handlerFunc(func(w http.ResponseWriter, r *Request) error {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			return err
		}
		w.Header().Set("X-Got", fmt.Sprint(n))
		w.WriteHeader(http.StatusCreated)
		return nil
	})
	blob, err := s.Listen(Service{Name: "blob", Kind: auth.Blob, Addr: "127.0.0.1:0", Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	table, err := s.Listen(Service{Name: "table", Kind: auth.Table, Addr: "127.0.0.1:0", Handler: h, JSONErrors: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s, blob, table
}

// rawConn dials addr and returns the connection and a reader of it; the
// whole exchange is bounded to 20 s.
func rawConn(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// roundTrip sends one anonymous PUT with body on c and reads the answer.
func roundTrip(t *testing.T, c net.Conn, br *bufio.Reader, body string) *http.Response {
	t.Helper()
	req := fmt.Sprintf("PUT /devstoreaccount1/c/b HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(string(b)))
	return resp
}

// TestBodyProgressCutsSlowBody: a body trickled at 20 bytes a second is
// cut once a window passes without BodyMinBytes, with 500
// OperationTimedOut and the connection closed; a large body sent at full
// speed and one sent in bursts with pauses shorter than the window both
// pass. (Before the progress rule the trickle was held for as long as
// the client kept sending: the test failed at its 4 s bound.)
func TestBodyProgressCutsSlowBody(t *testing.T) {
	const window = 400 * time.Millisecond
	_, blob, _ := limitServer(t, Limits{BodyWindow: window, BodyMinBytes: 4096})

	c, br := rawConn(t, blob)
	start := time.Now()
	if _, err := io.WriteString(c, "PUT /devstoreaccount1/c/b HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			answered <- nil
			return
		}
		answered <- resp
	}()
	var resp *http.Response
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
trickle:
	for time.Since(start) < 4*time.Second {
		select {
		case resp = <-answered:
			break trickle
		case <-tick.C:
			if _, err := c.Write([]byte("x")); err != nil {
				resp = <-answered
				break trickle
			}
		}
	}
	took := time.Since(start)
	if took >= 4*time.Second {
		t.Fatalf("a body at 20 bytes/s was still open after %s (window %s)", took, window)
	}
	if took < window {
		t.Fatalf("cut after %s, before one window (%s) passed", took, window)
	}
	if resp == nil {
		t.Fatalf("connection closed after %s without an answer", took)
	}
	if resp.StatusCode != 500 || resp.Header.Get("x-ms-error-code") != "OperationTimedOut" {
		t.Fatalf("slow body: %d %s, want 500 OperationTimedOut", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	t.Logf("slow body cut after %s (window %s)", took, window)

	// 8 MiB at full speed.
	c2, br2 := rawConn(t, blob)
	big := strings.Repeat("a", 8<<20)
	if r := roundTrip(t, c2, br2, big); r.StatusCode != 201 || r.Header.Get("X-Got") != fmt.Sprint(len(big)) {
		t.Fatalf("8 MiB upload: %d, got %s bytes", r.StatusCode, r.Header.Get("X-Got"))
	}
	// 64 KiB in 16 bursts 150 ms apart: slower overall than one window
	// per burst would allow in sum (2.4 s), each pause within it.
	c3, br3 := rawConn(t, blob)
	if _, err := io.WriteString(c3, "PUT /devstoreaccount1/c/b HTTP/1.1\r\nHost: x\r\nContent-Length: 65536\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 16; i++ {
		time.Sleep(150 * time.Millisecond)
		if _, err := c3.Write([]byte(strings.Repeat("b", 4096))); err != nil {
			t.Fatalf("burst %d: %v", i, err)
		}
	}
	r3, err := http.ReadResponse(br3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r3.StatusCode != 201 || r3.Header.Get("X-Got") != "65536" {
		t.Fatalf("bursty upload: %d, got %s bytes", r3.StatusCode, r3.Header.Get("X-Got"))
	}
}

// TestHeaderTimeoutConfigurable: a client that never finishes its headers
// (slowloris) is closed after Limits.HeaderTimeout. (Before, the timeout
// was a fixed 30 s: the test failed at its 3 s bound.)
func TestHeaderTimeoutConfigurable(t *testing.T) {
	_, blob, _ := limitServer(t, Limits{HeaderTimeout: 300 * time.Millisecond})
	c, br := rawConn(t, blob)
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	start := time.Now()
	if _, err := io.WriteString(c, "GET /devstoreaccount1/c HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 25; i++ {
		time.Sleep(100 * time.Millisecond)
		if _, err := io.WriteString(c, "X-A: b\r\n"); err != nil {
			break
		}
	}
	_, err := io.ReadAll(br)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("headers still being read after %s", time.Since(start))
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("closed after %s, want about 300ms", took)
	}
}

// TestConnectionCapServerBusy: with MaxConns 3 across two listeners, the
// fourth connection (to either) is answered 503 ServerBusy in the
// service's error format and closed; the three held keep working, and a
// slot freed is taken again. (Before, there was no cap: the fourth was
// served 201.)
func TestConnectionCapServerBusy(t *testing.T) {
	s, blob, table := limitServer(t, Limits{MaxConns: 3})
	var held []net.Conn
	var readers []*bufio.Reader
	for _, addr := range []string{blob, blob, table} {
		c, br := rawConn(t, addr)
		if r := roundTrip(t, c, br, "hi"); r.StatusCode != 201 {
			t.Fatalf("held connection: %d", r.StatusCode)
		}
		held, readers = append(held, c), append(readers, br)
	}
	if n := s.OpenConns(); n != 3 {
		t.Fatalf("OpenConns %d, want 3", n)
	}
	for _, tc := range []struct {
		addr, want string
	}{
		{blob, "<Code>ServerBusy</Code>"},
		{table, `"code":"ServerBusy"`},
	} {
		c, br := rawConn(t, tc.addr)
		r := roundTrip(t, c, br, "over")
		body, _ := io.ReadAll(r.Body)
		if r.StatusCode != 503 || r.Header.Get("x-ms-error-code") != "ServerBusy" || !strings.Contains(string(body), tc.want) || !r.Close {
			t.Fatalf("connection over the cap: %d %s close=%v %s", r.StatusCode, r.Header.Get("x-ms-error-code"), r.Close, body)
		}
		if _, err := br.ReadByte(); err != io.EOF {
			t.Fatalf("refused connection not closed: %v", err)
		}
	}
	for i, c := range held {
		if r := roundTrip(t, c, readers[i], "again"); r.StatusCode != 201 {
			t.Fatalf("held connection %d after refusals: %d", i, r.StatusCode)
		}
	}
	held[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for s.OpenConns() > 2 {
		if time.Now().After(deadline) {
			t.Fatalf("closed connection still counted: %d open", s.OpenConns())
		}
		time.Sleep(10 * time.Millisecond)
	}
	c, br := rawConn(t, table)
	if r := roundTrip(t, c, br, "freed"); r.StatusCode != 201 {
		t.Fatalf("after a slot was freed: %d", r.StatusCode)
	}
}

// TestCapBodyBoundsDrain: a bound set on the body (drainBody's 10 s, here
// 300 ms) holds even for a client that keeps up with the progress rule:
// the rule's next read must not move the deadline past it. (Before
// capBody, the drain of a refused body trickled at the rule's minimum
// rate went on for as long as the body lasted: the test failed at its
// 3 s bound.)
func TestCapBodyBoundsDrain(t *testing.T) {
	s := New(Config{Clock: clock.Real{}, Accounts: testAccounts, Limits: Limits{BodyWindow: 2 * time.Second, BodyMinBytes: 10}})
	took := make(chan time.Duration, 1)
	addr, err := s.Listen(Service{Name: "blob", Kind: auth.Blob, Addr: "127.0.0.1:0", Handler: handlerFunc(func(w http.ResponseWriter, r *Request) error {
		start := time.Now()
		capBody(r.Request, start.Add(300*time.Millisecond))
		_, err := io.Copy(io.Discard, r.Body)
		took <- time.Since(start)
		return err
	})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	c, _ := rawConn(t, addr)
	if _, err := io.WriteString(c, "PUT /devstoreaccount1/c/b HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(3 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case d := <-took:
			if d > 2*time.Second {
				t.Fatalf("body read for %s past a 300ms bound", d)
			}
			return
		case <-tick.C:
			_, _ = c.Write([]byte("01234567890123456789"))
		case <-deadline:
			t.Fatal("body still being read after 3 s past a 300ms bound")
		}
	}
}

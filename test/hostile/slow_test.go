package hostile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// closedWithin dials svc, writes first, then keeps writing drip every
// step until the server closes the connection (or answers), for at most
// bound; it returns how long the server took and the answer, if any.
func (s *srv) closedWithin(svc string, first []byte, drip []byte, step, bound time.Duration) (time.Duration, reply, bool) {
	s.t.Helper()
	c, err := net.DialTimeout("tcp", s.addr[svc], 5*time.Second)
	if err != nil {
		s.t.Error(err) // may run off the test's goroutine: no Fatal
		return 0, reply{err: err}, true
	}
	defer c.Close()
	start := time.Now()
	_ = c.SetDeadline(start.Add(bound))
	if _, err := c.Write(first); err != nil {
		return time.Since(start), reply{}, true
	}
	got := make(chan reply, 1)
	go func() { got <- readReply(c, false) }()
	tick := time.NewTicker(step)
	defer tick.Stop()
	for {
		select {
		case r := <-got:
			var ne net.Error
			if errors.As(r.err, &ne) && ne.Timeout() {
				return time.Since(start), r, false
			}
			return time.Since(start), r, true
		case <-tick.C:
			if len(drip) > 0 {
				_, _ = c.Write(drip)
			}
		}
	}
}

// TestSlowClients: a client that trickles its headers (slowloris) is cut
// at the header timeout; one that trickles a body, or declares more body
// than it sends, is cut by the progress rule with 500 OperationTimedOut
// on every service, and nothing is stored; 50 slowloris connections at
// once do not stop normal requests; a large upload at full speed passes.
// (Before the progress rule, the body probes were held until the test's
// bound.)
func TestSlowClients(t *testing.T) {
	s := start(t, nil)
	dev := "/" + app.DevAccount
	bound := headerTimeout + 3*time.Second
	// The probes of each group run at once: each waits out a timeout.
	var wg sync.WaitGroup
	for _, svc := range []string{"blob", "queue", "table", "file", "dfs", "metrics"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			took, r, closed := s.closedWithin(svc, []byte("GET "+dev+"?comp=list HTTP/1.1\r\nHost: x\r\n"), []byte("X-Slow: 1\r\n"), 100*time.Millisecond, bound)
			if !closed {
				t.Errorf("%s: slowloris headers still open after %s", svc, took)
			} else if took < headerTimeout/2 {
				t.Errorf("%s: slowloris closed after %s, before the header timeout (%s): %v", svc, took, headerTimeout, r)
			}
		}()
	}
	wg.Wait()

	// Slow bodies: 10 bytes every 100 ms, or 10 bytes of 1 MiB declared
	// and then nothing.
	s.must(s.do("queue", "PUT", dev+"/queue1", nil, nil, app.DevAccount), 201)
	s.must(s.do("file", "PUT", dev+"/share?restype=share", nil, nil, app.DevAccount), 201)
	s.must(s.do("file", "PUT", dev+"/share/f", http.Header{"X-Ms-Type": {"file"}, "X-Ms-Content-Length": {"1048576"}}, nil, app.DevAccount), 201)
	s.must(s.do("table", "POST", dev+"/Tables", http.Header{"Content-Type": {"application/json"}}, []byte(`{"TableName":"table1"}`), app.DevAccount), 201)
	bodies := []struct {
		name, svc, method, target string
		hdr                       http.Header
	}{
		{"Put Blob", "blob", "PUT", dev + "/cont/slow", http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}},
		{"Put Block", "blob", "PUT", dev + "/cont/slow?comp=block&blockid=QUFBQQ%3D%3D", nil},
		{"Put Message", "queue", "POST", dev + "/queue1/messages", nil},
		{"Put Range", "file", "PUT", dev + "/share/f?comp=range", http.Header{"X-Ms-Write": {"update"}, "X-Ms-Range": {"bytes=0-65535"}}},
		{"Insert Entity", "table", "POST", dev + "/table1", http.Header{"Content-Type": {"application/json"}}},
		{"dfs Put Blob", "dfs", "PUT", dev + "/cont/slowdfs", http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}},
	}
	for _, b := range bodies {
		for _, mode := range []string{"trickle", "stall"} {
			h := b.hdr.Clone()
			if h == nil {
				h = http.Header{}
			}
			h.Set("Content-Length", "65536") // within every cap
			head := s.request(b.svc, b.method, b.target, h, nil, app.DevAccount)
			wg.Add(1)
			go func() {
				defer wg.Done()
				drip := []byte("0123456789")
				first := append(head, drip...)
				if mode == "stall" {
					drip = nil
				}
				took, r, closed := s.closedWithin(b.svc, first, drip, 100*time.Millisecond, bodyWindow+4*time.Second)
				what := fmt.Sprintf("%s, body %s", b.name, mode)
				if !closed {
					t.Errorf("%s: still open after %s", what, took)
					return
				}
				want(t, what, r, 500, "OperationTimedOut")
				if took < bodyWindow {
					t.Errorf("%s: cut after %s, before one progress window (%s)", what, took, bodyWindow)
				}
			}()
		}
	}
	wg.Wait()
	// Nothing of the cut uploads was stored.
	want(t, "blob of a cut Put Blob", s.do("blob", "GET", dev+"/cont/slow", nil, nil, app.DevAccount), 404, "BlobNotFound")
	want(t, "blob of a cut dfs Put Blob", s.do("blob", "GET", dev+"/cont/slowdfs", nil, nil, app.DevAccount), 404, "BlobNotFound")
	if r := s.do("queue", "GET", dev+"/queue1/messages?peekonly=true", nil, nil, app.DevAccount); r.status != 200 || strings.Contains(r.body, "<QueueMessage>") {
		t.Errorf("queue after cut Put Messages: %v", r)
	}

	// 50 slowloris connections at once; normal requests go on meanwhile.
	stop := make(chan struct{})
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			svc := []string{"blob", "queue", "table", "file", "dfs"}[i%5]
			c, err := net.DialTimeout("tcp", s.addr[svc], 5*time.Second)
			if err != nil {
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			_, _ = io.WriteString(c, "GET / HTTP/1.1\r\n")
			for {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond):
					if _, err := io.WriteString(c, "X-A: b\r\n"); err != nil {
						return
					}
				}
			}
		}(i)
	}
	time.Sleep(200 * time.Millisecond)
	s.alive()
	close(stop)
	wg.Wait()

	// A large upload at full speed passes under the same rule, and
	// reads back whole.
	big := make([]byte, 16<<20)
	rand.New(rand.NewSource(1)).Read(big)
	s.must(s.do("blob", "PUT", dev+"/cont/big", http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}, big, app.DevAccount), 201)
	if r := s.do("blob", "GET", dev+"/cont/big", nil, nil, app.DevAccount); r.status != 200 || r.body != string(big[:1<<20]) {
		t.Errorf("16 MiB blob read back: %d, %d bytes", r.status, len(r.body))
	}
	s.alive()
}

// TestConnectionFlood: with the cap at 64, 300 connections opened at once
// are each either served or answered 503 ServerBusy (none left hanging);
// while 64 are held, the next ones are refused at once and the held ones
// still served; once they go, the server serves everyone again.
func TestConnectionFlood(t *testing.T) {
	const capConns = 64
	s := start(t, func(c *app.Config) { c.HTTPLimits.MaxConns = capConns })
	dev := "/" + app.DevAccount
	list := func(svc string) []byte {
		return s.request(svc, "GET", dev+"?comp=list", nil, nil, app.DevAccount)
	}

	// 300 at once, across the five HTTP ports, in a bounded time.
	type result struct {
		status int
		code   string
		err    error
	}
	results := make(chan result, 300)
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < 300; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			svc := []string{"blob", "queue", "file", "dfs", "blob"}[i%5]
			c, err := net.DialTimeout("tcp", s.addr[svc], 5*time.Second)
			if err != nil {
				results <- result{err: err}
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			if _, err := c.Write(list(svc)); err != nil {
				results <- result{err: err}
				return
			}
			r := readReply(c, false)
			results <- result{r.status, r.code, r.err}
		}(i)
	}
	wg.Wait()
	close(results)
	counts := map[string]int{}
	for r := range results {
		switch {
		case r.status == 200:
			counts["200"]++
		case r.status == 503 && r.code == "ServerBusy":
			counts["503 ServerBusy"]++
		default:
			counts[fmt.Sprintf("other %d %s %v", r.status, r.code, r.err)]++
		}
	}
	t.Logf("300 connections at once, cap %d: %v in %s", capConns, counts, time.Since(start))
	if counts["200"]+counts["503 ServerBusy"] != 300 {
		t.Errorf("connections neither served nor refused: %v", counts)
	}
	if counts["200"] == 0 {
		t.Errorf("none served: %v", counts)
	}

	// Hold the cap, then knock.
	waitOpen(t, s, 0)
	var held []net.Conn
	for i := 0; i < capConns; i++ {
		svc := []string{"blob", "queue", "table", "file", "dfs"}[i%5]
		c, err := net.DialTimeout("tcp", s.addr[svc], 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	waitOpen(t, s, capConns)
	for i := 0; i < 100; i++ {
		svc := []string{"blob", "queue", "table", "file", "dfs"}[i%5]
		var r reply
		within(t, 3*time.Second, "a refused connection", func() { r = s.send(svc, list(svc), false) })
		wantCode := "ServerBusy"
		want(t, fmt.Sprintf("connection %d over the cap (%s)", i, svc), r, 503, wantCode)
		if t.Failed() {
			break
		}
	}
	// The held connections are served.
	for i, c := range held[:5] {
		svc := []string{"blob", "queue", "table", "file", "dfs"}[i%5]
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		target := dev + "?comp=list"
		if svc == "table" {
			target = dev + "/Tables"
		}
		if _, err := c.Write(s.request(svc, "GET", target, nil, nil, app.DevAccount)); err != nil {
			t.Fatal(err)
		}
		if r := readReply(c, false); r.status != 200 {
			t.Errorf("held connection to %s: %v", svc, r)
		}
	}
	for _, c := range held {
		c.Close()
	}
	waitOpen(t, s, 0)
	s.alive()
}

// waitOpen waits (at most 10 s) until the server counts n open HTTP
// connections.
func waitOpen(t *testing.T, s *srv, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.a.OpenHTTPConns() != n {
		if time.Now().After(deadline) {
			t.Fatalf("open HTTP connections: %d, want %d", s.a.OpenHTTPConns(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIdleKeepAlive: an idle keep-alive connection is closed after
// app.Config.IdleTimeout (--keep-alive-timeout) on every HTTP port.
func TestIdleKeepAlive(t *testing.T) {
	const idle = 300 * time.Millisecond
	s := start(t, func(c *app.Config) { c.IdleTimeout = idle })
	for _, svc := range []string{"blob", "queue", "table", "file", "dfs"} {
		c, err := net.DialTimeout("tcp", s.addr[svc], 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		target := "/" + app.DevAccount + "?comp=list"
		if svc == "table" {
			target = "/" + app.DevAccount + "/Tables"
		}
		if _, err := c.Write(s.request(svc, "GET", target, nil, nil, app.DevAccount)); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", svc, resp, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		start := time.Now()
		if _, err := br.ReadByte(); err != io.EOF {
			t.Errorf("%s: idle connection: %v after %s, want EOF", svc, err, time.Since(start))
		} else if took := time.Since(start); took < idle/2 || took > idle+2*time.Second {
			t.Errorf("%s: idle connection closed after %s, want about %s", svc, took, idle)
		}
		c.Close()
	}
}

package smb

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// closedWithin checks that the server closes nc within d (a read ends in
// EOF or a reset rather than a timeout) and returns how long it took.
func closedWithin(t *testing.T, nc net.Conn, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	_ = nc.SetReadDeadline(start.Add(d))
	var b [1]byte
	for {
		_, err := nc.Read(b[:])
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("connection still open after %v", d)
		}
		if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "reset") {
			t.Fatalf("unexpected read error %v", err)
		}
		return time.Since(start)
	}
}

// stillOpen checks that c is served: an ECHO is answered.
func stillOpen(t *testing.T, c *rawClient) {
	t.Helper()
	status(t, c.call(smb2.CommandEcho, smb2.EchoRequest{}.Encode()), smb2.StatusSuccess)
}

// TestPreauthDeadline: connections that do not complete a SESSION_SETUP
// within PreauthTimeout of their accept are closed then (silent ones,
// one that only negotiated, one stuck half-way through NTLM); a logged-on
// connection stays.
func TestPreauthDeadline(t *testing.T) {
	const timeout = time.Second
	e := newTestEnvWith(t, func(c *Config) { c.PreauthTimeout = timeout })
	start := time.Now()
	var silent []net.Conn
	for range 50 {
		silent = append(silent, e.dial().nc)
	}
	negotiated := e.dial()
	negotiated.negotiate(smb2.Dialect311)
	logged := e.connect()

	for _, nc := range silent {
		closedWithin(t, nc, 5*time.Second)
	}
	if d := time.Since(start); d < timeout-50*time.Millisecond {
		t.Fatalf("silent connections closed after %v, before the %v deadline", d, timeout)
	}
	closedWithin(t, negotiated.nc, 5*time.Second)
	time.Sleep(timeout)
	stillOpen(t, logged)
}

// TestIdleTimeout: an authenticated connection with nothing open that
// sends nothing for IdleTimeout is closed; one with an open file, or one
// that keeps sending, stays.
func TestIdleTimeout(t *testing.T) {
	const idle = 500 * time.Millisecond
	e := newTestEnvWith(t, func(c *Config) { c.IdleTimeout = idle })
	quiet := e.connect()
	holding := e.connect()
	fid, r := holding.create("held.txt", smb2.GenericRead|smb2.GenericWrite, smb2.ShareRead, smb2.FileOpenIf, 0)
	status(t, r, smb2.StatusSuccess)
	busy := e.connect()
	// A request is activity: the quiet connection's idle time restarts.
	time.Sleep(idle / 2)
	stillOpen(t, quiet)
	start := time.Now()
	for time.Since(start) < 3*idle {
		stillOpen(t, busy)
		time.Sleep(idle / 5)
	}
	closedWithin(t, quiet.nc, 5*time.Second)
	stillOpen(t, holding)
	status(t, holding.close(fid), smb2.StatusSuccess)
	closedWithin(t, holding.nc, 5*time.Second)
}

// TestConnectionCaps: the MaxConnsPerAddr+1th connection from one address
// and the MaxConns+1th in all are closed as soon as they are accepted;
// once a connection ends, a new one is admitted.
func TestConnectionCaps(t *testing.T) {
	for _, tc := range []struct {
		name    string
		adjust  func(*Config)
		allowed int
	}{
		{"per address", func(c *Config) { c.MaxConnsPerAddr = 4 }, 4},
		{"total", func(c *Config) { c.MaxConns = 3; c.MaxConnsPerAddr = -1 }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnvWith(t, tc.adjust)
			var admitted []*rawClient
			for range tc.allowed {
				c := e.dial()
				c.negotiate(smb2.Dialect311)
				admitted = append(admitted, c)
			}
			extra := e.dial()
			if d := closedWithin(t, extra.nc, 5*time.Second); d > time.Second {
				t.Fatalf("the connection beyond the cap was closed after %v", d)
			}
			for _, c := range admitted {
				stillOpen(t, c)
			}
			admitted[0].nc.Close()
			deadline := time.Now().Add(5 * time.Second)
			for {
				e.srv.mu.Lock()
				n := len(e.srv.conns)
				e.srv.mu.Unlock()
				if n < tc.allowed {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the closed connection is still counted")
				}
				time.Sleep(5 * time.Millisecond)
			}
			again := e.dial()
			again.negotiate(smb2.Dialect311)
			stillOpen(t, again)
		})
	}
}

// heapBytes returns the heap and stack in use after a collection.
func heapBytes() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// TestOversizedFrameBeforeLogon: before NEGOTIATE and before logon, a
// frame announcing more than the pre-authentication limit (200 KiB,
// which the old 256 KiB limit let through, and the 24-bit maximum of
// 16 MiB) is refused at once, without a buffer of its size.
func TestOversizedFrameBeforeLogon(t *testing.T) {
	e := newTestEnv(t)
	for _, n := range []int{200 << 10, smb2.MaxFrameSize} {
		c := e.dial()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		h := smb2.FrameHeader(n)
		if _, err := c.nc.Write(h[:]); err != nil {
			t.Fatal(err)
		}
		if d := closedWithin(t, c.nc, 5*time.Second); d > time.Second {
			t.Fatalf("frame of %d bytes before NEGOTIATE: closed after %v", n, d)
		}
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > uint64(n)/4 {
			t.Errorf("frame of %d bytes before NEGOTIATE: %d bytes allocated", n, got)
		}
	}
	// After NEGOTIATE, before logon.
	c := e.dial()
	c.negotiate(smb2.Dialect311)
	h := smb2.FrameHeader(100 << 10)
	if _, err := c.nc.Write(h[:]); err != nil {
		t.Fatal(err)
	}
	closedWithin(t, c.nc, 5*time.Second)
	// A frame that is not a NEGOTIATE is refused from its header.
	c = e.dial()
	body := smb2.Marshal(smb2.Header{Command: smb2.CommandSessionSetup, CreditCharge: 1}, nil)
	h = smb2.FrameHeader(60 << 10)
	if _, err := c.nc.Write(append(h[:], body...)); err != nil {
		t.Fatal(err)
	}
	closedWithin(t, c.nc, 5*time.Second)
}

// silentConnections opens n connections that each send first (maybe
// nothing) and then nothing, waits until the server has want of them
// open, and returns the growth of the heap and stacks per connection.
func silentConnections(t *testing.T, e *testEnv, n int, first []byte, want int) (perConn uint64, open int) {
	t.Helper()
	base := heapBytes()
	conns := make([]net.Conn, 0, n)
	for range n {
		nc, err := net.Dial("tcp", e.addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
		if len(first) > 0 {
			if _, err := nc.Write(first); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
		e.waitConns()
	}()
	if want == 0 {
		for _, nc := range conns {
			closedWithin(t, nc, 5*time.Second)
		}
	}
	// Let the server accept and read what was sent.
	deadline := time.Now().Add(20 * time.Second)
	for {
		e.srv.mu.Lock()
		open = len(e.srv.conns)
		e.srv.mu.Unlock()
		if open == want || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if grown := int64(heapBytes()) - int64(base); grown > 0 {
		perConn = uint64(grown) / uint64(n)
	}
	return perConn, open
}

// rssKiB reads the process's resident set size (Linux), 0 elsewhere.
func rssKiB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// TestSilentConnectionsMemory: connections that announce a frame and
// then send nothing hold at most a small buffer each, not the announced
// size. CERULEAN_SMB_SILENT_CONNS sets how many (default 200).
func TestSilentConnectionsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens hundreds of connections")
	}
	n := 200
	if v, err := strconv.Atoi(os.Getenv("CERULEAN_SMB_SILENT_CONNS")); err == nil && v > 0 {
		n = v
	}
	e := newTestEnvWith(t, func(c *Config) { c.MaxConns, c.MaxConnsPerAddr = -1, -1 })
	negHead := smb2.Marshal(smb2.Header{Command: smb2.CommandNegotiate, CreditCharge: 1}, nil)
	announce := func(size int) []byte {
		h := smb2.FrameHeader(size)
		return append(h[:], negHead...)
	}
	// Each case: a NEGOTIATE header announcing a frame of that size.
	for _, tc := range []struct {
		name  string
		first []byte
		open  int
	}{
		{"silent", nil, n},
		{"announce 60 KiB", announce(60 << 10), n},
		// Over the pre-authentication limit: closed at once.
		{"announce 250 KiB", announce(250 << 10), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rss := rssKiB()
			per, open := silentConnections(t, e.with(t), n, tc.first, tc.open)
			t.Logf("%d connections, %s: %d still open, %d bytes of heap and stack each, RSS %+d KiB", n, tc.name, open, per, rssKiB()-rss)
			if per > 48<<10 {
				t.Errorf("%s: %d bytes per connection", tc.name, per)
			}
		})
	}
}

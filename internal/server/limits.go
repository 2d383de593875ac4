package server

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// OpenConns returns the number of connections the listeners hold open.
func (s *Server) OpenConns() int { return int(s.conns.Load()) }

// limitListener caps the connections open across every listener sharing
// its counter. A connection past the cap is answered by refuse and closed.
type limitListener struct {
	net.Listener
	max      int64
	open     *atomic.Int64
	refusing *atomic.Int64
	// answer is the whole HTTP response a refused connection gets.
	answer func() []byte
	// tls, if set, wraps a refused connection so that the answer goes
	// over TLS on an HTTPS listener.
	tls *tls.Config
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.max < 0 || l.open.Add(1) <= l.max {
			if l.max < 0 {
				l.open.Add(1)
			}
			return &countedConn{Conn: c, open: l.open}, nil
		}
		l.open.Add(-1)
		if l.refusing.Add(1) > maxRefusing {
			l.refusing.Add(-1)
			if l.tls == nil {
				_ = c.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
				_, _ = c.Write(l.answer())
			}
			c.Close()
			continue
		}
		go func() {
			defer l.refusing.Add(-1)
			l.refuse(c)
		}()
	}
}

// refuse answers c with 503 ServerBusy, half-closes it and drains what the
// client sent for a moment before closing it.
func (l *limitListener) refuse(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(refuseLinger))
	var w net.Conn = c
	if l.tls != nil {
		tc := tls.Server(c, l.tls)
		if err := tc.Handshake(); err != nil {
			return
		}
		w = tc
	}
	if _, err := w.Write(l.answer()); err != nil {
		return
	}
	if tc, ok := w.(*tls.Conn); ok {
		_ = tc.CloseWrite()
	} else if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	_, _ = io.CopyN(io.Discard, w, 1<<20)
}

// countedConn gives its slot back when closed (once).
type countedConn struct {
	net.Conn
	open *atomic.Int64
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.open.Add(-1) })
	return c.Conn.Close()
}

// busyAnswer renders the 503 ServerBusy response of a refused connection
// for svc, in the service's error format (JSON for Table, XML otherwise:
// the request is not read, so the dfs endpoint answers as Blob does).
func (s *Server) busyAnswer(svc Service) []byte {
	w := &bufferWriter{h: http.Header{}}
	now := s.cfg.Clock.Now()
	w.h.Set("X-Ms-Request-Id", newRequestID())
	w.h.Set("Date", wire.FormatHTTPDate(now))
	w.h.Set("X-Ms-Version", oldestVersion)
	if svc.ServerHeader != "" {
		w.h.Set("Server", svc.ServerHeader)
	}
	e := azerr.Newf(azerr.ServerBusy, "The server is currently unable to receive requests. Please retry your request.")
	r := &http.Request{Method: http.MethodGet, Header: http.Header{}}
	if svc.JSONErrors {
		WriteJSONError(w, r, e)
	} else {
		WriteXMLError(w, r, e)
	}
	w.h.Set("Content-Length", strconv.Itoa(w.body.Len()))
	w.h.Set("Connection", "close")
	var out bytes.Buffer
	fmt.Fprintf(&out, "HTTP/1.1 %d %s\r\n", w.status, http.StatusText(w.status))
	_ = w.h.Write(&out)
	out.WriteString("\r\n")
	out.Write(w.body.Bytes())
	return out.Bytes()
}

// bufferWriter is an http.ResponseWriter into memory.
type bufferWriter struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferWriter) Header() http.Header { return w.h }
func (w *bufferWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
func (w *bufferWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// bodyProgress is the http.Handler that enforces the progress rule of
// request bodies (Limits.BodyWindow) around next.
func (s *Server) bodyProgress(next http.Handler) http.Handler {
	lim := s.cfg.Limits
	if lim.BodyWindow < 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		b := &progressBody{body: r.Body, rc: http.NewResponseController(w), window: lim.BodyWindow, min: lim.BodyMinBytes, left: lim.BodyWindow}
		// On a copy: net/http's own request keeps its body (expect.go).
		r = r.WithContext(r.Context())
		r.Body = b
		defer b.finish()
		next.ServeHTTP(w, r)
	})
}

// errBodyStalled is the error of a body read that broke the progress rule.
var errBodyStalled = errors.New("request body stalled")

// progressBody reads a request body under the progress rule: the time the
// handler spends blocked in Read counts against a budget of window, given
// back whole each time min bytes have arrived. Time the handler spends
// elsewhere (in the store, between reads) does not count. Once the budget
// is spent the read fails (the connection's read deadline passes) and the
// request fails with 500 OperationTimedOut.
type progressBody struct {
	body   io.ReadCloser
	rc     *http.ResponseController
	window time.Duration
	min    int64
	got    int64         // bytes since the budget was last given back
	left   time.Duration // budget of blocked time left
	eof    bool
	failed bool
	// until, if set, is a deadline no read goes past, whatever the
	// progress (drainBody's bound on reading a refused request's body).
	until time.Time
}

// capBody bounds every further read of r's body at until, when the body
// is under the progress rule (a deadline set directly on the connection
// would be moved on by the rule's next read).
func capBody(r *http.Request, until time.Time) {
	body := r.Body
	if c, ok := body.(*continueBody); ok {
		body = c.ReadCloser
	}
	if b, ok := body.(*progressBody); ok {
		b.until = until
	}
}

func (b *progressBody) Read(p []byte) (int, error) {
	if b.failed {
		// Nothing more is read: not the error's drain either, which
		// would wait on the same client.
		return 0, b.stallErr()
	}
	if b.eof {
		return b.body.Read(p)
	}
	start := time.Now()
	deadline := start.Add(b.left)
	if !b.until.IsZero() && b.until.Before(deadline) {
		deadline = b.until
	}
	_ = b.rc.SetReadDeadline(deadline)
	n, err := b.body.Read(p)
	b.left -= time.Since(start)
	b.got += int64(n)
	if b.got >= b.min {
		b.got, b.left = 0, b.window
	}
	if err == io.EOF {
		// Done: no deadline on the connection while the handler works on
		// (net/http's background read would take its expiry for a
		// client gone and cancel the request).
		b.eof = true
		_ = b.rc.SetReadDeadline(time.Time{})
		return n, err
	}
	if err != nil && (isTimeout(err) || b.left <= 0) {
		b.failed = true
		// The connection cannot be read again: no keep-alive.
		_ = b.rc.SetReadDeadline(time.Now())
		return n, b.stallErr()
	}
	return n, err
}

// isTimeout reports whether err is a net.Error that timed out. (A
// function of its own: the target errors.As fills escapes, and is then
// allocated only for a failed read, not for every read of a body.)
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (b *progressBody) stallErr() error {
	return fmt.Errorf("%w: %w: fewer than %d bytes arrived in %s", azerr.New(azerr.OperationTimedOut), errBodyStalled, b.min, b.window)
}

func (b *progressBody) Close() error { return b.body.Close() }

// finish runs when the handler returns: a body not read to its end is
// discarded by net/http, and that gets one more window, not forever; after
// a stall, nothing (the error's own drain may have moved the deadline).
func (b *progressBody) finish() {
	switch {
	case b.failed:
		_ = b.rc.SetReadDeadline(time.Now())
	case !b.eof:
		deadline := time.Now().Add(b.window)
		if !b.until.IsZero() && b.until.Before(deadline) {
			deadline = b.until
		}
		_ = b.rc.SetReadDeadline(deadline)
	}
}

// drainAfterAnswer is drainBody for a request whose client asked for
// 100-continue and has just been given its final answer without one
// (expect.go), with Connection: close. A client that waits for the 100
// Continue sends nothing more; but one that sends the body at once
// anyway (Go's Transport with ExpectContinueTimeout 0 does, and RFC 9110
// §10.1.1 lets a client not wait) would see the connection reset under
// the answer if it were closed with the body still arriving, and report
// a transport error instead of the 503 or 4xx. So the answer is flushed
// first, then what the client sends is read and thrown away while it
// keeps coming (a pause of drainIdle ends it, as does drainBody's bound
// of 10 s and maxDrain); net/http sends no 100 Continue once the answer
// is written.
func drainAfterAnswer(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	if rc.Flush() != nil || rc.EnableFullDuplex() != nil {
		return
	}
	end := time.Now().Add(10 * time.Second)
	buf := make([]byte, 32<<10)
	for total := 0; total < maxDrain; {
		until := time.Now().Add(drainIdle)
		if until.After(end) {
			until = end
		}
		_ = rc.SetReadDeadline(until)
		capBody(r, until)
		n, err := r.Body.Read(buf)
		total += n
		if err != nil {
			return
		}
	}
}

// drainIdle is how long drainAfterAnswer waits for more of a body the
// client may not be sending.
const drainIdle = time.Second

// maxDrain bounds how much of an unread request body is read and thrown
// away before an error response.
const maxDrain = 64 << 20

// drainBody reads what is left of the request body (at most maxDrain
// bytes, for at most 10 seconds) before an error is written. A client
// still sending a large body would otherwise see the connection reset
// (Go's server discards at most 256 KiB after a handler) instead of the
// error — a 503 during a database outage must reach the SDK as a 503.
func drainBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.ContentLength == 0 || r.Method == http.MethodHead {
		return
	}
	until := time.Now().Add(10 * time.Second)
	_ = http.NewResponseController(w).SetReadDeadline(until)
	capBody(r, until)
	_, _ = io.CopyN(io.Discard, r.Body, maxDrain)
}

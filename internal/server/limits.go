package server

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/cerulean-storage/cerulean/internal/wire"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// Resource limits of the HTTP listeners (docs/security.md lists them with
// the flags that change them). A connection is held by a client for as
// long as it sends; these bound how long a client that sends nothing, or
// next to nothing, can hold one, and how many connections all clients
// together can hold.
const (
	// DefaultMaxConns is the default cap on open connections across all
	// the HTTP listeners of a server (Blob, Queue, Table, File, dfs).
	DefaultMaxConns = 4096
	// DefaultHeaderTimeout bounds the time to read a request's headers.
	DefaultHeaderTimeout = 30 * time.Second
	// DefaultBodyWindow and DefaultBodyMinBytes are the progress rule of
	// request bodies: while a handler waits for body bytes, every window
	// of DefaultBodyWindow spent waiting must bring DefaultBodyMinBytes,
	// or the request fails with 500 OperationTimedOut and the connection
	// is closed. Azure allows writes "10 minutes per megabyte" on average
	// (Setting timeouts for Blob service operations), about 1.7 KiB/s;
	// 64 KiB per minute is about 1.1 KiB/s, so no body Azure accepts is
	// cut here, while one trickled at a few bytes a second is.
	DefaultBodyWindow   = time.Minute
	DefaultBodyMinBytes = 64 << 10
	// maxRefusing bounds the goroutines answering refused connections
	// (each lingers at most refuseLinger); past it a refused connection
	// gets the answer written at once, without the linger, and is closed.
	maxRefusing = 1024
	// refuseLinger is how long a refused connection is drained after its
	// answer, so the client's unread request does not turn the close into
	// a reset that loses the answer.
	refuseLinger = time.Second
)

// Limits are the resource limits of the HTTP listeners. Zero values take
// the defaults above; a negative MaxConns or BodyWindow turns that limit
// off.
type Limits struct {
	// MaxConns caps the open connections across all listeners of the
	// Server. Past it a new connection is accepted, answered 503
	// ServerBusy and closed, instead of waiting in the kernel's backlog.
	MaxConns int
	// HeaderTimeout bounds the reading of a request line and headers
	// (http.Server.ReadHeaderTimeout).
	HeaderTimeout time.Duration
	// BodyWindow and BodyMinBytes are the progress rule of request
	// bodies (see DefaultBodyWindow).
	BodyWindow   time.Duration
	BodyMinBytes int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxConns == 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.HeaderTimeout <= 0 {
		l.HeaderTimeout = DefaultHeaderTimeout
	}
	if l.BodyWindow == 0 {
		l.BodyWindow = DefaultBodyWindow
	}
	if l.BodyMinBytes <= 0 {
		l.BodyMinBytes = DefaultBodyMinBytes
	}
	return l
}

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
	var ne net.Error
	if err != nil && ((errors.As(err, &ne) && ne.Timeout()) || b.left <= 0) {
		b.failed = true
		// The connection cannot be read again: no keep-alive.
		_ = b.rc.SetReadDeadline(time.Now())
		return n, b.stallErr()
	}
	return n, err
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

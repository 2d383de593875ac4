package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/textproto"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// EngineCerulean and EngineGo name the two HTTP/1.1 servers a plain
// (not TLS) listener can run (Config.Engine).
const (
	// EngineGo is net/http's server for every connection.
	EngineGo = "go"
	// EngineCerulean is connServer: the requests of the common shape
	// (below) served on the connection's own goroutine, with the
	// response head written straight from the handler's header map; a
	// connection whose next request has any other shape is handed to
	// net/http's server for the rest of its life.
	EngineCerulean = "cerulean"
)

// connServer serves HTTP/1.1 connections itself while their requests
// keep to the shape every Azure SDK sends (RFC 9112): a request line
// ending in HTTP/1.1, a head that fits the read buffer, a body framed by
// Content-Length or absent, one valid Host field, and no Expect,
// Transfer-Encoding or Upgrade field. net/http's server answers everything else: at the first request
// of another shape the connection, with the bytes read so far, is handed
// to fallback, which also produces the refusals (400, 417, 431, 501)
// for malformed requests.
//
// What it saves, for a request net/http would serve the same way: the
// goroutine net/http starts per request to watch the connection while
// the handler runs (background read, and the two read deadlines that
// stop it), the clone and sort of the response header map, and the
// contexts of net/http's per-connection machinery. The handler sees the
// same *http.Request and a ResponseWriter with the same semantics
// (connWriter): the status line and fields as net/http writes them
// (Date, Content-Length for a short body, Content-Type sniffed when
// none was set, chunked framing otherwise, the fields a 204 or 304
// must not carry left out), Flush, and read and write deadlines
// through http.ResponseController. A request context is cancelled when
// its handler returns; unlike net/http's it is not cancelled when the
// client goes away mid-request (a write to a closed connection still
// fails at once).
type connServer struct {
	handler     http.Handler
	fallback    *http.Server
	handoff     *handoffListener
	header, idl time.Duration // ReadHeaderTimeout, IdleTimeout
	log         *slog.Logger

	closed atomic.Bool
	mu     sync.Mutex
	conns  map[*serverConn]struct{}
	wg     sync.WaitGroup
	ln     net.Listener
}

// maxPostHandlerRead is how much of a request body a handler left unread
// is read and dropped to keep the connection (net/http's
// maxPostHandlerReadBytes); past it the connection closes.
const maxPostHandlerRead = 256 << 10

// headBuffer is the read buffer of a connection; a request head that
// does not fit goes to net/http (whose limit is http.DefaultMaxHeaderBytes).
const headBuffer = 16 << 10

func newConnServer(handler http.Handler, fallback *http.Server, addr net.Addr, log *slog.Logger) *connServer {
	return &connServer{handler: handler, fallback: fallback, handoff: newHandoffListener(addr),
		header: fallback.ReadHeaderTimeout, idl: fallback.IdleTimeout, log: log, conns: map[*serverConn]struct{}{}}
}

// serve accepts connections from l until it fails or the server shuts
// down; net/http's server runs on the handed-off connections.
func (s *connServer) serve(l net.Listener) error {
	s.mu.Lock()
	s.ln = l
	s.mu.Unlock()
	if s.closed.Load() {
		l.Close()
		return http.ErrServerClosed
	}
	go func() { _ = s.fallback.Serve(s.handoff) }()
	for {
		c, err := l.Accept()
		if err != nil {
			if s.closed.Load() {
				return http.ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return err
		}
		sc := &serverConn{s: s, c: c, remote: c.RemoteAddr().String(), br: bufio.NewReaderSize(c, headBuffer), bw: bufio.NewWriterSize(c, 4<<10)}
		s.mu.Lock()
		if s.closed.Load() {
			s.mu.Unlock()
			c.Close()
			return http.ErrServerClosed
		}
		s.conns[sc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go sc.serve()
	}
}

// shutdown stops accepting, closes idle connections, lets each busy one
// finish its request and waits for them (or ctx), then shuts the
// fallback server down.
func (s *connServer) shutdown(ctx context.Context) error {
	s.closed.Store(true)
	s.mu.Lock()
	if s.ln != nil {
		s.ln.Close()
	}
	for sc := range s.conns {
		sc.closeIfIdle()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	// The fallback's listener and idle connections close even when ctx
	// ended first, as net/http's Shutdown closes its own.
	s.handoff.Close()
	if ferr := s.fallback.Shutdown(ctx); err == nil {
		err = ferr
	}
	return err
}

// serverConn is one connection served by connServer.
type serverConn struct {
	s      *connServer
	c      net.Conn
	remote string // c.RemoteAddr(), formatted once
	br     *bufio.Reader
	bw     *bufio.Writer

	// h and head are the response header map and head buffer of the
	// request being served, kept for the next (a handler may not use
	// its ResponseWriter after it returns).
	h    http.Header
	head []byte

	mu   sync.Mutex
	idle bool // waiting for a request's first byte
}

func (sc *serverConn) closeIfIdle() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.idle {
		_ = sc.c.SetReadDeadline(aLongTimeAgo)
	}
}

var aLongTimeAgo = time.Unix(1, 0)

func (sc *serverConn) serve() {
	handed := false
	defer func() {
		if !handed {
			sc.c.Close()
		}
		sc.s.mu.Lock()
		delete(sc.s.conns, sc)
		sc.s.mu.Unlock()
		sc.s.wg.Done()
	}()
	base := context.Background()
	for {
		// The idle deadline is set before the connection counts as idle,
		// so that shutdown's (closeIfIdle) is never overwritten.
		var idleUntil time.Time // none: a handler's deadline is cleared
		if sc.s.idl > 0 {
			idleUntil = time.Now().Add(sc.s.idl)
		}
		_ = sc.c.SetReadDeadline(idleUntil)
		sc.mu.Lock()
		sc.idle = true
		sc.mu.Unlock()
		if sc.s.closed.Load() {
			return
		}
		if _, err := sc.br.Peek(1); err != nil {
			return
		}
		sc.mu.Lock()
		sc.idle = false
		sc.mu.Unlock()
		if sc.s.header > 0 {
			_ = sc.c.SetReadDeadline(time.Now().Add(sc.s.header))
		}
		meta, ok, err := sc.commonShape()
		if err != nil {
			return
		}
		if !ok {
			handed = sc.handOff()
			return
		}
		_ = sc.c.SetReadDeadline(time.Time{})
		if !sc.serveRequest(base, meta) {
			return
		}
	}
}

// commonShape peeks at the next request head, without consuming it, and
// reports whether connServer serves it (see connServer), with its
// x-ms-meta-* names as sent (commonHead).
func (sc *serverConn) commonShape() (meta []string, ok bool, err error) {
	for {
		buf, err := sc.br.Peek(sc.br.Buffered())
		if err != nil {
			return nil, false, err
		}
		if i := bytes.Index(buf, []byte("\r\n\r\n")); i >= 0 {
			meta, ok := commonHead(buf[:i+2])
			return meta, ok, nil
		}
		if len(buf) >= sc.br.Size() {
			return nil, false, nil // a head this long: net/http's limits apply
		}
		if _, err := sc.br.Peek(len(buf) + 1); err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, false, nil
			}
			return nil, false, err
		}
	}
}

// commonHead reports whether a request head (its lines, each ending in
// CRLF) has the shape connServer serves, and returns the names of its
// x-ms-meta-* fields as the client spelled them, which http.ReadRequest
// canonicalises (restoreMetadataNames puts them back); nil without any.
func commonHead(head []byte) (meta []string, ok bool) {
	line, rest, ok := bytes.Cut(head, crlf)
	if !ok || !bytes.HasSuffix(line, []byte(" HTTP/1.1")) || bytes.IndexByte(line, '\n') >= 0 {
		return nil, false
	}
	hosts := 0
	var host []byte
	for len(rest) > 0 {
		var f []byte
		f, rest, _ = bytes.Cut(rest, crlf)
		name, value, ok := bytes.Cut(f, []byte(":"))
		// A lone CR or LF would split the line differently for
		// http.ReadRequest than here; control bytes in values it refuses
		// itself (and net/http's server answers that 400 the same way).
		if !ok || !validName(name) || bytes.IndexByte(f, '\n') >= 0 || bytes.IndexByte(f, '\r') >= 0 {
			return nil, false // malformed, or a folded line: net/http decides
		}
		if m, ok := metaName(name); ok {
			meta = append(meta, m)
			continue
		}
		switch {
		case bytes.EqualFold(name, []byte("Host")):
			hosts++
			host = bytes.TrimSpace(value)
		case bytes.EqualFold(name, []byte("Expect")), bytes.EqualFold(name, []byte("Upgrade")),
			bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return nil, false
		}
	}
	// One valid Host (RFC 9112 §3.2), which net/http's server checks
	// beyond http.ReadRequest: its refusals are its own.
	if hosts != 1 || !httpguts.ValidHostHeader(string(host)) {
		return nil, false
	}
	return meta, true
}

// validName reports whether a field name is a token (RFC 9110 §5.1), as
// net/http's server requires (httpguts.ValidHeaderFieldName).
func validName[T string | []byte](b T) bool {
	if len(b) == 0 {
		return false
	}
	for i := 0; i < len(b); i++ {
		if c := b[i]; c >= 0x80 || !tchar[c] {
			return false
		}
	}
	return true
}

// tchar marks the bytes of a token (RFC 9110 §5.6.2).
var tchar = func() (t [128]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// handOff gives the connection, with what has been read of it, to the
// fallback server, under the metadata-name tap (from this request on).
// It reports whether the fallback took it.
func (sc *serverConn) handOff() bool {
	_ = sc.c.SetReadDeadline(time.Time{})
	n := sc.br.Buffered()
	pre, _ := sc.br.Peek(n)
	return sc.s.handoff.give(&tapConn{Conn: &replayConn{Conn: sc.c, pre: bytes.Clone(pre)}})
}

// badRequest is net/http's answer to a request it cannot parse.
const badRequest = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"

// serveRequest reads and answers one request; it reports whether the
// connection stays open for the next.
func (sc *serverConn) serveRequest(base context.Context, meta []string) (keep bool) {
	req, err := http.ReadRequest(sc.br)
	if err != nil {
		_, _ = io.WriteString(sc.c, badRequest)
		return false
	}
	var body *connBody
	if req.ContentLength > 0 {
		body = &connBody{r: io.LimitedReader{R: sc.br, N: req.ContentLength}}
		req.Body = body
	}
	req.RemoteAddr = sc.remote
	if meta != nil {
		base = context.WithValue(base, metaNamesKey{}, meta)
	}
	ctx, cancel := context.WithCancel(base)
	defer cancel()
	req = req.WithContext(ctx)
	if sc.h == nil {
		sc.h = make(http.Header, 24)
	} else {
		clear(sc.h)
	}
	w := &connWriter{sc: sc, req: req, reqBody: body, h: sc.h, cl: -1}
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				buf := make([]byte, 64<<10)
				buf = buf[:runtime.Stack(buf, false)]
				sc.s.log.Error("http: panic serving", "remote", req.RemoteAddr, "panic", fmt.Sprint(p), "stack", string(buf))
			}
			keep = false
		}
	}()
	sc.s.handler.ServeHTTP(w, req)
	if !w.finish() {
		return false
	}
	if req.Close || w.closeAfter {
		return false
	}
	return true
}

// connWriter is the http.ResponseWriter of connServer (see there).
type connWriter struct {
	sc      *serverConn
	req     *http.Request
	reqBody *connBody // nil: none
	h       http.Header

	status     int
	head       []byte // status line and the handler's fields, as of WriteHeader
	haveType   bool   // the handler set Content-Type (maybe to nothing)
	haveDate   bool
	hasCE      bool
	cl         int64 // declared Content-Length, or -1
	badCL      bool  // the handler declared one that is not a number
	committed  bool  // head written to the connection's buffer
	chunking   bool
	written    int64
	buf        []byte // body bytes held until the head is committed
	closeAfter bool
	done       bool
}

// bodyBuffer is how much body is held before the head is written, so
// that a short body gets a Content-Length (net/http's
// bufferBeforeChunkingSize).
const bodyBuffer = 2048

func (w *connWriter) Header() http.Header { return w.h }

// SetReadDeadline and SetWriteDeadline are http.ResponseController's.
func (w *connWriter) SetReadDeadline(t time.Time) error  { return w.sc.c.SetReadDeadline(t) }
func (w *connWriter) SetWriteDeadline(t time.Time) error { return w.sc.c.SetWriteDeadline(t) }

func bodyAllowed(status int) bool {
	return !(status >= 100 && status <= 199) && status != http.StatusNoContent && status != http.StatusNotModified
}

func (w *connWriter) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
		// An informational answer goes out at once; the final one follows.
		b := appendStatusLine(nil, code)
		b = appendFields(b, w.h, "")
		b = append(b, "\r\n"...)
		_, _ = w.sc.bw.Write(b)
		_ = w.sc.bw.Flush()
		return
	}
	w.status = code
	if v := w.h["Content-Length"]; len(v) > 0 {
		if n, err := strconv.ParseInt(v[0], 10, 64); err == nil && n >= 0 {
			w.cl = n
		} else {
			// Dropped, and (as net/http does) no length is computed in
			// its place: the body goes chunked.
			w.sc.s.log.Debug("http: invalid Content-Length", "value", v[0])
			delete(w.h, "Content-Length")
			w.badCL = true
		}
	}
	_, w.haveType = w.h["Content-Type"]
	_, w.haveDate = w.h["Date"]
	if v := w.h["Content-Encoding"]; len(v) > 0 && v[0] != "" {
		w.hasCE = true
	}
	if v := w.h["Connection"]; len(v) > 0 && hasToken(v[0], "close") {
		w.closeAfter = true
	}
	skip := "Content-Type" // left out of a 304 (RFC 9110 §15.4.5)
	if code != http.StatusNotModified {
		skip = ""
	}
	w.head = appendFields(appendStatusLine(w.sc.head[:0], code), w.h, skip)
	w.sc.head = w.head[:0] // grown, for the next request
}

// hasToken reports whether the comma-separated list v holds token (any
// case).
func hasToken(v, token string) bool {
	for v != "" {
		var t string
		t, v, _ = strings.Cut(v, ",")
		if strings.EqualFold(strings.TrimSpace(t), token) {
			return true
		}
	}
	return false
}

func appendStatusLine(b []byte, code int) []byte {
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, ' ')
	if t := http.StatusText(code); t != "" {
		b = append(b, t...)
	} else {
		b = append(b, "status code "...)
		b = strconv.AppendInt(b, int64(code), 10)
	}
	return append(b, "\r\n"...)
}

// appendFields writes h's fields as net/http does: invalid names left
// out, values trimmed and any CR or LF in them made a space; the framing
// fields (Content-Length, Transfer-Encoding, Connection) and skip are
// left to commit.
func appendFields(b []byte, h http.Header, skip string) []byte {
	for k, vv := range h {
		switch k {
		case "Content-Length", "Transfer-Encoding", "Connection", "Trailer", skip:
			continue
		}
		if !validName(k) {
			continue
		}
		for _, v := range vv {
			v = textproto.TrimString(v)
			b = append(b, k...)
			b = append(b, ": "...)
			if strings.IndexByte(v, '\n') >= 0 || strings.IndexByte(v, '\r') >= 0 {
				v = strings.NewReplacer("\r", " ", "\n", " ").Replace(v)
			}
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	return b
}

func (w *connWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.cl != -1 && w.written+int64(len(p)) > w.cl {
		return 0, http.ErrContentLength
	}
	w.written += int64(len(p))
	if !w.committed {
		if len(w.buf)+len(p) <= bodyBuffer {
			w.buf = append(w.buf, p...)
			return len(p), nil
		}
		first := w.buf // what net/http's chunkWriter sees first
		if len(first) == 0 {
			first = p
		}
		w.commit(first)
		if err := w.body(w.buf); err != nil {
			return 0, err
		}
		w.buf = nil
	}
	if err := w.body(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// body writes body bytes after the head, framed as commit decided.
func (w *connWriter) body(p []byte) error {
	if len(p) == 0 || w.req.Method == http.MethodHead {
		return nil
	}
	bw := w.sc.bw
	if w.chunking {
		var n [16]byte
		_, _ = bw.Write(strconv.AppendInt(n[:0], int64(len(p)), 16))
		_, _ = bw.WriteString("\r\n")
		_, _ = bw.Write(p)
		_, err := bw.WriteString("\r\n")
		return err
	}
	_, err := bw.Write(p)
	return err
}

// Flush sends what the handler has written so far.
func (w *connWriter) Flush() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.committed {
		w.commit(w.buf)
		_ = w.body(w.buf)
		w.buf = nil
	}
	_ = w.sc.bw.Flush()
}

// commit writes the head with its framing fields (net/http's
// chunkWriter.writeHeader for an HTTP/1.1 request); p is the body's
// first bytes (for Content-Type sniffing, and the length of a body
// complete when the handler returned).
func (w *connWriter) commit(p []byte) {
	w.committed = true
	bw := w.sc.bw
	head := w.head
	allowed := bodyAllowed(w.status)
	isHead := w.req.Method == http.MethodHead
	if w.done && allowed && w.cl == -1 && !w.badCL && (!isHead || len(p) > 0) {
		w.cl = int64(len(p))
	}
	if allowed && !w.haveType && !w.hasCE && len(p) > 0 {
		head = append(head, "Content-Type: "...)
		head = append(head, http.DetectContentType(p)...)
		head = append(head, "\r\n"...)
	}
	if !w.haveDate {
		head = append(head, "Date: "...)
		head = time.Now().UTC().AppendFormat(head, http.TimeFormat)
		head = append(head, "\r\n"...)
	}
	switch {
	case !allowed:
	case w.cl != -1:
		head = append(head, "Content-Length: "...)
		head = strconv.AppendInt(head, w.cl, 10)
		head = append(head, "\r\n"...)
	case isHead:
	default:
		w.chunking = true
		head = append(head, "Transfer-Encoding: chunked\r\n"...)
	}
	if w.closeAfter || w.req.Close {
		head = append(head, "Connection: close\r\n"...)
	}
	head = append(head, "\r\n"...)
	_, _ = bw.Write(head)
}

// finish ends the response after the handler returned; it reports
// whether the connection can carry another request.
func (w *connWriter) finish() bool {
	w.done = true
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.closeAfter && !w.reqBody.drain() {
		// The body the handler left is read before the head goes out, as
		// net/http does, so that the connection can carry the next
		// request; past maxPostHandlerRead it closes instead, and the head
		// says so.
		w.closeAfter = true
	}
	if !w.committed {
		w.commit(w.buf)
		if err := w.body(w.buf); err != nil {
			return false
		}
		w.buf = nil
	}
	if w.chunking {
		_, _ = w.sc.bw.WriteString("0\r\n\r\n")
	}
	if err := w.sc.bw.Flush(); err != nil {
		return false
	}
	if w.cl != -1 && w.written != w.cl && w.req.Method != http.MethodHead && bodyAllowed(w.status) {
		return false // the client cannot find the end of this response
	}
	return !w.closeAfter
}

// connBody is a request body framed by Content-Length, read from the
// connection's buffer.
type connBody struct {
	r      io.LimitedReader
	closed bool
	err    error // a failed read of the connection
}

func (b *connBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	if b.r.N <= 0 {
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	if err == io.EOF && b.r.N > 0 {
		err = io.ErrUnexpectedEOF // the client sent less than it declared
	}
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// Close ends the handler's reads; what is left is drained (or the
// connection closed) once the handler returns.
func (b *connBody) Close() error {
	b.closed = true
	return nil
}

// drain reads what the handler left of the body, up to
// maxPostHandlerRead; it reports whether the connection can carry the
// next request. Nil (no body) drains at once.
func (b *connBody) drain() bool {
	if b == nil {
		return true
	}
	if b.err != nil {
		return false
	}
	if b.r.N > maxPostHandlerRead {
		return false
	}
	_, err := io.Copy(io.Discard, &b.r)
	ok := err == nil && b.r.N == 0 // not cut short by the client
	b.r.N = 0
	return ok
}

// replayConn is a connection handed to net/http: its reads return first
// the bytes connServer had read ahead, then the connection's own.
type replayConn struct {
	net.Conn
	pre []byte
}

func (c *replayConn) Read(b []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(b, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// handoffListener is the listener of the fallback server: its Accept
// returns the connections connServer hands over.
type handoffListener struct {
	addr net.Addr
	ch   chan net.Conn
	once sync.Once
	done chan struct{}
}

func newHandoffListener(addr net.Addr) *handoffListener {
	return &handoffListener{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *handoffListener) give(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handoffListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *handoffListener) Addr() net.Addr { return l.addr }

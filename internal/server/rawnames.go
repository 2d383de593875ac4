package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"hash/maphash"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"

	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Metadata names keep the case the client sent them in, as on Azure: a
// Python or JavaScript application that stores {"Author": …} reads
// "Author" back, not "author". net/http canonicalizes request header names
// before a handler runs (x-ms-meta-Author arrives as X-Ms-Meta-Author, and
// x-ms-meta-MyKey as X-Ms-Meta-Mykey), so the listener's connections are
// tapped: a small parser follows the HTTP/1.1 framing of the bytes the
// server reads (header blocks, Content-Length and chunked bodies, which
// it skips without copying) and records, per request, the request line
// and the x-ms-meta-* names as sent. The handler takes its record (the
// request line must match) and renames the canonical keys back. When the
// parser cannot follow a connection (a malformed request, which net/http
// answers by closing it) it stops, and names there are lower-cased as
// before (wire.ParseMetadata).

// tapListener wraps accepted connections in tapConns.
type tapListener struct{ net.Listener }

func (l tapListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &tapConn{Conn: c}, nil
}

// tapConn is a server connection whose reads feed a framing parser.
type tapConn struct {
	net.Conn
	mu sync.Mutex // net/http reads in a background goroutine too
	p  framer
}

func (c *tapConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		c.p.feed(b[:n])
		c.mu.Unlock()
	}
	if err != nil && c.overTLS() {
		answerPlainHTTP(err)
	}
	return n, err
}

// overTLS reports whether the connection under the tap is TLS.
func (c *tapConn) overTLS() bool {
	_, ok := c.Conn.(*tls.Conn)
	return ok
}

// answerPlainHTTP answers a read error of a TLS connection that is plain
// HTTP sent to an HTTPS port: it says so, as net/http does when it runs
// the TLS handshake itself. (A function of its own: the error's target,
// which escapes, is then allocated only for a failed TLS read; a plain
// connection's reads fail once a request, when net/http ends its
// background read with a deadline.)
func answerPlainHTTP(err error) {
	var re tls.RecordHeaderError
	if errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader) {
		_, _ = io.WriteString(re.Conn, "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
		re.Conn.Close()
	}
}

// looksLikeHTTP reports whether the first bytes of a would-be TLS record
// are the start of an HTTP/1 request line.
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO", "DELET", "PATCH", "MERGE":
		return true
	}
	return false
}

// take returns the metadata names, as sent, of the oldest recorded request
// whose request line is method and uri, and drops the records up to it
// (older ones belong to requests net/http refused before any handler).
// Without a match nothing is dropped.
func (c *tapConn) take(method, uri string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	line := requestLine(method, uri)
	for i, r := range c.p.reqs {
		if r.line == line {
			// Keep the backing array: the records left (usually none)
			// move to its front.
			n := copy(c.p.reqs, c.p.reqs[i+1:])
			clear(c.p.reqs[n:])
			c.p.reqs = c.p.reqs[:n]
			return r.meta, true
		}
	}
	return nil, false
}

// lineSeed seeds requestLine's hashes for the life of the process.
var lineSeed = maphash.MakeSeed()

// requestLine identifies a request line by a hash of its method and
// target, so the framer records it without copying either: a collision
// (one in 2⁶⁴ for two requests outstanding on a connection at once)
// would only give one request's metadata names the other's case.
func requestLine(method, uri string) uint64 {
	return lineHash(maphash.String(lineSeed, method), maphash.String(lineSeed, uri))
}

// requestLineOf is requestLine of the bytes read.
func requestLineOf(method, uri []byte) uint64 {
	return lineHash(maphash.Bytes(lineSeed, method), maphash.Bytes(lineSeed, uri))
}

// lineHash combines a method's and a target's hashes, in order.
func lineHash(method, uri uint64) uint64 { return method*0x9E3779B97F4A7C15 ^ uri }

type tapKey struct{}

// tapContext is the http.Server's ConnContext: it makes the connection's
// tap reachable from its requests.
func tapContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tapConn); ok {
		return context.WithValue(ctx, tapKey{}, tc)
	}
	return ctx
}

// overTLS reports whether r came on a tapped TLS connection.
func overTLS(r *http.Request) bool {
	tc, ok := r.Context().Value(tapKey{}).(*tapConn)
	return ok && tc.overTLS()
}

// metaNamesKey is the context key of a request's x-ms-meta-* names as
// sent, when its server read them from the head itself (connServer)
// rather than through the tap.
type metaNamesKey struct{}

// restoreMetadataNames renames the canonical x-ms-meta-* keys of r's
// header to the names the client sent, "x-ms-meta-" + name, which
// wire.ParseMetadata keeps as they are. It must run for every request of
// a tapped connection (it consumes the connection's record).
func restoreMetadataNames(r *http.Request) {
	if _, sub := r.Context().Value(batchVersionKey{}).(string); sub {
		return // a batch sub-request, parsed from a body: no record of its own
	}
	names, ok := r.Context().Value(metaNamesKey{}).([]string)
	if !ok {
		tc, tapped := r.Context().Value(tapKey{}).(*tapConn)
		if !tapped {
			return
		}
		if names, ok = tc.take(r.Method, r.RequestURI); !ok {
			return
		}
	}
	for _, name := range names {
		raw := wire.MetaPrefix + name
		canon := textproto.CanonicalMIMEHeaderKey(raw)
		if canon == raw {
			continue
		}
		// The first spelling takes every value of the canonical key, so
		// two names differing only in case stay one key with two values:
		// a duplicate name, as ParseMetadata reports it.
		if vals, ok := r.Header[canon]; ok {
			delete(r.Header, canon)
			r.Header[raw] = vals
		}
	}
}

// rawRequest is what the framer records of one request.
type rawRequest struct {
	line uint64 // requestLine of its method and target
	meta []string
}

const (
	fHeader    = iota // reading a header block
	fBody             // skipping left bytes of a Content-Length body
	fChunkLine        // reading a chunk-size line
	fChunkData        // skipping left bytes of chunk data and its CRLF
	fTrailer          // reading the trailer section of a chunked body
	fBroken           // lost the framing: records nothing more
)

// Limits: net/http's own header limit (1 MB plus slack), a chunk-size line,
// and the records kept unclaimed.
const (
	maxRawHeader = 1<<20 + 4096
	maxChunkLine = 4096
	maxRawQueue  = 64
)

// framer follows HTTP/1.1 request framing over the bytes read.
type framer struct {
	state int
	buf   []byte // the header block or line read so far
	left  int64  // bytes of body or chunk data still to skip
	reqs  []rawRequest
}

func (f *framer) feed(p []byte) {
	for len(p) > 0 && f.state != fBroken {
		switch f.state {
		case fBody, fChunkData:
			k := int64(len(p))
			if k > f.left {
				k = f.left
			}
			f.left -= k
			p = p[k:]
			if f.left == 0 {
				if f.state == fBody {
					f.state = fHeader
				} else {
					f.state = fChunkLine
				}
			}
		case fHeader, fTrailer:
			// A header block ends with an empty line; a trailer section
			// may be just that empty line.
			if f.state == fHeader && len(f.buf) == 0 {
				// The usual case: the whole block in one read.
				if i := bytes.Index(p, []byte("\r\n\r\n")); i >= 0 && !bytes.HasPrefix(p, crlf) {
					f.header(p[:i+4])
					p = p[i+4:]
					continue
				}
			}
			from := max(len(f.buf)-3, 0)
			f.buf = append(f.buf, p...)
			p = nil
			end := -1
			if f.state == fTrailer && bytes.HasPrefix(f.buf, []byte("\r\n")) {
				end = 2
			} else if i := bytes.Index(f.buf[from:], []byte("\r\n\r\n")); i >= 0 {
				end = from + i + 4
			}
			if end < 0 {
				if len(f.buf) > maxRawHeader {
					f.state = fBroken
				}
				continue
			}
			block, rest := f.buf[:end], f.buf[end:]
			if f.state == fHeader {
				f.header(block)
			} else {
				f.state = fHeader
			}
			// A body is skipped in place; anything else is buffered
			// again, so rest must not alias the reused buffer.
			p = rest
			if f.state != fBody && len(rest) > 0 {
				p = append([]byte(nil), rest...)
			}
			f.buf = f.buf[:0]
		case fChunkLine:
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				f.buf = append(f.buf, p...)
				p = nil
				if len(f.buf) > maxChunkLine {
					f.state = fBroken
				}
				continue
			}
			f.buf = append(f.buf, p[:i+1]...)
			p = p[i+1:]
			line := strings.TrimSpace(string(f.buf))
			f.buf = f.buf[:0]
			if j := strings.IndexByte(line, ';'); j >= 0 {
				line = strings.TrimSpace(line[:j])
			}
			n, err := strconv.ParseInt(line, 16, 64)
			switch {
			case err != nil || n < 0:
				f.state = fBroken
			case n == 0:
				f.state = fTrailer
			default:
				f.state, f.left = fChunkData, n+2 // the data and its CRLF
			}
		}
	}
}

// header records the request of a complete header block and sets the
// framing of its body.
func (f *framer) header(block []byte) {
	block = bytes.TrimLeft(block, "\r\n")
	line, rest, _ := bytes.Cut(block, crlf)
	method, rest1, ok1 := bytes.Cut(line, []byte(" "))
	uri, _, ok2 := bytes.Cut(rest1, []byte(" "))
	if !ok1 || !ok2 {
		f.state = fBroken
		return
	}
	req := rawRequest{line: requestLineOf(method, uri)}
	var length int64
	chunked := false
	for len(rest) > 0 {
		var h []byte
		h, rest, _ = bytes.Cut(rest, crlf)
		name, val, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			continue
		}
		if m, ok := metaName(name); ok {
			req.meta = append(req.meta, m)
			continue
		}
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, err := strconv.ParseInt(string(bytes.TrimSpace(val)), 10, 64)
			if err != nil || n < 0 {
				f.state = fBroken
				return
			}
			length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = chunked || bytes.Contains(bytes.ToLower(val), []byte("chunked"))
		}
	}
	if len(f.reqs) == maxRawQueue {
		n := copy(f.reqs, f.reqs[1:])
		f.reqs = f.reqs[:n]
	}
	f.reqs = append(f.reqs, req)
	switch {
	case chunked:
		f.state = fChunkLine
	case length > 0:
		f.state, f.left = fBody, length
	default:
		f.state = fHeader
	}
}

var crlf = []byte("\r\n")

// metaName returns, for the name of an x-ms-meta-* field as sent, the
// metadata name it carries, in the client's case.
func metaName(field []byte) (string, bool) {
	if len(field) > len(wire.MetaPrefix) && bytes.EqualFold(field[:len(wire.MetaPrefix)], []byte(wire.MetaPrefix)) {
		return string(field[len(wire.MetaPrefix):]), true
	}
	return "", false
}

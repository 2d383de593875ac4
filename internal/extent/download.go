package extent

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"strconv"
)

// Body is the content of a Get Blob or Get File response: bytes
// [off, off+n) of a part list, opened by OpenBody.
type Body struct {
	r     io.ReadCloser
	small []byte // the whole body, when read before the headers
	n     int64
}

// OpenBody opens bytes [off, off+n) of parts (inline: the items
// prefetched in the read transaction). Small bodies, and any body whose
// MD5 is wanted (x-ms-range-get-content-md5, at most 4 MiB), are read at
// once: a read failure is then still a clean error response, and headers
// and body leave in one write.
func (s *Store) OpenBody(ctx context.Context, parts []Part, inline map[string][]byte, off, n int64, wantMD5 bool) (*Body, error) {
	return s.OpenBodySealed(ctx, parts, inline, off, n, wantMD5, nil)
}

// OpenBodySealed is OpenBody for content whose data items are encrypted
// with c (nil: stored in the clear).
func (s *Store) OpenBodySealed(ctx context.Context, parts []Part, inline map[string][]byte, off, n int64, wantMD5 bool, c *Cipher) (*Body, error) {
	b := &Body{r: s.NewReaderSealed(ctx, parts, inline, off, n, c), n: n}
	if wantMD5 || n <= InlineMax {
		b.small = make([]byte, n)
		if _, err := io.ReadFull(b.r, b.small); err != nil {
			b.r.Close()
			return nil, err
		}
	}
	return b, nil
}

// Reader returns the body as a reader, for callers that do not send it
// with Send; closing it ends the body's pins.
func (b *Body) Reader() io.ReadCloser {
	if b.small != nil {
		return struct {
			io.Reader
			io.Closer
		}{bytes.NewReader(b.small), b.r}
	}
	return b.r
}

// SetHeaders sets Content-Length and, when md5 is true, the Content-MD5
// of the body (which OpenBody then read in full).
func (b *Body) SetHeaders(h http.Header, md5Wanted bool) {
	h.Set("Content-Length", strconv.FormatInt(b.n, 10))
	if md5Wanted && b.small != nil {
		sum := md5.Sum(b.small)
		h.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
	}
}

// Send writes the body after the status line (nothing for HEAD) and
// closes it. The headers are gone by then, so a failure mid-stream aborts
// the connection: the client sees a truncated body, never a short
// success.
func (b *Body) Send(w http.ResponseWriter, r *http.Request, log *slog.Logger) {
	defer b.r.Close()
	if r.Method == http.MethodHead {
		return
	}
	var err error
	if b.small != nil {
		_, err = w.Write(b.small)
	} else {
		// Hide ReadFrom so the copy goes through the larger buffer.
		_, err = io.CopyBuffer(struct{ io.Writer }{w}, b.r, make([]byte, 256<<10))
	}
	if err != nil {
		log.Debug("download: streaming failed", "path", r.URL.Path, "err", err)
		panic(http.ErrAbortHandler)
	}
}

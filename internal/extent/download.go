package extent

import (
	"bytes"
	"context"
	"crypto/md5"
	"io"
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
	return s.openBody(s.NewReaderSealed(ctx, parts, inline, off, n, c), n, wantMD5)
}

// openBody makes the Body of reader r of n bytes.
func (s *Store) openBody(r io.ReadCloser, n int64, wantMD5 bool) (*Body, error) {
	b := &Body{r: r, n: n}
	if wantMD5 || n <= InlineMax {
		b.small = make([]byte, n)
		if _, err := io.ReadFull(b.r, b.small); err != nil {
			b.r.Close()
			return nil, err
		}
	}
	return b, nil
}

// NewBody is the Body of n bytes read from r, which it closes: content a
// door has in hand rather than opened from stored parts (and tests of
// the renderers that stream a Body).
func NewBody(r io.ReadCloser, n int64) *Body { return &Body{r: r, n: n} }

// Reader returns the body as a reader, for callers that do not send it
// with WriteTo; closing it ends the body's pins.
func (b *Body) Reader() io.ReadCloser {
	if b.small != nil {
		return struct {
			io.Reader
			io.Closer
		}{bytes.NewReader(b.small), b.r}
	}
	return b.r
}

// Size returns the body's length in bytes.
func (b *Body) Size() int64 { return b.n }

// MD5 returns the MD5 of the body when it was read in full when opened
// (OpenBody with wantMD5, or a small body), else nil.
func (b *Body) MD5() []byte {
	if b.small == nil {
		return nil
	}
	sum := md5.Sum(b.small)
	return sum[:]
}

// WriteTo writes the body to w. It does not close the body: the caller
// closes it once done, whether it sent it or not (HEAD). A failure
// mid-stream is the caller's to report (a front end has sent its status
// line by then and can only abort the response).
func (b *Body) WriteTo(w io.Writer) (int64, error) {
	if b.small != nil {
		n, err := w.Write(b.small)
		return int64(n), err
	}
	// Hide ReadFrom so the copy goes through the larger buffer.
	return io.CopyBuffer(struct{ io.Writer }{w}, b.r, make([]byte, 256<<10))
}

// Close ends the body's pins (its data items may then be collected).
func (b *Body) Close() error { return b.r.Close() }

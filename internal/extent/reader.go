package extent

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// contentReader streams bytes [off, off+n) of a blob made of parts
// (sorted by Off, non-overlapping); gaps read as zeros (sparse page blobs).
type contentReader struct {
	s      *Store
	ctx    context.Context
	parts  []Part
	pos    int64
	end    int64
	inline map[string][]byte // prefetched inline items
	cur    io.Reader
	curEnd int64
	closer io.Closer
	pinned []string // chunk ids pinned until Close
	cipher *Cipher  // decrypts the data items (nil: stored in the clear)
}

// NewReader streams bytes [off, off+n) of content made of parts (sorted
// by Off, non-overlapping); gaps read as zeros. inline holds inline items
// already read (see Prefetch) and may be nil; others are read on demand.
// The data items of the range (but those in inline) are pinned from now
// until Close (see pins.go), so call NewReader right after the
// transaction that resolved parts: the reader then returns the bytes of
// that version however long it streams, even if the blob or file is
// overwritten or deleted meanwhile. Close releases the pins and any open
// chunk; it must be called.
func (s *Store) NewReader(ctx context.Context, parts []Part, inline map[string][]byte, off, n int64) io.ReadCloser {
	return s.NewReaderSealed(ctx, parts, inline, off, n, nil)
}

// NewReaderSealed is NewReader for content whose data items are
// encrypted with c (nil: stored in the clear).
func (s *Store) NewReaderSealed(ctx context.Context, parts []Part, inline map[string][]byte, off, n int64, c *Cipher) io.ReadCloser {
	i := sort.Search(len(parts), func(i int) bool { return parts[i].End() > off })
	ids := itemIDs(parts[i:], off, n, inline)
	s.pins.pin(ids)
	return &contentReader{s: s, ctx: ctx, parts: parts[i:], pos: off, end: off + n, inline: inline, pinned: ids, cipher: c}
}

func (c *contentReader) Read(p []byte) (int, error) {
	for {
		if c.pos >= c.end {
			c.closeCur()
			return 0, io.EOF
		}
		if c.cur != nil {
			if c.pos < c.curEnd {
				max := c.curEnd - c.pos
				if int64(len(p)) > max {
					p = p[:max]
				}
				m, err := c.cur.Read(p)
				c.pos += int64(m)
				if m > 0 {
					return m, nil
				}
				if err != nil && err != io.EOF {
					return 0, err
				}
				if err == io.EOF && c.pos < c.curEnd {
					return 0, io.ErrUnexpectedEOF
				}
			}
			c.closeCur()
			continue
		}
		if len(c.parts) == 0 || c.parts[0].Off > c.pos {
			// a hole: zeros up to the next part or the end
			stop := c.end
			if len(c.parts) > 0 && c.parts[0].Off < stop {
				stop = c.parts[0].Off
			}
			c.cur, c.curEnd = zeroReader{}, stop
			continue
		}
		part := c.parts[0]
		c.parts = c.parts[1:]
		if part.End() <= c.pos {
			continue
		}
		stop := part.End()
		if stop > c.end {
			stop = c.end
		}
		from := part.DOff + (c.pos - part.Off)
		if err := c.open(part, from, stop-c.pos); err != nil {
			return 0, err
		}
		c.curEnd = stop
	}
}

func (c *contentReader) open(part Part, from, n int64) error {
	if part.ID == "" {
		if from+n > int64(len(part.Data)) {
			return fmt.Errorf("embedded part shorter than its length")
		}
		c.cur = bytesReader(part.Data[from : from+n])
		return nil
	}
	if isInline(part.ID) {
		data, ok := c.inline[part.ID]
		if !ok {
			err := c.s.store.View(c.ctx, func(tx kv.Tx) error {
				v, err := tx.Get(dataKey(part.ID))
				if err != nil {
					return err
				}
				data = append([]byte(nil), v[4:]...)
				return nil
			})
			if err != nil {
				return fmt.Errorf("reading data item %s: %w", part.ID, err)
			}
		}
		if from+n > int64(len(data)) {
			return fmt.Errorf("data item %s shorter than its part", part.ID)
		}
		c.cur = c.decrypt(bytesReader(data[from:from+n]), part.ID, from)
		return nil
	}
	r, err := c.s.chunks.Open(c.ctx, part.ID[1:])
	if err != nil {
		return fmt.Errorf("opening chunk %s: %w", part.ID, err)
	}
	c.cur = c.decrypt(io.NewSectionReader(r, from, n), part.ID, from)
	c.closer = r
	return nil
}

// decrypt wraps r, data item id's bytes from offset from, in the
// reader's cipher, if any.
func (c *contentReader) decrypt(r io.Reader, id string, from int64) io.Reader {
	if c.cipher == nil {
		return r
	}
	return &decryptReader{r: r, s: c.cipher.stream(id, from)}
}

func (c *contentReader) closeCur() {
	if c.closer != nil {
		_ = c.closer.Close()
		c.closer = nil
	}
	c.cur = nil
}

// Close releases any open chunk and the pins.
func (c *contentReader) Close() error {
	c.closeCur()
	c.s.pins.unpin(c.pinned)
	c.pinned = nil
	return nil
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

type sliceReader struct{ b []byte }

func bytesReader(b []byte) *sliceReader { return &sliceReader{b} }

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// Prefetch reads, inside a read transaction, the inline items of the
// parts overlapping [off, off+n) when they are small in total, so a small
// Get Blob costs one transaction.
func Prefetch(tx kv.Tx, parts []Part, off, n int64) (map[string][]byte, error) {
	var total int64
	out := map[string][]byte{}
	for _, p := range parts {
		if p.End() <= off || p.Off >= off+n || !isInline(p.ID) {
			continue
		}
		if _, ok := out[p.ID]; ok {
			continue
		}
		total += p.Len
		if total > 4<<20 {
			break
		}
		v, err := tx.Get(dataKey(p.ID))
		if err != nil {
			return nil, fmt.Errorf("data item %s: %w", p.ID, err)
		}
		out[p.ID] = append([]byte(nil), v[4:]...)
	}
	return out, nil
}

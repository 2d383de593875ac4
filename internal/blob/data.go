package blob

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc64"
	"io"
	"net/http"
	"sort"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Bytes of blobs are "data items": immutable byte strings with an id.
// Small items (≤ inlineMax) live inline in the kv store under
// ("x", id) so one group commit covers many small writes; larger ones are
// files in the chunk store, whose ("x", id) record only marks them live.
// A Part maps a range of a blob onto a data item. Items are shared by
// snapshots, copies and committed blocks, so each ("x", id) record carries
// a reference count maintained in the same transaction as the records that
// reference it. When it drops to zero the id is queued under ("g", due, id)
// and the background collector removes it after a grace period, so readers
// that looked up a part just before a delete still find its bytes.

const (
	inlineMax = 64 << 10 // bodies up to this size are stored in the kv store
	chunkMax  = 8 << 20  // larger bodies are split into chunks of at most this size
	gcGrace   = 10 * time.Minute
)

// Part is one extent of a blob's content: bytes [Off, Off+Len) of the blob
// are bytes [DOff, DOff+Len) of data item ID.
//
// A small Put Blob body is embedded in the part itself (Data set, ID
// empty): the record then holds its bytes, so a small write is one key and
// a small read one lookup, with no reference counting. Embedded bytes are
// copied, not shared, by snapshots and copies.
type Part struct {
	Off  int64  `json:"o"`
	Len  int64  `json:"l"`
	ID   string `json:"i,omitempty"`
	DOff int64  `json:"d,omitempty"`
	Data []byte `json:"b,omitempty"`
}

func (p Part) end() int64 { return p.Off + p.Len }

func isInline(id string) bool { return len(id) > 0 && id[0] == 'i' }

func dataKey(id string) []byte { return kv.Key("x", id) }

// staged holds a request body that has been read: small bodies in memory
// (written to the kv store inside the transaction), larger ones already
// durable in the chunk store.
type staged struct {
	parts  []Part
	inline map[string][]byte
	size   int64
	md5    []byte // set when MD5 was computed
	crc64  []byte // set when x-ms-content-crc64 was sent (8 bytes, little endian)
}

// stage reads exactly n bytes from body (n < 0: until EOF) and stores them
// as data items. Chunks are durable when stage returns, before any metadata
// references them. Digests are computed only where needed (MD5 is a large
// share of a big upload's CPU): MD5 when storeMD5 (Put Blob keeps it as the
// blob's Content-MD5) or when the client sent Content-MD5, CRC64 when the
// client sent x-ms-content-crc64; checkDigests verifies them.
func (s *Service) stage(ctx context.Context, body io.Reader, n int64, h http.Header, storeMD5 bool) (*staged, error) {
	return s.stageBody(ctx, body, n, h, storeMD5, false)
}

// stageEmbedded is stage for a whole small blob: a body of at most
// inlineMax bytes is embedded in the part instead of becoming a data item.
func (s *Service) stageEmbedded(ctx context.Context, body io.Reader, n int64, h http.Header) (*staged, error) {
	return s.stageBody(ctx, body, n, h, true, true)
}

func (s *Service) stageBody(ctx context.Context, body io.Reader, n int64, h http.Header, storeMD5, embed bool) (*staged, error) {
	st := &staged{inline: map[string][]byte{}}
	var md5h, crch hash.Hash
	var sinks []io.Writer
	if storeMD5 || h.Get("Content-MD5") != "" {
		md5h = md5.New()
		sinks = append(sinks, md5h)
	}
	if h.Get("x-ms-content-crc64") != "" {
		crch = crc64.New(crc64Table)
		sinks = append(sinks, crch)
	}
	defer func() {
		if md5h != nil {
			st.md5 = md5h.Sum(nil)
		}
		if crch != nil {
			st.crc64 = binary.LittleEndian.AppendUint64(nil, crch.(hash.Hash64).Sum64())
		}
	}()
	if n >= 0 && n <= inlineMax {
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, bodyErr(err)
		}
		if err := expectEOF(body); err != nil {
			return nil, err
		}
		for _, w := range sinks {
			w.Write(buf)
		}
		st.size = n
		switch {
		case n == 0:
		case embed:
			st.parts = []Part{{Off: 0, Len: n, Data: buf}}
		default:
			id := newInlineID()
			st.inline[id] = buf
			st.parts = []Part{{Off: 0, Len: n, ID: id}}
		}
		return st, nil
	}
	var off int64
	for n < 0 || off < n {
		want := int64(chunkMax)
		if n >= 0 && n-off < want {
			want = n - off
		}
		w, err := s.chunks.Create(ctx)
		if err != nil {
			return nil, err
		}
		dst := io.MultiWriter(append([]io.Writer{w}, sinks...)...)
		got, err := io.Copy(dst, io.LimitReader(body, want))
		if err != nil {
			_ = w.Abort()
			return nil, bodyErr(err)
		}
		if got == 0 {
			_ = w.Abort()
			break
		}
		if n >= 0 && got < want {
			_ = w.Abort()
			return nil, bodyErr(io.ErrUnexpectedEOF)
		}
		if err := w.Commit(); err != nil {
			return nil, err
		}
		st.parts = append(st.parts, Part{Off: off, Len: got, ID: "c" + w.ID()})
		off += got
		if n < 0 && got < want {
			break
		}
	}
	if n >= 0 {
		if err := expectEOF(body); err != nil {
			return nil, err
		}
	}
	st.size = off
	return st, nil
}

func expectEOF(r io.Reader) error {
	var one [1]byte
	if m, _ := r.Read(one[:]); m > 0 {
		return azerr.Newf(azerr.InvalidInput, "The request body is longer than the Content-Length header.")
	}
	return nil
}

func bodyErr(err error) error {
	var mbe *maxBytesError
	if errors.As(err, &mbe) {
		return azerr.New(azerr.RequestBodyTooLarge)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return azerr.Newf(azerr.InvalidInput, "The request body is shorter than the Content-Length header.")
	}
	return fmt.Errorf("reading request body: %w", err)
}

// maxBytesError is returned by a body reader past its limit.
type maxBytesError struct{ limit int64 }

func (e *maxBytesError) Error() string { return fmt.Sprintf("request body over %d bytes", e.limit) }

// write records the staged items in tx with a reference count of zero;
// the records that reference them then take references via adjustRefs.
func (st *staged) write(tx kv.Tx) error {
	for _, p := range st.parts {
		if p.ID == "" {
			continue // embedded in the record
		}
		var v []byte
		if isInline(p.ID) {
			v = encodeData(0, st.inline[p.ID])
		} else {
			v = encodeData(0, nil)
		}
		if err := tx.Put(dataKey(p.ID), v); err != nil {
			return err
		}
	}
	return nil
}

func encodeData(refs uint32, data []byte) []byte {
	v := make([]byte, 4+len(data))
	binary.BigEndian.PutUint32(v, refs)
	copy(v[4:], data)
	return v
}

// adjustRefs moves references from the parts of old to the parts of new:
// each part occurrence holds one reference on its data item.
func adjustRefs(tx kv.Tx, now time.Time, old, new []Part) error {
	delta := map[string]int{}
	for _, p := range old {
		if p.ID != "" {
			delta[p.ID]--
		}
	}
	for _, p := range new {
		if p.ID != "" {
			delta[p.ID]++
		}
	}
	ids := make([]string, 0, len(delta))
	for id, d := range delta {
		if d != 0 {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids) // deterministic write order
	for _, id := range ids {
		k := dataKey(id)
		v, err := tx.Get(k)
		if err != nil {
			return fmt.Errorf("data item %s: %w", id, err)
		}
		refs := int64(binary.BigEndian.Uint32(v)) + int64(delta[id])
		if refs < 0 {
			return fmt.Errorf("data item %s: reference count below zero", id)
		}
		nv := make([]byte, len(v))
		copy(nv, v)
		binary.BigEndian.PutUint32(nv, uint32(refs))
		if err := tx.Put(k, nv); err != nil {
			return err
		}
		if refs == 0 {
			if err := tx.Put(gcKey(now.Add(gcGrace), id), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func gcKey(due time.Time, id string) []byte {
	return kv.Key("g", fmt.Sprintf("%020d", due.UnixNano()), id)
}

// contentReader streams bytes [off, off+n) of a blob made of parts
// (sorted by Off, non-overlapping); gaps read as zeros (sparse page blobs).
type contentReader struct {
	s      *Service
	ctx    context.Context
	parts  []Part
	pos    int64
	end    int64
	inline map[string][]byte // prefetched inline items
	cur    io.Reader
	curEnd int64
	closer io.Closer
}

func (s *Service) newContentReader(ctx context.Context, parts []Part, inline map[string][]byte, off, n int64) *contentReader {
	i := sort.Search(len(parts), func(i int) bool { return parts[i].end() > off })
	return &contentReader{s: s, ctx: ctx, parts: parts[i:], pos: off, end: off + n, inline: inline}
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
		if part.end() <= c.pos {
			continue
		}
		stop := part.end()
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
		c.cur = bytesReader(data[from : from+n])
		return nil
	}
	r, err := c.s.chunks.Open(c.ctx, part.ID[1:])
	if err != nil {
		return fmt.Errorf("opening chunk %s: %w", part.ID, err)
	}
	c.cur = io.NewSectionReader(r, from, n)
	c.closer = r
	return nil
}

func (c *contentReader) closeCur() {
	if c.closer != nil {
		_ = c.closer.Close()
		c.closer = nil
	}
	c.cur = nil
}

// Close releases any open chunk.
func (c *contentReader) Close() error { c.closeCur(); return nil }

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

// prefetchInline reads, inside a read transaction, the inline items of the
// parts overlapping [off, off+n) when they are small in total, so a small
// Get Blob costs one transaction.
func prefetchInline(tx kv.Tx, parts []Part, off, n int64) (map[string][]byte, error) {
	var total int64
	out := map[string][]byte{}
	for _, p := range parts {
		if p.end() <= off || p.Off >= off+n || !isInline(p.ID) {
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

// md5Hash returns a fresh MD5 hasher (Content-MD5 checks).
func md5Hash() hash.Hash { return md5.New() }

// crc64Table is the CRC-64 the Storage service uses for
// x-ms-content-crc64 (polynomial 0x9A6C9329AC4BC9B5, reflected).
var crc64Table = crc64.MakeTable(0x9A6C9329AC4BC9B5)

package blob

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// The stored form of a blob record (blobRec, under "b", "bd" and "bv"):
// a binary layout of its own rather than JSON, which read and written on
// every Get and Put Blob was the largest cost of either after the network
// and the transaction (docs/benchmarks.md). Its first byte, recordMagic,
// tells it from a JSON record ('{'): records written before it decode as
// JSON still (kv.DecodeJSON), and the next write stores them in this form.
//
// The layout, after the magic byte and recordVersion: the fields in
// blobRec's order, strings and byte strings as a uvarint length and the
// bytes, integers as (u)varints, times as a varint of Unix seconds and a
// uvarint of nanoseconds (UTC; the zero time round-trips), maps as a count
// and their pairs in key order, optional structs behind a presence byte,
// the booleans as one flag byte. A decoder refuses a record that ends early
// or holds bytes past its end.
const (
	recordMagic   = 0xB1
	recordVersion = 1
)

const (
	flagSealed = 1 << iota
	flagHasBlockList
	flagHold
)

// EncodeRecord implements kv.Encoder.
func (b *blobRec) EncodeRecord() ([]byte, error) {
	n := 64 + len(b.ETag) + len(b.Type) + len(b.Props.ContentType) + len(b.Props.ContentMD5)
	for _, p := range b.Parts {
		n += 24 + len(p.ID) + len(p.Data)
	}
	for _, bl := range b.Blocks {
		n += 16 + len(bl.Name)
	}
	for k, v := range b.Meta {
		n += 4 + len(k) + len(v)
	}
	w := recWriter(make([]byte, 0, n))
	w = append(w, recordMagic, recordVersion)
	w.str(b.Type)
	w.time(b.Created)
	w.time(b.Modified)
	w.str(b.ETag)
	w.varint(b.Size)
	w.str(b.Props.ContentType)
	w.str(b.Props.ContentEncoding)
	w.str(b.Props.ContentLanguage)
	w.str(b.Props.ContentDisposition)
	w.str(b.Props.CacheControl)
	w.bytes(b.Props.ContentMD5)
	w.strMap(b.Meta)
	w.str(b.Lease.ID)
	w.str(b.Lease.State)
	w.varint(int64(b.Lease.Duration))
	w.time(b.Lease.Expires)
	w.time(b.Lease.BreakAt)
	w.uvarint(uint64(len(b.Parts)))
	for _, p := range b.Parts {
		w.varint(p.Off)
		w.varint(p.Len)
		w.str(p.ID)
		w.varint(p.DOff)
		w.bytes(p.Data)
	}
	w.uvarint(uint64(len(b.Blocks)))
	for _, bl := range b.Blocks {
		w.str(bl.Name)
		w.varint(bl.Size)
		w.varint(int64(bl.NParts))
	}
	w.varint(b.SeqNum)
	w.varint(int64(b.Appends))
	var flags byte
	if b.Sealed {
		flags |= flagSealed
	}
	if b.HasBlockList {
		flags |= flagHasBlockList
	}
	if b.Hold {
		flags |= flagHold
	}
	w = append(w, flags)
	if w.present(b.Copy != nil) {
		w.str(b.Copy.ID)
		w.str(b.Copy.Source)
		w.str(b.Copy.Status)
		w.str(b.Copy.Progress)
		w.time(b.Copy.Completion)
	}
	w.str(b.Tier)
	if w.present(b.TierChanged != nil) {
		w.time(*b.TierChanged)
	}
	w.strMap(b.Tags)
	if w.present(b.Del != nil) {
		w.time(b.Del.At)
		w.time(b.Del.Expires)
	}
	w.str(b.CPK)
	w.str(b.VersionID)
	if w.present(b.Imm != nil) {
		w.time(b.Imm.Until)
		w.str(b.Imm.Mode)
	}
	return w, nil
}

// DecodeRecord implements kv.Decoder: raw is a record EncodeRecord wrote.
// b's fields are replaced; strings and byte strings are copies, so b stays
// valid after the transaction that read raw ends.
func (b *blobRec) DecodeRecord(raw []byte) error {
	return b.decode(raw, false)
}

// decode is DecodeRecord that, with skipContent, leaves Parts and Blocks
// nil without copying them (changeView: a change record never needs a
// blob's content).
func (b *blobRec) decode(raw []byte, skipContent bool) error {
	r := recReader{b: raw}
	if r.byte() != recordMagic {
		return errors.New("not a blob record")
	}
	if v := r.byte(); r.err == nil && v != recordVersion {
		return fmt.Errorf("blob record version %d is not known", v)
	}
	*b = blobRec{}
	b.Type = r.blobType()
	b.Created = r.time()
	b.Modified = r.time()
	b.ETag = r.str()
	b.Size = r.varint()
	b.Props.ContentType = r.str()
	b.Props.ContentEncoding = r.str()
	b.Props.ContentLanguage = r.str()
	b.Props.ContentDisposition = r.str()
	b.Props.CacheControl = r.str()
	b.Props.ContentMD5 = r.bytes()
	b.Meta = r.strMap()
	b.Lease.ID = r.str()
	b.Lease.State = r.str()
	b.Lease.Duration = int(r.varint())
	b.Lease.Expires = r.time()
	b.Lease.BreakAt = r.time()
	if n := r.count(5); n > 0 {
		if skipContent {
			for range n {
				r.varint()
				r.varint()
				r.skip()
				r.varint()
				r.skip()
			}
		} else {
			b.Parts = make([]extent.Part, n)
			for i := range b.Parts {
				p := &b.Parts[i]
				p.Off = r.varint()
				p.Len = r.varint()
				p.ID = r.str()
				p.DOff = r.varint()
				p.Data = r.bytes()
			}
		}
	}
	if n := r.count(3); n > 0 {
		if skipContent {
			for range n {
				r.skip()
				r.varint()
				r.varint()
			}
		} else {
			b.Blocks = make([]block, n)
			for i := range b.Blocks {
				bl := &b.Blocks[i]
				bl.Name = r.str()
				bl.Size = r.varint()
				bl.NParts = int(r.varint())
			}
		}
	}
	b.SeqNum = r.varint()
	b.Appends = int(r.varint())
	flags := r.byte()
	b.Sealed = flags&flagSealed != 0
	b.HasBlockList = flags&flagHasBlockList != 0
	b.Hold = flags&flagHold != 0
	if r.present() {
		b.Copy = &CopyInfo{ID: r.str(), Source: r.str(), Status: r.str(), Progress: r.str(), Completion: r.time()}
	}
	b.Tier = r.str()
	if r.present() {
		t := r.time()
		b.TierChanged = &t
	}
	if tags := r.strMap(); tags != nil {
		b.Tags = blobtags.Tags(tags)
	}
	if r.present() {
		b.Del = &deletion{At: r.time(), Expires: r.time()}
	}
	b.CPK = r.str()
	b.VersionID = r.str()
	if r.present() {
		b.Imm = &immPolicy{Until: r.time(), Mode: r.str()}
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%d bytes past the end of the blob record", len(r.b))
	}
	if r.err != nil {
		*b = blobRec{}
		return r.err
	}
	return nil
}

// refsOf is what a record under "b", "bd", "bv" or "u" holds that outlives
// it: its chunk references and its soft delete (whose expiry index entry
// names it). A blob record in either form, or an uncommitted block's
// JSON, reads into it.
type refsOf struct {
	Parts []extent.Part `json:"x"`
	Del   *deletion     `json:"del"`
}

func (p *refsOf) read(k, v []byte) error {
	if len(v) == 0 || v[0] != recordMagic {
		return kv.DecodeJSON(k, v, p)
	}
	var b blobRec
	if err := kv.DecodeJSON(k, v, &b); err != nil {
		return err
	}
	p.Parts, p.Del = b.Parts, b.Del
	return nil
}

type recWriter []byte

func (w *recWriter) uvarint(v uint64) { *w = binary.AppendUvarint(*w, v) }
func (w *recWriter) varint(v int64)   { *w = binary.AppendVarint(*w, v) }
func (w *recWriter) str(s string) {
	w.uvarint(uint64(len(s)))
	*w = append(*w, s...)
}
func (w *recWriter) bytes(b []byte) {
	w.uvarint(uint64(len(b)))
	*w = append(*w, b...)
}
func (w *recWriter) time(t time.Time) {
	w.varint(t.Unix())
	w.uvarint(uint64(t.Nanosecond()))
}
func (w *recWriter) present(ok bool) bool {
	if ok {
		*w = append(*w, 1)
	} else {
		*w = append(*w, 0)
	}
	return ok
}
func (w *recWriter) strMap(m map[string]string) {
	w.uvarint(uint64(len(m)))
	if len(m) == 1 {
		for k, v := range m {
			w.str(k)
			w.str(v)
		}
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.str(k)
		w.str(m[k])
	}
}

// recReader reads a record; the first error sticks, and every read after
// it returns a zero value.
type recReader struct {
	b   []byte
	err error
}

var errShortRecord = errors.New("blob record ends early")

func (r *recReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *recReader) byte() byte {
	if len(r.b) == 0 {
		r.fail(errShortRecord)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *recReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(errShortRecord)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(errShortRecord)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// take returns the next length-prefixed bytes, uncopied.
func (r *recReader) take() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail(errShortRecord)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *recReader) skip()       { r.take() }
func (r *recReader) str() string { return string(r.take()) }

// blobType is str for the blob's type: one of three names, returned
// without a copy.
func (r *recReader) blobType() string {
	switch v := r.take(); string(v) {
	case BlockBlob:
		return BlockBlob
	case PageBlob:
		return PageBlob
	case AppendBlob:
		return AppendBlob
	default:
		return string(v)
	}
}

// bytes returns a copy of the next byte string; nil when it is empty (as
// JSON's omitempty leaves it).
func (r *recReader) bytes() []byte {
	v := r.take()
	if len(v) == 0 {
		return nil
	}
	return append([]byte(nil), v...)
}

func (r *recReader) time() time.Time {
	sec := r.varint()
	nsec := r.uvarint()
	if nsec >= 1e9 {
		r.fail(errors.New("blob record: a time's nanoseconds out of range"))
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

func (r *recReader) present() bool {
	switch r.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail(errors.New("blob record: a presence byte is neither 0 nor 1"))
	return false
}

// count reads a count of items each at least min bytes long, refusing one
// the rest of the record cannot hold (so a damaged count allocates
// nothing).
func (r *recReader) count(min int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/min) {
		r.fail(errShortRecord)
		return 0
	}
	return int(n)
}

func (r *recReader) strMap() map[string]string {
	n := r.count(2)
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := r.str()
		m[k] = r.str()
	}
	return m
}

// Package arrowipc writes Apache Arrow IPC streams: a Schema message,
// one RecordBatch message and the end-of-stream marker, for the few
// column types Cerulean's listings need (utf8, bool, int32, int64,
// timestamp in seconds, map<utf8, utf8>), every column nullable.
//
// The format is Arrow's "Columnar Format" specification
// (https://arrow.apache.org/docs/format/Columnar.html, "Serialization
// and Interprocess Communication (IPC)") with the flatbuffers of
// format/Schema.fbs and format/Message.fbs, metadata version V5. It is
// written here, without the Arrow library, so that the server binary
// does not link it; the tests read the output back with arrow-go.
package arrowipc

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ContentType is the media type of an Arrow IPC stream.
const ContentType = "application/vnd.apache.arrow.stream"

// KV is one key/value pair of a schema's custom metadata.
type KV struct{ Key, Value string }

// Column is one column of the record batch.
type Column interface {
	Len() int
	field() fbTable
	emit(b *body)
}

// body accumulates a record batch's buffers (each 8-aligned) and the
// field nodes, in the pre-order of the schema's fields.
type body struct {
	data    []byte
	buffers fbPairs
	nodes   fbPairs
}

func (b *body) node(length, nulls int) {
	b.nodes = append(b.nodes, [2]int64{int64(length), int64(nulls)})
}

func (b *body) buffer(p []byte) {
	b.buffers = append(b.buffers, [2]int64{int64(len(b.data)), int64(len(p))})
	b.data = append(b.data, p...)
	for len(b.data)%8 != 0 {
		b.data = append(b.data, 0)
	}
}

// validity is a column's validity bitmap, allocated at the first null.
type validity struct {
	bits  []byte
	n     int
	nulls int
}

func (v *validity) add(ok bool) {
	if !ok && v.bits == nil {
		v.bits = make([]byte, (v.n+8)/8)
		for i := 0; i < v.n; i++ {
			v.bits[i/8] |= 1 << (i % 8)
		}
	}
	if v.bits != nil {
		for len(v.bits)*8 <= v.n {
			v.bits = append(v.bits, 0)
		}
		if ok {
			v.bits[v.n/8] |= 1 << (v.n % 8)
		}
	}
	if !ok {
		v.nulls++
	}
	v.n++
}

func (v *validity) emit(b *body) {
	b.node(v.n, v.nulls)
	if v.nulls == 0 {
		b.buffer(nil) // no nulls: the bitmap may be omitted
		return
	}
	b.buffer(v.bits[:(v.n+7)/8])
}

// Type ids of the Type union (Schema.fbs).
const (
	typeInt       = 2
	typeUtf8      = 5
	typeBool      = 6
	typeTimestamp = 10
	typeStruct    = 13
	typeMap       = 17
)

func field(name string, nullable bool, typ uint8, t fbTable, children ...fbNode) fbTable {
	f := fbTable{ref(fbString(name)), boolean(nullable), u8(typ), ref(t), {}, ref(fbTables(children))}
	return f
}

// Strings is a utf8 column.
type Strings struct {
	name    string
	valid   validity
	offsets []byte
	data    []byte
}

// NewStrings returns an empty utf8 column.
func NewStrings(name string) *Strings {
	return &Strings{name: name, offsets: make([]byte, 4)}
}

// Append adds a value.
func (c *Strings) Append(s string) {
	c.valid.add(true)
	c.data = append(c.data, s...)
	c.offsets = binary.LittleEndian.AppendUint32(c.offsets, uint32(len(c.data)))
}

// AppendNull adds a null.
func (c *Strings) AppendNull() {
	c.valid.add(false)
	c.offsets = binary.LittleEndian.AppendUint32(c.offsets, uint32(len(c.data)))
}

// AppendOrNull adds s, or a null when s is empty.
func (c *Strings) AppendOrNull(s string) {
	if s == "" {
		c.AppendNull()
		return
	}
	c.Append(s)
}

// Len is the number of values.
func (c *Strings) Len() int { return c.valid.n }

func (c *Strings) field() fbTable {
	return field(c.name, true, typeUtf8, fbTable{})
}

func (c *Strings) emit(b *body) {
	c.valid.emit(b)
	b.buffer(c.offsets)
	b.buffer(c.data)
}

// Bools is a bool column.
type Bools struct {
	name   string
	valid  validity
	values []byte
}

// NewBools returns an empty bool column.
func NewBools(name string) *Bools { return &Bools{name: name} }

// Append adds a value.
func (c *Bools) Append(v bool) {
	i := c.valid.n
	if len(c.values)*8 <= i {
		c.values = append(c.values, 0)
	}
	if v {
		c.values[i/8] |= 1 << (i % 8)
	}
	c.valid.add(true)
}

// AppendNull adds a null.
func (c *Bools) AppendNull() {
	if len(c.values)*8 <= c.valid.n {
		c.values = append(c.values, 0)
	}
	c.valid.add(false)
}

// Len is the number of values.
func (c *Bools) Len() int { return c.valid.n }

func (c *Bools) field() fbTable { return field(c.name, true, typeBool, fbTable{}) }

func (c *Bools) emit(b *body) {
	c.valid.emit(b)
	b.buffer(c.values)
}

// Ints is a signed integer column of 32 or 64 bits, or a timestamp
// column (seconds since the epoch, UTC).
type Ints struct {
	name   string
	bits   int
	ts     bool
	valid  validity
	values []byte
}

// NewInt64s returns an empty int64 column.
func NewInt64s(name string) *Ints { return &Ints{name: name, bits: 64} }

// NewInt32s returns an empty int32 column.
func NewInt32s(name string) *Ints { return &Ints{name: name, bits: 32} }

// NewTimestamps returns an empty timestamp column: seconds, UTC.
func NewTimestamps(name string) *Ints { return &Ints{name: name, bits: 64, ts: true} }

// Append adds a value.
func (c *Ints) Append(v int64) {
	c.valid.add(true)
	if c.bits == 32 {
		c.values = binary.LittleEndian.AppendUint32(c.values, uint32(int32(v)))
		return
	}
	c.values = binary.LittleEndian.AppendUint64(c.values, uint64(v))
}

// AppendTime adds t, to the second, or a null for the zero time.
func (c *Ints) AppendTime(t time.Time) {
	if t.IsZero() {
		c.AppendNull()
		return
	}
	c.Append(t.Unix())
}

// AppendNull adds a null.
func (c *Ints) AppendNull() {
	c.valid.add(false)
	c.values = append(c.values, make([]byte, c.bits/8)...)
}

// Len is the number of values.
func (c *Ints) Len() int { return c.valid.n }

func (c *Ints) field() fbTable {
	if c.ts {
		// Timestamp { unit: SECOND (0), timezone: "UTC" }
		return field(c.name, true, typeTimestamp, fbTable{i16(0), ref(fbString("UTC"))})
	}
	return field(c.name, true, typeInt, fbTable{i32(int32(c.bits)), boolean(true)})
}

func (c *Ints) emit(b *body) {
	c.valid.emit(b)
	b.buffer(c.values)
}

// StringMaps is a map<utf8, utf8> column (keys unsorted, values
// non-null).
type StringMaps struct {
	name    string
	valid   validity
	offsets []byte
	keys    *Strings
	values  *Strings
}

// NewStringMaps returns an empty map column.
func NewStringMaps(name string) *StringMaps {
	return &StringMaps{name: name, offsets: make([]byte, 4), keys: NewStrings("key"), values: NewStrings("value")}
}

// Append adds one map, its pairs in the order given. An empty map is an
// empty (not null) value.
func (c *StringMaps) Append(pairs []KV) {
	c.valid.add(true)
	for _, p := range pairs {
		c.keys.Append(p.Key)
		c.values.Append(p.Value)
	}
	c.offsets = binary.LittleEndian.AppendUint32(c.offsets, uint32(c.keys.Len()))
}

// AppendNull adds a null.
func (c *StringMaps) AppendNull() {
	c.valid.add(false)
	c.offsets = binary.LittleEndian.AppendUint32(c.offsets, uint32(c.keys.Len()))
}

// Len is the number of maps.
func (c *StringMaps) Len() int { return c.valid.n }

func (c *StringMaps) field() fbTable {
	// Map's child is a non-null struct "entries" of a non-null key and a
	// value (Schema.fbs, table Map).
	key := field("key", false, typeUtf8, fbTable{})
	value := field("value", true, typeUtf8, fbTable{})
	entries := field("entries", false, typeStruct, fbTable{}, key, value)
	return field(c.name, true, typeMap, fbTable{boolean(false)}, entries)
}

func (c *StringMaps) emit(b *body) {
	c.valid.emit(b)
	b.buffer(c.offsets)
	// The entries struct: no nulls, no buffers but its validity.
	b.node(c.keys.Len(), 0)
	b.buffer(nil)
	c.keys.emit(b)
	c.values.emit(b)
}

// Message header types (Message.fbs, union MessageHeader) and the
// metadata version V5.
const (
	headerSchema      = 1
	headerRecordBatch = 3
	metadataV5        = 4
)

// writeMessage writes one encapsulated message: the continuation
// marker, the metadata length (padded so the body starts 8-aligned),
// the Message flatbuffer and the body.
func writeMessage(w io.Writer, header uint8, h fbTable, bodyData []byte) error {
	meta := finish(fbTable{i16(metadataV5), u8(header), ref(h), i64(int64(len(bodyData)))})
	for (8+len(meta))%8 != 0 {
		meta = append(meta, 0)
	}
	prefix := make([]byte, 8, 8+len(meta))
	binary.LittleEndian.PutUint32(prefix, 0xFFFFFFFF)
	binary.LittleEndian.PutUint32(prefix[4:], uint32(len(meta)))
	if _, err := w.Write(append(prefix, meta...)); err != nil {
		return err
	}
	if len(bodyData) > 0 {
		_, err := w.Write(bodyData)
		return err
	}
	return nil
}

// Write writes a whole stream: the schema of cols with the custom
// metadata md, one record batch holding cols (all of one length), and
// the end-of-stream marker.
func Write(w io.Writer, md []KV, cols ...Column) error {
	rows := 0
	if len(cols) > 0 {
		rows = cols[0].Len()
	}
	fields := make(fbTables, len(cols))
	for i, c := range cols {
		if c.Len() != rows {
			return fmt.Errorf("arrowipc: column %d has %d values, want %d", i, c.Len(), rows)
		}
		fields[i] = c.field()
	}
	kvs := make(fbTables, len(md))
	for i, p := range md {
		kvs[i] = fbTable{ref(fbString(p.Key)), ref(fbString(p.Value))}
	}
	// Schema { endianness: Little (0), fields, custom_metadata }
	if err := writeMessage(w, headerSchema, fbTable{i16(0), ref(fields), ref(kvs)}, nil); err != nil {
		return err
	}
	var b body
	for _, c := range cols {
		c.emit(&b)
	}
	// RecordBatch { length, nodes, buffers }
	if err := writeMessage(w, headerRecordBatch, fbTable{i64(int64(rows)), ref(b.nodes), ref(b.buffers)}, b.data); err != nil {
		return err
	}
	_, err := w.Write([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0})
	return err
}

// Accepts reports whether an Accept header offers the Arrow stream media
// type (with a q value other than 0; RFC 9110 section 12.5.1).
func Accepts(accept string) bool {
	for _, r := range strings.Split(accept, ",") {
		params := strings.Split(r, ";")
		if !strings.EqualFold(strings.TrimSpace(params[0]), ContentType) {
			continue
		}
		ok := true
		for _, p := range params[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && q == 0 {
					ok = false
				}
			}
		}
		if ok {
			return true
		}
	}
	return false
}

package avro

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrCorrupt is returned (wrapped) for input that is not a well-formed
// object container file or encoding.
var ErrCorrupt = errors.New("avro: corrupt input")

// maxDepth bounds the nesting a decoder follows (a recursive schema and
// hostile input could otherwise recurse without end).
const maxDepth = 64

// decoder reads Avro binary encoding from a byte slice. It never reads
// past the end and never allocates more than the input's length for one
// value, so any input is safe to decode.
type decoder struct {
	b     []byte
	depth int
}

func (d *decoder) long() (int64, error) {
	u, n := binary.Uvarint(d.b)
	if n <= 0 || n > 10 {
		return 0, fmt.Errorf("%w: bad varint", ErrCorrupt)
	}
	d.b = d.b[n:]
	return int64(u>>1) ^ -int64(u&1), nil
}

func (d *decoder) bytes() ([]byte, error) {
	n, err := d.long()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > int64(len(d.b)) {
		return nil, fmt.Errorf("%w: length %d past the end", ErrCorrupt, n)
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out, nil
}

// count reads a block count of a map or array; a negative count is
// followed by the block's byte size, which is skipped over as a hint.
func (d *decoder) count() (int64, error) {
	n, err := d.long()
	if err != nil {
		return 0, err
	}
	if n < 0 {
		if n == math.MinInt64 {
			return 0, fmt.Errorf("%w: block count", ErrCorrupt)
		}
		n = -n
		if _, err := d.long(); err != nil {
			return 0, err
		}
	}
	if n > int64(len(d.b)) {
		// A map entry takes a byte at least (its key's length), and so
		// does an array item of every type but null, which no array of
		// the change feed holds: a count past the input's end is
		// corrupt, and bounds the work hostile input can ask for.
		return 0, fmt.Errorf("%w: count %d past the end", ErrCorrupt, n)
	}
	return n, nil
}

// value decodes one value of schema s.
func (d *decoder) value(s *Schema) (any, error) {
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxDepth {
		return nil, fmt.Errorf("%w: nested too deep", ErrCorrupt)
	}
	switch s.Type {
	case "null":
		return nil, nil
	case "boolean":
		if len(d.b) < 1 || d.b[0] > 1 {
			return nil, fmt.Errorf("%w: boolean", ErrCorrupt)
		}
		v := d.b[0] == 1
		d.b = d.b[1:]
		return v, nil
	case "int":
		n, err := d.long()
		if err != nil {
			return nil, err
		}
		if n < math.MinInt32 || n > math.MaxInt32 {
			return nil, fmt.Errorf("%w: int overflow", ErrCorrupt)
		}
		return int32(n), nil
	case "long":
		return d.long()
	case "double":
		if len(d.b) < 8 {
			return nil, fmt.Errorf("%w: double", ErrCorrupt)
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
		d.b = d.b[8:]
		return v, nil
	case "string":
		b, err := d.bytes()
		return string(b), err
	case "bytes":
		b, err := d.bytes()
		if err != nil {
			return nil, err
		}
		out := make([]byte, len(b))
		copy(out, b)
		return out, nil
	case "record":
		m := make(map[string]any, len(s.Fields))
		for _, f := range s.Fields {
			v, err := d.value(f.Type)
			if err != nil {
				return nil, err
			}
			m[f.Name] = v
		}
		return m, nil
	case "map":
		m := map[string]any{}
		for {
			n, err := d.count()
			if err != nil {
				return nil, err
			}
			if n == 0 {
				return m, nil
			}
			for i := int64(0); i < n; i++ {
				k, err := d.bytes()
				if err != nil {
					return nil, err
				}
				v, err := d.value(s.Values)
				if err != nil {
					return nil, err
				}
				m[string(k)] = v
			}
		}
	case "array":
		a := []any{}
		for {
			n, err := d.count()
			if err != nil {
				return nil, err
			}
			if n == 0 {
				return a, nil
			}
			for i := int64(0); i < n; i++ {
				v, err := d.value(s.Items)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
		}
	case "union":
		i, err := d.long()
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= int64(len(s.Union)) {
			return nil, fmt.Errorf("%w: union branch %d", ErrCorrupt, i)
		}
		return d.value(s.Union[i])
	}
	return nil, fmt.Errorf("avro: cannot decode type %q", s.Type)
}

// Decode decodes one value of schema s from b and returns the bytes
// after it.
func Decode(b []byte, s *Schema) (any, []byte, error) {
	d := &decoder{b: b}
	v, err := d.value(s)
	return v, d.b, err
}

// File is a decoded object container file.
type File struct {
	Schema     []byte // the avro.schema metadata, as written
	Codec      string
	Sync       [SyncSize]byte
	HeaderSize int
	Objects    []any
	// BlockOffsets are the offsets of the blocks, in order.
	BlockOffsets []int
}

// ReadFile decodes an object container file with the null codec.
func ReadFile(data []byte) (*File, error) {
	if !bytes.HasPrefix(data, Magic) {
		return nil, fmt.Errorf("%w: no magic", ErrCorrupt)
	}
	d := &decoder{b: data[len(Magic):]}
	meta := map[string][]byte{}
	for {
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		for i := int64(0); i < n; i++ {
			k, err := d.bytes()
			if err != nil {
				return nil, err
			}
			v, err := d.bytes()
			if err != nil {
				return nil, err
			}
			meta[string(k)] = v
		}
	}
	f := &File{Schema: meta["avro.schema"], Codec: string(meta["avro.codec"])}
	if f.Codec == "" {
		f.Codec = "null"
	}
	if f.Codec != "null" {
		return nil, fmt.Errorf("avro: codec %q is not supported", f.Codec)
	}
	s, err := ParseSchema(f.Schema)
	if err != nil {
		return nil, err
	}
	if len(d.b) < SyncSize {
		return nil, fmt.Errorf("%w: no sync marker", ErrCorrupt)
	}
	copy(f.Sync[:], d.b)
	d.b = d.b[SyncSize:]
	f.HeaderSize = len(data) - len(d.b)
	for len(d.b) > 0 {
		f.BlockOffsets = append(f.BlockOffsets, len(data)-len(d.b))
		n, err := d.long()
		if err != nil {
			return nil, err
		}
		size, err := d.long()
		if err != nil {
			return nil, err
		}
		// Every object of the schemas this package serves takes a byte
		// at least, so a count past the block's size is corrupt (and
		// bounds the work a hostile header can ask for).
		if n < 0 || size < 0 || size > int64(len(d.b)) || n > size {
			return nil, fmt.Errorf("%w: block of %d objects, %d bytes", ErrCorrupt, n, size)
		}
		bd := &decoder{b: d.b[:size]}
		d.b = d.b[size:]
		for i := int64(0); i < n; i++ {
			v, err := bd.value(s)
			if err != nil {
				return nil, err
			}
			f.Objects = append(f.Objects, v)
		}
		if len(bd.b) != 0 {
			return nil, fmt.Errorf("%w: %d bytes left in a block", ErrCorrupt, len(bd.b))
		}
		if len(d.b) < SyncSize || !bytes.Equal(d.b[:SyncSize], f.Sync[:]) {
			return nil, fmt.Errorf("%w: block without the sync marker", ErrCorrupt)
		}
		d.b = d.b[SyncSize:]
	}
	return f, nil
}

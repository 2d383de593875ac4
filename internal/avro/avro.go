// Package avro writes (and, for tests and tools, reads) Apache Avro 1.x
// object container files: the format of the change feed's chunk files
// ("Change feed support in Azure Blob Storage"). It covers the types the
// change feed's records use — null, boolean, int, long, double, string,
// bytes, records, maps, arrays and unions — with the "null" codec only.
//
// Values are Go values: nil (null), bool, int32/int64/int (int, long),
// float64 (double), string, []byte (bytes), map[string]any (a map, or a
// record by field name), []any (an array). A union takes the first
// branch the value fits: nil the null branch, a string the string
// branch, and so on.
//
// The object container format (Avro 1.11 specification, "Object
// Container Files"): the magic "Obj" 1, the file metadata as a map of
// bytes (avro.schema, avro.codec), a 16-byte sync marker, then blocks of
// objects, each a long count, a long byte size, the objects and the sync
// marker again.
package avro

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
)

// Magic starts every object container file.
var Magic = []byte{'O', 'b', 'j', 1}

// SyncSize is the length of a file's sync marker.
const SyncSize = 16

// Schema is a parsed Avro schema.
type Schema struct {
	Type   string // null, boolean, int, long, double, string, bytes, record, map, array, union
	Name   string // a record's
	Fields []Field
	Values *Schema   // a map's values
	Items  *Schema   // an array's items
	Union  []*Schema // a union's branches
}

// Field is a record field.
type Field struct {
	Name string
	Type *Schema
}

// ParseSchema parses the JSON form of a schema. Named types are defined
// inline; a reference to a record defined earlier by name is resolved.
func ParseSchema(js []byte) (*Schema, error) {
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		return nil, fmt.Errorf("avro: schema: %w", err)
	}
	return parse(v, map[string]*Schema{})
}

func parse(v any, named map[string]*Schema) (*Schema, error) {
	switch t := v.(type) {
	case string:
		switch t {
		case "null", "boolean", "int", "long", "float", "double", "string", "bytes":
			if t == "float" {
				return nil, errors.New("avro: float is not supported")
			}
			return &Schema{Type: t}, nil
		}
		if s, ok := named[t]; ok {
			return s, nil
		}
		return nil, fmt.Errorf("avro: unknown type %q", t)
	case []any:
		u := &Schema{Type: "union"}
		for _, b := range t {
			s, err := parse(b, named)
			if err != nil {
				return nil, err
			}
			u.Union = append(u.Union, s)
		}
		return u, nil
	case map[string]any:
		typ, _ := t["type"].(string)
		switch typ {
		case "record":
			name, _ := t["name"].(string)
			s := &Schema{Type: "record", Name: name}
			if name != "" {
				named[name] = s
			}
			fields, _ := t["fields"].([]any)
			for _, f := range fields {
				fm, ok := f.(map[string]any)
				if !ok {
					return nil, errors.New("avro: a record field is not an object")
				}
				fname, _ := fm["name"].(string)
				ft, err := parse(fm["type"], named)
				if err != nil {
					return nil, err
				}
				s.Fields = append(s.Fields, Field{Name: fname, Type: ft})
			}
			return s, nil
		case "map":
			vs, err := parse(t["values"], named)
			if err != nil {
				return nil, err
			}
			return &Schema{Type: "map", Values: vs}, nil
		case "array":
			is, err := parse(t["items"], named)
			if err != nil {
				return nil, err
			}
			return &Schema{Type: "array", Items: is}, nil
		case "":
			return nil, errors.New("avro: schema object without a type")
		default:
			return parse(typ, named)
		}
	}
	return nil, fmt.Errorf("avro: schema of unexpected form %T", v)
}

// AppendLong appends n in Avro's zig-zag variable-length encoding.
func AppendLong(b []byte, n int64) []byte {
	return binary.AppendUvarint(b, uint64(n<<1)^uint64(n>>63))
}

// AppendString appends s as Avro bytes or string: its length, then it.
func AppendString(b []byte, s string) []byte {
	b = AppendLong(b, int64(len(s)))
	return append(b, s...)
}

// Append appends the encoding of v as s.
func Append(b []byte, s *Schema, v any) ([]byte, error) {
	switch s.Type {
	case "null":
		if v != nil {
			return nil, fmt.Errorf("avro: %T for null", v)
		}
		return b, nil
	case "boolean":
		x, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("avro: %T for boolean", v)
		}
		if x {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case "int", "long":
		var n int64
		switch x := v.(type) {
		case int:
			n = int64(x)
		case int32:
			n = int64(x)
		case int64:
			n = x
		default:
			return nil, fmt.Errorf("avro: %T for %s", v, s.Type)
		}
		if s.Type == "int" && (n < math.MinInt32 || n > math.MaxInt32) {
			return nil, fmt.Errorf("avro: %d overflows int", n)
		}
		return AppendLong(b, n), nil
	case "double":
		x, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf("avro: %T for double", v)
		}
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(x)), nil
	case "string":
		x, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("avro: %T for string", v)
		}
		return AppendString(b, x), nil
	case "bytes":
		x, ok := v.([]byte)
		if !ok {
			return nil, fmt.Errorf("avro: %T for bytes", v)
		}
		return AppendString(b, string(x)), nil
	case "record":
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("avro: %T for record %s", v, s.Name)
		}
		var err error
		for _, f := range s.Fields {
			if b, err = Append(b, f.Type, m[f.Name]); err != nil {
				return nil, fmt.Errorf("%s.%s: %w", s.Name, f.Name, err)
			}
		}
		return b, nil
	case "map":
		m, ok := v.(map[string]any)
		if !ok && v != nil {
			return nil, fmt.Errorf("avro: %T for map", v)
		}
		if len(m) > 0 {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys) // deterministic output
			b = AppendLong(b, int64(len(keys)))
			var err error
			for _, k := range keys {
				b = AppendString(b, k)
				if b, err = Append(b, s.Values, m[k]); err != nil {
					return nil, err
				}
			}
		}
		return AppendLong(b, 0), nil
	case "array":
		a, ok := v.([]any)
		if !ok && v != nil {
			return nil, fmt.Errorf("avro: %T for array", v)
		}
		if len(a) > 0 {
			b = AppendLong(b, int64(len(a)))
			var err error
			for _, x := range a {
				if b, err = Append(b, s.Items, x); err != nil {
					return nil, err
				}
			}
		}
		return AppendLong(b, 0), nil
	case "union":
		for i, br := range s.Union {
			if fits(br, v) {
				return Append(AppendLong(b, int64(i)), br, v)
			}
		}
		return nil, fmt.Errorf("avro: %T fits no branch of the union", v)
	}
	return nil, fmt.Errorf("avro: cannot encode type %q", s.Type)
}

// fits reports whether v is of a branch of type s.
func fits(s *Schema, v any) bool {
	switch s.Type {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "int", "long":
		switch v.(type) {
		case int, int32, int64:
			return true
		}
	case "double":
		_, ok := v.(float64)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "bytes":
		_, ok := v.([]byte)
		return ok
	case "record", "map":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return false
}

// Writer builds an object container file in memory.
type Writer struct {
	schema *Schema
	sync   [SyncSize]byte
	buf    []byte
	header int
}

// NewWriter starts a file of objects of schema (its JSON form schemaJSON)
// with sync marker sync: the header is written at once. A caller that
// wants the same bytes for the same objects (a file served again as it
// grows) gives the same marker.
func NewWriter(schemaJSON []byte, sync [SyncSize]byte) (*Writer, error) {
	s, err := ParseSchema(schemaJSON)
	if err != nil {
		return nil, err
	}
	w := &Writer{schema: s, sync: sync}
	w.buf = append(w.buf, Magic...)
	// The metadata map: two entries, then the end of the map.
	w.buf = AppendLong(w.buf, 2)
	w.buf = AppendString(w.buf, "avro.codec")
	w.buf = AppendString(w.buf, "null")
	w.buf = AppendString(w.buf, "avro.schema")
	w.buf = AppendString(w.buf, string(schemaJSON))
	w.buf = AppendLong(w.buf, 0)
	w.buf = append(w.buf, sync[:]...)
	w.header = len(w.buf)
	return w, nil
}

// HeaderSize is the length of the file's header.
func (w *Writer) HeaderSize() int { return w.header }

// Block appends one block holding objects.
func (w *Writer) Block(objects ...any) error {
	var body []byte
	var err error
	for _, o := range objects {
		if body, err = Append(body, w.schema, o); err != nil {
			return err
		}
	}
	w.buf = AppendLong(w.buf, int64(len(objects)))
	w.buf = AppendLong(w.buf, int64(len(body)))
	w.buf = append(w.buf, body...)
	w.buf = append(w.buf, w.sync[:]...)
	return nil
}

// Bytes returns the file so far.
func (w *Writer) Bytes() []byte { return w.buf }

package avro

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

const testSchema = `{"type":"record","name":"Ev","fields":[
 {"name":"n","type":"long"},{"name":"i","type":"int"},{"name":"s","type":"string"},
 {"name":"b","type":"bytes"},{"name":"ok","type":"boolean"},{"name":"d","type":"double"},
 {"name":"opt","type":["null","string"]},
 {"name":"m","type":{"type":"map","values":"string"}},
 {"name":"a","type":{"type":"array","items":"long"}},
 {"name":"sub","type":["null",{"type":"record","name":"Sub","fields":[{"name":"x","type":"long"}]}]}]}`

func sync16(b byte) (s [SyncSize]byte) {
	for i := range s {
		s[i] = b + byte(i)
	}
	return s
}

// TestLongEncoding: zig-zag varints as the specification's table gives
// them (0 -> 00, -1 -> 01, 1 -> 02, -2 -> 03, 2 -> 04, -64 -> 7f, 64 ->
// 80 01).
func TestLongEncoding(t *testing.T) {
	for n, want := range map[int64][]byte{0: {0}, -1: {1}, 1: {2}, -2: {3}, 2: {4}, -64: {0x7f}, 64: {0x80, 1}} {
		if got := AppendLong(nil, n); !bytes.Equal(got, want) {
			t.Errorf("%d: % x, want % x", n, got, want)
		}
	}
}

// TestRoundTrip: a file written with two blocks reads back as the same
// objects, with its schema, codec and marker, blocks where the writer put
// them, and the header a prefix that does not change as blocks are added.
func TestRoundTrip(t *testing.T) {
	w, err := NewWriter([]byte(testSchema), sync16(7))
	if err != nil {
		t.Fatal(err)
	}
	header := append([]byte(nil), w.Bytes()...)
	objs := []any{
		map[string]any{"n": int64(-5), "i": int32(7), "s": "héllo", "b": []byte{0, 1, 2}, "ok": true, "d": 1.5,
			"opt": nil, "m": map[string]any{"k": "v", "a": "b"}, "a": []any{int64(1), int64(-1)}, "sub": map[string]any{"x": int64(9)}},
		map[string]any{"n": int64(1) << 40, "i": int32(-1), "s": "", "b": []byte{}, "ok": false, "d": -0.25,
			"opt": "set", "m": map[string]any{}, "a": []any{}, "sub": nil},
	}
	if err := w.Block(objs[0]); err != nil {
		t.Fatal(err)
	}
	first := len(w.Bytes())
	if err := w.Block(objs[1]); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(w.Bytes(), header) {
		t.Fatal("the header changed")
	}
	f, err := ReadFile(w.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if string(f.Schema) != testSchema || f.Codec != "null" || f.Sync != sync16(7) || f.HeaderSize != len(header) {
		t.Fatalf("header: %q %q %x %d", f.Schema, f.Codec, f.Sync, f.HeaderSize)
	}
	if !reflect.DeepEqual(f.BlockOffsets, []int{len(header), first}) {
		t.Fatalf("blocks at %v, want %d and %d", f.BlockOffsets, len(header), first)
	}
	want := []any{
		map[string]any{"n": int64(-5), "i": int32(7), "s": "héllo", "b": []byte{0, 1, 2}, "ok": true, "d": 1.5,
			"opt": nil, "m": map[string]any{"k": "v", "a": "b"}, "a": []any{int64(1), int64(-1)}, "sub": map[string]any{"x": int64(9)}},
		map[string]any{"n": int64(1) << 40, "i": int32(-1), "s": "", "b": []byte{}, "ok": false, "d": -0.25,
			"opt": "set", "m": map[string]any{}, "a": []any{}, "sub": nil},
	}
	if !reflect.DeepEqual(f.Objects, want) {
		t.Fatalf("objects:\n%#v\nwant\n%#v", f.Objects, want)
	}
}

// TestWriterRefusesWrongTypes: a value that does not fit its schema is an
// error, not a silently wrong file.
func TestWriterRefusesWrongTypes(t *testing.T) {
	w, err := NewWriter([]byte(`{"type":"record","name":"R","fields":[{"name":"i","type":"int"},{"name":"u","type":["null","long"]}]}`), sync16(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []any{
		map[string]any{"i": "x", "u": nil},
		map[string]any{"i": int64(1) << 40, "u": nil},
		map[string]any{"i": 1, "u": "x"},
		"not a record",
	} {
		if err := w.Block(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestReadFileRejectsCorruption: truncations and a wrong marker are
// errors.
func TestReadFileRejectsCorruption(t *testing.T) {
	w, _ := NewWriter([]byte(testSchema), sync16(1))
	_ = w.Block(map[string]any{"n": int64(1), "i": 1, "s": "x", "b": []byte{}, "ok": true, "d": 0.0, "opt": nil, "m": nil, "a": nil, "sub": nil})
	data := w.Bytes()
	for i := 0; i < len(data)-1; i++ {
		if _, err := ReadFile(data[:i]); err == nil && i != w.HeaderSize() {
			t.Fatalf("truncated at %d of %d: accepted", i, len(data))
		}
	}
	bad := append([]byte(nil), data...)
	bad[len(bad)-1] ^= 0xff
	if _, err := ReadFile(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("wrong marker: %v", err)
	}
}

// FuzzReadFile: the decoder never panics or runs away on any input, and
// whatever it accepts it decodes again to the same objects.
func FuzzReadFile(f *testing.F) {
	w, _ := NewWriter([]byte(testSchema), sync16(3))
	_ = w.Block(map[string]any{"n": int64(1), "i": 1, "s": "x", "b": []byte{1}, "ok": true, "d": 2.0, "opt": "o",
		"m": map[string]any{"k": "v"}, "a": []any{int64(3)}, "sub": map[string]any{"x": int64(1)}})
	f.Add(w.Bytes())
	f.Add([]byte("Obj\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadFile(data)
		if err != nil {
			return
		}
		b, err := ReadFile(data)
		if err != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("not deterministic: %v", err)
		}
	})
}

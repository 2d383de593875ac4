package arrowipc

import "encoding/binary"

// A minimal FlatBuffers serializer, just enough for the Arrow IPC
// Message, Schema, Field and RecordBatch tables (the FlatBuffers binary
// format: https://flatbuffers.dev/internals/). It lays objects out front
// to back: a table's vtable, then the table, then the objects it refers
// to, so every reference (an unsigned offset from the referring field)
// points forward, as the format requires. Tables start 4 bytes before an
// 8-byte boundary so that 8-byte scalars, which are placed first, are
// aligned; vectors of structs are 8-aligned likewise.

type fbNode interface {
	write(b *fbBuf) int // returns the position the reference points at
}

type fbBuf struct{ buf []byte }

func (b *fbBuf) pad(align, skew int) {
	for (len(b.buf)+skew)%align != 0 {
		b.buf = append(b.buf, 0)
	}
}

func (b *fbBuf) patchRef(at, target int) {
	binary.LittleEndian.PutUint32(b.buf[at:], uint32(target-at))
}

// finish serializes root as a whole FlatBuffer: a root offset, then the
// root table.
func finish(root fbNode) []byte {
	b := &fbBuf{buf: make([]byte, 4, 512)}
	pos := root.write(b)
	b.patchRef(0, pos)
	return b.buf
}

// fbField is one slot of a table: a scalar of 1, 2, 4 or 8 bytes, or a
// reference to another object. The zero value is an absent field.
type fbField struct {
	size   int
	scalar uint64
	ref    fbNode
}

func u8(v uint8) fbField   { return fbField{size: 1, scalar: uint64(v)} }
func i16(v int16) fbField  { return fbField{size: 2, scalar: uint64(uint16(v))} }
func i32(v int32) fbField  { return fbField{size: 4, scalar: uint64(uint32(v))} }
func i64(v int64) fbField  { return fbField{size: 8, scalar: uint64(v)} }
func ref(n fbNode) fbField { return fbField{size: 4, ref: n} }
func boolean(v bool) fbField {
	if v {
		return u8(1)
	}
	return u8(0)
}

// fbTable is a table; its slice index is the field id of the schema.
type fbTable []fbField

func (t fbTable) write(b *fbBuf) int {
	// The vtable: its size, the table's size, one offset per field.
	b.pad(2, 0)
	vt := len(b.buf)
	b.buf = append(b.buf, make([]byte, 4+2*len(t))...)
	// The table, 4 bytes before an 8-byte boundary.
	b.pad(8, 4)
	start := len(b.buf)
	b.buf = append(b.buf, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b.buf[start:], uint32(int32(start-vt)))
	at := make([]int, len(t))
	for _, size := range []int{8, 4, 2, 1} {
		for i, f := range t {
			if f.size != size {
				continue
			}
			at[i] = len(b.buf)
			var tmp [8]byte
			binary.LittleEndian.PutUint64(tmp[:], f.scalar)
			b.buf = append(b.buf, tmp[:size]...)
			binary.LittleEndian.PutUint16(b.buf[vt+4+2*i:], uint16(at[i]-start))
		}
	}
	binary.LittleEndian.PutUint16(b.buf[vt:], uint16(4+2*len(t)))
	binary.LittleEndian.PutUint16(b.buf[vt+2:], uint16(len(b.buf)-start))
	for i, f := range t {
		if f.ref != nil {
			b.patchRef(at[i], f.ref.write(b))
		}
	}
	return start
}

// fbString is a string: its length, its bytes and a terminating NUL.
type fbString string

func (s fbString) write(b *fbBuf) int {
	b.pad(4, 0)
	pos := len(b.buf)
	b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(len(s)))
	b.buf = append(b.buf, s...)
	b.buf = append(b.buf, 0)
	return pos
}

// fbTables is a vector of tables.
type fbTables []fbNode

func (v fbTables) write(b *fbBuf) int {
	b.pad(4, 0)
	pos := len(b.buf)
	b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(len(v)))
	slots := len(b.buf)
	b.buf = append(b.buf, make([]byte, 4*len(v))...)
	for i, n := range v {
		b.patchRef(slots+4*i, n.write(b))
	}
	return pos
}

// fbPairs is a vector of structs of two int64s (Arrow's FieldNode and
// Buffer), 8-aligned.
type fbPairs [][2]int64

func (v fbPairs) write(b *fbBuf) int {
	b.pad(8, 4)
	pos := len(b.buf)
	b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(len(v)))
	for _, p := range v {
		b.buf = binary.LittleEndian.AppendUint64(b.buf, uint64(p[0]))
		b.buf = binary.LittleEndian.AppendUint64(b.buf, uint64(p[1]))
	}
	return pos
}

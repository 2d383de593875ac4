package smb2

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// align8 rounds n up to a multiple of 8.
func align8(n int) int { return (n + 7) &^ 7 }

// enc appends little-endian fields to a byte slice. base is the offset of
// b[0] from the start of the SMB2 header, so that pad8 and off can produce
// the header-relative offsets and 8-byte alignment the protocol wants.
type enc struct {
	b    []byte
	base int
}

func (e *enc) u8(v uint8)      { e.b = append(e.b, v) }
func (e *enc) u16(v uint16)    { e.b = le.AppendUint16(e.b, v) }
func (e *enc) u32(v uint32)    { e.b = le.AppendUint32(e.b, v) }
func (e *enc) u64(v uint64)    { e.b = le.AppendUint64(e.b, v) }
func (e *enc) i64(v int64)     { e.b = le.AppendUint64(e.b, uint64(v)) }
func (e *enc) bytes(p []byte)  { e.b = append(e.b, p...) }
func (e *enc) zero(n int)      { e.b = append(e.b, make([]byte, n)...) }
func (e *enc) fileID(f FileID) { e.u64(f.Persistent); e.u64(f.Volatile) }

// off is the header-relative offset of the next byte appended.
func (e *enc) off() int { return e.base + len(e.b) }

// pad8 appends zero bytes until off() is a multiple of 8.
func (e *enc) pad8() { e.zero(align8(e.off()) - e.off()) }

// put32 patches a field written earlier at index i of e.b.
func (e *enc) put32(i int, v uint32) { le.PutUint32(e.b[i:], v) }

// minBody pads an encoded body with zero bytes up to the StructureSize:
// a body whose StructureSize is odd has a variable part of at least one
// byte even when it is empty (MS-SMB2 2.2: the odd size counts one byte of
// Buffer).
func (e *enc) minBody(structureSize int) {
	if len(e.b) < structureSize {
		e.zero(structureSize - len(e.b))
	}
}

// newBody starts the body of a message with its StructureSize.
func newBody(structureSize uint16, capHint int) *enc {
	e := &enc{b: make([]byte, 0, capHint), base: HeaderSize}
	e.u16(structureSize)
	return e
}

// utf16le encodes s as UTF-16LE without a terminator. Invalid UTF-8 in s
// becomes U+FFFD.
func utf16le(s string) []byte {
	b := make([]byte, 0, 2*len(s))
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			b = le.AppendUint16(b, uint16(r1))
			b = le.AppendUint16(b, uint16(r2))
			continue
		}
		b = le.AppendUint16(b, uint16(r))
	}
	return b
}

// decodeUTF16 decodes UTF-16LE. It fails on an odd length or an unpaired
// surrogate, so that every accepted name has exactly one spelling as a Go
// string and encodes back to the same bytes.
func decodeUTF16(b []byte) (string, bool) {
	if len(b)%2 != 0 {
		return "", false
	}
	out := make([]byte, 0, len(b)/2)
	for i := 0; i < len(b); i += 2 {
		u := rune(le.Uint16(b[i:]))
		switch {
		case u >= 0xD800 && u < 0xDC00:
			if i+4 > len(b) {
				return "", false
			}
			u2 := rune(le.Uint16(b[i+2:]))
			if u2 < 0xDC00 || u2 >= 0xE000 {
				return "", false
			}
			u = utf16.DecodeRune(u, u2)
			i += 2
		case u >= 0xDC00 && u < 0xE000:
			return "", false
		}
		out = utf8.AppendRune(out, u)
	}
	return string(out), true
}

// dec reads the fixed part of a decoded body. Its callers check the body
// length before reading, so the accessors do not check bounds themselves.
type dec struct {
	msg  []byte // the whole PDU, header included
	body []byte // msg[HeaderSize:]
}

func (d dec) u8(off int) uint8   { return d.body[off] }
func (d dec) u16(off int) uint16 { return le.Uint16(d.body[off:]) }
func (d dec) u32(off int) uint32 { return le.Uint32(d.body[off:]) }
func (d dec) u64(off int) uint64 { return le.Uint64(d.body[off:]) }
func (d dec) i64(off int) int64  { return int64(le.Uint64(d.body[off:])) }
func (d dec) fileID(off int) FileID {
	return FileID{Persistent: d.u64(off), Volatile: d.u64(off + 8)}
}

// buffer returns the variable field at header-relative offset off with
// length n. An empty field is always accepted (clients put arbitrary
// offsets beside a zero length). A non-empty field must start after the
// fixed part of the body (fixedLen bytes) and end inside the PDU.
func (d dec) buffer(off, n uint32, fixedLen int) ([]byte, bool) {
	if n == 0 {
		return nil, true
	}
	start := uint64(off)
	end := start + uint64(n)
	if start < uint64(HeaderSize+fixedLen) || end > uint64(len(d.msg)) {
		return nil, false
	}
	return d.msg[start:end:end], true
}

// decodeBody checks the header and the StructureSize of a PDU and returns
// a reader over its body. The body must hold at least the fixed part: the
// StructureSize rounded down to even (an odd StructureSize counts one byte
// of the variable part, which may be absent).
func decodeBody(msg []byte, cmd Command, what string, structureSize uint16) (dec, error) {
	if len(msg) < HeaderSize+2 {
		return dec{}, malformedCmd(cmd, what, "message shorter than header and StructureSize")
	}
	if le.Uint32(msg) != protocolSMB2 {
		return dec{}, malformedCmd(cmd, what, "not an SMB2 message")
	}
	body := msg[HeaderSize:]
	if got := le.Uint16(body); got != structureSize {
		return dec{}, malformedCmd(cmd, what, "StructureSize is not "+strconv.Itoa(int(structureSize)))
	}
	if len(body) < int(structureSize&^1) {
		return dec{}, malformedCmd(cmd, what, "body shorter than its fixed part")
	}
	return dec{msg: msg, body: body}, nil
}

// malformedCmd reports a bad message of command cmd.
func malformedCmd(cmd Command, what, reason string) error {
	return &MalformedError{What: cmd.String() + " " + what, Reason: reason}
}

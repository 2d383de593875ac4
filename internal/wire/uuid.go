package wire

import "encoding/hex"

// FormatUUID sets the version (4 random, 5 name-based) and the RFC 9562
// variant bits of u (RFC 9562 §4.1, §4.2) and returns its text form,
// eight, four, four, four and twelve lower-case hex digits joined by
// hyphens, in one allocation.
func FormatUUID(u *[16]byte, version byte) string {
	u[6] = u[6]&0x0f | version<<4
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

package wire

import (
	"strconv"
	"strings"
	"time"
)

// ticksAtUnixEpoch is the number of 100 ns .NET ticks from 0001-01-01 to
// 1970-01-01.
const ticksAtUnixEpoch = 621355968000000000

// NewETag returns a quoted, opaque blob/container ETag such as
// "0x8DE1B2C3D4E5F6A0000". Azure's ETags are "0x" plus the upper-case hex of
// the last-modified time in .NET ticks (100 ns since 0001-01-01), e.g.
// "0x8D6E09BA16A7494" recorded in 2019 (azure-sdk-for-js recordings); Azurite
// also emits "0x" + hex. Cerulean keeps that prefix so values look familiar
// and adds a self-delimiting suffix so that distinct (t, seq) pairs always
// give distinct ETags, even within one tick:
//
//	"0x" + HEX(ticks) + HEX2(t's nanoseconds mod 100) + HEX(seq) + HEX1(len(HEX(seq))-1)
//
// The string is decoded from the right (last digit = length of the seq
// part), which makes the mapping injective for every instant within about
// ±25,000 years of 1970 (beyond that the tick count would overflow int64).
// Instants are compared with time.Time.Equal semantics (the location does
// not matter).
func NewETag(t time.Time, seq uint64) string {
	var b strings.Builder
	b.Grow(40)
	ticks, sub := dotnetTicks(t)
	b.WriteString(`"0x`)
	b.WriteString(strings.ToUpper(strconv.FormatUint(uint64(ticks), 16)))
	if sub < 16 {
		b.WriteByte('0')
	}
	b.WriteString(strings.ToUpper(strconv.FormatUint(uint64(sub), 16)))
	s := strings.ToUpper(strconv.FormatUint(seq, 16))
	b.WriteString(s)
	b.WriteString(strings.ToUpper(strconv.FormatUint(uint64(len(s)-1), 16)))
	b.WriteByte('"')
	return b.String()
}

// dotnetTicks returns t as 100 ns ticks since 0001-01-01 UTC plus the
// remaining nanoseconds (0–99). It goes through Unix seconds, not
// UnixNano, so it is exact far beyond 2262. Instants before year 1 give
// negative ticks, which are formatted as their uint64 bit pattern (still
// injective).
func dotnetTicks(t time.Time) (ticks int64, sub int64) {
	sec := t.Unix()
	ns := int64(t.Nanosecond())
	return ticksAtUnixEpoch + sec*10_000_000 + ns/100, ns % 100
}

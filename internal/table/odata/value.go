// Package odata implements the subset of OData v3 that the Azure Table
// service accepts in $filter: a lexer and a recursive-descent parser that
// turn a filter string into a compiled predicate, typed EDM values and
// Azure's comparison rules. It knows nothing about HTTP or storage: callers
// hand it records through the Record interface.
package odata

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"time"
)

// Type is an Entity Data Model primitive type supported by Azure Tables.
type Type uint8

// The EDM types of Azure Table properties. Invalid is the zero value.
const (
	Invalid Type = iota
	String
	Binary
	Boolean
	DateTime
	Double
	Guid
	Int32
	Int64
)

var typeNames = [...]string{
	Invalid:  "",
	String:   "Edm.String",
	Binary:   "Edm.Binary",
	Boolean:  "Edm.Boolean",
	DateTime: "Edm.DateTime",
	Double:   "Edm.Double",
	Guid:     "Edm.Guid",
	Int32:    "Edm.Int32",
	Int64:    "Edm.Int64",
}

// String returns the EDM name, e.g. "Edm.Int64".
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return ""
}

// ParseType maps an EDM name ("Edm.Int64") to its Type.
func ParseType(name string) (Type, bool) {
	for t, n := range typeNames {
		if n != "" && n == name {
			return Type(t), true
		}
	}
	return Invalid, false
}

// Value is one typed EDM value. Which field holds the value depends on Type:
//
//	String   Bytes (UTF-8)
//	Binary   Bytes
//	Guid     Bytes (16 bytes, in the order of the hex text)
//	Boolean  Int (0 or 1)
//	Int32    Int
//	Int64    Int
//	DateTime Int (100 ns ticks since 0001-01-01T00:00:00Z)
//	Double   Float
//
// Values built by the parser and by record decoders may alias their input;
// treat Bytes as read-only.
type Value struct {
	Type  Type
	Bytes []byte
	Int   int64
	Float float64
}

// StringValue returns an Edm.String value.
func StringValue(s string) Value { return Value{Type: String, Bytes: []byte(s)} }

// Int32Value returns an Edm.Int32 value.
func Int32Value(i int32) Value { return Value{Type: Int32, Int: int64(i)} }

// Int64Value returns an Edm.Int64 value.
func Int64Value(i int64) Value { return Value{Type: Int64, Int: i} }

// DoubleValue returns an Edm.Double value.
func DoubleValue(f float64) Value { return Value{Type: Double, Float: f} }

// BoolValue returns an Edm.Boolean value.
func BoolValue(b bool) Value {
	if b {
		return Value{Type: Boolean, Int: 1}
	}
	return Value{Type: Boolean}
}

// BinaryValue returns an Edm.Binary value.
func BinaryValue(b []byte) Value { return Value{Type: Binary, Bytes: b} }

// DateTimeValue returns an Edm.DateTime value, truncated to 100 ns.
func DateTimeValue(t time.Time) Value { return Value{Type: DateTime, Int: Ticks(t)} }

// ticksAtUnixEpoch is the number of 100 ns ticks from 0001-01-01 to
// 1970-01-01.
const ticksAtUnixEpoch = 621355968000000000

// Ticks converts t to 100 ns ticks since 0001-01-01 UTC (the .NET
// DateTime representation, exact for every year 1–9999).
func Ticks(t time.Time) int64 {
	return ticksAtUnixEpoch + t.Unix()*10_000_000 + int64(t.Nanosecond())/100
}

// FromTicks converts .NET ticks back to a UTC time.
func FromTicks(ticks int64) time.Time {
	d := ticks - ticksAtUnixEpoch
	sec := d / 10_000_000
	rem := d % 10_000_000
	if rem < 0 {
		rem += 10_000_000
		sec--
	}
	return time.Unix(sec, rem*100).UTC()
}

// Time returns a DateTime value as a UTC time.
func (v Value) Time() time.Time { return FromTicks(v.Int) }

// Bool returns a Boolean value.
func (v Value) Bool() bool { return v.Int != 0 }

// Str returns a String value as a Go string (it copies).
func (v Value) Str() string { return string(v.Bytes) }

// MinDateTime and MaxDateTime bound Edm.DateTime (the .NET DateTime range).
var (
	MinDateTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxDateTime = time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)
)

// ErrDateTime is returned by ParseDateTime for malformed or out-of-range
// times.
var ErrDateTime = errors.New("odata: invalid Edm.DateTime value")

var dateTimeLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04",
}

// ParseDateTime parses an ISO 8601 date-time as Azure accepts it: a date,
// a time with optional seconds and fraction (kept to 100 ns), and "Z" or
// a numeric offset (converted to UTC). A missing zone means UTC.
func ParseDateTime(s string) (time.Time, error) {
	for _, l := range dateTimeLayouts {
		t, err := time.Parse(l, s)
		if err != nil {
			continue
		}
		t = t.UTC().Truncate(100 * time.Nanosecond)
		if t.Before(MinDateTime) || t.After(MaxDateTime) {
			return time.Time{}, ErrDateTime
		}
		return t, nil
	}
	return time.Time{}, ErrDateTime
}

// FormatDateTime renders t as Azure does: UTC with exactly 7 fractional
// digits, e.g. 2024-05-01T10:00:00.1234567Z.
func FormatDateTime(t time.Time) string {
	return t.UTC().Format(DateTimeLayout)
}

// DateTimeLayout is the time layout of FormatDateTime (for a UTC time).
const DateTimeLayout = "2006-01-02T15:04:05.0000000Z"

// ErrGuid is returned by ParseGuid for malformed GUIDs.
var ErrGuid = errors.New("odata: invalid Edm.Guid value")

// ParseGuid parses the 8-4-4-4-12 hex form (either case), optionally in
// braces, into 16 bytes.
func ParseGuid(s string) ([]byte, error) {
	if len(s) == 38 && s[0] == '{' && s[37] == '}' {
		s = s[1:37]
	}
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return nil, ErrGuid
	}
	h := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	b, err := hex.DecodeString(h)
	if err != nil {
		return nil, ErrGuid
	}
	return b, nil
}

// FormatGuid renders 16 bytes as a lower-case 8-4-4-4-12 GUID.
func FormatGuid(b []byte) string {
	if len(b) != 16 {
		return ""
	}
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Compare orders two values of the same type. ok is false when the types
// differ (Azure's rule: a comparison across EDM types matches nothing) or
// when either Double is NaN (IEEE: unordered).
func Compare(a, b Value) (c int, ok bool) {
	if a.Type != b.Type || a.Type == Invalid {
		return 0, false
	}
	switch a.Type {
	case String, Binary, Guid:
		return bytes.Compare(a.Bytes, b.Bytes), true
	case Boolean, Int32, Int64, DateTime:
		switch {
		case a.Int < b.Int:
			return -1, true
		case a.Int > b.Int:
			return 1, true
		}
		return 0, true
	case Double:
		if math.IsNaN(a.Float) || math.IsNaN(b.Float) {
			return 0, false
		}
		switch {
		case a.Float < b.Float:
			return -1, true
		case a.Float > b.Float:
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

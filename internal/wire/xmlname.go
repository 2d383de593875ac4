package wire

import (
	"encoding/xml"
	"strings"
)

// EncodedName is a name (or path, or prefix) element of a listing. A value
// with a character XML 1.0 cannot carry (control characters, U+FFFE,
// U+FFFF) is sent percent-encoded with Encoded="true", which the SDKs
// decode with url.QueryUnescape (azfile StringEncoded, azblob
// BlobName); plain encoding/xml would replace those characters with
// U+FFFD.
type EncodedName string

// MarshalXML implements xml.Marshaler.
func (n EncodedName) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	s := string(n)
	if XMLSafe(s) {
		return e.EncodeElement(s, start)
	}
	start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: "Encoded"}, Value: "true"})
	return e.EncodeElement(PercentEncode(s), start)
}

// XMLSafe reports whether every rune of s is an XML 1.0 Char.
func XMLSafe(s string) bool {
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
		case r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		default:
			return false
		}
	}
	return true
}

// PercentEncode escapes every byte but unreserved characters and '/', so
// that url.QueryUnescape (what the SDKs apply) restores s exactly.
func PercentEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

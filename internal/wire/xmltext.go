package wire

import (
	"bytes"
	"unicode/utf8"
)

// Why not xml.EscapeText: encoding/xml escapes '"', '\'', tab and line
// feed as numeric character references (&#34; &#39; &#x9; &#xA;). Every
// conforming parser decodes them, but the JavaScript SDKs parse responses
// with fast-xml-parser, which decodes only the five named entities: a
// queue message holding JSON came back with &#34; in place of its quotes,
// a blob named "it's" was listed as "it&#39;s". Azure writes these
// characters literally, so Cerulean does too.

// AppendXMLText appends s as XML character data the way Azure writes it:
// '&', '<' and '>' as named entities, carriage return as &#xD; (a literal
// one would be read back as a line feed), quotes, apostrophes, tab and line feed
// literally, and every byte sequence that is not an XML 1.0 character
// (invalid UTF-8, control characters, U+FFFE, U+FFFF) as U+FFFD, as
// encoding/xml does.
func AppendXMLText(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '&' && c != '<' && c != '>' {
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		var esc string
		switch {
		case r == '&':
			esc = "&amp;"
		case r == '<':
			esc = "&lt;"
		case r == '>':
			esc = "&gt;"
		case r == '\r':
			esc = "&#xD;"
		case r == '\t' || r == '\n':
			i += size
			continue
		case r == utf8.RuneError && size == 1, !xmlChar(r):
			esc = "\uFFFD"
		default:
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		b = append(b, esc...)
		i += size
		start = i
	}
	return append(b, s[start:]...)
}

func xmlChar(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' ||
		r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// TidyXML rewrites a document rendered by encoding/xml so that it reads as
// Azure's do (see AppendXMLText): in character data, &#34; &#39; &#x9;
// and &#xA; become the literal characters; in markup (attribute values),
// &#34; becomes &quot; and &#39; a literal apostrophe (attributes are
// double-quoted), while tab and line feed stay references because a
// parser turns literal ones in an attribute into spaces. encoding/xml
// escapes every '<' and '>' of a value, so the raw '<' and '>' of doc are
// exactly its markup. doc is returned as it is when it holds no numeric
// reference.
func TidyXML(doc []byte) []byte {
	i := bytes.Index(doc, []byte("&#"))
	if i < 0 {
		return doc
	}
	inTag := bytes.LastIndexByte(doc[:i], '<') > bytes.LastIndexByte(doc[:i], '>')
	out := make([]byte, i, len(doc)+16)
	copy(out, doc[:i])
	for i < len(doc) {
		c := doc[i]
		switch c {
		case '<':
			inTag = true
		case '>':
			inTag = false
		case '&':
			if rep, n, ok := tidyRef(doc[i:], inTag); ok {
				out = append(out, rep...)
				i += n
				continue
			}
		}
		out = append(out, c)
		i++
	}
	return out
}

func tidyRef(b []byte, inTag bool) (rep string, n int, ok bool) {
	for _, r := range [...]struct{ ref, text, attr string }{
		{"&#34;", `"`, "&quot;"},
		{"&#39;", "'", "'"},
		{"&#x9;", "\t", "&#x9;"},
		{"&#xA;", "\n", "&#xA;"},
	} {
		if bytes.HasPrefix(b, []byte(r.ref)) {
			if inTag {
				return r.attr, len(r.ref), true
			}
			return r.text, len(r.ref), true
		}
	}
	return "", 0, false
}

// AppendXMLAttr appends s as the value of a double-quoted attribute: as
// AppendXMLText, with '"' as &quot; and tab, line feed and carriage return
// as references (a parser reads literal ones in an attribute as spaces).
func AppendXMLAttr(b []byte, s string) []byte {
	start := len(b)
	b = AppendXMLText(b, s)
	if !bytes.ContainsAny(b[start:], "\"\t\n") {
		return b
	}
	text := string(b[start:])
	b = b[:start]
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '"':
			b = append(b, "&quot;"...)
		case '\t':
			b = append(b, "&#x9;"...)
		case '\n':
			b = append(b, "&#xA;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}

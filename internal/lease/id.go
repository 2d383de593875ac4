package lease

import (
	"crypto/rand"
	"strings"
)

// NewID returns a random (version 4) lease ID in lowercase
// 8-4-4-4-12 form.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatID(b)
}

// ParseID reports whether s is a GUID in one of the string forms .NET's
// Guid(String) constructor accepts and Azure therefore takes for lease IDs:
// 32 hex digits, 8-4-4-4-12 with hyphens, or the hyphenated form wrapped
// in braces or parentheses. It returns the canonical lowercase hyphenated
// form, which is how IDs are stored and compared.
func ParseID(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) == 38 && (s[0] == '{' && s[37] == '}' || s[0] == '(' && s[37] == ')') {
		s = s[1:37]
	}
	var hex string
	switch len(s) {
	case 32:
		hex = s
	case 36:
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return "", false
		}
		hex = s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	default:
		return "", false
	}
	var b [16]byte
	for i := range 16 {
		hi, ok1 := unhex(hex[2*i])
		lo, ok2 := unhex(hex[2*i+1])
		if !ok1 || !ok2 {
			return "", false
		}
		b[i] = hi<<4 | lo
	}
	return formatID(b), true
}

// sameID reports whether a and b name the same lease. An empty ID never
// matches. IDs that are not GUIDs compare case-insensitively.
func sameID(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ca, oka := ParseID(a)
	cb, okb := ParseID(b)
	if oka && okb {
		return ca == cb
	}
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func formatID(b [16]byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, v := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, digits[v>>4], digits[v&0x0f])
	}
	return string(out)
}

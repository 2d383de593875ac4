package kv

// Keys are order-preserving tuples: each component is escaped so that 0x00
// becomes 0x00 0xFF, and terminated with 0x00 0x01. Comparing two encoded
// tuples bytewise gives the same result as comparing their components in
// order, and the encoding of a tuple is never a prefix of a different tuple
// with a different component at the same position, so a prefix scan over
// ("blob", account, container) cannot leak into container "c" + "x".

// Key encodes components as one ordered key.
func Key(parts ...string) []byte {
	n := 0
	for _, p := range parts {
		n += len(p) + 2
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = AppendComponent(b, p)
	}
	return b
}

// AppendComponent appends one escaped, terminated component to b.
func AppendComponent(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0 {
			b = append(b, 0, 0xFF)
			continue
		}
		b = append(b, c)
	}
	return append(b, 0, 1)
}

// AppendPartial appends s escaped but without the terminator, for prefix
// scans on the beginning of a component (List Blobs prefix=).
func AppendPartial(b []byte, s string) []byte {
	k := AppendComponent(b, s)
	return k[:len(k)-2]
}

// PrefixEnd returns the smallest key greater than every key starting with
// prefix, or nil when there is none.
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// Split decodes a key built by Key into its components. It returns false if
// the key is malformed.
func Split(key []byte) ([]string, bool) {
	var parts []string
	var cur []byte
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c != 0 {
			cur = append(cur, c)
			continue
		}
		if i+1 >= len(key) {
			return nil, false
		}
		switch key[i+1] {
		case 0xFF:
			cur = append(cur, 0)
		case 1:
			parts = append(parts, string(cur))
			cur = cur[:0]
		default:
			return nil, false
		}
		i++
	}
	if len(cur) != 0 {
		return nil, false
	}
	return parts, true
}

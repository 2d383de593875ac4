package ntlm

import "errors"

// The SPNEGO tokens are tiny and fixed in shape, so they are written with
// hand-made DER templates and read with a small, tolerant TLV reader rather
// than encoding/asn1 (whose struct mapping cannot keep the raw mechTypes
// bytes that the mechListMIC covers, and which rejects harmless quirks).

var errDER = errors.New("malformed DER")

// maxDERLen bounds the length field accepted by readTLV; SMB2 security
// buffers are far smaller.
const maxDERLen = 1 << 20

// readTLV splits the first DER element off b. It returns the tag byte, the
// element's contents, the whole element (tag, length and contents) and the
// bytes that follow it. Only single-byte tags and definite lengths (short
// form, or long form of up to four bytes, minimal or not) are accepted.
func readTLV(b []byte) (tag byte, val, whole, rest []byte, err error) {
	if len(b) < 2 {
		return 0, nil, nil, nil, errDER
	}
	tag = b[0]
	if tag&0x1f == 0x1f {
		return 0, nil, nil, nil, errDER // high tag number form
	}
	n := int(b[1])
	hdr := 2
	if n&0x80 != 0 {
		k := n & 0x7f
		if k == 0 || k > 4 || len(b) < 2+k {
			return 0, nil, nil, nil, errDER // indefinite or oversized length
		}
		n = 0
		for _, c := range b[2 : 2+k] {
			n = n<<8 | int(c)
		}
		hdr += k
	}
	if n > maxDERLen || n > len(b)-hdr {
		return 0, nil, nil, nil, errDER
	}
	return tag, b[hdr : hdr+n], b[:hdr+n], b[hdr+n:], nil
}

// expectTLV reads one element and checks its tag.
func expectTLV(b []byte, want byte) (val, rest []byte, err error) {
	tag, val, _, rest, err := readTLV(b)
	if err != nil {
		return nil, nil, err
	}
	if tag != want {
		return nil, nil, errDER
	}
	return val, rest, nil
}

// tlv encodes one DER element whose contents are the concatenation of parts.
func tlv(tag byte, parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n+6)
	out = append(out, tag)
	switch {
	case n < 0x80:
		out = append(out, byte(n))
	case n < 0x100:
		out = append(out, 0x81, byte(n))
	case n < 0x10000:
		out = append(out, 0x82, byte(n>>8), byte(n))
	default:
		out = append(out, 0x83, byte(n>>16), byte(n>>8), byte(n))
	}
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

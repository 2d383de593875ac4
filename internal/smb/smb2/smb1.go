package smb2

import "bytes"

// SMB1 negotiate (MS-SMB2 3.3.5.3.1): a client that starts with an SMB1
// SMB_COM_NEGOTIATE listing "SMB 2.???" gets an SMB2 NEGOTIATE response
// with DialectRevision 0x02FF; one that does not is disconnected.

const smb1CommandNegotiate = 0x72

// SMB1 dialect strings that mean "I speak SMB2".
const (
	SMB1DialectSMB2Wildcard = "SMB 2.???"
	SMB1DialectSMB2002      = "SMB 2.002"
)

// DecodeSMB1Negotiate decodes an SMB1 SMB_COM_NEGOTIATE request (MS-CIFS
// 2.2.4.52.1): a 32-byte SMB1 header with Command 0x72, WordCount 0,
// ByteCount, then dialects, each a 0x02 byte and a NUL-terminated string.
// It returns the dialect strings.
func DecodeSMB1Negotiate(payload []byte) ([]string, error) {
	const what = "SMB1 NEGOTIATE"
	if len(payload) < 35 || le.Uint32(payload) != protocolSMB1 {
		return nil, malformedStruct(what, "not an SMB1 message")
	}
	if payload[4] != smb1CommandNegotiate {
		return nil, malformedStruct(what, "not a NEGOTIATE")
	}
	if payload[32] != 0 {
		return nil, malformedStruct(what, "WordCount is not 0")
	}
	n := int(le.Uint16(payload[33:]))
	if 35+n > len(payload) {
		return nil, malformedStruct(what, "ByteCount exceeds the message")
	}
	b := payload[35 : 35+n]
	var out []string
	for len(b) > 0 {
		if b[0] != 0x02 {
			return nil, malformedStruct(what, "dialect without BufferFormat 0x02")
		}
		end := bytes.IndexByte(b[1:], 0)
		if end < 0 {
			return nil, malformedStruct(what, "dialect string not terminated")
		}
		out = append(out, string(b[1:1+end]))
		b = b[2+end:]
	}
	return out, nil
}

// EncodeSMB1Negotiate builds an SMB1 SMB_COM_NEGOTIATE request listing
// dialects (for tests of the SMB1 upgrade path).
func EncodeSMB1Negotiate(dialects []string) []byte {
	var body []byte
	for _, d := range dialects {
		body = append(body, 0x02)
		body = append(body, d...)
		body = append(body, 0)
	}
	b := make([]byte, 32, 35+len(body))
	le.PutUint32(b, protocolSMB1)
	b[4] = smb1CommandNegotiate
	b[9] = 0x18  // Flags: case-insensitive, canonicalized paths
	b[10] = 0x01 // Flags2 low byte: long names
	b[11] = 0xC8 // Flags2 high byte: extended security, NT status, unicode
	b = append(b, 0)
	b = le.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}

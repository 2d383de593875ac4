package ntlm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unicode/utf16"
)

// NTLMSSP negotiate flags (MS-NLMP 2.2.2.5).
const (
	flagUnicode                 = 0x00000001
	flagOEM                     = 0x00000002
	flagRequestTarget           = 0x00000004
	flagSign                    = 0x00000010
	flagSeal                    = 0x00000020
	flagLMKey                   = 0x00000080
	flagNTLM                    = 0x00000200
	flagAnonymous               = 0x00000800
	flagAlwaysSign              = 0x00008000
	flagTargetTypeDomain        = 0x00010000
	flagTargetTypeServer        = 0x00020000
	flagExtendedSecurity        = 0x00080000 // NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY
	flagIdentify                = 0x00100000
	flagTargetInfo              = 0x00800000
	flagVersion                 = 0x02000000
	flag128                     = 0x20000000
	flagKeyExch                 = 0x40000000
	flag56                      = 0x80000000
	msgNegotiate         uint32 = 1
	msgChallenge         uint32 = 2
	msgAuthenticate      uint32 = 3
)

// echoedFlags are the client's NEGOTIATE flags the server grants when asked
// (MS-NLMP 3.2.5.1.1 as Samba applies it). LM_KEY is never granted: only
// NTLMv2 is accepted, and it is exclusive with extended session security.
const echoedFlags = flagUnicode | flagRequestTarget | flagSign | flagSeal | flagNTLM |
	flagAlwaysSign | flagExtendedSecurity | flagIdentify | flagVersion | flag128 | flagKeyExch | flag56

// AV pair IDs (MS-NLMP 2.2.2.1).
const (
	avEOL             = 0
	avNbComputerName  = 1
	avNbDomainName    = 2
	avDNSComputerName = 3
	avDNSDomainName   = 4
	avTimestamp       = 7
	avFlags           = 6
	avFlagMIC         = 0x00000002 // MsvAvFlags: the AUTHENTICATE message carries a MIC
)

// serverVersion is the VERSION field of the CHALLENGE: 6.1 build 0,
// NTLMSSP revision 15, as smbd sends it.
var serverVersion = []byte{6, 1, 0, 0, 0, 0, 0, 15}

var ntlmsspSignature = []byte("NTLMSSP\x00")

// errNTLMSSP reports a message that does not decode.
var errNTLMSSP = errors.New("malformed NTLMSSP message")

// isNTLMSSP reports whether b starts like an NTLMSSP message (the raw,
// SPNEGO-less form smbtorture sends when the NEGOTIATE hint is empty).
func isNTLMSSP(b []byte) bool { return bytes.HasPrefix(b, ntlmsspSignature) }

// messageType checks the signature and returns the message type.
func messageType(b []byte) (uint32, error) {
	if len(b) < 12 || !isNTLMSSP(b) {
		return 0, errNTLMSSP
	}
	return binary.LittleEndian.Uint32(b[8:]), nil
}

// parseNegotiate returns the flags of a NEGOTIATE message (MS-NLMP 2.2.1.1).
// The optional domain and workstation fields carry nothing the server needs
// and are not decoded.
func parseNegotiate(b []byte) (flags uint32, err error) {
	typ, err := messageType(b)
	if err != nil {
		return 0, err
	}
	if typ != msgNegotiate || len(b) < 16 {
		return 0, fmt.Errorf("%w: want NEGOTIATE, got type %d", errNTLMSSP, typ)
	}
	return binary.LittleEndian.Uint32(b[12:]), nil
}

// negotiateFlags chooses the CHALLENGE flags for a client's NEGOTIATE flags.
func negotiateFlags(client uint32) uint32 {
	f := client&echoedFlags | flagTargetInfo
	if f&flagUnicode == 0 && client&flagOEM != 0 {
		f |= flagOEM
	}
	if client&flagRequestTarget != 0 {
		f |= flagTargetTypeServer
	}
	return f
}

// avPair is one entry of an AV_PAIR list.
type avPair struct {
	id  uint16
	val []byte
}

// appendAVPairs encodes pairs followed by MsvAvEOL.
func appendAVPairs(dst []byte, pairs []avPair) []byte {
	for _, p := range pairs {
		dst = binary.LittleEndian.AppendUint16(dst, p.id)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(p.val)))
		dst = append(dst, p.val...)
	}
	return append(dst, 0, 0, 0, 0)
}

// parseAVPairs decodes an AV_PAIR list up to MsvAvEOL. Bytes after the EOL
// (NTLMv2 blobs are zero-padded) are ignored; a list that runs out before
// its EOL is an error.
func parseAVPairs(b []byte) ([]avPair, error) {
	var pairs []avPair
	for {
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: AV pair list without EOL", errNTLMSSP)
		}
		id := binary.LittleEndian.Uint16(b)
		n := int(binary.LittleEndian.Uint16(b[2:]))
		if id == avEOL {
			return pairs, nil
		}
		if len(b) < 4+n {
			return nil, fmt.Errorf("%w: AV pair %d overruns", errNTLMSSP, id)
		}
		pairs = append(pairs, avPair{id: id, val: b[4 : 4+n]})
		b = b[4+n:]
	}
}

// challengeParams are the server-chosen parts of a CHALLENGE message.
type challengeParams struct {
	flags      uint32
	challenge  [8]byte
	targetName string
	nbDomain   string
	nbComputer string
	dnsDomain  string
	dnsName    string
	now        time.Time
}

// buildChallenge encodes a CHALLENGE message (MS-NLMP 2.2.1.2). The AV pairs
// come in smbd's order: NbDomainName, NbComputerName, DnsDomainName,
// DnsComputerName, Timestamp.
func buildChallenge(p challengeParams) []byte {
	info := appendAVPairs(nil, []avPair{
		{avNbDomainName, utf16le(p.nbDomain)},
		{avNbComputerName, utf16le(p.nbComputer)},
		{avDNSDomainName, utf16le(p.dnsDomain)},
		{avDNSComputerName, utf16le(p.dnsName)},
		{avTimestamp, binary.LittleEndian.AppendUint64(nil, filetime(p.now))},
	})
	var target []byte
	if p.flags&flagRequestTarget != 0 {
		target = encodeString(p.targetName, p.flags)
	}
	hdr := 48
	if p.flags&flagVersion != 0 {
		hdr += 8
	}
	b := make([]byte, 0, hdr+len(target)+len(info))
	b = append(b, ntlmsspSignature...)
	b = binary.LittleEndian.AppendUint32(b, msgChallenge)
	b = appendField(b, len(target), hdr)
	b = binary.LittleEndian.AppendUint32(b, p.flags)
	b = append(b, p.challenge[:]...)
	b = append(b, make([]byte, 8)...) // Reserved
	b = appendField(b, len(info), hdr+len(target))
	if p.flags&flagVersion != 0 {
		b = append(b, serverVersion...)
	}
	b = append(b, target...)
	return append(b, info...)
}

// appendField encodes a Len/MaxLen/Offset payload descriptor.
func appendField(b []byte, n, off int) []byte {
	b = binary.LittleEndian.AppendUint16(b, uint16(n))
	b = binary.LittleEndian.AppendUint16(b, uint16(n))
	return binary.LittleEndian.AppendUint32(b, uint32(off))
}

// authenticateMsg is a decoded AUTHENTICATE message (MS-NLMP 2.2.1.3).
type authenticateMsg struct {
	lmResponse   []byte
	ntResponse   []byte
	domain       []byte // encoded as the negotiated character set
	user         []byte
	workstation  []byte
	encryptedKey []byte // EncryptedRandomSessionKey
	flags        uint32
	payloadStart int // lowest offset of a non-empty payload field; len(raw) if none
}

// authHeaderLen is the fixed part of an AUTHENTICATE message up to and
// including NegotiateFlags; Version (8) and MIC (16) may follow.
const authHeaderLen = 64

// micOffset is where the MIC sits when present: after the Version field.
const micOffset = 72

// parseAuthenticate decodes an AUTHENTICATE message, checking that every
// payload field lies inside it.
func parseAuthenticate(b []byte) (*authenticateMsg, error) {
	typ, err := messageType(b)
	if err != nil {
		return nil, err
	}
	if typ != msgAuthenticate || len(b) < authHeaderLen {
		return nil, fmt.Errorf("%w: want AUTHENTICATE, got type %d (%d bytes)", errNTLMSSP, typ, len(b))
	}
	m := &authenticateMsg{payloadStart: len(b)}
	fields := []*[]byte{&m.lmResponse, &m.ntResponse, &m.domain, &m.user, &m.workstation, &m.encryptedKey}
	for i, dst := range fields {
		at := 12 + 8*i
		n := int(binary.LittleEndian.Uint16(b[at:]))
		off := int(binary.LittleEndian.Uint32(b[at+4:]))
		if n == 0 {
			continue
		}
		if off < authHeaderLen || off > len(b) || n > len(b)-off {
			return nil, fmt.Errorf("%w: field %d (offset %d, length %d) outside the %d-byte message", errNTLMSSP, i, off, n, len(b))
		}
		*dst = b[off : off+n]
		m.payloadStart = min(m.payloadStart, off)
	}
	m.flags = binary.LittleEndian.Uint32(b[60:])
	return m, nil
}

// ntlmv2Response is the parsed NtChallengeResponse of NTLMv2
// (MS-NLMP 2.2.2.8): NTProofStr followed by the client's blob.
type ntlmv2Response struct {
	ntProofStr []byte // 16 bytes
	blob       []byte // NTLMv2_CLIENT_CHALLENGE: the HMAC input after the server challenge
	avFlags    uint32 // MsvAvFlags from the blob's AV pairs, 0 if absent
}

// ntlmv2BlobHeader is RespType, HiRespType, Reserved1..2, TimeStamp,
// ChallengeFromClient and Reserved3: the fixed part before the AV pairs.
const ntlmv2BlobHeader = 28

// parseNTLMv2Response splits an NTLMv2 NtChallengeResponse. Responses of 24
// bytes are NTLMv1 and refused.
func parseNTLMv2Response(nt []byte) (*ntlmv2Response, error) {
	if len(nt) < 16+ntlmv2BlobHeader {
		return nil, fmt.Errorf("%w: NT response of %d bytes is not NTLMv2", errNTLMSSP, len(nt))
	}
	r := &ntlmv2Response{ntProofStr: nt[:16], blob: nt[16:]}
	if r.blob[0] != 1 || r.blob[1] != 1 {
		return nil, fmt.Errorf("%w: NTLMv2 blob version %d.%d", errNTLMSSP, r.blob[0], r.blob[1])
	}
	pairs, err := parseAVPairs(r.blob[ntlmv2BlobHeader:])
	if err != nil {
		return nil, err
	}
	for _, p := range pairs {
		if p.id == avFlags && len(p.val) == 4 {
			r.avFlags = binary.LittleEndian.Uint32(p.val)
		}
	}
	return r, nil
}

// utf16le encodes s as UTF-16 little-endian.
func utf16le(s string) []byte {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		binary.LittleEndian.PutUint16(b[2*i:], c)
	}
	return b
}

// encodeString encodes s in the negotiated character set.
func encodeString(s string, flags uint32) []byte {
	if flags&flagUnicode != 0 {
		return utf16le(s)
	}
	return []byte(s)
}

// decodeString decodes a message string in the negotiated character set:
// UTF-16LE with NTLMSSP_NEGOTIATE_UNICODE, otherwise OEM, read as Latin-1.
func decodeString(b []byte, flags uint32) (string, error) {
	if flags&flagUnicode == 0 {
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return string(r), nil
	}
	if len(b)%2 != 0 {
		return "", fmt.Errorf("%w: odd-length UTF-16 string", errNTLMSSP)
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u)), nil
}

// unixToFiletime is the number of 100-nanosecond intervals between
// 1601-01-01 (the FILETIME origin) and 1970-01-01.
const unixToFiletime = 116444736000000000

// filetime converts t to 100-nanosecond intervals since 1601.
func filetime(t time.Time) uint64 {
	return uint64(t.Unix())*1e7 + uint64(t.Nanosecond())/100 + unixToFiletime
}

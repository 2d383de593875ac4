package smb2

import "fmt"

// NegotiateContextType identifies a 3.1.1 negotiate context (MS-SMB2 2.2.3.1).
type NegotiateContextType uint16

// Negotiate context types.
const (
	ContextPreauthIntegrity NegotiateContextType = 0x0001
	ContextEncryption       NegotiateContextType = 0x0002
	ContextCompression      NegotiateContextType = 0x0003
	ContextNetname          NegotiateContextType = 0x0005
	ContextTransport        NegotiateContextType = 0x0006
	ContextRDMATransform    NegotiateContextType = 0x0007
	ContextSigning          NegotiateContextType = 0x0008
)

// HashSHA512 is the only preauth integrity hash algorithm (MS-SMB2 2.2.3.1.1).
const HashSHA512 uint16 = 0x0001

// Encryption cipher IDs (MS-SMB2 2.2.3.1.2); NewCipher implements them
// (transform.go).
const (
	CipherAES128CCM uint16 = 0x0001
	CipherAES128GCM uint16 = 0x0002
	CipherAES256CCM uint16 = 0x0003
	CipherAES256GCM uint16 = 0x0004
)

// SigningAlgorithm is a signing algorithm ID (MS-SMB2 2.2.3.1.7).
type SigningAlgorithm uint16

// Signing algorithms. Sign and Verify implement HMAC-SHA256 and AES-CMAC.
const (
	SigningHMACSHA256 SigningAlgorithm = 0x0000
	SigningAESCMAC    SigningAlgorithm = 0x0001
	SigningAESGMAC    SigningAlgorithm = 0x0002
)

func (a SigningAlgorithm) String() string {
	switch a {
	case SigningHMACSHA256:
		return "HMAC-SHA256"
	case SigningAESCMAC:
		return "AES-128-CMAC"
	case SigningAESGMAC:
		return "AES-128-GMAC"
	}
	return fmt.Sprintf("SigningAlgorithm(%d)", uint16(a))
}

// NegotiateContext is one negotiate context, undecoded: its type and its
// Data (without the 8-byte context header and padding).
type NegotiateContext struct {
	Type NegotiateContextType
	Data []byte
}

// PreauthIntegrityCapabilities is the PREAUTH_INTEGRITY context (MS-SMB2
// 2.2.3.1.1).
type PreauthIntegrityCapabilities struct {
	HashAlgorithms []uint16
	Salt           []byte
}

// DecodePreauthIntegrityCapabilities decodes a PREAUTH_INTEGRITY context's
// Data. HashAlgorithmCount 0 is invalid (MS-SMB2 3.3.5.3.1).
func DecodePreauthIntegrityCapabilities(data []byte) (PreauthIntegrityCapabilities, error) {
	const what = "PREAUTH_INTEGRITY_CAPABILITIES"
	if len(data) < 4 {
		return PreauthIntegrityCapabilities{}, malformedCmd(CommandNegotiate, what, "shorter than 4 bytes")
	}
	count, saltLen := int(le.Uint16(data)), int(le.Uint16(data[2:]))
	if count == 0 {
		return PreauthIntegrityCapabilities{}, malformedCmd(CommandNegotiate, what, "HashAlgorithmCount is 0")
	}
	if 4+2*count+saltLen > len(data) {
		return PreauthIntegrityCapabilities{}, malformedCmd(CommandNegotiate, what, "algorithms and salt exceed DataLength")
	}
	p := PreauthIntegrityCapabilities{HashAlgorithms: make([]uint16, count)}
	for i := range count {
		p.HashAlgorithms[i] = le.Uint16(data[4+2*i:])
	}
	if saltLen > 0 {
		p.Salt = append([]byte(nil), data[4+2*count:4+2*count+saltLen]...)
	}
	return p, nil
}

// Context encodes p as a negotiate context.
func (p PreauthIntegrityCapabilities) Context() NegotiateContext {
	e := enc{}
	e.u16(uint16(len(p.HashAlgorithms)))
	e.u16(uint16(len(p.Salt)))
	for _, a := range p.HashAlgorithms {
		e.u16(a)
	}
	e.bytes(p.Salt)
	return NegotiateContext{Type: ContextPreauthIntegrity, Data: e.b}
}

// EncryptionCapabilities is the ENCRYPTION context (MS-SMB2 2.2.3.1.2).
type EncryptionCapabilities struct {
	Ciphers []uint16
}

// DecodeEncryptionCapabilities decodes an ENCRYPTION context's Data.
// CipherCount 0 is invalid.
func DecodeEncryptionCapabilities(data []byte) (EncryptionCapabilities, error) {
	ids, err := decodeIDList(data, "ENCRYPTION_CAPABILITIES")
	return EncryptionCapabilities{Ciphers: ids}, err
}

// Context encodes c as a negotiate context.
func (c EncryptionCapabilities) Context() NegotiateContext {
	return NegotiateContext{Type: ContextEncryption, Data: encodeIDList(c.Ciphers)}
}

// SigningCapabilities is the SIGNING context (MS-SMB2 2.2.3.1.7).
type SigningCapabilities struct {
	Algorithms []SigningAlgorithm
}

// DecodeSigningCapabilities decodes a SIGNING context's Data.
// SigningAlgorithmCount 0 is invalid.
func DecodeSigningCapabilities(data []byte) (SigningCapabilities, error) {
	ids, err := decodeIDList(data, "SIGNING_CAPABILITIES")
	if err != nil {
		return SigningCapabilities{}, err
	}
	s := SigningCapabilities{Algorithms: make([]SigningAlgorithm, len(ids))}
	for i, id := range ids {
		s.Algorithms[i] = SigningAlgorithm(id)
	}
	return s, nil
}

// Context encodes s as a negotiate context.
func (s SigningCapabilities) Context() NegotiateContext {
	ids := make([]uint16, len(s.Algorithms))
	for i, a := range s.Algorithms {
		ids[i] = uint16(a)
	}
	return NegotiateContext{Type: ContextSigning, Data: encodeIDList(ids)}
}

// decodeIDList decodes Count(2) followed by Count 2-byte IDs.
func decodeIDList(data []byte, what string) ([]uint16, error) {
	if len(data) < 2 {
		return nil, malformedCmd(CommandNegotiate, what, "shorter than 2 bytes")
	}
	count := int(le.Uint16(data))
	if count == 0 {
		return nil, malformedCmd(CommandNegotiate, what, "count is 0")
	}
	if 2+2*count > len(data) {
		return nil, malformedCmd(CommandNegotiate, what, "IDs exceed DataLength")
	}
	ids := make([]uint16, count)
	for i := range ids {
		ids[i] = le.Uint16(data[2+2*i:])
	}
	return ids, nil
}

func encodeIDList(ids []uint16) []byte {
	e := enc{}
	e.u16(uint16(len(ids)))
	for _, id := range ids {
		e.u16(id)
	}
	return e.b
}

// decodeNegotiateContexts reads count contexts starting at header-relative
// offset off. Each context after the first starts 8-byte aligned; the
// padding after the last may be absent.
func decodeNegotiateContexts(d dec, off uint32, count int, minOff int, what string) ([]NegotiateContext, error) {
	if count == 0 {
		return nil, nil
	}
	if int64(off) < int64(minOff) {
		return nil, malformedCmd(CommandNegotiate, what, "NegotiateContextOffset overlaps the fixed part")
	}
	ctxs := make([]NegotiateContext, 0, min(count, len(d.msg)/8))
	pos := int64(off)
	for i := range count {
		if i > 0 {
			pos = (pos + 7) &^ 7
		}
		if pos+8 > int64(len(d.msg)) {
			return nil, malformedCmd(CommandNegotiate, what, "negotiate context outside the message")
		}
		t := NegotiateContextType(le.Uint16(d.msg[pos:]))
		n := int64(le.Uint16(d.msg[pos+2:]))
		if pos+8+n > int64(len(d.msg)) {
			return nil, malformedCmd(CommandNegotiate, what, "negotiate context data outside the message")
		}
		var data []byte
		if n > 0 {
			data = d.msg[pos+8 : pos+8+n : pos+8+n]
		}
		ctxs = append(ctxs, NegotiateContext{Type: t, Data: data})
		pos += 8 + n
	}
	return ctxs, nil
}

// appendNegotiateContexts writes ctxs, each 8-byte aligned (the caller has
// aligned the first).
func appendNegotiateContexts(e *enc, ctxs []NegotiateContext) {
	for i, c := range ctxs {
		if i > 0 {
			e.pad8()
		}
		if len(c.Data) > 0xFFFF {
			panic("smb2: negotiate context data longer than 65535 bytes")
		}
		e.u16(uint16(c.Type))
		e.u16(uint16(len(c.Data)))
		e.u32(0)
		e.bytes(c.Data)
	}
}

// NegotiateRequest is an SMB2 NEGOTIATE request (MS-SMB2 2.2.3).
type NegotiateRequest struct {
	SecurityMode SecurityMode
	Capabilities Capabilities
	ClientGUID   [16]byte
	// ClientStartTime is the 8-byte field that 3.1.1 uses for the context
	// offset and count; it is kept only when Dialects lacks 3.1.1.
	ClientStartTime uint64
	Dialects        []Dialect
	// Contexts lists every negotiate context in order (3.1.1 only).
	Contexts []NegotiateContext
	// Preauth, Encryption and Signing are the decoded contexts of those
	// types, nil when absent. Encode ignores them and writes Contexts.
	Preauth    *PreauthIntegrityCapabilities
	Encryption *EncryptionCapabilities
	Signing    *SigningCapabilities
}

// Offers reports whether r lists dialect d.
func (r NegotiateRequest) Offers(d Dialect) bool {
	for _, x := range r.Dialects {
		if x == d {
			return true
		}
	}
	return false
}

// DecodeNegotiateRequest decodes a NEGOTIATE request PDU (header
// included). DialectCount 0 is invalid (MS-SMB2 3.3.5.3.1). When the
// dialects include 3.1.1 the negotiate contexts are decoded: each must
// lie inside the message, and a second PREAUTH_INTEGRITY, ENCRYPTION,
// COMPRESSION, RDMA_TRANSFORM or SIGNING context is invalid, as is a
// malformed one of the first, second or last kind. Other context types
// (NETNAME, TRANSPORT, POSIX, …) are kept in Contexts, undecoded.
func DecodeNegotiateRequest(msg []byte) (NegotiateRequest, error) {
	const what = "request"
	d, err := decodeBody(msg, CommandNegotiate, what, 36)
	if err != nil {
		return NegotiateRequest{}, err
	}
	count := int(d.u16(2))
	if count == 0 {
		return NegotiateRequest{}, malformedCmd(CommandNegotiate, what, "DialectCount is 0")
	}
	if 36+2*count > len(d.body) {
		return NegotiateRequest{}, malformedCmd(CommandNegotiate, what, "dialects exceed the message")
	}
	r := NegotiateRequest{
		SecurityMode: SecurityMode(d.u16(4)),
		Capabilities: Capabilities(d.u32(8)),
		Dialects:     make([]Dialect, count),
	}
	copy(r.ClientGUID[:], d.body[12:28])
	for i := range r.Dialects {
		r.Dialects[i] = Dialect(d.u16(36 + 2*i))
	}
	if !r.Offers(Dialect311) {
		r.ClientStartTime = d.u64(28)
		return r, nil
	}
	r.Contexts, err = decodeNegotiateContexts(d, d.u32(28), int(d.u16(32)), HeaderSize+36+2*count, what)
	if err != nil {
		return NegotiateRequest{}, err
	}
	seen := map[NegotiateContextType]bool{}
	for _, c := range r.Contexts {
		switch c.Type {
		case ContextPreauthIntegrity, ContextEncryption, ContextCompression, ContextRDMATransform, ContextSigning:
			if seen[c.Type] {
				return NegotiateRequest{}, malformedCmd(CommandNegotiate, what, fmt.Sprintf("negotiate context %d appears twice", c.Type))
			}
			seen[c.Type] = true
		}
		switch c.Type {
		case ContextPreauthIntegrity:
			p, err := DecodePreauthIntegrityCapabilities(c.Data)
			if err != nil {
				return NegotiateRequest{}, err
			}
			r.Preauth = &p
		case ContextEncryption:
			x, err := DecodeEncryptionCapabilities(c.Data)
			if err != nil {
				return NegotiateRequest{}, err
			}
			r.Encryption = &x
		case ContextSigning:
			s, err := DecodeSigningCapabilities(c.Data)
			if err != nil {
				return NegotiateRequest{}, err
			}
			r.Signing = &s
		}
	}
	return r, nil
}

// Encode returns the request body. With 3.1.1 among the dialects the
// contexts follow the dialect list, 8-byte aligned; otherwise
// ClientStartTime is written and Contexts is ignored.
func (r NegotiateRequest) Encode() []byte {
	e := newBody(36, 64)
	e.u16(uint16(len(r.Dialects)))
	e.u16(uint16(r.SecurityMode))
	e.u16(0)
	e.u32(uint32(r.Capabilities))
	e.bytes(r.ClientGUID[:])
	ctxField := len(e.b)
	if r.Offers(Dialect311) {
		e.u32(0)
		e.u16(uint16(len(r.Contexts)))
		e.u16(0)
	} else {
		e.u64(r.ClientStartTime)
	}
	for _, d := range r.Dialects {
		e.u16(uint16(d))
	}
	if r.Offers(Dialect311) && len(r.Contexts) > 0 {
		e.pad8()
		e.put32(ctxField, uint32(e.off()))
		appendNegotiateContexts(e, r.Contexts)
	}
	return e.b
}

// NegotiateResponse is an SMB2 NEGOTIATE response (MS-SMB2 2.2.4).
type NegotiateResponse struct {
	SecurityMode    SecurityMode
	DialectRevision Dialect
	ServerGUID      [16]byte
	Capabilities    Capabilities
	MaxTransactSize uint32
	MaxReadSize     uint32
	MaxWriteSize    uint32
	SystemTime      Filetime
	ServerStartTime Filetime
	// SecurityBuffer is the SPNEGO hint (MS-SMB2 3.3.5.4; MS-SPNG 2.2.1).
	SecurityBuffer []byte
	// Contexts are written only when DialectRevision is 3.1.1.
	Contexts []NegotiateContext
}

// Encode returns the response body. The security buffer is at offset 0x80,
// as the Samba client requires (libcli/smb/smbXcli_base.c,
// smb2cli_negprot_done), and the contexts (3.1.1
// only) follow it 8-byte aligned.
func (r NegotiateResponse) Encode() []byte {
	e := newBody(65, 64+len(r.SecurityBuffer)+64)
	e.u16(uint16(r.SecurityMode))
	e.u16(uint16(r.DialectRevision))
	is311 := r.DialectRevision == Dialect311
	if is311 {
		e.u16(uint16(len(r.Contexts)))
	} else {
		e.u16(0)
	}
	e.bytes(r.ServerGUID[:])
	e.u32(uint32(r.Capabilities))
	e.u32(r.MaxTransactSize)
	e.u32(r.MaxReadSize)
	e.u32(r.MaxWriteSize)
	e.i64(int64(r.SystemTime))
	e.i64(int64(r.ServerStartTime))
	e.u16(HeaderSize + 64)
	e.u16(uint16(len(r.SecurityBuffer)))
	ctxField := len(e.b)
	e.u32(0)
	e.bytes(r.SecurityBuffer)
	if is311 && len(r.Contexts) > 0 {
		e.pad8()
		e.put32(ctxField, uint32(e.off()))
		appendNegotiateContexts(e, r.Contexts)
	}
	e.minBody(65)
	return e.b
}

// DecodeNegotiateResponse decodes a NEGOTIATE response PDU. The server
// does not need it; tests and fuzzing use it to check Encode.
func DecodeNegotiateResponse(msg []byte) (NegotiateResponse, error) {
	const what = "response"
	d, err := decodeBody(msg, CommandNegotiate, what, 65)
	if err != nil {
		return NegotiateResponse{}, err
	}
	r := NegotiateResponse{
		SecurityMode:    SecurityMode(d.u16(2)),
		DialectRevision: Dialect(d.u16(4)),
		Capabilities:    Capabilities(d.u32(24)),
		MaxTransactSize: d.u32(28),
		MaxReadSize:     d.u32(32),
		MaxWriteSize:    d.u32(36),
		SystemTime:      Filetime(d.i64(40)),
		ServerStartTime: Filetime(d.i64(48)),
	}
	copy(r.ServerGUID[:], d.body[8:24])
	var ok bool
	if r.SecurityBuffer, ok = d.buffer(uint32(d.u16(56)), uint32(d.u16(58)), 64); !ok {
		return NegotiateResponse{}, malformedCmd(CommandNegotiate, what, "security buffer outside the message")
	}
	if r.DialectRevision == Dialect311 {
		r.Contexts, err = decodeNegotiateContexts(d, d.u32(60), int(d.u16(6)), HeaderSize+64, what)
		if err != nil {
			return NegotiateResponse{}, err
		}
	}
	return r, nil
}

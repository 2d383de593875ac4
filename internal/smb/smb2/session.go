package smb2

// SessionSetupRequest is an SMB2 SESSION_SETUP request (MS-SMB2 2.2.5).
type SessionSetupRequest struct {
	Flags             uint8 // SessionSetupFlagBinding
	SecurityMode      uint8 // SigningEnabled/SigningRequired bits
	Capabilities      Capabilities
	Channel           uint32
	PreviousSessionID uint64
	// SecurityBuffer is the SPNEGO (or raw NTLMSSP) token. It aliases the
	// message.
	SecurityBuffer []byte
}

// DecodeSessionSetupRequest decodes a SESSION_SETUP request PDU.
func DecodeSessionSetupRequest(msg []byte) (SessionSetupRequest, error) {
	d, err := decodeBody(msg, CommandSessionSetup, "request", 25)
	if err != nil {
		return SessionSetupRequest{}, err
	}
	r := SessionSetupRequest{
		Flags:             d.u8(2),
		SecurityMode:      d.u8(3),
		Capabilities:      Capabilities(d.u32(4)),
		Channel:           d.u32(8),
		PreviousSessionID: d.u64(16),
	}
	var ok bool
	if r.SecurityBuffer, ok = d.buffer(uint32(d.u16(12)), uint32(d.u16(14)), 24); !ok {
		return SessionSetupRequest{}, malformedCmd(CommandSessionSetup, "request", "security buffer outside the message")
	}
	return r, nil
}

// Encode returns the request body.
func (r SessionSetupRequest) Encode() []byte {
	e := newBody(25, 24+len(r.SecurityBuffer))
	e.u8(r.Flags)
	e.u8(r.SecurityMode)
	e.u32(uint32(r.Capabilities))
	e.u32(r.Channel)
	e.u16(HeaderSize + 24)
	e.u16(uint16(len(r.SecurityBuffer)))
	e.u64(r.PreviousSessionID)
	e.bytes(r.SecurityBuffer)
	e.minBody(25)
	return e.b
}

// SessionSetupResponse is an SMB2 SESSION_SETUP response (MS-SMB2 2.2.6).
type SessionSetupResponse struct {
	SessionFlags   SessionFlags
	SecurityBuffer []byte
}

// Encode returns the response body; the security buffer is at 0x48.
func (r SessionSetupResponse) Encode() []byte {
	e := newBody(9, 8+len(r.SecurityBuffer))
	e.u16(uint16(r.SessionFlags))
	e.u16(HeaderSize + 8)
	e.u16(uint16(len(r.SecurityBuffer)))
	e.bytes(r.SecurityBuffer)
	e.minBody(9)
	return e.b
}

// DecodeSessionSetupResponse decodes a SESSION_SETUP response PDU.
func DecodeSessionSetupResponse(msg []byte) (SessionSetupResponse, error) {
	d, err := decodeBody(msg, CommandSessionSetup, "response", 9)
	if err != nil {
		return SessionSetupResponse{}, err
	}
	r := SessionSetupResponse{SessionFlags: SessionFlags(d.u16(2))}
	var ok bool
	if r.SecurityBuffer, ok = d.buffer(uint32(d.u16(4)), uint32(d.u16(6)), 8); !ok {
		return SessionSetupResponse{}, malformedCmd(CommandSessionSetup, "response", "security buffer outside the message")
	}
	return r, nil
}

// decodeEmpty checks a body that is StructureSize 4 and Reserved(2), or
// StructureSize 2 (SET_INFO response).
func decodeEmpty(msg []byte, cmd Command, what string, size uint16) error {
	_, err := decodeBody(msg, cmd, what, size)
	return err
}

func encodeEmpty(size uint16) []byte {
	e := newBody(size, int(size))
	e.minBody(int(size))
	return e.b
}

// LogoffRequest is an SMB2 LOGOFF request (MS-SMB2 2.2.7).
type LogoffRequest struct{}

// DecodeLogoffRequest decodes a LOGOFF request PDU.
func DecodeLogoffRequest(msg []byte) (LogoffRequest, error) {
	return LogoffRequest{}, decodeEmpty(msg, CommandLogoff, "request", 4)
}

// Encode returns the request body.
func (LogoffRequest) Encode() []byte { return encodeEmpty(4) }

// LogoffResponse is an SMB2 LOGOFF response (MS-SMB2 2.2.8).
type LogoffResponse struct{}

// Encode returns the response body.
func (LogoffResponse) Encode() []byte { return encodeEmpty(4) }

// DecodeLogoffResponse decodes a LOGOFF response PDU.
func DecodeLogoffResponse(msg []byte) (LogoffResponse, error) {
	return LogoffResponse{}, decodeEmpty(msg, CommandLogoff, "response", 4)
}

// EchoRequest is an SMB2 ECHO request (MS-SMB2 2.2.28).
type EchoRequest struct{}

// DecodeEchoRequest decodes an ECHO request PDU.
func DecodeEchoRequest(msg []byte) (EchoRequest, error) {
	return EchoRequest{}, decodeEmpty(msg, CommandEcho, "request", 4)
}

// Encode returns the request body.
func (EchoRequest) Encode() []byte { return encodeEmpty(4) }

// EchoResponse is an SMB2 ECHO response (MS-SMB2 2.2.29).
type EchoResponse struct{}

// Encode returns the response body.
func (EchoResponse) Encode() []byte { return encodeEmpty(4) }

// DecodeEchoResponse decodes an ECHO response PDU.
func DecodeEchoResponse(msg []byte) (EchoResponse, error) {
	return EchoResponse{}, decodeEmpty(msg, CommandEcho, "response", 4)
}

// CancelRequest is an SMB2 CANCEL request (MS-SMB2 2.2.30). It has no
// response; the header's MessageID or AsyncID names the request to cancel.
type CancelRequest struct{}

// DecodeCancelRequest decodes a CANCEL request PDU.
func DecodeCancelRequest(msg []byte) (CancelRequest, error) {
	return CancelRequest{}, decodeEmpty(msg, CommandCancel, "request", 4)
}

// Encode returns the request body.
func (CancelRequest) Encode() []byte { return encodeEmpty(4) }

// ErrorResponse is the body of every failed response (MS-SMB2 2.2.2):
// StructureSize 9, ErrorContextCount, Reserved, ByteCount, ErrorData.
// The zero value is the usual body: no contexts, ByteCount 0, and the one
// zero byte of ErrorData the StructureSize counts.
type ErrorResponse struct {
	// ErrorContextCount is the number of 3.1.1 error contexts in
	// ErrorData; 0 for the classic format.
	ErrorContextCount uint8
	// ErrorData is, for example, the required length (4 bytes) of a
	// STATUS_BUFFER_TOO_SMALL security query.
	ErrorData []byte
}

// Encode returns the error body.
func (r ErrorResponse) Encode() []byte {
	e := newBody(9, 9+len(r.ErrorData))
	e.u8(r.ErrorContextCount)
	e.u8(0)
	e.u32(uint32(len(r.ErrorData)))
	e.bytes(r.ErrorData)
	e.minBody(9)
	return e.b
}

// DecodeErrorResponse decodes an error response PDU. ByteCount must fit in
// the message.
func DecodeErrorResponse(msg []byte) (ErrorResponse, error) {
	var cmd Command
	if len(msg) >= HeaderSize {
		cmd = Command(le.Uint16(msg[12:]))
	}
	d, err := decodeBody(msg, cmd, "error response", 9)
	if err != nil {
		return ErrorResponse{}, err
	}
	n := uint64(d.u32(4))
	if 8+n > uint64(len(d.body)) {
		return ErrorResponse{}, malformedStruct("error response", "ByteCount exceeds the message")
	}
	r := ErrorResponse{ErrorContextCount: d.u8(2)}
	if n > 0 {
		r.ErrorData = d.body[8 : 8+n : 8+n]
	}
	return r, nil
}

// NewErrorMessage returns a complete error response PDU for the request
// header req: req.Reply(status) with Credits set to credits, and an empty
// ErrorResponse body. Sign it afterwards if the response must be signed.
func NewErrorMessage(req Header, status Status, credits uint16) []byte {
	h := req.Reply(status)
	h.Credits = credits
	return Marshal(h, ErrorResponse{}.Encode())
}

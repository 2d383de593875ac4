package smb2

// IoctlRequest is an SMB2 IOCTL request (MS-SMB2 2.2.31).
type IoctlRequest struct {
	CtlCode           uint32
	FileID            FileID
	MaxInputResponse  uint32
	MaxOutputResponse uint32
	Flags             uint32 // IoctlFlagIsFsctl
	// Input and Output alias the message.
	Input  []byte
	Output []byte
}

// DecodeIoctlRequest decodes an IOCTL request PDU. The input and output
// buffers must each lie after the fixed part and inside the message.
func DecodeIoctlRequest(msg []byte) (IoctlRequest, error) {
	const what = "request"
	d, err := decodeBody(msg, CommandIoctl, what, 57)
	if err != nil {
		return IoctlRequest{}, err
	}
	r := IoctlRequest{
		CtlCode:           d.u32(4),
		FileID:            d.fileID(8),
		MaxInputResponse:  d.u32(32),
		MaxOutputResponse: d.u32(44),
		Flags:             d.u32(48),
	}
	var ok bool
	if r.Input, ok = d.buffer(d.u32(24), d.u32(28), 56); !ok {
		return IoctlRequest{}, malformedCmd(CommandIoctl, what, "input buffer outside the message")
	}
	if r.Output, ok = d.buffer(d.u32(36), d.u32(40), 56); !ok {
		return IoctlRequest{}, malformedCmd(CommandIoctl, what, "output buffer outside the message")
	}
	return r, nil
}

// Encode returns the request body: input at 0x78, output after it 8-byte
// aligned (an empty output gets the input's offset, as Samba sends it).
func (r IoctlRequest) Encode() []byte {
	e := newBody(57, 64+len(r.Input)+len(r.Output))
	e.u16(0)
	e.u32(r.CtlCode)
	e.fileID(r.FileID)
	inOff := HeaderSize + 56
	outOff := inOff
	if len(r.Output) > 0 {
		outOff = align8(inOff + len(r.Input))
	}
	e.u32(uint32(inOff))
	e.u32(uint32(len(r.Input)))
	e.u32(r.MaxInputResponse)
	e.u32(uint32(outOff))
	e.u32(uint32(len(r.Output)))
	e.u32(r.MaxOutputResponse)
	e.u32(r.Flags)
	e.u32(0)
	e.bytes(r.Input)
	if len(r.Output) > 0 {
		e.pad8()
		e.bytes(r.Output)
	}
	e.minBody(57)
	return e.b
}

// IoctlResponse is an SMB2 IOCTL response (MS-SMB2 2.2.32).
type IoctlResponse struct {
	CtlCode uint32
	FileID  FileID
	Flags   uint32
	Input   []byte // normally empty
	Output  []byte
}

// Encode returns the response body: the buffers start at 0x70; the output
// follows the input 8-byte aligned.
func (r IoctlResponse) Encode() []byte {
	e := newBody(49, 56+len(r.Input)+len(r.Output))
	e.u16(0)
	e.u32(r.CtlCode)
	e.fileID(r.FileID)
	inOff := HeaderSize + 48
	outOff := align8(inOff + len(r.Input))
	e.u32(uint32(inOff))
	e.u32(uint32(len(r.Input)))
	e.u32(uint32(outOff))
	e.u32(uint32(len(r.Output)))
	e.u32(r.Flags)
	e.u32(0)
	e.bytes(r.Input)
	e.pad8()
	e.bytes(r.Output)
	e.minBody(49)
	return e.b
}

// DecodeIoctlResponse decodes an IOCTL response PDU.
func DecodeIoctlResponse(msg []byte) (IoctlResponse, error) {
	const what = "response"
	d, err := decodeBody(msg, CommandIoctl, what, 49)
	if err != nil {
		return IoctlResponse{}, err
	}
	r := IoctlResponse{CtlCode: d.u32(4), FileID: d.fileID(8), Flags: d.u32(40)}
	var ok bool
	if r.Input, ok = d.buffer(d.u32(24), d.u32(28), 48); !ok {
		return IoctlResponse{}, malformedCmd(CommandIoctl, what, "input buffer outside the message")
	}
	if r.Output, ok = d.buffer(d.u32(32), d.u32(36), 48); !ok {
		return IoctlResponse{}, malformedCmd(CommandIoctl, what, "output buffer outside the message")
	}
	return r, nil
}

// ValidateNegotiateInfoRequest is the input of FSCTL_VALIDATE_NEGOTIATE_INFO
// (MS-SMB2 2.2.31.4): the client's view of its NEGOTIATE request.
type ValidateNegotiateInfoRequest struct {
	Capabilities Capabilities
	GUID         [16]byte
	SecurityMode SecurityMode
	Dialects     []Dialect
}

// DecodeValidateNegotiateInfoRequest decodes the IOCTL input buffer. The
// dialect list must be complete; trailing bytes are ignored.
func DecodeValidateNegotiateInfoRequest(b []byte) (ValidateNegotiateInfoRequest, error) {
	const what = "VALIDATE_NEGOTIATE_INFO request"
	if len(b) < 24 {
		return ValidateNegotiateInfoRequest{}, malformedCmd(CommandIoctl, what, "shorter than 24 bytes")
	}
	n := int(le.Uint16(b[22:]))
	if 24+2*n > len(b) {
		return ValidateNegotiateInfoRequest{}, malformedCmd(CommandIoctl, what, "dialects exceed the buffer")
	}
	r := ValidateNegotiateInfoRequest{
		Capabilities: Capabilities(le.Uint32(b)),
		SecurityMode: SecurityMode(le.Uint16(b[20:])),
		Dialects:     make([]Dialect, n),
	}
	copy(r.GUID[:], b[4:20])
	for i := range r.Dialects {
		r.Dialects[i] = Dialect(le.Uint16(b[24+2*i:]))
	}
	return r, nil
}

// Encode returns the IOCTL input buffer.
func (r ValidateNegotiateInfoRequest) Encode() []byte {
	e := enc{}
	e.u32(uint32(r.Capabilities))
	e.bytes(r.GUID[:])
	e.u16(uint16(r.SecurityMode))
	e.u16(uint16(len(r.Dialects)))
	for _, d := range r.Dialects {
		e.u16(uint16(d))
	}
	return e.b
}

// Matches reports whether the client's claim r agrees with the NEGOTIATE
// request the server actually received (MS-SMB2 3.3.5.15.12): same
// Capabilities, ClientGUID, SecurityMode and dialect list. On a mismatch
// the server must drop the connection.
func (r ValidateNegotiateInfoRequest) Matches(n NegotiateRequest) bool {
	if r.Capabilities != n.Capabilities || r.GUID != n.ClientGUID || r.SecurityMode != n.SecurityMode || len(r.Dialects) != len(n.Dialects) {
		return false
	}
	for i := range r.Dialects {
		if r.Dialects[i] != n.Dialects[i] {
			return false
		}
	}
	return true
}

// ValidateNegotiateInfoResponse is the output of FSCTL_VALIDATE_NEGOTIATE_INFO
// (MS-SMB2 2.2.32.6): the server's values, byte-identical to its NEGOTIATE
// response.
type ValidateNegotiateInfoResponse struct {
	Capabilities Capabilities
	GUID         [16]byte
	SecurityMode SecurityMode
	Dialect      Dialect
}

// Encode returns the 24-byte IOCTL output buffer.
func (r ValidateNegotiateInfoResponse) Encode() []byte {
	e := enc{}
	e.u32(uint32(r.Capabilities))
	e.bytes(r.GUID[:])
	e.u16(uint16(r.SecurityMode))
	e.u16(uint16(r.Dialect))
	return e.b
}

// DecodeValidateNegotiateInfoResponse decodes the 24-byte IOCTL output.
func DecodeValidateNegotiateInfoResponse(b []byte) (ValidateNegotiateInfoResponse, error) {
	if len(b) < 24 {
		return ValidateNegotiateInfoResponse{}, malformedCmd(CommandIoctl, "VALIDATE_NEGOTIATE_INFO response", "shorter than 24 bytes")
	}
	r := ValidateNegotiateInfoResponse{
		Capabilities: Capabilities(le.Uint32(b)),
		SecurityMode: SecurityMode(le.Uint16(b[20:])),
		Dialect:      Dialect(le.Uint16(b[22:])),
	}
	copy(r.GUID[:], b[4:20])
	return r, nil
}

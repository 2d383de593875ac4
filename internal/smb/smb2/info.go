package smb2

// QueryInfoRequest is an SMB2 QUERY_INFO request (MS-SMB2 2.2.37).
type QueryInfoRequest struct {
	InfoType              InfoType
	FileInfoClass         InfoClass
	OutputBufferLength    uint32
	AdditionalInformation uint32 // *SecurityInformation for InfoTypeSecurity
	Flags                 uint32
	FileID                FileID
	// Input is the input buffer (quota and FullEa queries); it aliases
	// the message.
	Input []byte
}

// DecodeQueryInfoRequest decodes a QUERY_INFO request PDU.
func DecodeQueryInfoRequest(msg []byte) (QueryInfoRequest, error) {
	d, err := decodeBody(msg, CommandQueryInfo, "request", 41)
	if err != nil {
		return QueryInfoRequest{}, err
	}
	r := QueryInfoRequest{
		InfoType:              InfoType(d.u8(2)),
		FileInfoClass:         InfoClass(d.u8(3)),
		OutputBufferLength:    d.u32(4),
		AdditionalInformation: d.u32(16),
		Flags:                 d.u32(20),
		FileID:                d.fileID(24),
	}
	var ok bool
	if r.Input, ok = d.buffer(uint32(d.u16(8)), d.u32(12), 40); !ok {
		return QueryInfoRequest{}, malformedCmd(CommandQueryInfo, "request", "input buffer outside the message")
	}
	return r, nil
}

// Encode returns the request body; the input buffer is at 0x68.
func (r QueryInfoRequest) Encode() []byte {
	e := newBody(41, 41+len(r.Input))
	e.u8(uint8(r.InfoType))
	e.u8(uint8(r.FileInfoClass))
	e.u32(r.OutputBufferLength)
	if len(r.Input) > 0 {
		e.u16(HeaderSize + 40)
	} else {
		e.u16(0)
	}
	e.u16(0)
	e.u32(uint32(len(r.Input)))
	e.u32(r.AdditionalInformation)
	e.u32(r.Flags)
	e.fileID(r.FileID)
	e.bytes(r.Input)
	e.minBody(41)
	return e.b
}

// QueryInfoResponse is an SMB2 QUERY_INFO response (MS-SMB2 2.2.38).
// Output is typically EncodeInfo's result.
type QueryInfoResponse struct {
	Output []byte
}

// Encode returns the response body; the output starts at 0x48.
func (r QueryInfoResponse) Encode() []byte { return encodeOutput(r.Output) }

// DecodeQueryInfoResponse decodes a QUERY_INFO response PDU.
func DecodeQueryInfoResponse(msg []byte) (QueryInfoResponse, error) {
	out, err := decodeOutput(msg, CommandQueryInfo)
	return QueryInfoResponse{Output: out}, err
}

// SetInfoRequest is an SMB2 SET_INFO request (MS-SMB2 2.2.39).
type SetInfoRequest struct {
	InfoType              InfoType
	FileInfoClass         InfoClass
	AdditionalInformation uint32
	FileID                FileID
	// Buffer holds the information structure (decode it with the
	// DecodeFile…Information function of its class); it aliases the
	// message.
	Buffer []byte
}

// DecodeSetInfoRequest decodes a SET_INFO request PDU.
func DecodeSetInfoRequest(msg []byte) (SetInfoRequest, error) {
	d, err := decodeBody(msg, CommandSetInfo, "request", 33)
	if err != nil {
		return SetInfoRequest{}, err
	}
	r := SetInfoRequest{
		InfoType:              InfoType(d.u8(2)),
		FileInfoClass:         InfoClass(d.u8(3)),
		AdditionalInformation: d.u32(12),
		FileID:                d.fileID(16),
	}
	var ok bool
	if r.Buffer, ok = d.buffer(uint32(d.u16(8)), d.u32(4), 32); !ok {
		return SetInfoRequest{}, malformedCmd(CommandSetInfo, "request", "buffer outside the message")
	}
	return r, nil
}

// Encode returns the request body; the buffer is at 0x60.
func (r SetInfoRequest) Encode() []byte {
	e := newBody(33, 33+len(r.Buffer))
	e.u8(uint8(r.InfoType))
	e.u8(uint8(r.FileInfoClass))
	e.u32(uint32(len(r.Buffer)))
	e.u16(HeaderSize + 32)
	e.u16(0)
	e.u32(r.AdditionalInformation)
	e.fileID(r.FileID)
	e.bytes(r.Buffer)
	e.minBody(33)
	return e.b
}

// SetInfoResponse is an SMB2 SET_INFO response (MS-SMB2 2.2.40).
type SetInfoResponse struct{}

// Encode returns the 2-byte response body.
func (SetInfoResponse) Encode() []byte { return encodeEmpty(2) }

// DecodeSetInfoResponse decodes a SET_INFO response PDU.
func DecodeSetInfoResponse(msg []byte) (SetInfoResponse, error) {
	return SetInfoResponse{}, decodeEmpty(msg, CommandSetInfo, "response", 2)
}

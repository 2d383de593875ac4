package smb2

// CloseRequest is an SMB2 CLOSE request (MS-SMB2 2.2.15).
type CloseRequest struct {
	Flags  uint16 // CloseFlagPostQueryAttrib
	FileID FileID
}

// DecodeCloseRequest decodes a CLOSE request PDU.
func DecodeCloseRequest(msg []byte) (CloseRequest, error) {
	d, err := decodeBody(msg, CommandClose, "request", 24)
	if err != nil {
		return CloseRequest{}, err
	}
	return CloseRequest{Flags: d.u16(2), FileID: d.fileID(8)}, nil
}

// Encode returns the request body.
func (r CloseRequest) Encode() []byte {
	e := newBody(24, 24)
	e.u16(r.Flags)
	e.u32(0)
	e.fileID(r.FileID)
	return e.b
}

// CloseResponse is an SMB2 CLOSE response (MS-SMB2 2.2.16). Without
// CloseFlagPostQueryAttrib in the request, send it with only Flags (0):
// the times, sizes and attributes must be zero.
type CloseResponse struct {
	Flags uint16
	// Attrs are the file's times, sizes and attributes.
	Attrs FileNetworkOpenInformation
}

// Encode returns the response body.
func (r CloseResponse) Encode() []byte {
	e := newBody(60, 60)
	e.u16(r.Flags)
	e.u32(0)
	e.netOpen(r.Attrs)
	return e.b
}

// DecodeCloseResponse decodes a CLOSE response PDU.
func DecodeCloseResponse(msg []byte) (CloseResponse, error) {
	d, err := decodeBody(msg, CommandClose, "response", 60)
	if err != nil {
		return CloseResponse{}, err
	}
	return CloseResponse{Flags: d.u16(2), Attrs: decodeNetOpen(d.body[8:])}, nil
}

// FlushRequest is an SMB2 FLUSH request (MS-SMB2 2.2.17).
type FlushRequest struct {
	FileID FileID
}

// DecodeFlushRequest decodes a FLUSH request PDU.
func DecodeFlushRequest(msg []byte) (FlushRequest, error) {
	d, err := decodeBody(msg, CommandFlush, "request", 24)
	if err != nil {
		return FlushRequest{}, err
	}
	return FlushRequest{FileID: d.fileID(8)}, nil
}

// Encode returns the request body.
func (r FlushRequest) Encode() []byte {
	e := newBody(24, 24)
	e.u16(0)
	e.u32(0)
	e.fileID(r.FileID)
	return e.b
}

// FlushResponse is an SMB2 FLUSH response (MS-SMB2 2.2.18).
type FlushResponse struct{}

// Encode returns the response body.
func (FlushResponse) Encode() []byte { return encodeEmpty(4) }

// DecodeFlushResponse decodes a FLUSH response PDU.
func DecodeFlushResponse(msg []byte) (FlushResponse, error) {
	return FlushResponse{}, decodeEmpty(msg, CommandFlush, "response", 4)
}

// ReadRequest is an SMB2 READ request (MS-SMB2 2.2.19).
type ReadRequest struct {
	Padding        uint8
	Flags          uint8
	Length         uint32
	Offset         uint64
	FileID         FileID
	MinimumCount   uint32
	Channel        uint32
	RemainingBytes uint32
	// ChannelInfo is the RDMA channel info (empty for TCP); it aliases the
	// message.
	ChannelInfo []byte
}

// DecodeReadRequest decodes a READ request PDU.
func DecodeReadRequest(msg []byte) (ReadRequest, error) {
	d, err := decodeBody(msg, CommandRead, "request", 49)
	if err != nil {
		return ReadRequest{}, err
	}
	r := ReadRequest{
		Padding:        d.u8(2),
		Flags:          d.u8(3),
		Length:         d.u32(4),
		Offset:         d.u64(8),
		FileID:         d.fileID(16),
		MinimumCount:   d.u32(32),
		Channel:        d.u32(36),
		RemainingBytes: d.u32(40),
	}
	var ok bool
	if r.ChannelInfo, ok = d.buffer(uint32(d.u16(44)), uint32(d.u16(46)), 48); !ok {
		return ReadRequest{}, malformedCmd(CommandRead, "request", "channel info outside the message")
	}
	return r, nil
}

// Encode returns the request body.
func (r ReadRequest) Encode() []byte {
	e := newBody(49, 49+len(r.ChannelInfo))
	e.u8(r.Padding)
	e.u8(r.Flags)
	e.u32(r.Length)
	e.u64(r.Offset)
	e.fileID(r.FileID)
	e.u32(r.MinimumCount)
	e.u32(r.Channel)
	e.u32(r.RemainingBytes)
	if len(r.ChannelInfo) > 0 {
		e.u16(HeaderSize + 48)
	} else {
		e.u16(0)
	}
	e.u16(uint16(len(r.ChannelInfo)))
	e.bytes(r.ChannelInfo)
	e.minBody(49)
	return e.b
}

// ReadResponseDataOffset is where a READ response's data starts, from the
// start of the header (MS-SMB2 2.2.20: DataOffset 0x50).
const ReadResponseDataOffset = HeaderSize + 16

// ReadResponse is an SMB2 READ response (MS-SMB2 2.2.20).
type ReadResponse struct {
	DataRemaining uint32
	Flags         uint32 // Flags/Reserved2 (3.1.1: SMB2_READFLAG_RESPONSE_RDMA_TRANSFORM)
	Data          []byte
}

// Encode returns the response body, data included. To avoid copying a
// large read, use EncodePrefix and send the data as a separate part of
// the frame (WriteFrame); but a signed response must be contiguous.
func (r ReadResponse) Encode() []byte {
	e := newBody(17, 17+len(r.Data))
	r.appendPrefix(e)
	e.bytes(r.Data)
	e.minBody(17)
	return e.b
}

// EncodePrefix returns the 16 bytes of the body that precede Data. When
// Data is empty, append one zero byte after it (the StructureSize counts
// one byte of buffer), or use Encode.
func (r ReadResponse) EncodePrefix() []byte {
	e := newBody(17, 16)
	r.appendPrefix(e)
	return e.b
}

func (r ReadResponse) appendPrefix(e *enc) {
	e.u8(ReadResponseDataOffset)
	e.u8(0)
	e.u32(uint32(len(r.Data)))
	e.u32(r.DataRemaining)
	e.u32(r.Flags)
}

// DecodeReadResponse decodes a READ response PDU.
func DecodeReadResponse(msg []byte) (ReadResponse, error) {
	d, err := decodeBody(msg, CommandRead, "response", 17)
	if err != nil {
		return ReadResponse{}, err
	}
	r := ReadResponse{DataRemaining: d.u32(8), Flags: d.u32(12)}
	var ok bool
	if r.Data, ok = d.buffer(uint32(d.u8(2)), d.u32(4), 16); !ok {
		return ReadResponse{}, malformedCmd(CommandRead, "response", "data outside the message")
	}
	return r, nil
}

// WriteRequest is an SMB2 WRITE request (MS-SMB2 2.2.21).
type WriteRequest struct {
	Offset         uint64
	FileID         FileID
	Channel        uint32
	RemainingBytes uint32
	Flags          uint32
	// Data aliases the message.
	Data        []byte
	ChannelInfo []byte
}

// DecodeWriteRequest decodes a WRITE request PDU. DataOffset and Length
// must place the data after the fixed part and inside the message, and
// so must the channel info.
func DecodeWriteRequest(msg []byte) (WriteRequest, error) {
	const what = "request"
	d, err := decodeBody(msg, CommandWrite, what, 49)
	if err != nil {
		return WriteRequest{}, err
	}
	r := WriteRequest{
		Offset:         d.u64(8),
		FileID:         d.fileID(16),
		Channel:        d.u32(32),
		RemainingBytes: d.u32(36),
		Flags:          d.u32(44),
	}
	var ok bool
	if r.Data, ok = d.buffer(uint32(d.u16(2)), d.u32(4), 48); !ok {
		return WriteRequest{}, malformedCmd(CommandWrite, what, "data outside the message")
	}
	if r.ChannelInfo, ok = d.buffer(uint32(d.u16(40)), uint32(d.u16(42)), 48); !ok {
		return WriteRequest{}, malformedCmd(CommandWrite, what, "channel info outside the message")
	}
	return r, nil
}

// Encode returns the request body. The data is at 0x70; channel info, if
// any, comes first (at 0x70) and the data after it, 8-byte aligned, since
// WriteChannelInfoOffset has only 16 bits.
func (r WriteRequest) Encode() []byte {
	e := newBody(49, 56+len(r.Data)+len(r.ChannelInfo))
	dataOff := HeaderSize + 48
	ciOff := 0
	if len(r.ChannelInfo) > 0 {
		ciOff = dataOff
		dataOff = align8(dataOff + len(r.ChannelInfo))
	}
	e.u16(uint16(dataOff))
	e.u32(uint32(len(r.Data)))
	e.u64(r.Offset)
	e.fileID(r.FileID)
	e.u32(r.Channel)
	e.u32(r.RemainingBytes)
	e.u16(uint16(ciOff))
	e.u16(uint16(len(r.ChannelInfo)))
	e.u32(r.Flags)
	if len(r.ChannelInfo) > 0 {
		e.bytes(r.ChannelInfo)
		e.pad8()
	}
	e.bytes(r.Data)
	e.minBody(49)
	return e.b
}

// WriteResponse is an SMB2 WRITE response (MS-SMB2 2.2.22).
type WriteResponse struct {
	Count     uint32
	Remaining uint32
}

// Encode returns the response body.
func (r WriteResponse) Encode() []byte {
	e := newBody(17, 17)
	e.u16(0)
	e.u32(r.Count)
	e.u32(r.Remaining)
	e.u16(0)
	e.u16(0)
	e.minBody(17)
	return e.b
}

// DecodeWriteResponse decodes a WRITE response PDU.
func DecodeWriteResponse(msg []byte) (WriteResponse, error) {
	d, err := decodeBody(msg, CommandWrite, "response", 17)
	if err != nil {
		return WriteResponse{}, err
	}
	return WriteResponse{Count: d.u32(4), Remaining: d.u32(8)}, nil
}

// LockElement is one SMB2_LOCK_ELEMENT (MS-SMB2 2.2.26.1).
type LockElement struct {
	Offset uint64
	Length uint64
	Flags  uint32 // LockFlag*
}

// LockRequest is an SMB2 LOCK request (MS-SMB2 2.2.26).
type LockRequest struct {
	// LockSequence is LockSequenceNumber (4 bits) and LockSequenceIndex
	// (28 bits) as one field.
	LockSequence uint32
	FileID       FileID
	Locks        []LockElement
}

// DecodeLockRequest decodes a LOCK request PDU. LockCount 0 is invalid
// and all LockCount elements must be inside the message. The flag
// combinations are the server's to check (MS-SMB2 3.3.5.14).
func DecodeLockRequest(msg []byte) (LockRequest, error) {
	const what = "request"
	d, err := decodeBody(msg, CommandLock, what, 48)
	if err != nil {
		return LockRequest{}, err
	}
	n := int(d.u16(2))
	if n == 0 {
		return LockRequest{}, malformedCmd(CommandLock, what, "LockCount is 0")
	}
	if 24+24*n > len(d.body) {
		return LockRequest{}, malformedCmd(CommandLock, what, "lock elements exceed the message")
	}
	r := LockRequest{LockSequence: d.u32(4), FileID: d.fileID(8), Locks: make([]LockElement, n)}
	for i := range r.Locks {
		o := 24 + 24*i
		r.Locks[i] = LockElement{Offset: d.u64(o), Length: d.u64(o + 8), Flags: d.u32(o + 16)}
	}
	return r, nil
}

// Encode returns the request body.
func (r LockRequest) Encode() []byte {
	e := newBody(48, 24+24*len(r.Locks))
	e.u16(uint16(len(r.Locks)))
	e.u32(r.LockSequence)
	e.fileID(r.FileID)
	for _, l := range r.Locks {
		e.u64(l.Offset)
		e.u64(l.Length)
		e.u32(l.Flags)
		e.u32(0)
	}
	e.minBody(48)
	return e.b
}

// LockResponse is an SMB2 LOCK response (MS-SMB2 2.2.27).
type LockResponse struct{}

// Encode returns the response body.
func (LockResponse) Encode() []byte { return encodeEmpty(4) }

// DecodeLockResponse decodes a LOCK response PDU.
func DecodeLockResponse(msg []byte) (LockResponse, error) {
	return LockResponse{}, decodeEmpty(msg, CommandLock, "response", 4)
}

// ChangeNotifyRequest is an SMB2 CHANGE_NOTIFY request (MS-SMB2 2.2.35).
type ChangeNotifyRequest struct {
	Flags              uint16 // ChangeNotifyWatchTree
	OutputBufferLength uint32
	FileID             FileID
	CompletionFilter   uint32
}

// DecodeChangeNotifyRequest decodes a CHANGE_NOTIFY request PDU.
func DecodeChangeNotifyRequest(msg []byte) (ChangeNotifyRequest, error) {
	d, err := decodeBody(msg, CommandChangeNotify, "request", 32)
	if err != nil {
		return ChangeNotifyRequest{}, err
	}
	return ChangeNotifyRequest{
		Flags:              d.u16(2),
		OutputBufferLength: d.u32(4),
		FileID:             d.fileID(8),
		CompletionFilter:   d.u32(24),
	}, nil
}

// Encode returns the request body.
func (r ChangeNotifyRequest) Encode() []byte {
	e := newBody(32, 32)
	e.u16(r.Flags)
	e.u32(r.OutputBufferLength)
	e.fileID(r.FileID)
	e.u32(r.CompletionFilter)
	e.u32(0)
	return e.b
}

// ChangeNotifyResponse is an SMB2 CHANGE_NOTIFY response (MS-SMB2 2.2.36),
// and also the shape of QUERY_DIRECTORY and QUERY_INFO responses.
type ChangeNotifyResponse struct {
	Output []byte
}

// Encode returns the response body; the output starts at 0x48.
func (r ChangeNotifyResponse) Encode() []byte { return encodeOutput(r.Output) }

// DecodeChangeNotifyResponse decodes a CHANGE_NOTIFY response PDU.
func DecodeChangeNotifyResponse(msg []byte) (ChangeNotifyResponse, error) {
	out, err := decodeOutput(msg, CommandChangeNotify)
	return ChangeNotifyResponse{Output: out}, err
}

// encodeOutput encodes the StructureSize 9 body shared by CHANGE_NOTIFY,
// QUERY_DIRECTORY and QUERY_INFO responses: OutputBufferOffset(2) = 0x48,
// OutputBufferLength(4), Buffer.
func encodeOutput(out []byte) []byte {
	e := newBody(9, 9+len(out))
	e.u16(HeaderSize + 8)
	e.u32(uint32(len(out)))
	e.bytes(out)
	e.minBody(9)
	return e.b
}

func decodeOutput(msg []byte, cmd Command) ([]byte, error) {
	d, err := decodeBody(msg, cmd, "response", 9)
	if err != nil {
		return nil, err
	}
	out, ok := d.buffer(uint32(d.u16(2)), d.u32(4), 8)
	if !ok {
		return nil, malformedCmd(cmd, "response", "output buffer outside the message")
	}
	return out, nil
}

package smb2

// Create context names (MS-SMB2 2.2.13.2). The server answers MxAc and
// QFid, fails ExtA with STATUS_EAS_NOT_SUPPORTED and TWrp with
// STATUS_OBJECT_NAME_NOT_FOUND, and ignores the rest (MS-SMB2 3.3.5.9:
// a server ignores contexts it does not support).
const (
	CreateContextEAs             = "ExtA"
	CreateContextSecDesc         = "SecD"
	CreateContextDurableRequest  = "DHnQ"
	CreateContextDurableReconn   = "DHnC"
	CreateContextAllocationSize  = "AlSi"
	CreateContextMaximalAccess   = "MxAc"
	CreateContextTimewarp        = "TWrp"
	CreateContextQueryOnDiskID   = "QFid"
	CreateContextLease           = "RqLs"
	CreateContextDurableRequest2 = "DH2Q"
	CreateContextDurableReconn2  = "DH2C"
)

// CreateContext is one create context: its name (raw bytes, usually four
// ASCII characters, sometimes a 16-byte GUID) and its data, undecoded.
type CreateContext struct {
	Name string
	Data []byte
}

// DecodeCreateContexts decodes a chain of create contexts (MS-SMB2
// 2.2.13.2): each has Next(4), NameOffset(2), NameLength(2), Reserved(2),
// DataOffset(2), DataLength(4), with offsets relative to the context.
// Next must be 0 (last) or a multiple of 8 of at least 16 inside buf; the
// name must be non-empty and, like the data, lie inside its context after
// the 16-byte context header; the data must follow the name.
func DecodeCreateContexts(buf []byte) ([]CreateContext, error) {
	const what = "create context"
	var out []CreateContext
	for pos := 0; ; {
		rest := buf[pos:]
		if len(rest) < 16 {
			return nil, malformedCmd(CommandCreate, what, "shorter than 16 bytes")
		}
		next := int64(le.Uint32(rest))
		extent := int64(len(rest))
		if next != 0 {
			if next < 16 || next%8 != 0 || next > extent {
				return nil, malformedCmd(CommandCreate, what, "bad Next offset")
			}
			extent = next
		}
		nameOff, nameLen := int64(le.Uint16(rest[4:])), int64(le.Uint16(rest[6:]))
		dataOff, dataLen := int64(le.Uint16(rest[10:])), int64(le.Uint32(rest[12:]))
		if nameLen == 0 || nameOff < 16 || nameOff+nameLen > extent {
			return nil, malformedCmd(CommandCreate, what, "name outside the context")
		}
		c := CreateContext{Name: string(rest[nameOff : nameOff+nameLen])}
		if dataLen > 0 {
			if dataOff < nameOff+nameLen || dataOff+dataLen > extent {
				return nil, malformedCmd(CommandCreate, what, "data outside the context")
			}
			c.Data = rest[dataOff : dataOff+dataLen : dataOff+dataLen]
		}
		out = append(out, c)
		if next == 0 {
			return out, nil
		}
		pos += int(next)
	}
}

// appendCreateContexts writes a context chain. The caller has aligned e to
// 8 bytes; each context is padded to 8 bytes except the last, the name
// starts at 16 and the data at the next multiple of 8 after the name.
func appendCreateContexts(e *enc, ctxs []CreateContext) {
	for i, c := range ctxs {
		start := len(e.b)
		if len(c.Name) > 0xFFFF-16 {
			panic("smb2: create context name too long")
		}
		e.u32(0) // Next, patched below
		e.u16(16)
		e.u16(uint16(len(c.Name)))
		e.u16(0)
		dataOff := 0
		if len(c.Data) > 0 {
			dataOff = align8(16 + len(c.Name))
			if dataOff > 0xFFFF { // DataOffset has 16 bits; give up alignment
				dataOff = 16 + len(c.Name)
			}
		}
		e.u16(uint16(dataOff))
		e.u32(uint32(len(c.Data)))
		e.bytes([]byte(c.Name))
		if len(c.Data) > 0 {
			e.zero(start + dataOff - len(e.b))
			e.bytes(c.Data)
		}
		if i < len(ctxs)-1 {
			e.pad8()
			e.put32(start, uint32(len(e.b)-start))
		}
	}
}

// CreateRequest is an SMB2 CREATE request (MS-SMB2 2.2.13).
type CreateRequest struct {
	SecurityFlags        uint8
	RequestedOplockLevel uint8
	ImpersonationLevel   uint32
	SMBCreateFlags       uint64
	DesiredAccess        AccessMask
	FileAttributes       FileAttributes
	ShareAccess          ShareAccess
	CreateDisposition    CreateDisposition
	CreateOptions        CreateOptions
	// Name is the path relative to the share root, with `\` separators;
	// empty for the root. The decoder does not judge it (leading `\`,
	// `:` and wildcards are the server's checks).
	Name     string
	Contexts []CreateContext
}

// DecodeCreateRequest decodes a CREATE request PDU. The name must be valid
// UTF-16LE inside the message; the create contexts must be inside the
// message and well formed (DecodeCreateContexts).
func DecodeCreateRequest(msg []byte) (CreateRequest, error) {
	const what = "request"
	d, err := decodeBody(msg, CommandCreate, what, 57)
	if err != nil {
		return CreateRequest{}, err
	}
	r := CreateRequest{
		SecurityFlags:        d.u8(2),
		RequestedOplockLevel: d.u8(3),
		ImpersonationLevel:   d.u32(4),
		SMBCreateFlags:       d.u64(8),
		DesiredAccess:        AccessMask(d.u32(24)),
		FileAttributes:       FileAttributes(d.u32(28)),
		ShareAccess:          ShareAccess(d.u32(32)),
		CreateDisposition:    CreateDisposition(d.u32(36)),
		CreateOptions:        CreateOptions(d.u32(40)),
	}
	raw, ok := d.buffer(uint32(d.u16(44)), uint32(d.u16(46)), 56)
	if !ok {
		return CreateRequest{}, malformedCmd(CommandCreate, what, "name outside the message")
	}
	if r.Name, ok = decodeUTF16(raw); !ok {
		return CreateRequest{}, malformedCmd(CommandCreate, what, "name is not valid UTF-16")
	}
	ctxs, ok := d.buffer(d.u32(48), d.u32(52), 56)
	if !ok {
		return CreateRequest{}, malformedCmd(CommandCreate, what, "create contexts outside the message")
	}
	if len(ctxs) > 0 {
		if r.Contexts, err = DecodeCreateContexts(ctxs); err != nil {
			return CreateRequest{}, err
		}
	}
	return r, nil
}

// Encode returns the request body: the name at 0x78, the contexts after it
// 8-byte aligned.
func (r CreateRequest) Encode() []byte {
	name := utf16le(r.Name)
	e := newBody(57, 64+len(name))
	e.u8(r.SecurityFlags)
	e.u8(r.RequestedOplockLevel)
	e.u32(r.ImpersonationLevel)
	e.u64(r.SMBCreateFlags)
	e.u64(0)
	e.u32(uint32(r.DesiredAccess))
	e.u32(uint32(r.FileAttributes))
	e.u32(uint32(r.ShareAccess))
	e.u32(uint32(r.CreateDisposition))
	e.u32(uint32(r.CreateOptions))
	e.u16(HeaderSize + 56)
	e.u16(uint16(len(name)))
	ctxField := len(e.b)
	e.u32(0)
	e.u32(0)
	e.bytes(name)
	if len(r.Contexts) > 0 {
		e.pad8()
		start := len(e.b)
		e.put32(ctxField, uint32(e.off()))
		appendCreateContexts(e, r.Contexts)
		e.put32(ctxField+4, uint32(len(e.b)-start))
	}
	e.minBody(57)
	return e.b
}

// CreateResponse is an SMB2 CREATE response (MS-SMB2 2.2.14).
type CreateResponse struct {
	OplockLevel  uint8
	Flags        uint8
	CreateAction CreateAction
	// Attrs are the file's times, sizes and attributes.
	Attrs    FileNetworkOpenInformation
	FileID   FileID
	Contexts []CreateContext
}

// Encode returns the response body; contexts start at 0x98.
func (r CreateResponse) Encode() []byte {
	e := newBody(89, 96)
	e.u8(r.OplockLevel)
	e.u8(r.Flags)
	e.u32(uint32(r.CreateAction))
	e.netOpen(r.Attrs)
	e.u32(0)
	e.fileID(r.FileID)
	ctxField := len(e.b)
	e.u32(0)
	e.u32(0)
	if len(r.Contexts) > 0 {
		start := len(e.b)
		e.put32(ctxField, uint32(e.off()))
		appendCreateContexts(e, r.Contexts)
		e.put32(ctxField+4, uint32(len(e.b)-start))
	}
	e.minBody(89)
	return e.b
}

// DecodeCreateResponse decodes a CREATE response PDU.
func DecodeCreateResponse(msg []byte) (CreateResponse, error) {
	const what = "response"
	d, err := decodeBody(msg, CommandCreate, what, 89)
	if err != nil {
		return CreateResponse{}, err
	}
	r := CreateResponse{
		OplockLevel:  d.u8(2),
		Flags:        d.u8(3),
		CreateAction: CreateAction(d.u32(4)),
		Attrs:        decodeNetOpen(d.body[8:]),
		FileID:       d.fileID(64),
	}
	ctxs, ok := d.buffer(d.u32(80), d.u32(84), 88)
	if !ok {
		return CreateResponse{}, malformedCmd(CommandCreate, what, "create contexts outside the message")
	}
	if len(ctxs) > 0 {
		if r.Contexts, err = DecodeCreateContexts(ctxs); err != nil {
			return CreateResponse{}, err
		}
	}
	return r, nil
}

// MaximalAccessContext returns the MxAc response context (MS-SMB2
// 2.2.14.2.5): QueryStatus and MaximalAccess.
func MaximalAccessContext(status Status, access AccessMask) CreateContext {
	e := enc{}
	e.u32(uint32(status))
	e.u32(uint32(access))
	return CreateContext{Name: CreateContextMaximalAccess, Data: e.b}
}

// QueryOnDiskIDContext returns the QFid response context (MS-SMB2
// 2.2.14.2.9): DiskFileId(8), VolumeId(8), Reserved(16).
func QueryOnDiskIDContext(diskFileID, volumeID uint64) CreateContext {
	e := enc{}
	e.u64(diskFileID)
	e.u64(volumeID)
	e.zero(16)
	return CreateContext{Name: CreateContextQueryOnDiskID, Data: e.b}
}

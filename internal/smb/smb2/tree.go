package smb2

import "strings"

// TreeConnectRequest is an SMB2 TREE_CONNECT request (MS-SMB2 2.2.9).
type TreeConnectRequest struct {
	// Flags is Flags/Reserved: TreeConnectFlag* in 3.1.1, to be ignored
	// in older dialects.
	Flags uint16
	// Path is the share path, "\\server\share".
	Path string
	// With TreeConnectFlagExtensionPresent, the buffer starts with the
	// TREE_CONNECT Request Extension (MS-SMB2 2.2.9.1); these are its
	// context offset and count, kept undecoded (the server ignores tree
	// connect contexts).
	ExtContextOffset uint32
	ExtContextCount  uint16
}

// DecodeTreeConnectRequest decodes a TREE_CONNECT request PDU. The path
// is found through PathOffset and PathLength, which MS-SMB2 2.2.9 defines
// from the start of the header with or without the extension; it must be
// valid UTF-16LE. With the extension flag, the 16-byte extension header
// must be present and the path must follow it.
func DecodeTreeConnectRequest(msg []byte) (TreeConnectRequest, error) {
	const what = "request"
	d, err := decodeBody(msg, CommandTreeConnect, what, 9)
	if err != nil {
		return TreeConnectRequest{}, err
	}
	r := TreeConnectRequest{Flags: d.u16(2)}
	fixed := 8
	if r.Flags&TreeConnectFlagExtensionPresent != 0 {
		if len(d.body) < 8+16 {
			return TreeConnectRequest{}, malformedCmd(CommandTreeConnect, what, "extension missing")
		}
		r.ExtContextOffset = d.u32(8)
		r.ExtContextCount = d.u16(12)
		fixed += 16
	}
	raw, ok := d.buffer(uint32(d.u16(4)), uint32(d.u16(6)), fixed)
	if !ok {
		return TreeConnectRequest{}, malformedCmd(CommandTreeConnect, what, "path outside the message")
	}
	if r.Path, ok = decodeUTF16(raw); !ok {
		return TreeConnectRequest{}, malformedCmd(CommandTreeConnect, what, "path is not valid UTF-16")
	}
	return r, nil
}

// Encode returns the request body.
func (r TreeConnectRequest) Encode() []byte {
	path := utf16le(r.Path)
	e := newBody(9, 24+len(path))
	e.u16(r.Flags)
	off := HeaderSize + 8
	if r.Flags&TreeConnectFlagExtensionPresent != 0 {
		off += 16
	}
	e.u16(uint16(off))
	e.u16(uint16(len(path)))
	if r.Flags&TreeConnectFlagExtensionPresent != 0 {
		e.u32(r.ExtContextOffset)
		e.u16(r.ExtContextCount)
		e.zero(10)
	}
	e.bytes(path)
	e.minBody(9)
	return e.b
}

// SplitSharePath splits a TREE_CONNECT path "\\server\share" into its
// server and share names. It accepts only that form: two leading
// backslashes, a non-empty server, one backslash and a non-empty share
// without further backslashes.
func SplitSharePath(path string) (server, share string, ok bool) {
	rest, found := strings.CutPrefix(path, `\\`)
	if !found {
		return "", "", false
	}
	server, share, found = strings.Cut(rest, `\`)
	if !found || server == "" || share == "" || strings.Contains(share, `\`) {
		return "", "", false
	}
	return server, share, true
}

// TreeConnectResponse is an SMB2 TREE_CONNECT response (MS-SMB2 2.2.10).
type TreeConnectResponse struct {
	ShareType     uint8 // ShareTypeDisk, ShareTypePipe
	ShareFlags    uint32
	Capabilities  uint32
	MaximalAccess AccessMask
}

// Encode returns the response body.
func (r TreeConnectResponse) Encode() []byte {
	e := newBody(16, 16)
	e.u8(r.ShareType)
	e.u8(0)
	e.u32(r.ShareFlags)
	e.u32(r.Capabilities)
	e.u32(uint32(r.MaximalAccess))
	return e.b
}

// DecodeTreeConnectResponse decodes a TREE_CONNECT response PDU.
func DecodeTreeConnectResponse(msg []byte) (TreeConnectResponse, error) {
	d, err := decodeBody(msg, CommandTreeConnect, "response", 16)
	if err != nil {
		return TreeConnectResponse{}, err
	}
	return TreeConnectResponse{
		ShareType:     d.u8(2),
		ShareFlags:    d.u32(4),
		Capabilities:  d.u32(8),
		MaximalAccess: AccessMask(d.u32(12)),
	}, nil
}

// TreeDisconnectRequest is an SMB2 TREE_DISCONNECT request (MS-SMB2 2.2.11).
type TreeDisconnectRequest struct{}

// DecodeTreeDisconnectRequest decodes a TREE_DISCONNECT request PDU.
func DecodeTreeDisconnectRequest(msg []byte) (TreeDisconnectRequest, error) {
	return TreeDisconnectRequest{}, decodeEmpty(msg, CommandTreeDisconnect, "request", 4)
}

// Encode returns the request body.
func (TreeDisconnectRequest) Encode() []byte { return encodeEmpty(4) }

// TreeDisconnectResponse is an SMB2 TREE_DISCONNECT response (MS-SMB2 2.2.12).
type TreeDisconnectResponse struct{}

// Encode returns the response body.
func (TreeDisconnectResponse) Encode() []byte { return encodeEmpty(4) }

// DecodeTreeDisconnectResponse decodes a TREE_DISCONNECT response PDU.
func DecodeTreeDisconnectResponse(msg []byte) (TreeDisconnectResponse, error) {
	return TreeDisconnectResponse{}, decodeEmpty(msg, CommandTreeDisconnect, "response", 4)
}

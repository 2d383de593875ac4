package smb2

import (
	"encoding/binary"
	"fmt"
)

// HeaderSize is the size of the SMB2 packet header (MS-SMB2 2.2.1).
const HeaderSize = 64

// Protocol identifiers: the first four bytes of a transport payload, read
// little-endian (MS-SMB2 2.2.1, 2.2.41, 2.2.42).
const (
	protocolSMB2        uint32 = 0x424D53FE // FE 'S' 'M' 'B'
	protocolTransform   uint32 = 0x424D53FD // FD 'S' 'M' 'B' (encryption)
	protocolCompression uint32 = 0x424D53FC // FC 'S' 'M' 'B'
	protocolSMB1        uint32 = 0x424D53FF // FF 'S' 'M' 'B'
)

// Protocol is the kind of message a transport payload carries, from its
// first four bytes.
type Protocol int

// Protocols.
const (
	ProtocolUnknown     Protocol = iota
	ProtocolSMB2                 // FE 'SMB': an SMB2 message or compound
	ProtocolTransform            // FD 'SMB': an encrypted message (transform.go)
	ProtocolCompression          // FC 'SMB': a compressed message (not negotiated)
	ProtocolSMB1                 // FF 'SMB': SMB1; see DecodeSMB1Negotiate
)

// ProtocolOf identifies the protocol of a transport payload.
func ProtocolOf(payload []byte) Protocol {
	if len(payload) < 4 {
		return ProtocolUnknown
	}
	switch le.Uint32(payload) {
	case protocolSMB2:
		return ProtocolSMB2
	case protocolTransform:
		return ProtocolTransform
	case protocolCompression:
		return ProtocolCompression
	case protocolSMB1:
		return ProtocolSMB1
	}
	return ProtocolUnknown
}

// Command is an SMB2 command code (MS-SMB2 2.2.1.2).
type Command uint16

// Commands.
const (
	CommandNegotiate      Command = 0x00
	CommandSessionSetup   Command = 0x01
	CommandLogoff         Command = 0x02
	CommandTreeConnect    Command = 0x03
	CommandTreeDisconnect Command = 0x04
	CommandCreate         Command = 0x05
	CommandClose          Command = 0x06
	CommandFlush          Command = 0x07
	CommandRead           Command = 0x08
	CommandWrite          Command = 0x09
	CommandLock           Command = 0x0A
	CommandIoctl          Command = 0x0B
	CommandCancel         Command = 0x0C
	CommandEcho           Command = 0x0D
	CommandQueryDirectory Command = 0x0E
	CommandChangeNotify   Command = 0x0F
	CommandQueryInfo      Command = 0x10
	CommandSetInfo        Command = 0x11
	CommandOplockBreak    Command = 0x12
)

var commandNames = [...]string{
	"NEGOTIATE", "SESSION_SETUP", "LOGOFF", "TREE_CONNECT", "TREE_DISCONNECT",
	"CREATE", "CLOSE", "FLUSH", "READ", "WRITE", "LOCK", "IOCTL", "CANCEL",
	"ECHO", "QUERY_DIRECTORY", "CHANGE_NOTIFY", "QUERY_INFO", "SET_INFO",
	"OPLOCK_BREAK",
}

func (c Command) String() string {
	if int(c) < len(commandNames) {
		return commandNames[c]
	}
	return fmt.Sprintf("COMMAND(0x%04X)", uint16(c))
}

// Flags are the header flags (MS-SMB2 2.2.1.2).
type Flags uint32

// Header flags.
const (
	FlagResponse     Flags = 0x00000001 // SMB2_FLAGS_SERVER_TO_REDIR
	FlagAsync        Flags = 0x00000002 // SMB2_FLAGS_ASYNC_COMMAND
	FlagRelated      Flags = 0x00000004 // SMB2_FLAGS_RELATED_OPERATIONS
	FlagSigned       Flags = 0x00000008 // SMB2_FLAGS_SIGNED
	FlagPriorityMask Flags = 0x00000070 // SMB2_FLAGS_PRIORITY_MASK (3.1.1)
	FlagDFS          Flags = 0x10000000 // SMB2_FLAGS_DFS_OPERATIONS
	FlagReplay       Flags = 0x20000000 // SMB2_FLAGS_REPLAY_OPERATION
)

// Header offsets the server patches in place.
const (
	offFlags       = 16
	offNextCommand = 20
	offSignature   = 48
)

// FileID identifies an open (MS-SMB2 2.2.14.1).
type FileID struct {
	Persistent uint64
	Volatile   uint64
}

// FileIDAllOnes is the FileId a client sends for "the file opened by the
// previous CREATE in this related compound" (MS-SMB2 3.3.5.2.7.2) and on
// FSCTL_VALIDATE_NEGOTIATE_INFO.
var FileIDAllOnes = FileID{Persistent: ^uint64(0), Volatile: ^uint64(0)}

// IsAllOnes reports whether f is FileIDAllOnes.
func (f FileID) IsAllOnes() bool { return f == FileIDAllOnes }

// Header is the 64-byte SMB2 packet header (MS-SMB2 2.2.1), in either of
// its forms: sync (TreeID) or async (AsyncID, when Flags has FlagAsync).
type Header struct {
	CreditCharge uint16
	// ChannelSequence is the 3.x request field at offset 8 (requests only).
	ChannelSequence uint16
	// Status is the NTSTATUS at offset 8 (responses only).
	Status      Status
	Command     Command
	Credits     uint16 // CreditRequest in a request, CreditResponse in a response
	Flags       Flags
	NextCommand uint32
	MessageID   uint64
	AsyncID     uint64 // async form only
	TreeID      uint32 // sync form only
	SessionID   uint64
	Signature   [16]byte
}

// IsResponse reports whether FlagResponse is set.
func (h Header) IsResponse() bool { return h.Flags&FlagResponse != 0 }

// IsAsync reports whether FlagAsync is set.
func (h Header) IsAsync() bool { return h.Flags&FlagAsync != 0 }

// ParseHeader decodes the header at the start of msg. It checks the
// ProtocolId and the StructureSize (64); the errors are *MalformedError.
func ParseHeader(msg []byte) (Header, error) {
	if len(msg) < HeaderSize {
		return Header{}, malformedStruct("SMB2 header", "shorter than 64 bytes")
	}
	if le.Uint32(msg) != protocolSMB2 {
		return Header{}, malformedStruct("SMB2 header", "ProtocolId is not FE 'SMB'")
	}
	if le.Uint16(msg[4:]) != HeaderSize {
		return Header{}, malformedStruct("SMB2 header", "StructureSize is not 64")
	}
	h := Header{
		CreditCharge: le.Uint16(msg[6:]),
		Command:      Command(le.Uint16(msg[12:])),
		Credits:      le.Uint16(msg[14:]),
		Flags:        Flags(le.Uint32(msg[16:])),
		NextCommand:  le.Uint32(msg[20:]),
		MessageID:    le.Uint64(msg[24:]),
		SessionID:    le.Uint64(msg[40:]),
	}
	if h.Flags&FlagResponse != 0 {
		h.Status = Status(le.Uint32(msg[8:]))
	} else {
		h.ChannelSequence = le.Uint16(msg[8:])
	}
	if h.Flags&FlagAsync != 0 {
		h.AsyncID = le.Uint64(msg[32:])
	} else {
		h.TreeID = le.Uint32(msg[36:])
	}
	copy(h.Signature[:], msg[48:64])
	return h, nil
}

// AppendTo appends the 64-byte encoding of h to dst. Offset 8 carries
// Status in a response and ChannelSequence in a request; offset 32 carries
// AsyncID in the async form and Reserved(0)+TreeID in the sync form.
func (h Header) AppendTo(dst []byte) []byte {
	dst = le.AppendUint32(dst, protocolSMB2)
	dst = le.AppendUint16(dst, HeaderSize)
	dst = le.AppendUint16(dst, h.CreditCharge)
	if h.Flags&FlagResponse != 0 {
		dst = le.AppendUint32(dst, uint32(h.Status))
	} else {
		dst = le.AppendUint16(dst, h.ChannelSequence)
		dst = le.AppendUint16(dst, 0)
	}
	dst = le.AppendUint16(dst, uint16(h.Command))
	dst = le.AppendUint16(dst, h.Credits)
	dst = le.AppendUint32(dst, uint32(h.Flags))
	dst = le.AppendUint32(dst, h.NextCommand)
	dst = le.AppendUint64(dst, h.MessageID)
	if h.Flags&FlagAsync != 0 {
		dst = le.AppendUint64(dst, h.AsyncID)
	} else {
		dst = le.AppendUint32(dst, 0)
		dst = le.AppendUint32(dst, h.TreeID)
	}
	dst = le.AppendUint64(dst, h.SessionID)
	return append(dst, h.Signature[:]...)
}

// Reply returns the header of the response to the request header h:
// FlagResponse set, the same Command, MessageID, CreditCharge, TreeID or
// AsyncID and SessionID, and the request's priority, RELATED and DFS flags
// echoed (smbd does the same). Credits, the signature and the SIGNED flag
// are left for the caller.
func (h Header) Reply(status Status) Header {
	return Header{
		CreditCharge: h.CreditCharge,
		Status:       status,
		Command:      h.Command,
		Flags:        FlagResponse | h.Flags&(FlagPriorityMask|FlagRelated|FlagDFS|FlagAsync),
		MessageID:    h.MessageID,
		AsyncID:      h.AsyncID,
		TreeID:       h.TreeID,
		SessionID:    h.SessionID,
	}
}

// Marshal returns one PDU: the encoding of h followed by body (the output
// of a response's Encode method).
func Marshal(h Header, body []byte) []byte {
	msg := make([]byte, 0, HeaderSize+len(body))
	return append(h.AppendTo(msg), body...)
}

var le = binary.LittleEndian

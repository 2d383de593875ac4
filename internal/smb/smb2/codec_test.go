package smb2

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// encoder is what every message body type implements.
type encoder interface{ Encode() []byte }

// codec pairs a message decoder with its body type's Encode, type-erased
// so that tests and fuzzers can run them all from one table.
type codec struct {
	name    string
	cmd     Command
	resp    bool
	decode  func([]byte) (encoder, error)
	samples []encoder
}

func mk[T encoder](name string, cmd Command, resp bool, decode func([]byte) (T, error), samples ...T) codec {
	c := codec{name: name, cmd: cmd, resp: resp, decode: func(b []byte) (encoder, error) { return decode(b) }}
	for _, s := range samples {
		c.samples = append(c.samples, s)
	}
	return c
}

var fid = FileID{Persistent: 0x1122334455667788, Volatile: 0x99AABBCCDDEEFF00}

// codecs lists every message decoder with sample values that cover its
// optional parts.
var codecs = []codec{
	mk("NegotiateRequest", CommandNegotiate, false, DecodeNegotiateRequest,
		NegotiateRequest{SecurityMode: SigningEnabled, Capabilities: 0x7F, ClientGUID: [16]byte{1, 2, 3}, ClientStartTime: 42, Dialects: []Dialect{Dialect202, Dialect210}},
		NegotiateRequest{SecurityMode: SigningRequired, Dialects: []Dialect{Dialect202, Dialect311}},
		NegotiateRequest{
			SecurityMode: SigningEnabled, Capabilities: CapLargeMTU, Dialects: []Dialect{Dialect300, Dialect302, Dialect311},
			Contexts: []NegotiateContext{
				PreauthIntegrityCapabilities{HashAlgorithms: []uint16{HashSHA512}, Salt: bytes.Repeat([]byte{7}, 32)}.Context(),
				EncryptionCapabilities{Ciphers: []uint16{CipherAES128GCM, CipherAES128CCM}}.Context(),
				SigningCapabilities{Algorithms: []SigningAlgorithm{SigningAESGMAC, SigningAESCMAC}}.Context(),
				{Type: ContextNetname, Data: utf16le("host")},
				{Type: 0x100, Data: nil},
			},
			Preauth:    &PreauthIntegrityCapabilities{HashAlgorithms: []uint16{HashSHA512}, Salt: bytes.Repeat([]byte{7}, 32)},
			Encryption: &EncryptionCapabilities{Ciphers: []uint16{CipherAES128GCM, CipherAES128CCM}},
			Signing:    &SigningCapabilities{Algorithms: []SigningAlgorithm{SigningAESGMAC, SigningAESCMAC}},
		}),
	mk("NegotiateResponse", CommandNegotiate, true, DecodeNegotiateResponse,
		NegotiateResponse{SecurityMode: SigningEnabled, DialectRevision: Dialect210, ServerGUID: [16]byte{9}, Capabilities: CapLargeMTU, MaxTransactSize: 1 << 20, MaxReadSize: 1 << 20, MaxWriteSize: 1 << 20, SystemTime: 133000000000000000, SecurityBuffer: []byte{0x60, 0x1c}},
		NegotiateResponse{DialectRevision: Dialect311, Contexts: []NegotiateContext{
			PreauthIntegrityCapabilities{HashAlgorithms: []uint16{HashSHA512}, Salt: []byte{1, 2, 3}}.Context(),
			SigningCapabilities{Algorithms: []SigningAlgorithm{SigningAESCMAC}}.Context(),
		}, SecurityBuffer: bytes.Repeat([]byte{0xA5}, 74)},
		NegotiateResponse{DialectRevision: DialectWildcard}),
	mk("SessionSetupRequest", CommandSessionSetup, false, DecodeSessionSetupRequest,
		SessionSetupRequest{Flags: SessionSetupFlagBinding, SecurityMode: 1, Capabilities: CapDFS, Channel: 3, PreviousSessionID: 77, SecurityBuffer: []byte("NTLMSSP\x00\x01")},
		SessionSetupRequest{}),
	mk("SessionSetupResponse", CommandSessionSetup, true, DecodeSessionSetupResponse,
		SessionSetupResponse{SessionFlags: SessionFlagIsGuest, SecurityBuffer: []byte{0xa1, 0x1b}},
		SessionSetupResponse{}),
	mk("LogoffRequest", CommandLogoff, false, DecodeLogoffRequest, LogoffRequest{}),
	mk("LogoffResponse", CommandLogoff, true, DecodeLogoffResponse, LogoffResponse{}),
	mk("TreeConnectRequest", CommandTreeConnect, false, DecodeTreeConnectRequest,
		TreeConnectRequest{Path: `\\127.0.0.1\share`},
		TreeConnectRequest{Flags: TreeConnectFlagExtensionPresent | TreeConnectFlagRedirectToOwner, Path: `\\host\IPC$`, ExtContextOffset: 200, ExtContextCount: 1},
		TreeConnectRequest{Path: "\\\\h\\sh\U0001F600"}),
	mk("TreeConnectResponse", CommandTreeConnect, true, DecodeTreeConnectResponse,
		TreeConnectResponse{ShareType: ShareTypeDisk, ShareFlags: ShareFlagNoCaching, Capabilities: ShareCapDFS, MaximalAccess: FileAllAccess}),
	mk("TreeDisconnectRequest", CommandTreeDisconnect, false, DecodeTreeDisconnectRequest, TreeDisconnectRequest{}),
	mk("TreeDisconnectResponse", CommandTreeDisconnect, true, DecodeTreeDisconnectResponse, TreeDisconnectResponse{}),
	mk("CreateRequest", CommandCreate, false, DecodeCreateRequest,
		CreateRequest{ImpersonationLevel: ImpersonationImpersonation, DesiredAccess: 0x12019f, ShareAccess: ShareRead | ShareWrite, CreateDisposition: FileOverwriteIf, CreateOptions: FileNonDirectoryFile, Name: `dir\file.txt`},
		CreateRequest{DesiredAccess: 0x81, FileAttributes: AttrDirectory, CreateDisposition: FileOpen, CreateOptions: FileDirectoryFile},
		CreateRequest{SecurityFlags: 1, RequestedOplockLevel: OplockBatch, SMBCreateFlags: 5, Name: "a", Contexts: []CreateContext{
			{Name: CreateContextMaximalAccess},
			{Name: CreateContextAllocationSize, Data: []byte{0, 0, 1, 0, 0, 0, 0, 0}},
			{Name: "0123456789abcdef", Data: []byte{1, 2, 3}},
		}}),
	mk("CreateResponse", CommandCreate, true, DecodeCreateResponse,
		CreateResponse{CreateAction: FileCreated, Attrs: FileNetworkOpenInformation{CreationTime: 1, LastAccessTime: 2, LastWriteTime: 3, ChangeTime: 4, AllocationSize: 4096, EndOfFile: 10, FileAttributes: AttrArchive}, FileID: fid},
		CreateResponse{FileID: fid, Contexts: []CreateContext{MaximalAccessContext(StatusSuccess, FileAllAccess), QueryOnDiskIDContext(7, 8)}}),
	mk("CloseRequest", CommandClose, false, DecodeCloseRequest, CloseRequest{Flags: CloseFlagPostQueryAttrib, FileID: fid}),
	mk("CloseResponse", CommandClose, true, DecodeCloseResponse,
		CloseResponse{Flags: CloseFlagPostQueryAttrib, Attrs: FileNetworkOpenInformation{CreationTime: 5, LastAccessTime: 6, LastWriteTime: 7, ChangeTime: 8, AllocationSize: 9, EndOfFile: 10, FileAttributes: AttrReadonly}}),
	mk("FlushRequest", CommandFlush, false, DecodeFlushRequest, FlushRequest{FileID: fid}),
	mk("FlushResponse", CommandFlush, true, DecodeFlushResponse, FlushResponse{}),
	mk("ReadRequest", CommandRead, false, DecodeReadRequest,
		ReadRequest{Padding: 0x50, Length: 1 << 20, Offset: 1 << 40, FileID: fid, MinimumCount: 1, RemainingBytes: 3},
		ReadRequest{Flags: ReadFlagUnbuffered, Channel: 1, ChannelInfo: []byte{1, 2, 3, 4}}),
	mk("ReadResponse", CommandRead, true, DecodeReadResponse,
		ReadResponse{DataRemaining: 5, Data: []byte("hello")}, ReadResponse{}),
	mk("WriteRequest", CommandWrite, false, DecodeWriteRequest,
		WriteRequest{Offset: 512, FileID: fid, Flags: WriteFlagWriteThrough, Data: []byte("payload")},
		WriteRequest{Channel: 2, RemainingBytes: 1, Data: []byte{0}, ChannelInfo: []byte{9, 9}},
		WriteRequest{FileID: fid}),
	mk("WriteResponse", CommandWrite, true, DecodeWriteResponse, WriteResponse{Count: 7, Remaining: 1}),
	mk("LockRequest", CommandLock, false, DecodeLockRequest,
		LockRequest{LockSequence: 0x10000001, FileID: fid, Locks: []LockElement{{Offset: 0, Length: 10, Flags: LockFlagExclusive}}},
		LockRequest{FileID: fid, Locks: []LockElement{{Offset: 1, Length: 2, Flags: LockFlagShared | LockFlagFailImmediately}, {Offset: ^uint64(0), Length: 1, Flags: LockFlagUnlock}}}),
	mk("LockResponse", CommandLock, true, DecodeLockResponse, LockResponse{}),
	mk("EchoRequest", CommandEcho, false, DecodeEchoRequest, EchoRequest{}),
	mk("EchoResponse", CommandEcho, true, DecodeEchoResponse, EchoResponse{}),
	mk("CancelRequest", CommandCancel, false, DecodeCancelRequest, CancelRequest{}),
	mk("IoctlRequest", CommandIoctl, false, DecodeIoctlRequest,
		IoctlRequest{CtlCode: FsctlValidateNegotiateInfo, FileID: FileIDAllOnes, MaxOutputResponse: 24, Flags: IoctlFlagIsFsctl,
			Input: ValidateNegotiateInfoRequest{Capabilities: 0x7F, SecurityMode: 1, Dialects: []Dialect{Dialect202, Dialect300}}.Encode()},
		IoctlRequest{CtlCode: FsctlPipeTransceive, FileID: fid, Input: []byte{1, 2, 3}, Output: []byte{4, 5}, MaxInputResponse: 9}),
	mk("IoctlResponse", CommandIoctl, true, DecodeIoctlResponse,
		IoctlResponse{CtlCode: FsctlValidateNegotiateInfo, FileID: FileIDAllOnes, Output: make([]byte, 24)},
		IoctlResponse{CtlCode: 1, Input: []byte{1, 2, 3}, Output: []byte{4}}),
	mk("QueryDirectoryRequest", CommandQueryDirectory, false, DecodeQueryDirectoryRequest,
		QueryDirectoryRequest{FileInformationClass: FileIdBothDirectoryInformationClass, Flags: QueryDirRestartScans, FileID: fid, Pattern: "*", OutputBufferLength: 65536},
		QueryDirectoryRequest{FileInformationClass: FileNamesInformationClass, FileIndex: 3}),
	mk("QueryDirectoryResponse", CommandQueryDirectory, true, DecodeQueryDirectoryResponse,
		QueryDirectoryResponse{Output: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}}),
	mk("ChangeNotifyRequest", CommandChangeNotify, false, DecodeChangeNotifyRequest,
		ChangeNotifyRequest{Flags: ChangeNotifyWatchTree, OutputBufferLength: 4096, FileID: fid, CompletionFilter: 0x17}),
	mk("ChangeNotifyResponse", CommandChangeNotify, true, DecodeChangeNotifyResponse, ChangeNotifyResponse{Output: []byte{1}}, ChangeNotifyResponse{}),
	mk("QueryInfoRequest", CommandQueryInfo, false, DecodeQueryInfoRequest,
		QueryInfoRequest{InfoType: InfoTypeFile, FileInfoClass: FileAllInformationClass, OutputBufferLength: 4096, FileID: fid},
		QueryInfoRequest{InfoType: InfoTypeSecurity, AdditionalInformation: OwnerSecurityInformation | DACLSecurityInformation, Flags: 1, Input: []byte{1, 2}}),
	mk("QueryInfoResponse", CommandQueryInfo, true, DecodeQueryInfoResponse,
		QueryInfoResponse{Output: FileStandardInformation{EndOfFile: 3}.Encode()}),
	mk("SetInfoRequest", CommandSetInfo, false, DecodeSetInfoRequest,
		SetInfoRequest{InfoType: InfoTypeFile, FileInfoClass: FileDispositionInformationClass, FileID: fid, Buffer: []byte{1}},
		SetInfoRequest{InfoType: InfoTypeSecurity, AdditionalInformation: 4}),
	mk("SetInfoResponse", CommandSetInfo, true, DecodeSetInfoResponse, SetInfoResponse{}),
	mk("ErrorResponse", CommandCreate, true, DecodeErrorResponse,
		ErrorResponse{}, ErrorResponse{ErrorData: []byte{0x40, 0, 0, 0}}, ErrorResponse{ErrorContextCount: 1, ErrorData: make([]byte, 16)}),
}

// sampleMessages returns every sample of every codec as a whole PDU.
func sampleMessages() [][]byte {
	var out [][]byte
	for _, c := range codecs {
		for i, s := range c.samples {
			out = append(out, Marshal(sampleHeader(c, i), s.Encode()))
		}
	}
	return out
}

func sampleHeader(c codec, i int) Header {
	h := Header{Command: c.cmd, MessageID: uint64(i + 1), TreeID: 5, SessionID: 0x1234, Credits: 1}
	if c.resp {
		h.Flags = FlagResponse
	}
	return h
}

// TestRoundTrip encodes every sample, decodes it and expects the same
// value; the PDU must also survive ParseHeader and re-encoding unchanged.
func TestRoundTrip(t *testing.T) {
	for _, c := range codecs {
		for i, s := range c.samples {
			msg := Marshal(sampleHeader(c, i), s.Encode())
			got, err := c.decode(msg)
			if err != nil {
				t.Fatalf("%s[%d]: %v", c.name, i, err)
			}
			if !reflect.DeepEqual(got, s) {
				t.Fatalf("%s[%d]:\n got %+v\nwant %+v", c.name, i, got, s)
			}
			if again := Marshal(sampleHeader(c, i), got.Encode()); !bytes.Equal(again, msg) {
				t.Fatalf("%s[%d]: second encoding differs", c.name, i)
			}
			if len(msg)-HeaderSize < int(le.Uint16(msg[HeaderSize:])) {
				t.Fatalf("%s[%d]: body of %d bytes is shorter than its StructureSize", c.name, i, len(msg)-HeaderSize)
			}
		}
	}
}

// TestDecodeRejects checks that every decoder refuses a truncated header,
// a wrong StructureSize and a body cut short, with a *MalformedError that
// is STATUS_INVALID_PARAMETER.
func TestDecodeRejects(t *testing.T) {
	for _, c := range codecs {
		msg := Marshal(sampleHeader(c, 0), c.samples[0].Encode())
		size := int(le.Uint16(msg[HeaderSize:]))
		cases := map[string][]byte{
			"empty":           nil,
			"header only":     msg[:HeaderSize],
			"bad protocol id": append([]byte{0xFF}, msg[1:]...),
			"structure size":  append(bytes.Clone(msg[:HeaderSize]), append([]byte{byte(size + 2), 0}, msg[HeaderSize+2:]...)...),
		}
		if fixed := size &^ 1; fixed > 2 {
			cases["fixed part cut"] = msg[:HeaderSize+fixed-1]
		}
		for what, bad := range cases {
			_, err := c.decode(bad)
			var me *MalformedError
			if !errors.As(err, &me) || !errors.Is(err, StatusInvalidParameter) {
				t.Errorf("%s, %s: error %v", c.name, what, err)
			}
		}
	}
}

// TestBufferBounds moves each variable buffer of a request outside the
// message, into the fixed part, or past the end by one byte.
func TestBufferBounds(t *testing.T) {
	type field struct {
		name    string
		msg     []byte
		decode  func([]byte) error
		offAt   int // body offset of the buffer's offset field
		offSize int
		lenAt   int
		lenSize int
	}
	dec := func(f func([]byte) (encoder, error)) func([]byte) error {
		return func(b []byte) error { _, err := f(b); return err }
	}
	byName := map[string]codec{}
	for _, c := range codecs {
		byName[c.name] = c
	}
	msgOf := func(name string, i int) []byte {
		c := byName[name]
		return Marshal(sampleHeader(c, i), c.samples[i].Encode())
	}
	fields := []field{
		{"session setup blob", msgOf("SessionSetupRequest", 0), dec(byName["SessionSetupRequest"].decode), 12, 2, 14, 2},
		{"tree connect path", msgOf("TreeConnectRequest", 0), dec(byName["TreeConnectRequest"].decode), 4, 2, 6, 2},
		{"create name", msgOf("CreateRequest", 0), dec(byName["CreateRequest"].decode), 44, 2, 46, 2},
		{"create contexts", msgOf("CreateRequest", 2), dec(byName["CreateRequest"].decode), 48, 4, 52, 4},
		{"read channel info", msgOf("ReadRequest", 1), dec(byName["ReadRequest"].decode), 44, 2, 46, 2},
		{"write data", msgOf("WriteRequest", 0), dec(byName["WriteRequest"].decode), 2, 2, 4, 4},
		{"write channel info", msgOf("WriteRequest", 1), dec(byName["WriteRequest"].decode), 40, 2, 42, 2},
		{"ioctl input", msgOf("IoctlRequest", 1), dec(byName["IoctlRequest"].decode), 24, 4, 28, 4},
		{"ioctl output", msgOf("IoctlRequest", 1), dec(byName["IoctlRequest"].decode), 36, 4, 40, 4},
		{"query directory pattern", msgOf("QueryDirectoryRequest", 0), dec(byName["QueryDirectoryRequest"].decode), 24, 2, 26, 2},
		{"query info input", msgOf("QueryInfoRequest", 1), dec(byName["QueryInfoRequest"].decode), 8, 2, 12, 4},
		{"set info buffer", msgOf("SetInfoRequest", 0), dec(byName["SetInfoRequest"].decode), 8, 2, 4, 4},
		{"negotiate security buffer", msgOf("NegotiateResponse", 0), dec(byName["NegotiateResponse"].decode), 56, 2, 58, 2},
		{"read response data", msgOf("ReadResponse", 0), dec(byName["ReadResponse"].decode), 2, 1, 4, 4},
		{"query info output", msgOf("QueryInfoResponse", 0), dec(byName["QueryInfoResponse"].decode), 2, 2, 4, 4},
	}
	put := func(b []byte, at, size int, v uint64) {
		switch size {
		case 1:
			b[at] = byte(v)
		case 2:
			le.PutUint16(b[at:], uint16(v))
		case 4:
			le.PutUint32(b[at:], uint32(v))
		}
	}
	get := func(b []byte, at, size int) uint64 {
		switch size {
		case 1:
			return uint64(b[at])
		case 2:
			return uint64(le.Uint16(b[at:]))
		}
		return uint64(le.Uint32(b[at:]))
	}
	for _, f := range fields {
		if err := f.decode(f.msg); err != nil {
			t.Fatalf("%s: valid message rejected: %v", f.name, err)
		}
		body := HeaderSize
		off, n := get(f.msg, body+f.offAt, f.offSize), get(f.msg, body+f.lenAt, f.lenSize)
		if n == 0 {
			t.Fatalf("%s: sample has an empty buffer", f.name)
		}
		fixed := uint64(le.Uint16(f.msg[HeaderSize:]) &^ 1)
		for what, mut := range map[string]func(b []byte){
			"one past the end":   func(b []byte) { put(b, body+f.lenAt, f.lenSize, uint64(len(b))-off+1) },
			"offset past end":    func(b []byte) { put(b, body+f.offAt, f.offSize, uint64(len(b))) },
			"inside fixed part":  func(b []byte) { put(b, body+f.offAt, f.offSize, HeaderSize+fixed-1) },
			"huge length":        func(b []byte) { put(b, body+f.lenAt, f.lenSize, 1<<(8*f.lenSize)-1) },
			"message cut by one": nil,
		} {
			b := bytes.Clone(f.msg)
			if mut != nil {
				mut(b)
			} else {
				if off+n != uint64(len(b)) {
					continue // the buffer is not last in the message
				}
				b = b[:len(b)-1]
			}
			err := f.decode(b)
			if !errors.Is(err, StatusInvalidParameter) {
				t.Errorf("%s, %s: error %v", f.name, what, err)
			}
		}
		// An empty buffer is accepted whatever its offset.
		b := bytes.Clone(f.msg)
		put(b, body+f.lenAt, f.lenSize, 0)
		put(b, body+f.offAt, f.offSize, 1)
		if err := f.decode(b); err != nil {
			t.Errorf("%s: empty buffer with a stray offset rejected: %v", f.name, err)
		}
	}
}

func TestNegotiateRequestValidation(t *testing.T) {
	good := NegotiateRequest{Dialects: []Dialect{Dialect311}, Contexts: []NegotiateContext{
		PreauthIntegrityCapabilities{HashAlgorithms: []uint16{HashSHA512}, Salt: []byte{1}}.Context(),
	}}
	msg := Marshal(Header{}, good.Encode())
	if _, err := DecodeNegotiateRequest(msg); err != nil {
		t.Fatal(err)
	}
	bad := map[string]NegotiateRequest{
		"no dialects": {},
		"two preauth contexts": {Dialects: []Dialect{Dialect311}, Contexts: []NegotiateContext{
			good.Contexts[0], good.Contexts[0]}},
		"two signing contexts": {Dialects: []Dialect{Dialect311}, Contexts: []NegotiateContext{
			SigningCapabilities{Algorithms: []SigningAlgorithm{1}}.Context(), SigningCapabilities{Algorithms: []SigningAlgorithm{1}}.Context()}},
		"two compression contexts": {Dialects: []Dialect{Dialect311}, Contexts: []NegotiateContext{
			{Type: ContextCompression, Data: []byte{0}}, {Type: ContextCompression, Data: []byte{0}}}},
		"no hash algorithms": {Dialects: []Dialect{Dialect311}, Contexts: []NegotiateContext{{Type: ContextPreauthIntegrity, Data: []byte{0, 0, 0, 0}}}},
		"salt too long":      {Dialects: []Dialect{Dialect311}, Contexts: []NegotiateContext{{Type: ContextPreauthIntegrity, Data: []byte{1, 0, 9, 0, 1, 0}}}},
		"no ciphers":         {Dialects: []Dialect{Dialect311}, Contexts: []NegotiateContext{{Type: ContextEncryption, Data: []byte{0, 0}}}},
		"cipher list cut":    {Dialects: []Dialect{Dialect311}, Contexts: []NegotiateContext{{Type: ContextEncryption, Data: []byte{2, 0, 1, 0}}}},
		"signing list empty": {Dialects: []Dialect{Dialect311}, Contexts: []NegotiateContext{{Type: ContextSigning, Data: []byte{1}}}},
	}
	for name, r := range bad {
		if _, err := DecodeNegotiateRequest(Marshal(Header{}, r.Encode())); !errors.Is(err, StatusInvalidParameter) {
			t.Errorf("%s: error %v", name, err)
		}
	}
	// Contexts of a request without 3.1.1 are not parsed: the 8 bytes are
	// ClientStartTime.
	old := Marshal(Header{}, NegotiateRequest{Dialects: []Dialect{Dialect300}, ClientStartTime: 0xFFFFFFFFFFFF}.Encode())
	if r, err := DecodeNegotiateRequest(old); err != nil || r.ClientStartTime != 0xFFFFFFFFFFFF || r.Contexts != nil {
		t.Fatalf("%+v %v", r, err)
	}
	// The context list must not overlap the dialects, and must fit.
	b := bytes.Clone(msg)
	le.PutUint32(b[HeaderSize+28:], HeaderSize+36)
	if _, err := DecodeNegotiateRequest(b); !errors.Is(err, StatusInvalidParameter) {
		t.Fatalf("overlapping context offset: %v", err)
	}
	b = bytes.Clone(msg)
	le.PutUint16(b[HeaderSize+32:], 2)
	if _, err := DecodeNegotiateRequest(b); !errors.Is(err, StatusInvalidParameter) {
		t.Fatalf("count past the end: %v", err)
	}
}

// TestNegotiateResponseLayout checks the offsets the Samba client insists
// on (libcli/smb/smbXcli_base.c, smb2cli_negprot_done: the security buffer
// at 0x80, the contexts after it).
func TestNegotiateResponseLayout(t *testing.T) {
	blob := bytes.Repeat([]byte{0x60}, 30)
	r := NegotiateResponse{DialectRevision: Dialect311, SecurityBuffer: blob, Contexts: []NegotiateContext{
		PreauthIntegrityCapabilities{HashAlgorithms: []uint16{HashSHA512}, Salt: make([]byte, 32)}.Context(),
		SigningCapabilities{Algorithms: []SigningAlgorithm{SigningAESCMAC}}.Context(),
	}}
	msg := Marshal(Header{Flags: FlagResponse}, r.Encode())
	body := msg[HeaderSize:]
	if le.Uint16(body) != 65 || le.Uint16(body[56:]) != 0x80 || le.Uint16(body[58:]) != 30 || le.Uint16(body[6:]) != 2 {
		t.Fatalf("fixed part %x", body[:64])
	}
	ctxOff := int(le.Uint32(body[60:]))
	if ctxOff != 0x80+32 || !bytes.Equal(msg[0x80:0x80+30], blob) {
		t.Fatalf("context offset %#x", ctxOff)
	}
	// PREAUTH: 8 + 38 bytes, then SIGNING at the next multiple of 8.
	if le.Uint16(msg[ctxOff:]) != 1 || le.Uint16(msg[ctxOff+2:]) != 38 || le.Uint16(msg[ctxOff+48:]) != 8 || len(msg) != ctxOff+48+8+4 {
		t.Fatalf("contexts %x", msg[ctxOff:])
	}
}

func TestCreateContexts(t *testing.T) {
	ctxs := []CreateContext{{Name: "MxAc"}, {Name: "QFid", Data: []byte{1, 2, 3, 4, 5}}, {Name: "DH2Q", Data: make([]byte, 32)}}
	e := enc{}
	appendCreateContexts(&e, ctxs)
	b := e.b
	// First: no data, 16-byte header + 4-byte name, padded to 24.
	if le.Uint32(b) != 24 || le.Uint16(b[4:]) != 16 || le.Uint16(b[6:]) != 4 || le.Uint16(b[10:]) != 0 || string(b[16:20]) != "MxAc" {
		t.Fatalf("first context %x", b[:24])
	}
	// Second: data at 24 within the context, 5 bytes; next at 24+29 → 56.
	s := b[24:]
	if le.Uint32(s) != 32 || le.Uint16(s[10:]) != 24 || le.Uint32(s[12:]) != 5 || !bytes.Equal(s[24:29], []byte{1, 2, 3, 4, 5}) {
		t.Fatalf("second context %x", s[:32])
	}
	if last := b[56:]; le.Uint32(last) != 0 || len(last) != 24+32 {
		t.Fatalf("last context %x", last)
	}
	got, err := DecodeCreateContexts(b)
	if err != nil || !reflect.DeepEqual(got, []CreateContext{{Name: "MxAc"}, ctxs[1], ctxs[2]}) {
		t.Fatalf("%+v %v", got, err)
	}
	for name, mut := range map[string]func(b []byte){
		"misaligned next": func(b []byte) { le.PutUint32(b, 20) },
		"next too small":  func(b []byte) { le.PutUint32(b, 8) },
		"next past end":   func(b []byte) { le.PutUint32(b[56:], 64) },
		"empty name":      func(b []byte) { le.PutUint16(b[6:], 0) },
		"name in header":  func(b []byte) { le.PutUint16(b[4:], 8) },
		"name past next":  func(b []byte) { le.PutUint16(b[6:], 9) },
		"data past next":  func(b []byte) { le.PutUint32(b[24+12:], 9) },
		"data in header":  func(b []byte) { le.PutUint16(b[24+10:], 4) },
	} {
		bad := bytes.Clone(b)
		mut(bad)
		if _, err := DecodeCreateContexts(bad); !errors.Is(err, StatusInvalidParameter) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := DecodeCreateContexts(b[:15]); err == nil {
		t.Fatal("15-byte context accepted")
	}
}

func TestCreateNames(t *testing.T) {
	r := CreateRequest{Name: "dir\\f\u00e9\U0001F600"}
	msg := Marshal(Header{Command: CommandCreate}, r.Encode())
	if le.Uint16(msg[HeaderSize+44:]) != 0x78 || le.Uint16(msg[HeaderSize+46:]) != uint16(2*8) {
		t.Fatalf("name offset/length %x", msg[HeaderSize+44:HeaderSize+48])
	}
	got, err := DecodeCreateRequest(msg)
	if err != nil || got.Name != r.Name {
		t.Fatalf("%q %v", got.Name, err)
	}
	for name, raw := range map[string][]byte{
		"odd length":        {'a', 0, 'b'},
		"lone high":         {0x3D, 0xD8, 'a', 0},
		"lone low":          {0x00, 0xDE},
		"high at the end":   {'a', 0, 0x3D, 0xD8},
		"two high in a row": {0x3D, 0xD8, 0x3D, 0xD8},
	} {
		b := append(bytes.Clone(msg[:HeaderSize+56]), raw...)
		le.PutUint16(b[HeaderSize+46:], uint16(len(raw)))
		if _, err := DecodeCreateRequest(b); !errors.Is(err, StatusInvalidParameter) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestLockRequestValidation(t *testing.T) {
	msg := Marshal(Header{}, LockRequest{Locks: []LockElement{{Length: 1}, {Length: 2}}}.Encode())
	if len(msg) != HeaderSize+24+48 {
		t.Fatalf("length %d", len(msg))
	}
	le.PutUint16(msg[HeaderSize+2:], 3)
	if _, err := DecodeLockRequest(msg); !errors.Is(err, StatusInvalidParameter) {
		t.Fatalf("LockCount past the end: %v", err)
	}
	le.PutUint16(msg[HeaderSize+2:], 0)
	if _, err := DecodeLockRequest(msg); !errors.Is(err, StatusInvalidParameter) {
		t.Fatalf("LockCount 0: %v", err)
	}
}

func TestTreeConnectExtension(t *testing.T) {
	msg := Marshal(Header{}, TreeConnectRequest{Flags: TreeConnectFlagExtensionPresent, Path: `\\s\x`}.Encode())
	if le.Uint16(msg[HeaderSize+4:]) != HeaderSize+8+16 {
		t.Fatalf("path offset %d", le.Uint16(msg[HeaderSize+4:]))
	}
	// The path must not overlap the extension header.
	b := bytes.Clone(msg)
	le.PutUint16(b[HeaderSize+4:], HeaderSize+8)
	if _, err := DecodeTreeConnectRequest(b); !errors.Is(err, StatusInvalidParameter) {
		t.Fatalf("path inside the extension: %v", err)
	}
	// A flag without room for the extension.
	short := Marshal(Header{}, TreeConnectRequest{Path: `\\s\x`}.Encode())
	le.PutUint16(short[HeaderSize+2:], TreeConnectFlagExtensionPresent)
	if _, err := DecodeTreeConnectRequest(short[:HeaderSize+8+10]); !errors.Is(err, StatusInvalidParameter) {
		t.Fatalf("missing extension: %v", err)
	}
}

func TestSplitSharePath(t *testing.T) {
	for in, want := range map[string][2]string{
		`\\127.0.0.1\share`: {"127.0.0.1", "share"},
		`\\h\IPC$`:          {"h", "IPC$"},
	} {
		s, sh, ok := SplitSharePath(in)
		if !ok || s != want[0] || sh != want[1] {
			t.Errorf("%q: %q %q %v", in, s, sh, ok)
		}
	}
	for _, in := range []string{``, `\\h`, `\\h\`, `\\\share`, `\h\share`, `\\h\share\sub`, `//h/share`} {
		if _, _, ok := SplitSharePath(in); ok {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestIoctlLayout(t *testing.T) {
	out := ValidateNegotiateInfoResponse{Capabilities: CapLargeMTU, GUID: [16]byte{1}, SecurityMode: SigningEnabled, Dialect: Dialect302}.Encode()
	msg := Marshal(Header{Flags: FlagResponse}, IoctlResponse{CtlCode: FsctlValidateNegotiateInfo, FileID: FileIDAllOnes, Output: out}.Encode())
	body := msg[HeaderSize:]
	if le.Uint32(body[24:]) != 0x70 || le.Uint32(body[28:]) != 0 || le.Uint32(body[32:]) != 0x70 || le.Uint32(body[36:]) != 24 || !bytes.Equal(msg[0x70:], out) {
		t.Fatalf("ioctl response %x", body)
	}
	msg = Marshal(Header{Flags: FlagResponse}, IoctlResponse{Input: []byte{1, 2, 3}, Output: []byte{9}}.Encode())
	if le.Uint32(msg[HeaderSize+32:]) != 0x78 || msg[0x78] != 9 {
		t.Fatalf("output not 8-aligned after the input: %x", msg[HeaderSize:])
	}
	if _, err := DecodeValidateNegotiateInfoRequest(make([]byte, 23)); err == nil {
		t.Fatal("short VALIDATE_NEGOTIATE accepted")
	}
	in := ValidateNegotiateInfoRequest{Dialects: []Dialect{1, 2}}.Encode()
	if _, err := DecodeValidateNegotiateInfoRequest(in[:len(in)-1]); err == nil {
		t.Fatal("cut dialect list accepted")
	}
	if _, err := DecodeValidateNegotiateInfoResponse(make([]byte, 23)); err == nil {
		t.Fatal("short VALIDATE_NEGOTIATE response accepted")
	}
}

func TestResponseLayouts(t *testing.T) {
	// Error body: StructureSize 9, no contexts, ByteCount 0, one zero byte.
	if got := (ErrorResponse{}).Encode(); !bytes.Equal(got, []byte{9, 0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Fatalf("error body %x", got)
	}
	// READ: data at 0x50.
	msg := Marshal(Header{Flags: FlagResponse}, ReadResponse{Data: []byte("abc"), DataRemaining: 2}.Encode())
	if msg[HeaderSize+2] != 0x50 || string(msg[0x50:]) != "abc" || le.Uint32(msg[HeaderSize+4:]) != 3 {
		t.Fatalf("read response %x", msg[HeaderSize:])
	}
	prefix := ReadResponse{Data: []byte("abc"), DataRemaining: 2}.EncodePrefix()
	if !bytes.Equal(append(prefix, "abc"...), msg[HeaderSize:]) {
		t.Fatal("EncodePrefix + data differs from Encode")
	}
	// Empty READ: the body is still 17 bytes.
	if n := len(ReadResponse{}.Encode()); n != 17 {
		t.Fatalf("empty read body %d bytes", n)
	}
	// CREATE: FileId at body offset 64; contexts at 0x98.
	msg = Marshal(Header{Flags: FlagResponse}, CreateResponse{FileID: fid, Contexts: []CreateContext{MaximalAccessContext(0, FileAllAccess)}}.Encode())
	if le.Uint64(msg[HeaderSize+64:]) != fid.Persistent || le.Uint32(msg[HeaderSize+80:]) != 0x98 || string(msg[0x98+16:0x98+20]) != "MxAc" {
		t.Fatalf("create response %x", msg[HeaderSize:])
	}
	if le.Uint32(msg[0x98+24:]) != 0 || le.Uint32(msg[0x98+28:]) != uint32(FileAllAccess) {
		t.Fatalf("MxAc data %x", msg[0x98:])
	}
	// Fixed-size responses have their documented sizes.
	for name, c := range map[string]struct {
		body []byte
		n    int
	}{
		"close":           {CloseResponse{}.Encode(), 60},
		"tree connect":    {TreeConnectResponse{}.Encode(), 16},
		"write":           {WriteResponse{}.Encode(), 17},
		"set info":        {SetInfoResponse{}.Encode(), 2},
		"echo":            {EchoResponse{}.Encode(), 4},
		"session (empty)": {SessionSetupResponse{}.Encode(), 9},
		"query dir":       {QueryDirectoryResponse{Output: []byte{1, 2}}.Encode(), 10},
	} {
		if len(c.body) != c.n {
			t.Errorf("%s body %d bytes, want %d", name, len(c.body), c.n)
		}
	}
	if got := (QueryInfoResponse{Output: []byte{7}}).Encode(); le.Uint16(got[2:]) != 0x48 || got[8] != 7 {
		t.Fatalf("query info body %x", got)
	}
}

func TestHeader(t *testing.T) {
	req := Header{CreditCharge: 3, ChannelSequence: 9, Command: CommandRead, Credits: 64, Flags: FlagSigned | 0x10 | FlagRelated | FlagDFS | FlagReplay, NextCommand: 0, MessageID: 77, TreeID: 5, SessionID: 0xABCD, Signature: [16]byte{1}}
	b := req.AppendTo(nil)
	if len(b) != HeaderSize || le.Uint16(b[8:]) != 9 || le.Uint32(b[36:]) != 5 || le.Uint32(b[32:]) != 0 {
		t.Fatalf("request header %x", b)
	}
	got, err := ParseHeader(b)
	if err != nil || got != req {
		t.Fatalf("%+v %v", got, err)
	}
	resp := req.Reply(StatusEndOfFile)
	want := Header{CreditCharge: 3, Status: StatusEndOfFile, Command: CommandRead, Flags: FlagResponse | 0x10 | FlagRelated | FlagDFS, MessageID: 77, TreeID: 5, SessionID: 0xABCD}
	if resp != want {
		t.Fatalf("reply %+v\nwant %+v", resp, want)
	}
	rb := resp.AppendTo(nil)
	if le.Uint32(rb[8:]) != uint32(StatusEndOfFile) {
		t.Fatalf("status field %x", rb[8:12])
	}
	if back, _ := ParseHeader(rb); back != resp {
		t.Fatalf("response round trip %+v", back)
	}
	async := Header{Flags: FlagResponse | FlagAsync, AsyncID: 0x0102030405060708, Status: StatusPending, Command: CommandLock}
	ab := async.AppendTo(nil)
	if le.Uint64(ab[32:]) != async.AsyncID {
		t.Fatalf("async id field %x", ab[32:40])
	}
	if back, _ := ParseHeader(ab); back != async || back.TreeID != 0 || !back.IsAsync() || !back.IsResponse() {
		t.Fatalf("async round trip %+v", back)
	}
	if r := async.Reply(0); r.AsyncID != async.AsyncID || !r.IsAsync() {
		t.Fatalf("async reply %+v", r)
	}
	for name, bad := range map[string][]byte{
		"short":          b[:63],
		"protocol":       append([]byte{0xFD}, b[1:]...),
		"structure size": append(bytes.Clone(b[:4]), append([]byte{65, 0}, b[6:]...)...),
	} {
		if _, err := ParseHeader(bad); !errors.Is(err, StatusInvalidParameter) {
			t.Errorf("%s: %v", name, err)
		}
	}
	e := NewErrorMessage(req, StatusAccessDenied, 7)
	h, _ := ParseHeader(e)
	if h.Status != StatusAccessDenied || h.Credits != 7 || !h.IsResponse() || !bytes.Equal(e[HeaderSize:], ErrorResponse{}.Encode()) {
		t.Fatalf("error message %+v %x", h, e)
	}
}

func TestProtocolOf(t *testing.T) {
	for in, want := range map[string]Protocol{
		"\xfeSMB....":  ProtocolSMB2,
		"\xfdSMB":      ProtocolTransform,
		"\xfcSMB":      ProtocolCompression,
		"\xffSMBr":     ProtocolSMB1,
		"\xfeSM":       ProtocolUnknown,
		"GET / HTTP/1": ProtocolUnknown,
	} {
		if got := ProtocolOf([]byte(in)); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}

func TestStatus(t *testing.T) {
	if StatusSharingViolation.String() != "STATUS_SHARING_VIOLATION" || Status(0xC0001234).String() != "NTSTATUS(0xC0001234)" {
		t.Fatal(StatusSharingViolation.String(), Status(0xC0001234).String())
	}
	if !StatusAccessDenied.IsError() || StatusBufferOverflow.IsError() || StatusPending.IsError() || StatusNoMoreFiles.IsError() {
		t.Fatal("IsError")
	}
	wrapped := errors.Join(errors.New("ctx"), StatusDeletePending)
	if s, ok := AsStatus(wrapped); !ok || s != StatusDeletePending {
		t.Fatalf("AsStatus %v %v", s, ok)
	}
	if _, ok := AsStatus(errors.New("plain")); ok {
		t.Fatal("AsStatus found a status in a plain error")
	}
	_, err := DecodeCloseRequest(nil)
	if s, ok := AsStatus(err); !ok || s != StatusInvalidParameter || !strings.Contains(err.Error(), "CLOSE request") {
		t.Fatalf("malformed close: %v", err)
	}
	for s, n := range statusNames {
		if !strings.HasPrefix(n, "STATUS_") || s.String() != n {
			t.Errorf("%08X: %q", uint32(s), n)
		}
	}
	if CommandSetInfo.String() != "SET_INFO" || Command(99).String() != "COMMAND(0x0063)" {
		t.Fatal(CommandSetInfo.String(), Command(99).String())
	}
	if Dialect311.String() != "3.1.1" || Dialect(0x0400).String() != "0x0400" {
		t.Fatal("dialect names")
	}
}

func TestSMB1Negotiate(t *testing.T) {
	msg := EncodeSMB1Negotiate([]string{"NT LM 0.12", SMB1DialectSMB2002, SMB1DialectSMB2Wildcard})
	if ProtocolOf(msg) != ProtocolSMB1 {
		t.Fatal("not SMB1")
	}
	got, err := DecodeSMB1Negotiate(msg)
	if err != nil || !reflect.DeepEqual(got, []string{"NT LM 0.12", "SMB 2.002", "SMB 2.???"}) {
		t.Fatalf("%q %v", got, err)
	}
	for name, mut := range map[string]func([]byte) []byte{
		"not negotiate":  func(b []byte) []byte { b[4] = 0x73; return b },
		"word count":     func(b []byte) []byte { b[32] = 1; return b },
		"byte count":     func(b []byte) []byte { le.PutUint16(b[33:], 0xFFFF); return b },
		"no terminator":  func(b []byte) []byte { return b[:len(b)-1] },
		"buffer format":  func(b []byte) []byte { b[35] = 0x03; return b },
		"short":          func(b []byte) []byte { return b[:34] },
		"smb2 signature": func(b []byte) []byte { b[0] = 0xFE; return b },
	} {
		b := mut(bytes.Clone(msg))
		if name == "no terminator" {
			le.PutUint16(b[33:], le.Uint16(b[33:])-1)
		}
		if _, err := DecodeSMB1Negotiate(b); !errors.Is(err, StatusInvalidParameter) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

package smb

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

func TestNegotiateDialects(t *testing.T) {
	e := newTestEnv(t)
	for _, tc := range []struct {
		offer []smb2.Dialect
		want  smb2.Dialect
	}{
		{[]smb2.Dialect{0x0202, 0x0210, 0x0300, 0x0302, 0x0311}, smb2.Dialect311},
		{[]smb2.Dialect{0x0202, 0x0210, 0x0300, 0x0302}, smb2.Dialect302},
		{[]smb2.Dialect{0x0300}, smb2.Dialect300},
		{[]smb2.Dialect{0x0210}, smb2.Dialect210},
		{[]smb2.Dialect{0x0202}, smb2.Dialect202},
	} {
		c := e.dial()
		nr, r := c.negotiate(tc.offer...)
		status(t, r, smb2.StatusSuccess)
		if nr.DialectRevision != tc.want {
			t.Errorf("offer %v: dialect %v, want %v", tc.offer, nr.DialectRevision, tc.want)
		}
		if r.hdr.Credits != 1 {
			t.Errorf("NEGOTIATE granted %d credits, want 1", r.hdr.Credits)
		}
		if nr.SecurityMode != smb2.SigningEnabled || len(nr.SecurityBuffer) == 0 || nr.MaxReadSize == 0 {
			t.Errorf("response %+v", nr)
		}
		if tc.want == smb2.Dialect311 {
			var types []smb2.NegotiateContextType
			for _, ctx := range nr.Contexts {
				types = append(types, ctx.Type)
			}
			if len(types) != 2 || types[0] != smb2.ContextPreauthIntegrity || types[1] != smb2.ContextSigning {
				t.Errorf("3.1.1 contexts %v, want PREAUTH and SIGNING", types)
			}
			if c.alg != smb2.SigningAESCMAC {
				t.Errorf("signing algorithm %v, want AES-CMAC", c.alg)
			}
		}
		// A second NEGOTIATE drops the connection.
		c.send(c.req(smb2.CommandNegotiate, smb2.NegotiateRequest{Dialects: tc.offer}.Encode()))
		c.expectClosed()
	}
	// No common dialect: STATUS_NOT_SUPPORTED, then the connection closes.
	c := e.dial()
	_, r := c.negotiate(0x0200)
	status(t, r, smb2.StatusNotSupported)
	c.expectClosed()
	// Anything before NEGOTIATE drops the connection.
	c = e.dial()
	c.send(c.req(smb2.CommandEcho, smb2.EchoRequest{}.Encode()))
	c.expectClosed()
}

func TestSMB1Upgrade(t *testing.T) {
	e := newTestEnv(t)
	c := e.dial()
	if err := smb2.WriteFrame(c.nc, smb2.EncodeSMB1Negotiate([]string{"NT LM 0.12", "SMB 2.002", "SMB 2.???"})); err != nil {
		t.Fatal(err)
	}
	r := c.recv()
	nr, err := smb2.DecodeNegotiateResponse(r.msg)
	if err != nil || nr.DialectRevision != smb2.DialectWildcard {
		t.Fatalf("SMB1 upgrade: %+v %v", nr, err)
	}
	c.mid = 1
	nr, r = c.negotiate(smb2.Dialect210, smb2.Dialect311)
	status(t, r, smb2.StatusSuccess)
	if nr.DialectRevision != smb2.Dialect311 {
		t.Fatalf("dialect after upgrade %v", nr.DialectRevision)
	}
	// SMB1 without an SMB2 dialect closes the connection.
	c = e.dial()
	if err := smb2.WriteFrame(c.nc, smb2.EncodeSMB1Negotiate([]string{"NT LM 0.12"})); err != nil {
		t.Fatal(err)
	}
	c.expectClosed()
}

func TestLogonAllDialects(t *testing.T) {
	e := newTestEnv(t)
	for _, d := range []smb2.Dialect{smb2.Dialect202, smb2.Dialect210, smb2.Dialect300, smb2.Dialect302, smb2.Dialect311} {
		for _, key := range []string{testKey1, testKey2} {
			c := e.dial()
			c.negotiate(d)
			// The user name is matched without regard to case.
			if st := c.login("ACCT", key, 1); st != smb2.StatusSuccess {
				t.Fatalf("%v: login: %v", d, st)
			}
			if c.credits < 64 {
				t.Errorf("%v: final SESSION_SETUP granted %d credits", d, c.credits)
			}
			// TREE_CONNECT is signed as smbclient signs it; the reply
			// must be signed too.
			c.sign = true
			r := c.treeConnect(testShare)
			status(t, r, smb2.StatusSuccess)
			if r.hdr.Flags&smb2.FlagSigned == 0 || !smb2.Verify(r.msg, c.key, c.alg) {
				t.Fatalf("%v: TREE_CONNECT response not signed", d)
			}
			if d != smb2.Dialect311 {
				c.validateNegotiate(t, d)
			}
		}
	}
	for _, tc := range []struct{ user, key string }{
		{testAcct, "wrong"},
		{testAcct, testKey1[:40]},
		{"nobody", testKey1},
	} {
		c := e.dial()
		c.negotiate(smb2.Dialect311)
		if st := c.login(tc.user, tc.key, 1); st != smb2.StatusLogonFailure {
			t.Errorf("login %s/%q: %v, want LOGON_FAILURE", tc.user, tc.key, st)
		}
		// The failed session is gone.
		c.sign = false
		status(t, c.call(smb2.CommandTreeConnect, smb2.TreeConnectRequest{Path: `\\h\` + testShare}.Encode()), smb2.StatusUserSessionDeleted)
	}
}

// validateNegotiate sends FSCTL_VALIDATE_NEGOTIATE_INFO as smbclient
// does below 3.1.1.
func (c *rawClient) validateNegotiate(t *testing.T, d smb2.Dialect) {
	t.Helper()
	// The NEGOTIATE the client sent: negotiate() uses Capabilities 0x7f,
	// SecurityMode 1 and a random GUID it does not keep, so a claim made
	// here cannot match: the server must drop the connection.
	in := smb2.ValidateNegotiateInfoRequest{Capabilities: 0x7f, SecurityMode: 1, Dialects: []smb2.Dialect{d}}.Encode()
	c.send(c.req(smb2.CommandIoctl, smb2.IoctlRequest{CtlCode: smb2.FsctlValidateNegotiateInfo, FileID: smb2.FileIDAllOnes, MaxOutputResponse: 24, Flags: smb2.IoctlFlagIsFsctl, Input: in}.Encode()))
	c.expectClosed()
}

func TestValidateNegotiate(t *testing.T) {
	e := newTestEnv(t)
	c := e.dial()
	req := smb2.NegotiateRequest{SecurityMode: 1, Capabilities: 0x7f, ClientGUID: [16]byte{1, 2, 3}, Dialects: []smb2.Dialect{0x0202, 0x0210, 0x0300, 0x0302}}
	r := c.call(smb2.CommandNegotiate, req.Encode())
	nr, err := smb2.DecodeNegotiateResponse(r.msg)
	if err != nil {
		t.Fatal(err)
	}
	c.dialect, c.alg = nr.DialectRevision, smb2.DefaultSigningAlgorithm(nr.DialectRevision)
	if st := c.login(testAcct, testKey1, 1); st != smb2.StatusSuccess {
		t.Fatal(st)
	}
	c.sign = true
	c.treeConnect("IPC$")
	in := smb2.ValidateNegotiateInfoRequest{Capabilities: req.Capabilities, GUID: req.ClientGUID, SecurityMode: 1, Dialects: req.Dialects}.Encode()
	r = c.call(smb2.CommandIoctl, smb2.IoctlRequest{CtlCode: smb2.FsctlValidateNegotiateInfo, FileID: smb2.FileIDAllOnes, MaxOutputResponse: 24, Flags: smb2.IoctlFlagIsFsctl, Input: in}.Encode())
	status(t, r, smb2.StatusSuccess)
	if !smb2.Verify(r.msg, c.key, c.alg) {
		t.Fatal("VALIDATE_NEGOTIATE_INFO response not signed")
	}
	ir, err := smb2.DecodeIoctlResponse(r.msg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := smb2.DecodeValidateNegotiateInfoResponse(ir.Output)
	if err != nil {
		t.Fatal(err)
	}
	if v.Dialect != nr.DialectRevision || v.GUID != nr.ServerGUID || v.Capabilities != nr.Capabilities || v.SecurityMode != nr.SecurityMode {
		t.Fatalf("validate response %+v, negotiate %+v", v, nr)
	}
	// Other FSCTLs on IPC$: DFS referrals and unknown codes.
	r = c.call(smb2.CommandIoctl, smb2.IoctlRequest{CtlCode: smb2.FsctlDFSGetReferrals, FileID: smb2.FileIDAllOnes, MaxOutputResponse: 4096, Flags: smb2.IoctlFlagIsFsctl}.Encode())
	status(t, r, smb2.StatusFSDriverRequired)
	r = c.call(smb2.CommandIoctl, smb2.IoctlRequest{CtlCode: smb2.FsctlSrvEnumerateSnapshots, FileID: smb2.FileIDAllOnes, MaxOutputResponse: 4096, Flags: smb2.IoctlFlagIsFsctl}.Encode())
	status(t, r, smb2.StatusFileClosed)
}

func TestSigningEnforced(t *testing.T) {
	e := newTestEnv(t)
	c := e.connect()
	// A good signature gets a signed reply.
	r := c.call(smb2.CommandEcho, smb2.EchoRequest{}.Encode())
	status(t, r, smb2.StatusSuccess)
	if !smb2.Verify(r.msg, c.key, c.alg) {
		t.Fatal("reply to a signed request is not signed")
	}
	// A bad signature is refused.
	m := c.req(smb2.CommandTreeConnect, smb2.TreeConnectRequest{Path: `\\h\` + testShare}.Encode())
	p := c.bytes(m)
	p[smb2.HeaderSize-1] ^= 0xff
	if err := smb2.WriteFrame(c.nc, p); err != nil {
		t.Fatal(err)
	}
	r = c.recv()
	status(t, r, smb2.StatusAccessDenied)
	if r.hdr.Flags&smb2.FlagSigned != 0 {
		t.Fatal("reply to a forged request is signed")
	}
	// Unsigned requests are fine when the client did not require signing,
	// and get unsigned replies.
	c.sign = false
	r = c.call(smb2.CommandEcho, smb2.EchoRequest{}.Encode())
	status(t, r, smb2.StatusSuccess)
	if r.hdr.Flags&smb2.FlagSigned != 0 {
		t.Fatal("reply to an unsigned request is signed")
	}

	// A client that requires signing: unsigned requests are refused.
	c2 := e.dial()
	c2.negotiate(smb2.Dialect311)
	if st := c2.login(testAcct, testKey2, uint8(smb2.SigningEnabled|smb2.SigningRequired)); st != smb2.StatusSuccess {
		t.Fatal(st)
	}
	r = c2.call(smb2.CommandTreeConnect, smb2.TreeConnectRequest{Path: `\\h\` + testShare}.Encode())
	status(t, r, smb2.StatusAccessDenied)
	c2.sign = true
	status(t, c2.treeConnect(testShare), smb2.StatusSuccess)
}

func TestTreeAndSessionLifecycle(t *testing.T) {
	e := newTestEnv(t)
	c := e.connect()
	status(t, c.treeConnect("nosuchshare"), smb2.StatusBadNetworkName)
	status(t, c.treeConnect("SHARE1"), smb2.StatusSuccess) // case-insensitive
	// IPC$ is a pipe tree where no pipe can be opened.
	r := c.treeConnect("IPC$")
	status(t, r, smb2.StatusSuccess)
	tc, _ := smb2.DecodeTreeConnectResponse(r.msg)
	if tc.ShareType != smb2.ShareTypePipe {
		t.Fatalf("IPC$ share type %d", tc.ShareType)
	}
	_, r = c.create("srvsvc", 0x12019f, 3, smb2.FileOpen, 0)
	status(t, r, smb2.StatusObjectNameNotFound)

	c.treeConnect(testShare)
	fid, r := c.create("f.txt", smb2.FileAllAccess, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusSuccess)
	status(t, c.close(fid), smb2.StatusSuccess)
	status(t, c.close(fid), smb2.StatusFileClosed)
	// A tree disconnect closes the tree's opens; the tree is then gone.
	_, r = c.create("f.txt", smb2.FileAllAccess, 0, smb2.FileOpen, 0)
	status(t, r, smb2.StatusSuccess)
	status(t, c.call(smb2.CommandTreeDisconnect, smb2.TreeDisconnectRequest{}.Encode()), smb2.StatusSuccess)
	status(t, c.call(smb2.CommandTreeDisconnect, smb2.TreeDisconnectRequest{}.Encode()), smb2.StatusNetworkNameDeleted)
	c.treeConnect(testShare)
	// Share mode none above was released: this open succeeds.
	_, r = c.create("f.txt", smb2.FileAllAccess, 0, smb2.FileOpen, 0)
	status(t, r, smb2.StatusSuccess)
	// LOGOFF closes the session's handles; the session is then gone.
	status(t, c.call(smb2.CommandLogoff, smb2.LogoffRequest{}.Encode()), smb2.StatusSuccess)
	r = c.call(smb2.CommandLogoff, smb2.LogoffRequest{}.Encode())
	status(t, r, smb2.StatusUserSessionDeleted)
	if r.hdr.Flags&smb2.FlagSigned != 0 {
		t.Fatal("USER_SESSION_DELETED must not be signed")
	}
	c2 := e.connect()
	_, r = c2.create("f.txt", smb2.FileAllAccess, 0, smb2.FileOpen, 0)
	status(t, r, smb2.StatusSuccess)
}

func TestCreditsAndMessageIDs(t *testing.T) {
	e := newTestEnv(t)
	// A MessageId used twice drops the connection.
	c := e.connect()
	m := c.req(smb2.CommandEcho, smb2.EchoRequest{}.Encode())
	c.send(m)
	status(t, c.recv(), smb2.StatusSuccess)
	c.send(m)
	c.expectClosed()

	// A MessageId beyond the granted window drops the connection.
	c = e.connect()
	c.mid += 10000
	c.send(c.req(smb2.CommandEcho, smb2.EchoRequest{}.Encode()))
	c.expectClosed()

	// Out-of-order MessageIds inside the window are fine, and a
	// multi-credit request consumes its whole range.
	c = e.connect()
	a, b := c.req(smb2.CommandEcho, smb2.EchoRequest{}.Encode()), c.req(smb2.CommandEcho, smb2.EchoRequest{}.Encode())
	c.send(b)
	status(t, c.recv(), smb2.StatusSuccess)
	c.send(a)
	status(t, c.recv(), smb2.StatusSuccess)
	m = c.req(smb2.CommandEcho, smb2.EchoRequest{}.Encode())
	m.hdr.CreditCharge = 3
	c.mid += 2
	c.send(m)
	status(t, c.recv(), smb2.StatusSuccess)
	m2 := c.req(smb2.CommandEcho, smb2.EchoRequest{}.Encode())
	m2.hdr.MessageID = m.hdr.MessageID + 2 // inside the range m consumed
	c.send(m2)
	c.expectClosed()

	// A READ larger than its CreditCharge covers is INVALID_PARAMETER.
	c = e.connect()
	fid, r := c.create("big", smb2.FileAllAccess, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusSuccess)
	m = c.req(smb2.CommandRead, smb2.ReadRequest{Length: 200000, FileID: fid}.Encode())
	c.send(m)
	status(t, c.recv(), smb2.StatusInvalidParameter)
	m = c.req(smb2.CommandRead, smb2.ReadRequest{Length: 200000, FileID: fid}.Encode())
	m.hdr.CreditCharge = 4
	c.mid += 3
	c.send(m)
	status(t, c.recv(), smb2.StatusEndOfFile)
}

func TestCompound(t *testing.T) {
	e := newTestEnv(t)
	c := e.connect()
	data := []byte("compound data")
	// CREATE + WRITE + QUERY_INFO + CLOSE, related: the FileId comes from
	// the CREATE.
	cr := c.req(smb2.CommandCreate, smb2.CreateRequest{ImpersonationLevel: 2, DesiredAccess: smb2.FileAllAccess, ShareAccess: 7, CreateDisposition: smb2.FileCreate, Name: "c.txt"}.Encode())
	wr := c.req(smb2.CommandWrite, smb2.WriteRequest{FileID: smb2.FileIDAllOnes, Data: data}.Encode())
	qi := c.req(smb2.CommandQueryInfo, smb2.QueryInfoRequest{InfoType: smb2.InfoTypeFile, FileInfoClass: smb2.FileStandardInformationClass, OutputBufferLength: 1024, FileID: smb2.FileIDAllOnes}.Encode())
	cl := c.req(smb2.CommandClose, smb2.CloseRequest{Flags: smb2.CloseFlagPostQueryAttrib, FileID: smb2.FileIDAllOnes}.Encode())
	for _, m := range []*msg{wr, qi, cl} {
		m.hdr.Flags |= smb2.FlagRelated
		m.hdr.SessionID, m.hdr.TreeID = ^uint64(0), ^uint32(0)
	}
	c.send(cr, wr, qi, cl)
	rs := c.recvFrame()
	if len(rs) != 4 {
		t.Fatalf("%d responses, want one compound of 4", len(rs))
	}
	for i, r := range rs {
		status(t, r, smb2.StatusSuccess)
		if !smb2.Verify(r.msg, c.key, c.alg) {
			t.Errorf("response %d not signed over its own bytes", i)
		}
		if i < 3 && (len(r.msg)%8 != 0 || r.hdr.NextCommand != uint32(len(r.msg))) {
			t.Errorf("response %d: NextCommand %d, length %d", i, r.hdr.NextCommand, len(r.msg))
		}
	}
	qr, _ := smb2.DecodeQueryInfoResponse(rs[2].msg)
	std, err := smb2.DecodeFileStandardInformation(qr.Output)
	if err != nil || std.EndOfFile != int64(len(data)) {
		t.Fatalf("standard info %+v %v", std, err)
	}
	clr, _ := smb2.DecodeCloseResponse(rs[3].msg)
	if clr.Attrs.EndOfFile != int64(len(data)) {
		t.Fatalf("close EndOfFile %d", clr.Attrs.EndOfFile)
	}
	// A related chain whose CREATE fails: the others get its status.
	cr = c.req(smb2.CommandCreate, smb2.CreateRequest{ImpersonationLevel: 2, DesiredAccess: smb2.FileAllAccess, ShareAccess: 7, CreateDisposition: smb2.FileOpen, Name: "missing"}.Encode())
	cl = c.req(smb2.CommandClose, smb2.CloseRequest{FileID: smb2.FileIDAllOnes}.Encode())
	cl.hdr.Flags |= smb2.FlagRelated
	c.send(cr, cl)
	rs = c.recvFrame()
	status(t, rs[0], smb2.StatusObjectNameNotFound)
	status(t, rs[1], smb2.StatusObjectNameNotFound)
	// Unrelated all-ones FileIds are unknown; a first PDU marked related
	// is invalid.
	e1 := c.req(smb2.CommandEcho, smb2.EchoRequest{}.Encode())
	e1.hdr.Flags |= smb2.FlagRelated
	cl = c.req(smb2.CommandClose, smb2.CloseRequest{FileID: smb2.FileIDAllOnes}.Encode())
	c.send(e1, cl)
	rs = c.recvFrame()
	status(t, rs[0], smb2.StatusInvalidParameter)
	status(t, rs[1], smb2.StatusFileClosed)
	// A compound whose NextCommand points outside the frame drops the
	// connection.
	p := smb2.Marshal(c.req(smb2.CommandEcho, smb2.EchoRequest{}.Encode()).hdr, smb2.EchoRequest{}.Encode())
	binary.LittleEndian.PutUint32(p[20:], 4096)
	if err := smb2.WriteFrame(c.nc, p); err != nil {
		t.Fatal(err)
	}
	c.expectClosed()
}

func TestChangeNotifyCancel(t *testing.T) {
	e := newTestEnv(t)
	c := e.connect()
	dir, r := c.create("", 0x81, 7, smb2.FileOpen, smb2.FileDirectoryFile)
	status(t, r, smb2.StatusSuccess)
	m := c.req(smb2.CommandChangeNotify, smb2.ChangeNotifyRequest{OutputBufferLength: 4096, FileID: dir, CompletionFilter: 0x17}.Encode())
	c.send(m)
	interim := c.recv()
	status(t, interim, smb2.StatusPending)
	if interim.hdr.Flags&smb2.FlagAsync == 0 || interim.hdr.AsyncID == 0 || interim.hdr.Credits == 0 {
		t.Fatalf("interim header %+v", interim.hdr)
	}
	cancel := smb2.Header{Command: smb2.CommandCancel, Flags: smb2.FlagAsync, AsyncID: interim.hdr.AsyncID, SessionID: c.sid}
	if err := smb2.WriteFrame(c.nc, smb2.Marshal(cancel, smb2.CancelRequest{}.Encode())); err != nil {
		t.Fatal(err)
	}
	final := c.recv()
	status(t, final, smb2.StatusCancelled)
	if final.hdr.MessageID != m.hdr.MessageID || final.hdr.AsyncID != interim.hdr.AsyncID || final.hdr.Credits != 0 {
		t.Fatalf("final header %+v", final.hdr)
	}
	// A pending notify completes with NOTIFY_CLEANUP when its open
	// closes, before the CLOSE response.
	c.send(c.req(smb2.CommandChangeNotify, smb2.ChangeNotifyRequest{OutputBufferLength: 4096, FileID: dir, CompletionFilter: 0x17}.Encode()))
	status(t, c.recv(), smb2.StatusPending)
	c.send(c.req(smb2.CommandClose, smb2.CloseRequest{FileID: dir}.Encode()))
	status(t, c.recv(), smb2.StatusNotifyCleanup)
	status(t, c.recv(), smb2.StatusSuccess)
}

func TestFileOperations(t *testing.T) {
	e := newTestEnv(t)
	c := e.connect()
	fid, r := c.create("d", 0x80, 7, smb2.FileCreate, smb2.FileDirectoryFile)
	status(t, r, smb2.StatusSuccess)
	status(t, c.close(fid), smb2.StatusSuccess)
	fid, r = c.create(`d\f.bin`, smb2.FileAllAccess, 3, smb2.FileOverwriteIf, smb2.FileNonDirectoryFile)
	status(t, r, smb2.StatusSuccess)
	payload := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	status(t, c.call(smb2.CommandWrite, smb2.WriteRequest{FileID: fid, Data: payload}.Encode()), smb2.StatusSuccess)
	r = c.call(smb2.CommandRead, smb2.ReadRequest{FileID: fid, Length: 65536, Offset: 0}.Encode())
	status(t, r, smb2.StatusSuccess)
	rd, err := smb2.DecodeReadResponse(r.msg)
	if err != nil || !bytes.Equal(rd.Data, payload[:65536]) {
		t.Fatalf("read back %d bytes, %v", len(rd.Data), err)
	}
	status(t, c.call(smb2.CommandRead, smb2.ReadRequest{FileID: fid, Length: 10, Offset: uint64(len(payload))}.Encode()), smb2.StatusEndOfFile)
	status(t, c.call(smb2.CommandFlush, smb2.FlushRequest{FileID: fid}.Encode()), smb2.StatusSuccess)
	// QUERY_INFO All carries the path from the share root.
	r = c.call(smb2.CommandQueryInfo, smb2.QueryInfoRequest{InfoType: smb2.InfoTypeFile, FileInfoClass: smb2.FileAllInformationClass, OutputBufferLength: 4096, FileID: fid}.Encode())
	status(t, r, smb2.StatusSuccess)
	qr, _ := smb2.DecodeQueryInfoResponse(r.msg)
	all, err := smb2.DecodeFileAllInformation(qr.Output)
	if err != nil || all.Name.FileName != `\d\f.bin` || all.Standard.EndOfFile != int64(len(payload)) || all.Access.AccessFlags != smb2.FileAllAccess {
		t.Fatalf("all info %+v %v", all, err)
	}
	// Truncate through SET_INFO EndOfFile.
	eof := smb2.FileEndOfFileInformation{EndOfFile: 5}.Encode()
	status(t, c.call(smb2.CommandSetInfo, smb2.SetInfoRequest{InfoType: smb2.InfoTypeFile, FileInfoClass: smb2.FileEndOfFileInformationClass, FileID: fid, Buffer: eof}.Encode()), smb2.StatusSuccess)
	// Rename with a path from the share root.
	ren := smb2.FileRenameInformation{FileName: `d\g.bin`}.Encode()
	status(t, c.call(smb2.CommandSetInfo, smb2.SetInfoRequest{InfoType: smb2.InfoTypeFile, FileInfoClass: smb2.FileRenameInformationClass, FileID: fid, Buffer: ren}.Encode()), smb2.StatusSuccess)
	status(t, c.close(fid), smb2.StatusSuccess)
	// List d: ".", "..", "g.bin"; then NO_MORE_FILES.
	dir, r := c.create("d", 0x81, 7, smb2.FileOpen, smb2.FileDirectoryFile)
	status(t, r, smb2.StatusSuccess)
	names := c.list(t, dir, "*")
	if len(names) != 3 || names[0] != "." || names[1] != ".." || names[2] != "g.bin" {
		t.Fatalf("listing %v", names)
	}
	r = c.call(smb2.CommandQueryDirectory, smb2.QueryDirectoryRequest{FileInformationClass: smb2.FileIdBothDirectoryInformationClass, FileID: dir, Pattern: "*", OutputBufferLength: 65536}.Encode())
	status(t, r, smb2.StatusNoMoreFiles)
	// A pattern that matches nothing on a fresh scan: NO_SUCH_FILE.
	r = c.call(smb2.CommandQueryDirectory, smb2.QueryDirectoryRequest{FileInformationClass: smb2.FileIdBothDirectoryInformationClass, Flags: smb2.QueryDirRestartScans, FileID: dir, Pattern: "*.txt", OutputBufferLength: 65536}.Encode())
	status(t, r, smb2.StatusNoSuchFile)
	if got := c.list(t, dir, "G.BIN"); len(got) != 1 || got[0] != "g.bin" {
		t.Fatalf("exact lookup %v", got)
	}
	if got := c.list(t, dir, "?.bin"); len(got) != 1 {
		t.Fatalf("? pattern %v", got)
	}
	// smbclient's rm: open with DELETE_ON_CLOSE, close; rmdir: disposition.
	fid, r = c.create(`d\g.bin`, smb2.Delete|0x80, 7, smb2.FileOpen, smb2.FileDeleteOnClose)
	status(t, r, smb2.StatusSuccess)
	status(t, c.close(fid), smb2.StatusSuccess)
	_, r = c.create(`d\g.bin`, 0x80, 7, smb2.FileOpen, 0)
	status(t, r, smb2.StatusObjectNameNotFound)
	status(t, c.close(dir), smb2.StatusSuccess)
	dir, r = c.create("d", smb2.Delete, 7, smb2.FileOpen, smb2.FileDirectoryFile)
	status(t, r, smb2.StatusSuccess)
	disp := smb2.FileDispositionInformation{DeletePending: true}.Encode()
	status(t, c.call(smb2.CommandSetInfo, smb2.SetInfoRequest{InfoType: smb2.InfoTypeFile, FileInfoClass: smb2.FileDispositionInformationClass, FileID: dir, Buffer: disp}.Encode()), smb2.StatusSuccess)
	status(t, c.close(dir), smb2.StatusSuccess)
	_, r = c.create("d", 0x80, 7, smb2.FileOpen, 0)
	status(t, r, smb2.StatusObjectNameNotFound)
	// A leading backslash is invalid; FS size information works.
	_, r = c.create(`\x`, 0x80, 7, smb2.FileOpenIf, 0)
	status(t, r, smb2.StatusInvalidParameter)
	root, _ := c.create("", 0x80, 7, smb2.FileOpen, 0)
	r = c.call(smb2.CommandQueryInfo, smb2.QueryInfoRequest{InfoType: smb2.InfoTypeFilesystem, FileInfoClass: smb2.FileFsSizeInformationClass, OutputBufferLength: 24, FileID: root}.Encode())
	status(t, r, smb2.StatusSuccess)
	qr, _ = smb2.DecodeQueryInfoResponse(r.msg)
	fs, err := smb2.DecodeFileFsSizeInformation(qr.Output)
	if err != nil || fs.TotalAllocationUnits <= 0 || fs.BytesPerSector != 512 {
		t.Fatalf("fs size %+v %v", fs, err)
	}
}

// list enumerates dir with pattern from a restart and returns the names.
func (c *rawClient) list(t *testing.T, dir smb2.FileID, pattern string) []string {
	t.Helper()
	var names []string
	flags := smb2.QueryDirRestartScans
	for {
		r := c.call(smb2.CommandQueryDirectory, smb2.QueryDirectoryRequest{FileInformationClass: smb2.FileIdBothDirectoryInformationClass, Flags: flags, FileID: dir, Pattern: pattern, OutputBufferLength: 256}.Encode())
		flags = 0
		if r.hdr.Status == smb2.StatusNoMoreFiles {
			return names
		}
		status(t, r, smb2.StatusSuccess)
		qr, _ := smb2.DecodeQueryDirectoryResponse(r.msg)
		es, err := smb2.DecodeDirEntries(smb2.FileIdBothDirectoryInformationClass, qr.Output)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			names = append(names, e.Name)
		}
	}
}

type smbSeen struct{ command, status string }

type smbObserver struct {
	mu   sync.Mutex
	seen []smbSeen
}

func (o *smbObserver) SMB(command, status string, d time.Duration) {
	o.mu.Lock()
	o.seen = append(o.seen, smbSeen{command, status})
	o.mu.Unlock()
}

// TestObserver: each request answered is observed once with its command
// and the reply's NTSTATUS.
func TestObserver(t *testing.T) {
	obs := &smbObserver{}
	e := newTestEnvWith(t, func(c *Config) { c.Observer = obs })
	c := e.dial()
	c.negotiate(smb2.Dialect311)
	if st := c.login(testAcct, testKey1, 1); st != smb2.StatusSuccess {
		t.Fatalf("login: %v", st)
	}
	c.sign = true
	status(t, c.treeConnect(testShare), smb2.StatusSuccess)
	status(t, c.treeConnect("nosuchshare"), smb2.StatusBadNetworkName)
	obs.mu.Lock()
	defer obs.mu.Unlock()
	want := []smbSeen{
		{"NEGOTIATE", "STATUS_SUCCESS"},
		{"SESSION_SETUP", "STATUS_MORE_PROCESSING_REQUIRED"},
		{"SESSION_SETUP", "STATUS_SUCCESS"},
		{"TREE_CONNECT", "STATUS_SUCCESS"},
		{"TREE_CONNECT", "STATUS_BAD_NETWORK_NAME"},
	}
	if !slices.Equal(obs.seen, want) {
		t.Fatalf("observed %v, want %v", obs.seen, want)
	}
}

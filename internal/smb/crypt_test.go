package smb

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// sealer is the client side of an encrypted session of a rawClient.
type sealer struct {
	out, in cipher.AEAD // out encrypts requests (C2S), in decrypts replies
	n       uint64
}

// startSealing derives the session's encryption keys from the last
// logon, for cipher id.
func (c *rawClient) startSealing(id uint16) *sealer {
	c.t.Helper()
	keys, err := smb2.DeriveCipherKeys(c.dialect, id, c.sessionKey, c.sessionPreauth)
	if err != nil {
		c.t.Fatal(err)
	}
	// The server's ServerIn key is the client's encryption key.
	out, err := smb2.NewCipher(id, keys.ServerIn)
	if err != nil {
		c.t.Fatal(err)
	}
	in, err := smb2.NewCipher(id, keys.ServerOut)
	if err != nil {
		c.t.Fatal(err)
	}
	return &sealer{out: out, in: in}
}

// sendSealed writes the requests as one encrypted frame (a compound when
// there are several), unsigned.
func (c *rawClient) sendSealed(s *sealer, ms ...*msg) {
	c.t.Helper()
	pdus := make([][]byte, len(ms))
	for i, m := range ms {
		pdus[i] = smb2.Marshal(m.hdr, m.body)
	}
	payload, err := smb2.BuildCompound(pdus, func(int, []byte) error { return nil })
	if err != nil {
		c.t.Fatal(err)
	}
	s.n++
	nonce := make([]byte, s.out.NonceSize())
	nonce[0], nonce[1] = byte(s.n), byte(s.n>>8)
	if err := smb2.WriteFrame(c.nc, smb2.Encrypt(s.out, nonce, c.sid, payload)); err != nil {
		c.t.Fatal(err)
	}
}

// recvSealed reads one frame, which must be encrypted for the client's
// session, and returns its PDUs.
func (c *rawClient) recvSealed(s *sealer) []resp {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	payload, err := smb2.ReadFrame(c.nc, smb2.MaxFrameSize)
	if err != nil {
		c.t.Fatalf("reading a response: %v", err)
	}
	if smb2.ProtocolOf(payload) != smb2.ProtocolTransform {
		c.t.Fatalf("reply is not encrypted (% x)", payload[:min(len(payload), 16)])
	}
	h, err := smb2.ParseTransformHeader(payload)
	if err != nil {
		c.t.Fatal(err)
	}
	if h.SessionID != c.sid {
		c.t.Fatalf("transform SessionId %#x, want %#x", h.SessionID, c.sid)
	}
	plain, err := smb2.Decrypt(s.in, h, payload)
	if err != nil {
		c.t.Fatal(err)
	}
	pdus, err := smb2.SplitCompound(plain)
	if err != nil {
		c.t.Fatal(err)
	}
	out := make([]resp, len(pdus))
	for i, p := range pdus {
		hdr, err := smb2.ParseHeader(p)
		if err != nil {
			c.t.Fatal(err)
		}
		if hdr.Flags&smb2.FlagSigned != 0 {
			c.t.Fatalf("PDU %d of an encrypted reply is also signed", i)
		}
		out[i] = resp{hdr, p}
	}
	return out
}

// callSealed sends one encrypted request and returns its reply.
func (c *rawClient) callSealed(s *sealer, cmd smb2.Command, body []byte) resp {
	c.t.Helper()
	c.sendSealed(s, c.req(cmd, body))
	rs := c.recvSealed(s)
	if len(rs) != 1 {
		c.t.Fatalf("%d replies", len(rs))
	}
	return rs[0]
}

// negotiatedCipher returns the cipher of a 3.1.1 NEGOTIATE response's
// ENCRYPTION context, and whether there is one.
func negotiatedCipher(t *testing.T, nr smb2.NegotiateResponse) (uint16, bool) {
	t.Helper()
	for _, ctx := range nr.Contexts {
		if ctx.Type == smb2.ContextEncryption {
			ec, err := smb2.DecodeEncryptionCapabilities(ctx.Data)
			if err != nil {
				t.Fatal(err)
			}
			if len(ec.Ciphers) != 1 {
				t.Fatalf("ENCRYPTION context with %d ciphers", len(ec.Ciphers))
			}
			return ec.Ciphers[0], true
		}
	}
	return 0, false
}

// TestRequireSigning: with RequireSigning, NEGOTIATE says
// SIGNING_REQUIRED for every dialect, and a session whose client did not
// ask for signing still has its unsigned requests refused, while signed
// ones work; an unsigned TREE_CONNECT on 3.1.1 ends the connection
// (MS-SMB2 3.3.5.7). Without it, SIGNING_REQUIRED is not set.
func TestRequireSigning(t *testing.T) {
	plain := newTestEnv(t)
	c := plain.dial()
	nr, _ := c.negotiate(smb2.Dialect311)
	if nr.SecurityMode&smb2.SigningRequired != 0 {
		t.Fatal("SIGNING_REQUIRED without RequireSigning")
	}

	e := newTestEnvWith(t, func(cfg *Config) { cfg.RequireSigning = true })
	for _, d := range []smb2.Dialect{smb2.Dialect202, smb2.Dialect210, smb2.Dialect300, smb2.Dialect302, smb2.Dialect311} {
		t.Run(d.String(), func(t *testing.T) {
			c := e.with(t).dial()
			nr, r := c.negotiate(d)
			status(t, r, smb2.StatusSuccess)
			if nr.SecurityMode != smb2.SigningEnabled|smb2.SigningRequired {
				t.Fatalf("SecurityMode %#x", nr.SecurityMode)
			}
			// The client only enables signing.
			if st := c.login(testAcct, testKey1, uint8(smb2.SigningEnabled)); st != smb2.StatusSuccess {
				t.Fatal(st)
			}
			if d != smb2.Dialect311 {
				status(t, c.treeConnect(testShare), smb2.StatusAccessDenied)
			}
			r = c.call(smb2.CommandQueryDirectory, nil)
			status(t, r, smb2.StatusAccessDenied)
			c.sign = true
			status(t, c.treeConnect(testShare), smb2.StatusSuccess)
			fid, r := c.create("signed.txt", smb2.FileAllAccess, 0, smb2.FileOverwriteIf, 0)
			status(t, r, smb2.StatusSuccess)
			if !smb2.Verify(r.msg, c.key, c.alg) {
				t.Fatal("reply not signed")
			}
			c.sign = false
			status(t, c.close(fid), smb2.StatusAccessDenied)
			c.sign = true
			status(t, c.close(fid), smb2.StatusSuccess)
			if d == smb2.Dialect311 {
				c.sign = false
				c.send(c.req(smb2.CommandTreeConnect, smb2.TreeConnectRequest{Path: `\\127.0.0.1\` + testShare}.Encode()))
				c.expectClosed()
			}
		})
	}
}

// TestEncryptionNegotiate checks what NEGOTIATE offers in each mode: for
// 3.1.1 an ENCRYPTION context with the server's preferred cipher among
// the client's (cipher 0 when none is common), for 3.0 and 3.0.2 the
// ENCRYPTION capability when the client has it; nothing when off.
func TestEncryptionNegotiate(t *testing.T) {
	off := newTestEnv(t)
	c := off.dial()
	c.ciphers = []uint16{smb2.CipherAES128GCM}
	nr, _ := c.negotiate(smb2.Dialect311)
	if id, ok := negotiatedCipher(t, nr); ok {
		t.Fatalf("encryption off, but cipher %#x chosen", id)
	}
	c = off.dial()
	nr, _ = c.negotiate(smb2.Dialect300)
	if nr.Capabilities&smb2.CapEncryption != 0 {
		t.Fatal("encryption off, but the ENCRYPTION capability is set")
	}

	e := newTestEnvWith(t, func(cfg *Config) { cfg.Encrypt = EncryptDesired })
	for _, v := range []struct {
		offered []uint16
		want    uint16
	}{
		{[]uint16{smb2.CipherAES128CCM, smb2.CipherAES128GCM}, smb2.CipherAES128GCM},
		{[]uint16{smb2.CipherAES256GCM, smb2.CipherAES256CCM, smb2.CipherAES128CCM}, smb2.CipherAES128CCM},
		{[]uint16{smb2.CipherAES256CCM, smb2.CipherAES256GCM}, smb2.CipherAES256GCM},
		{[]uint16{smb2.CipherAES256CCM}, smb2.CipherAES256CCM},
		{[]uint16{0x0009}, 0},
	} {
		c := e.dial()
		c.ciphers = v.offered
		nr, _ := c.negotiate(smb2.Dialect311)
		if id, ok := negotiatedCipher(t, nr); !ok || id != v.want {
			t.Errorf("offered %v: chose %#x (context %v), want %#x", v.offered, id, ok, v.want)
		}
		if nr.Capabilities&smb2.CapEncryption != 0 {
			t.Error("ENCRYPTION capability set for 3.1.1")
		}
	}
	for _, d := range []smb2.Dialect{smb2.Dialect300, smb2.Dialect302} {
		c := e.dial()
		nr, _ := c.negotiate(d) // Capabilities 0x7f: ENCRYPTION included
		if nr.Capabilities&smb2.CapEncryption == 0 {
			t.Errorf("%v: no ENCRYPTION capability", d)
		}
	}
}

// TestEncryptedSessions runs an encrypted session with each cipher and
// dialect: SESSION_SETUP says ENCRYPT_DATA (its final reply signed, in
// the clear), TREE_CONNECT says ENCRYPT_DATA, unencrypted requests are
// refused, and an encrypted related compound (create, write, read,
// close) is answered in one encrypted frame.
func TestEncryptedSessions(t *testing.T) {
	for _, mode := range []EncryptMode{EncryptDesired, EncryptRequired} {
		e := newTestEnvWith(t, func(cfg *Config) { cfg.Encrypt = mode })
		for _, v := range []struct {
			d      smb2.Dialect
			cipher uint16
		}{
			{smb2.Dialect311, smb2.CipherAES128GCM},
			{smb2.Dialect311, smb2.CipherAES128CCM},
			{smb2.Dialect311, smb2.CipherAES256GCM},
			{smb2.Dialect311, smb2.CipherAES256CCM},
			{smb2.Dialect302, smb2.CipherAES128CCM},
			{smb2.Dialect300, smb2.CipherAES128CCM},
		} {
			t.Run(mode.String()+"/"+v.d.String()+"/"+smb2.CipherName(v.cipher), func(t *testing.T) {
				encryptedSession(t, e.with(t), v.d, v.cipher)
			})
		}
	}
}

func encryptedSession(t *testing.T, e *testEnv, d smb2.Dialect, id uint16) {
	c := e.dial()
	if d == smb2.Dialect311 {
		c.ciphers = []uint16{id}
	}
	c.negotiate(d)
	// The final SESSION_SETUP reply is signed (login checks it) and
	// says ENCRYPT_DATA.
	if st := c.login(testAcct, testKey1, uint8(smb2.SigningEnabled)); st != smb2.StatusSuccess {
		t.Fatal(st)
	}
	if c.sessionFlags&smb2.SessionFlagEncryptData == 0 {
		t.Fatalf("SessionFlags %#x lack ENCRYPT_DATA", c.sessionFlags)
	}
	s := c.startSealing(id)

	// In the clear: refused, also when signed.
	c.sign = true
	status(t, c.treeConnect(testShare), smb2.StatusAccessDenied)
	c.sign = false

	r := c.callSealed(s, smb2.CommandTreeConnect, smb2.TreeConnectRequest{Path: `\\127.0.0.1\` + testShare}.Encode())
	status(t, r, smb2.StatusSuccess)
	tc, err := smb2.DecodeTreeConnectResponse(r.msg)
	if err != nil {
		t.Fatal(err)
	}
	if tc.ShareFlags&smb2.ShareFlagEncryptData == 0 {
		t.Fatalf("ShareFlags %#x lack ENCRYPT_DATA", tc.ShareFlags)
	}
	c.tid = r.hdr.TreeID

	data := bytes.Repeat([]byte("sealed "), 1000)
	create := c.req(smb2.CommandCreate, smb2.CreateRequest{
		ImpersonationLevel: smb2.ImpersonationImpersonation, DesiredAccess: smb2.FileAllAccess,
		CreateDisposition: smb2.FileOverwriteIf, Name: "sealed.txt",
	}.Encode())
	related := smb2.FileID{Persistent: ^uint64(0), Volatile: ^uint64(0)}
	write := c.req(smb2.CommandWrite, smb2.WriteRequest{FileID: related, Data: data}.Encode())
	read := c.req(smb2.CommandRead, smb2.ReadRequest{FileID: related, Length: uint32(len(data))}.Encode())
	closeReq := c.req(smb2.CommandClose, smb2.CloseRequest{FileID: related}.Encode())
	for _, m := range []*msg{write, read, closeReq} {
		m.hdr.Flags |= smb2.FlagRelated
	}
	c.sendSealed(s, create, write, read, closeReq)
	rs := c.recvSealed(s)
	if len(rs) != 4 {
		t.Fatalf("%d replies in the encrypted compound", len(rs))
	}
	for _, r := range rs {
		status(t, r, smb2.StatusSuccess)
	}
	rr, err := smb2.DecodeReadResponse(rs[2].msg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rr.Data, data) {
		t.Fatal("read back other data")
	}
	got := e.rest("GET", "/"+testShare+"/sealed.txt", "", 200).Body.Bytes()
	if !bytes.Equal(got, data) {
		t.Fatal("REST reads other data")
	}
	// ECHO and LOGOFF, encrypted.
	status(t, c.callSealed(s, smb2.CommandEcho, smb2.EchoRequest{}.Encode()), smb2.StatusSuccess)
	status(t, c.callSealed(s, smb2.CommandLogoff, smb2.LogoffRequest{}.Encode()), smb2.StatusSuccess)
}

// TestEncryptionRequiredRefusesPlainClients: with EncryptRequired a client
// that cannot encrypt (2.x, 3.0 without the capability, 3.1.1 without a
// common cipher) is refused at SESSION_SETUP with STATUS_ACCESS_DENIED;
// with EncryptDesired it gets an unencrypted session.
func TestEncryptionRequiredRefusesPlainClients(t *testing.T) {
	for _, mode := range []EncryptMode{EncryptDesired, EncryptRequired} {
		e := newTestEnvWith(t, func(cfg *Config) { cfg.Encrypt = mode })
		for _, v := range []struct {
			name    string
			d       smb2.Dialect
			ciphers []uint16
		}{
			{"2.1", smb2.Dialect210, nil},
			{"3.1.1 without ENCRYPTION context", smb2.Dialect311, nil},
			{"3.1.1 without a common cipher", smb2.Dialect311, []uint16{0x0009}},
		} {
			t.Run(mode.String()+"/"+v.name, func(t *testing.T) {
				c := e.with(t).dial()
				c.ciphers = v.ciphers
				c.negotiate(v.d)
				st := c.login(testAcct, testKey1, uint8(smb2.SigningEnabled))
				if mode == EncryptRequired {
					if st != smb2.StatusAccessDenied {
						t.Fatalf("logon %v, want STATUS_ACCESS_DENIED", st)
					}
					return
				}
				if st != smb2.StatusSuccess {
					t.Fatal(st)
				}
				c.sign = true
				r := c.treeConnect(testShare)
				status(t, r, smb2.StatusSuccess)
				tc, _ := smb2.DecodeTreeConnectResponse(r.msg)
				if tc.ShareFlags&smb2.ShareFlagEncryptData != 0 {
					t.Fatal("ENCRYPT_DATA on a session that cannot encrypt")
				}
			})
		}
	}
}

// TestBadTransformDrops: an encrypted frame that fails to authenticate,
// names an unknown session, or arrives when no cipher was negotiated
// ends the connection (MS-SMB2 3.3.5.2.1.1).
func TestBadTransformDrops(t *testing.T) {
	e := newTestEnvWith(t, func(cfg *Config) { cfg.Encrypt = EncryptRequired })
	setup := func() (*rawClient, *sealer) {
		c := e.dial()
		c.ciphers = []uint16{smb2.CipherAES128GCM}
		c.negotiate(smb2.Dialect311)
		if st := c.login(testAcct, testKey1, 1); st != smb2.StatusSuccess {
			t.Fatal(st)
		}
		return c, c.startSealing(smb2.CipherAES128GCM)
	}
	echo := func(c *rawClient, s *sealer, mutate func([]byte)) {
		p := smb2.Encrypt(s.out, make([]byte, 12), c.sid, smb2.Marshal(c.req(smb2.CommandEcho, smb2.EchoRequest{}.Encode()).hdr, smb2.EchoRequest{}.Encode()))
		mutate(p)
		if err := smb2.WriteFrame(c.nc, p); err != nil {
			t.Fatal(err)
		}
	}
	c, s := setup()
	echo(c, s, func(p []byte) { p[len(p)-1] ^= 1 })
	c.expectClosed()

	c, s = setup()
	echo(c, s, func(p []byte) { p[44] ^= 1 }) // SessionId
	c.expectClosed()

	// Another session's key.
	c, _ = setup()
	_, other := setup()
	echo(c, other, func([]byte) {})
	c.expectClosed()

	// No cipher negotiated.
	plain := newTestEnv(t)
	c = plain.dial()
	c.negotiate(smb2.Dialect311)
	if st := c.login(testAcct, testKey1, 1); st != smb2.StatusSuccess {
		t.Fatal(st)
	}
	echo(c, c.startSealing(smb2.CipherAES128GCM), func([]byte) {})
	c.expectClosed()
}

// sealedConnect logs on to e with encryption (cipher id on 3.1.1) and
// connects the test share.
func (e *testEnv) sealedConnect(id uint16) (*rawClient, *sealer) {
	e.t.Helper()
	c := e.dial()
	c.ciphers = []uint16{id}
	c.negotiate(smb2.Dialect311)
	if st := c.login(testAcct, testKey1, 1); st != smb2.StatusSuccess {
		e.t.Fatal(st)
	}
	s := c.startSealing(id)
	r := c.callSealed(s, smb2.CommandTreeConnect, smb2.TreeConnectRequest{Path: `\\127.0.0.1\` + testShare}.Encode())
	status(e.t, r, smb2.StatusSuccess)
	c.tid = r.hdr.TreeID
	return c, s
}

// createSealed opens name with an encrypted CREATE.
func (c *rawClient) createSealed(s *sealer, name string, access smb2.AccessMask, disp smb2.CreateDisposition, opts smb2.CreateOptions) smb2.FileID {
	c.t.Helper()
	r := c.callSealed(s, smb2.CommandCreate, smb2.CreateRequest{
		ImpersonationLevel: smb2.ImpersonationImpersonation, DesiredAccess: access, ShareAccess: 7,
		CreateDisposition: disp, CreateOptions: opts, Name: name,
	}.Encode())
	status(c.t, r, smb2.StatusSuccess)
	cr, err := smb2.DecodeCreateResponse(r.msg)
	if err != nil {
		c.t.Fatal(err)
	}
	return cr.FileID
}

// TestEncryptedAsync: on an encrypted session, the interim STATUS_PENDING
// of a CHANGE_NOTIFY and its final reply (sent later, when another
// connection makes a change) both come encrypted.
func TestEncryptedAsync(t *testing.T) {
	e := newTestEnvWith(t, func(cfg *Config) { cfg.Encrypt = EncryptRequired })
	w, ws := e.sealedConnect(smb2.CipherAES128CCM)
	c, cs := e.sealedConnect(smb2.CipherAES256GCM)
	dir := w.createSealed(ws, "", 0x81, smb2.FileOpen, smb2.FileDirectoryFile)
	r := w.callSealed(ws, smb2.CommandChangeNotify, smb2.ChangeNotifyRequest{OutputBufferLength: 4096, FileID: dir, CompletionFilter: notifyAll}.Encode())
	status(t, r, smb2.StatusPending)

	f := c.createSealed(cs, "new.txt", 0x1f01ff, smb2.FileCreate, 0)
	rs := w.recvSealed(ws)
	if len(rs) != 1 || rs[0].hdr.Flags&smb2.FlagAsync == 0 {
		t.Fatalf("final reply %+v", rs)
	}
	wantRecs(t, notifyRecs(t, rs[0]), "1 new.txt")
	status(t, c.callSealed(cs, smb2.CommandClose, smb2.CloseRequest{FileID: f}.Encode()), smb2.StatusSuccess)
}

// FuzzEncryptedSession sends arbitrary plaintext, encrypted with the key
// of a live encrypted session (its SessionId patched in when there is room
// for a header), to the server: whatever the decrypted message holds, the
// server must not panic nor keep the connection once the client is gone.
func FuzzEncryptedSession(f *testing.F) {
	echo := smb2.Marshal(smb2.Header{Command: smb2.CommandEcho, MessageID: 3, CreditCharge: 1}, smb2.EchoRequest{}.Encode())
	f.Add(echo)
	f.Add(append(append([]byte{}, echo...), echo...))
	f.Add(smb2.Marshal(smb2.Header{Command: smb2.CommandTreeConnect, MessageID: 3, CreditCharge: 1}, smb2.TreeConnectRequest{Path: `\\h\` + testShare}.Encode()))
	f.Add([]byte{0xfe, 'S', 'M', 'B'})
	f.Add([]byte{0xfd, 'S', 'M', 'B'})
	e := newTestEnvWith(f, func(cfg *Config) { cfg.Encrypt = EncryptRequired })
	f.Fuzz(func(t *testing.T, plain []byte) {
		e := e.with(t)
		c := e.dial()
		c.ciphers = []uint16{smb2.CipherAES128GCM}
		c.negotiate(smb2.Dialect311)
		if st := c.login(testAcct, testKey1, 1); st != smb2.StatusSuccess {
			t.Fatal(st)
		}
		s := c.startSealing(smb2.CipherAES128GCM)
		plain = bytes.Clone(plain)
		if len(plain) >= smb2.HeaderSize {
			binary.LittleEndian.PutUint64(plain[40:], c.sid)
		}
		if err := smb2.WriteFrame(c.nc, smb2.Encrypt(s.out, make([]byte, 12), c.sid, plain)); err != nil {
			t.Fatal(err)
		}
		_ = c.nc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		buf := make([]byte, 4096)
		for {
			if _, err := c.nc.Read(buf); err != nil {
				break
			}
		}
		c.nc.Close()
		e.waitConns()
		e.checkNoPanics()
	})
}

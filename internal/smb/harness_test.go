package smb

// Test harness: a Server over a File service in a temporary directory,
// and a raw SMB2 client built from package smb2's codecs and an NTLM
// client (go-ntlmssp), so that tests control every header field:
// MessageIds, credits, flags, signatures, compounds.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/cerulean-storage/cerulean/internal/file/filerest"
	"github.com/cerulean-storage/cerulean/internal/testenv"

	ntlmssp "github.com/Azure/go-ntlmssp"
	//lint:ignore SA1019 NTLM's NT hash is MD4 of the password (MS-NLMP 3.3.1); there is no other way to compute it.
	"golang.org/x/crypto/md4"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
	"github.com/cerulean-storage/cerulean/internal/smb/smbfs"
)

const (
	testAcct  = "acct"
	testShare = "share1"
)

var (
	testKey1 = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1, 2, 3, 4}, 16))
	testKey2 = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9, 8, 7, 6}, 16))
)

// testEnv is a running Server with one account and one share.
type testEnv struct {
	t    testing.TB
	svc  *file.Service
	srv  *Server
	addr string
	// panics collects panics the server recovered from.
	panics *panicLog
}

type panicLog struct {
	mu     sync.Mutex
	panics []any
}

// with returns a view of e reporting to t (a fuzz iteration's T, while
// e was made with the F).
func (e *testEnv) with(t testing.TB) *testEnv {
	return &testEnv{t: t, svc: e.svc, srv: e.srv, addr: e.addr, panics: e.panics}
}

func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	return newTestEnvWith(t, nil)
}

// newTestEnvWith is newTestEnv with the server's Config adjusted by
// adjust (if not nil) before the server starts.
func newTestEnvWith(t testing.TB, adjust func(*Config)) *testEnv {
	t.Helper()
	// The SMB session is signed with real time: the fake clock is not used.
	store, chunks, _ := testenv.Stores(t)
	svc := file.New(store, chunks, clock.Real{}, slog.New(slog.DiscardHandler))
	e := &testEnv{t: t, svc: svc, panics: &panicLog{}}
	e.rest(http.MethodPut, "/"+testShare+"?restype=share", "", http.StatusCreated)
	k1, _ := base64.StdEncoding.DecodeString(testKey1)
	k2, _ := base64.StdEncoding.DecodeString(testKey2)
	cfg := Config{
		FS:       smbfs.New(svc, "smb-test"),
		Accounts: []auth.Account{{Name: testAcct, Keys: [][]byte{k1, k2}}},
		Logger:   slog.New(slog.DiscardHandler),
	}
	if adjust != nil {
		adjust(&cfg)
	}
	e.srv = New(cfg)
	e.srv.onPanic = func(p any) {
		e.panics.mu.Lock()
		e.panics.panics = append(e.panics.panics, p)
		e.panics.mu.Unlock()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
		e.checkNoPanics()
	})
	return e
}

func (e *testEnv) checkNoPanics() {
	e.t.Helper()
	e.panics.mu.Lock()
	defer e.panics.mu.Unlock()
	if len(e.panics.panics) > 0 {
		e.t.Errorf("server panicked: %v", e.panics.panics)
	}
}

// rest sends one authenticated REST request to the File service.
func (e *testEnv) rest(method, target, body string, want int, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	hr := httptest.NewRequest(method, "http://127.0.0.1:10003/"+testAcct+target, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		hr.Header.Set(hdr[i], hdr[i+1])
	}
	hr.Header.Set("x-ms-version", "2025-05-05")
	w := httptest.NewRecorder()
	err := filerest.New(e.svc).ServeAzure(w, &server.Request{Request: hr, Account: testAcct, Authenticated: true, Now: time.Now()})
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, target, err)
	}
	if w.Code != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, target, w.Code, want, w.Body.String())
	}
	return w
}

// waitConns waits until the server has no connection left.
func (e *testEnv) waitConns() {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.srv.mu.Lock()
		n := len(e.srv.conns)
		e.srv.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%d connections still open", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// rawClient is a minimal SMB2 client.
type rawClient struct {
	t       testing.TB
	nc      net.Conn
	mid     uint64
	dialect smb2.Dialect
	alg     smb2.SigningAlgorithm
	preauth smb2.PreauthHash
	sid     uint64
	tid     uint32
	key     []byte
	// sign signs every request once a key exists.
	sign bool
	// credits is the last CreditResponse seen.
	credits uint16
	// ciphers, if set, are offered in an ENCRYPTION context (crypt_test.go);
	// sessionKey, sessionPreauth and sessionFlags are those of the last
	// logon.
	ciphers        []uint16
	sessionKey     []byte
	sessionPreauth smb2.PreauthHash
	sessionFlags   smb2.SessionFlags
}

func (e *testEnv) dial() *rawClient {
	e.t.Helper()
	nc, err := net.Dial("tcp", e.addr)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { nc.Close() })
	return &rawClient{t: e.t, nc: nc}
}

// msg is a request PDU under construction.
type msg struct {
	hdr  smb2.Header
	body []byte
}

// req builds a request with the client's next MessageId, session and tree.
func (c *rawClient) req(cmd smb2.Command, body []byte) *msg {
	m := &msg{hdr: smb2.Header{Command: cmd, MessageID: c.mid, SessionID: c.sid, TreeID: c.tid, Credits: 64, CreditCharge: 1}, body: body}
	c.mid++
	return m
}

func (c *rawClient) bytes(m *msg) []byte {
	p := smb2.Marshal(m.hdr, m.body)
	if c.sign && c.key != nil {
		if err := smb2.Sign(p, c.key, c.alg); err != nil {
			c.t.Fatal(err)
		}
	}
	return p
}

// send writes one frame holding the given requests as a compound.
func (c *rawClient) send(ms ...*msg) {
	c.t.Helper()
	if len(ms) == 1 {
		if err := smb2.WriteFrame(c.nc, c.bytes(ms[0])); err != nil {
			c.t.Fatal(err)
		}
		return
	}
	pdus := make([][]byte, len(ms))
	for i, m := range ms {
		pdus[i] = smb2.Marshal(m.hdr, m.body)
	}
	payload, err := smb2.BuildCompound(pdus, func(i int, pdu []byte) error {
		if c.sign && c.key != nil {
			return smb2.Sign(pdu, c.key, c.alg)
		}
		return nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
	if err := smb2.WriteFrame(c.nc, payload); err != nil {
		c.t.Fatal(err)
	}
}

// resp is a response PDU.
type resp struct {
	hdr smb2.Header
	msg []byte
}

// recvFrame reads one frame and returns its PDUs.
func (c *rawClient) recvFrame() []resp {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	payload, err := smb2.ReadFrame(c.nc, smb2.MaxFrameSize)
	if err != nil {
		c.t.Fatalf("reading a response: %v", err)
	}
	pdus, err := smb2.SplitCompound(payload)
	if err != nil {
		c.t.Fatal(err)
	}
	out := make([]resp, len(pdus))
	for i, p := range pdus {
		h, err := smb2.ParseHeader(p)
		if err != nil {
			c.t.Fatal(err)
		}
		if !h.IsResponse() {
			c.t.Fatalf("PDU %d is not a response", i)
		}
		c.credits = h.Credits
		out[i] = resp{h, p}
	}
	return out
}

func (c *rawClient) recv() resp {
	c.t.Helper()
	rs := c.recvFrame()
	if len(rs) != 1 {
		c.t.Fatalf("got a compound of %d responses", len(rs))
	}
	return rs[0]
}

// call sends one request and returns its response.
func (c *rawClient) call(cmd smb2.Command, body []byte) resp {
	c.t.Helper()
	c.send(c.req(cmd, body))
	return c.recv()
}

// expectClosed checks that the server closes the connection.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := smb2.ReadFrame(c.nc, smb2.MaxFrameSize)
	if err == nil {
		c.t.Fatal("server answered; want the connection closed")
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatal("connection still open")
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "reset") {
		c.t.Fatalf("unexpected read error %v", err)
	}
}

func status(t testing.TB, r resp, want smb2.Status) {
	t.Helper()
	if r.hdr.Status != want {
		t.Fatalf("%v: status %v, want %v", r.hdr.Command, r.hdr.Status, want)
	}
}

// negotiate runs NEGOTIATE offering dialects (3.1.1 with the PREAUTH and
// SIGNING contexts).
func (c *rawClient) negotiate(dialects ...smb2.Dialect) (smb2.NegotiateResponse, resp) {
	c.t.Helper()
	req := smb2.NegotiateRequest{SecurityMode: smb2.SigningEnabled, Capabilities: 0x7f, Dialects: dialects}
	_, _ = rand.Read(req.ClientGUID[:])
	salt := make([]byte, 32)
	_, _ = rand.Read(salt)
	req.Contexts = []smb2.NegotiateContext{
		smb2.PreauthIntegrityCapabilities{HashAlgorithms: []uint16{smb2.HashSHA512}, Salt: salt}.Context(),
		smb2.SigningCapabilities{Algorithms: []smb2.SigningAlgorithm{smb2.SigningAESGMAC, smb2.SigningAESCMAC, smb2.SigningHMACSHA256}}.Context(),
	}
	if len(c.ciphers) > 0 {
		req.Contexts = append(req.Contexts, smb2.EncryptionCapabilities{Ciphers: c.ciphers}.Context())
	}
	m := c.req(smb2.CommandNegotiate, req.Encode())
	m.hdr.Credits = 31
	raw := c.bytes(m)
	if err := smb2.WriteFrame(c.nc, raw); err != nil {
		c.t.Fatal(err)
	}
	r := c.recv()
	if r.hdr.Status != smb2.StatusSuccess {
		return smb2.NegotiateResponse{}, r
	}
	nr, err := smb2.DecodeNegotiateResponse(r.msg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.dialect = nr.DialectRevision
	c.alg = smb2.DefaultSigningAlgorithm(c.dialect)
	if c.dialect == smb2.Dialect311 {
		c.preauth.Update(raw)
		c.preauth.Update(r.msg)
		for _, ctx := range nr.Contexts {
			if ctx.Type == smb2.ContextSigning {
				s, err := smb2.DecodeSigningCapabilities(ctx.Data)
				if err != nil {
					c.t.Fatal(err)
				}
				c.alg = s.Algorithms[0]
			}
		}
	}
	return nr, r
}

// login runs a raw-NTLMSSP SESSION_SETUP exchange and returns the final
// status. On success the signing key is set and the final response's
// signature checked.
func (c *rawClient) login(user, password string, secMode uint8) smb2.Status {
	c.t.Helper()
	preauth := c.preauth
	neg, err := ntlmssp.NewNegotiateMessage("", "")
	if err != nil {
		c.t.Fatal(err)
	}
	m := c.req(smb2.CommandSessionSetup, smb2.SessionSetupRequest{SecurityMode: secMode, SecurityBuffer: neg}.Encode())
	m.hdr.SessionID = 0
	raw := c.bytes(m)
	if err := smb2.WriteFrame(c.nc, raw); err != nil {
		c.t.Fatal(err)
	}
	r := c.recv()
	if r.hdr.Status != smb2.StatusMoreProcessingRequired {
		return r.hdr.Status
	}
	preauth.Update(raw)
	preauth.Update(r.msg)
	c.sid = r.hdr.SessionID
	ss, err := smb2.DecodeSessionSetupResponse(r.msg)
	if err != nil {
		c.t.Fatal(err)
	}
	authMsg, err := ntlmssp.NewAuthenticateMessage(ss.SecurityBuffer, user, password, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	m = c.req(smb2.CommandSessionSetup, smb2.SessionSetupRequest{SecurityMode: secMode, SecurityBuffer: authMsg}.Encode())
	raw = c.bytes(m)
	if err := smb2.WriteFrame(c.nc, raw); err != nil {
		c.t.Fatal(err)
	}
	preauth.Update(raw)
	r = c.recv()
	if r.hdr.Status != smb2.StatusSuccess {
		return r.hdr.Status
	}
	c.sessionKey, c.sessionPreauth = sessionBaseKey(c.t, authMsg, user, password), preauth
	keys, err := smb2.DeriveKeys(c.dialect, c.sessionKey, preauth)
	if err != nil {
		c.t.Fatal(err)
	}
	c.key = keys.Signing[:]
	if ss, err := smb2.DecodeSessionSetupResponse(r.msg); err == nil {
		c.sessionFlags = ss.SessionFlags
	}
	if r.hdr.Flags&smb2.FlagSigned == 0 || !smb2.Verify(r.msg, c.key, c.alg) {
		c.t.Fatal("final SESSION_SETUP response is not signed with the session's key")
	}
	return smb2.StatusSuccess
}

// sessionBaseKey recomputes the NTLMv2 session key of an AUTHENTICATE
// message made without key exchange (MS-NLMP 3.3.2).
func sessionBaseKey(t testing.TB, authMsg []byte, user, password string) []byte {
	t.Helper()
	off := int(le32(authMsg[24:])) // NtChallengeResponseFields.BufferOffset
	ntProof := authMsg[off : off+16]
	h := md4.New()
	h.Write(utf16le(password))
	mac := hmac.New(md5.New, h.Sum(nil))
	mac.Write(utf16le(strings.ToUpper(user)))
	owf := mac.Sum(nil)
	mac = hmac.New(md5.New, owf)
	mac.Write(ntProof)
	return mac.Sum(nil)
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func utf16le(s string) []byte {
	var out []byte
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u), byte(u>>8))
	}
	return out
}

// connect negotiates 3.1.1, logs on with key 1 and connects the share.
func (e *testEnv) connect() *rawClient {
	e.t.Helper()
	c := e.dial()
	c.negotiate(smb2.Dialect311)
	if st := c.login(testAcct, testKey1, 1); st != smb2.StatusSuccess {
		e.t.Fatalf("login: %v", st)
	}
	c.sign = true
	c.treeConnect(testShare)
	return c
}

func (c *rawClient) treeConnect(share string) resp {
	c.t.Helper()
	r := c.call(smb2.CommandTreeConnect, smb2.TreeConnectRequest{Path: `\\127.0.0.1\` + share}.Encode())
	if r.hdr.Status == smb2.StatusSuccess {
		c.tid = r.hdr.TreeID
	}
	return r
}

// create opens name and returns its FileId.
func (c *rawClient) create(name string, access smb2.AccessMask, share smb2.ShareAccess, disp smb2.CreateDisposition, opts smb2.CreateOptions) (smb2.FileID, resp) {
	c.t.Helper()
	r := c.call(smb2.CommandCreate, smb2.CreateRequest{
		ImpersonationLevel: smb2.ImpersonationImpersonation, DesiredAccess: access,
		ShareAccess: share, CreateDisposition: disp, CreateOptions: opts, Name: name,
	}.Encode())
	if r.hdr.Status != smb2.StatusSuccess {
		return smb2.FileID{}, r
	}
	cr, err := smb2.DecodeCreateResponse(r.msg)
	if err != nil {
		c.t.Fatal(err)
	}
	return cr.FileID, r
}

func (c *rawClient) close(fid smb2.FileID) resp {
	c.t.Helper()
	return c.call(smb2.CommandClose, smb2.CloseRequest{FileID: fid}.Encode())
}

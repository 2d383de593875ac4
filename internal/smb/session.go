package smb

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/smb/ntlm"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// dialects the server speaks, best first.
var dialects = []smb2.Dialect{smb2.Dialect311, smb2.Dialect302, smb2.Dialect300, smb2.Dialect210, smb2.Dialect202}

// preauthSaltLen is the size of the server's PREAUTH_INTEGRITY salt.
const preauthSaltLen = 32

// negotiate answers NEGOTIATE (MS-SMB2 3.3.5.4): the best
// common dialect, signing enabled (not required), LARGE_MTU, the SPNEGO
// hint, and for 3.1.1 the PREAUTH (SHA-512) and SIGNING contexts.
func (c *conn) negotiate(r *request) ([]byte, error) {
	if c.dialect != 0 {
		return nil, drop("second NEGOTIATE")
	}
	req, err := smb2.DecodeNegotiateRequest(r.msg)
	if err != nil {
		return nil, err
	}
	r.creditsExtra = 0
	var d smb2.Dialect
	for _, x := range dialects {
		if req.Offers(x) {
			d = x
			break
		}
	}
	if d == 0 {
		r.dropAfter = true
		return nil, smb2.StatusNotSupported
	}
	resp := c.negotiateResponse(d)
	c.offerEncryption(d, req, &resp) // crypt.go
	if d == smb2.Dialect311 {
		if req.Preauth == nil {
			return nil, smb2.StatusInvalidParameter
		}
		if !slices.Contains(req.Preauth.HashAlgorithms, smb2.HashSHA512) {
			// STATUS_SMB_NO_PREAUTH_INTEGRITY_HASH_OVERLAP.
			return nil, smb2.Status(0xC05D0000)
		}
		salt := make([]byte, preauthSaltLen)
		_, _ = rand.Read(salt)
		resp.Contexts = append(resp.Contexts, smb2.PreauthIntegrityCapabilities{HashAlgorithms: []uint16{smb2.HashSHA512}, Salt: salt}.Context())
		c.signAlg = smb2.SigningAESCMAC
		if req.Signing != nil {
			alg, ok := chooseSigning(req.Signing.Algorithms)
			if ok {
				c.signAlg = alg
				resp.Contexts = append(resp.Contexts, smb2.SigningCapabilities{Algorithms: []smb2.SigningAlgorithm{alg}}.Context())
			}
		}
		c.preauth.Update(r.msg)
		r.preauth = &c.preauth
	} else {
		c.signAlg = smb2.DefaultSigningAlgorithm(d)
	}
	c.dialect, c.negReq, c.negResp = d, req, resp
	c.maxIO = int(resp.MaxReadSize)
	return resp.Encode(), nil
}

// negotiateResponse is the NEGOTIATE response for dialect d, without
// negotiate contexts.
func (c *conn) negotiateResponse(d smb2.Dialect) smb2.NegotiateResponse {
	maxIO := uint32(c.srv.maxIO)
	var caps smb2.Capabilities
	if d == smb2.Dialect202 || d == smb2.DialectWildcard {
		maxIO = 65536
	} else {
		caps = smb2.CapLargeMTU
	}
	return smb2.NegotiateResponse{
		SecurityMode:    c.srv.securityMode(), // crypt.go
		DialectRevision: d,
		ServerGUID:      c.srv.guid,
		Capabilities:    caps,
		MaxTransactSize: maxIO,
		MaxReadSize:     maxIO,
		MaxWriteSize:    maxIO,
		SystemTime:      smb2.FiletimeOf(c.srv.vfs.Now()),
		SecurityBuffer:  c.srv.auth.NegotiateHint(),
	}
}

// chooseSigning picks the 3.1.1 signing algorithm among the client's:
// AES-CMAC, else HMAC-SHA256 (AES-GMAC is not implemented).
func chooseSigning(offered []smb2.SigningAlgorithm) (smb2.SigningAlgorithm, bool) {
	for _, a := range []smb2.SigningAlgorithm{smb2.SigningAESCMAC, smb2.SigningHMACSHA256} {
		if slices.Contains(offered, a) {
			return a, true
		}
	}
	return 0, false
}

// handleSMB1 answers an SMB1 NEGOTIATE that offers SMB2 (MS-SMB2
// 3.3.5.3.1): with "SMB 2.???" the wildcard dialect 0x02FF (the client
// then sends an SMB2 NEGOTIATE), with only "SMB 2.002" dialect 2.0.2.
// Anything else closes the connection.
func (c *conn) handleSMB1(payload []byte) error {
	if c.dialect != 0 {
		return drop("SMB1 after NEGOTIATE")
	}
	names, err := smb2.DecodeSMB1Negotiate(payload)
	if err != nil {
		return drop("%v", err)
	}
	d := smb2.Dialect(0)
	switch {
	case slices.Contains(names, smb2.SMB1DialectSMB2Wildcard):
		d = smb2.DialectWildcard
	case slices.Contains(names, smb2.SMB1DialectSMB2002):
		d = smb2.Dialect202
	default:
		return drop("SMB1 NEGOTIATE without an SMB2 dialect")
	}
	if !c.credits.consume(0, 1) {
		return drop("SMB1 NEGOTIATE twice")
	}
	resp := c.negotiateResponse(d)
	if d == smb2.Dialect202 {
		c.dialect, c.negResp, c.signAlg = d, resp, smb2.SigningHMACSHA256
		c.negReq = smb2.NegotiateRequest{Dialects: []smb2.Dialect{d}}
		c.maxIO = int(resp.MaxReadSize)
	}
	hdr := smb2.Header{Command: smb2.CommandNegotiate, Flags: smb2.FlagResponse}
	hdr.Credits = c.credits.grant(1, 1, 0)
	return c.send([]*reply{{hdr: hdr, body: resp.Encode()}})
}

// sessionSetup runs one round of authentication (MS-SMB2 3.3.5.5): a new
// session on SessionId 0, the next step of one in progress, or a
// re-authentication of a valid one.
func (c *conn) sessionSetup(r *request) ([]byte, error) {
	req, err := smb2.DecodeSessionSetupRequest(r.msg)
	if err != nil {
		return nil, err
	}
	r.creditsExtra = 0
	if req.Flags&smb2.SessionSetupFlagBinding != 0 {
		return nil, smb2.StatusRequestNotAccepted
	}
	if err := c.checkCanEncrypt(); err != nil { // crypt.go
		return nil, err
	}
	s := r.sess
	isNew := s == nil
	if isNew {
		if len(c.sessions) >= maxSessionsPerConn {
			return nil, smb2.StatusInsufficientResources
		}
		s = &session{id: newSessionID(c), trees: map[uint32]*tree{}, preauth: c.preauth}
		s.vfsID = strconv.FormatUint(s.id, 10)
		c.sessions[s.id] = s
		r.sess = s
	}
	if s.auth == nil {
		s.auth = c.srv.auth.NewAuth()
	}
	reauth := s.valid
	if c.dialect == smb2.Dialect311 && !reauth {
		s.preauth.Update(r.msg)
	}
	out, done, err := s.auth.Step(req.SecurityBuffer)
	if err != nil {
		s.auth = nil
		c.log.Info("SMB logon failed", "err", err)
		if !reauth {
			c.removeSession(s)
		}
		if errors.Is(err, ntlm.ErrInvalidToken) {
			return nil, smb2.StatusInvalidParameter
		}
		return nil, smb2.StatusLogonFailure
	}
	resp := smb2.SessionSetupResponse{SecurityBuffer: out}
	// The reply carries the new SessionId.
	r.hdr.SessionID = s.id
	if !done {
		if c.dialect == smb2.Dialect311 && !reauth {
			r.preauth = &s.preauth
		}
		return resp.Encode(), smb2.StatusMoreProcessingRequired
	}
	user := s.auth.User()
	key := s.auth.SessionKey()
	s.auth = nil
	if reauth {
		if user != s.account {
			// A re-authentication as someone else (MS-SMB2 3.3.5.5.3).
			c.removeSession(s)
			return nil, smb2.StatusLogonFailure
		}
	} else {
		keys, err := smb2.DeriveKeys(c.dialect, key, s.preauth)
		if err != nil {
			c.removeSession(s)
			return nil, err
		}
		if err := c.startEncryption(s, key, &resp); err != nil { // crypt.go
			c.removeSession(s)
			return nil, err
		}
		s.signKey = keys.Signing[:]
		s.account = user
		s.valid = true
		s.signRequired = smb2.SecurityMode(req.SecurityMode)&smb2.SigningRequired != 0 || c.srv.cfg.RequireSigning
		c.authenticated = true
		c.log.Debug("SMB session established", "account", user, "session", s.vfsID, "dialect", c.dialect)
	}
	// The final response is always signed (MS-SMB2 3.3.5.5.3; the Samba
	// client checks it for 3.1.1, and smbd signs it for every dialect),
	// and it may
	// raise the client's credits to the maximum.
	r.signKey = s.signKey
	r.creditsExtra = maxCredits
	return resp.Encode(), nil
}

// removeSession forgets s and closes its handles.
func (c *conn) removeSession(s *session) {
	delete(c.sessions, s.id)
	c.closeSessionHandles(c.ctx, s)
}

// newSessionID returns a random nonzero SessionId unused on c. Random
// ids also make the VFS session names unique across servers.
func newSessionID(c *conn) uint64 {
	for {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id := binary.LittleEndian.Uint64(b[:])
		if id != 0 && id != ^uint64(0) && c.sessions[id] == nil {
			return id
		}
	}
}

// logoff ends the session (MS-SMB2 3.3.5.6): its handles close, applying
// delete-on-close; later requests on it get STATUS_USER_SESSION_DELETED.
func (c *conn) logoff(r *request) ([]byte, error) {
	if _, err := smb2.DecodeLogoffRequest(r.msg); err != nil {
		return nil, err
	}
	s := r.sess
	c.removeSession(s)
	r.chain.sess, r.chain.tree = nil, nil
	return smb2.LogoffResponse{}.Encode(), nil
}

// echo answers ECHO.
func (c *conn) echo(r *request) ([]byte, error) {
	if _, err := smb2.DecodeEchoRequest(r.msg); err != nil {
		return nil, err
	}
	return smb2.EchoResponse{}.Encode(), nil
}

// closeSessionHandles closes every handle of s in the store (applying
// delete-on-close) and forgets its opens and async operations.
func (c *conn) closeSessionHandles(ctx context.Context, s *session) {
	for id, o := range c.opens {
		if o.sess == s {
			delete(c.opens, id)
			c.unwatch(o)
		}
	}
	for id, a := range c.async {
		if a.sess != s {
			continue
		}
		if a.lock != nil && !c.closing {
			// A blocked lock of a session logging off is answered
			// (smb2.lock.cancel-logoff).
			c.finishAsync(a, smb2.StatusRangeNotLocked)
			continue
		}
		delete(c.async, id)
	}
	if _, err := c.srv.vfs.CloseSession(ctx, s.vfsID); err != nil {
		c.log.Warn("closing the handles of an SMB session failed; they expire with the server's liveness", "session", s.vfsID, "err", err)
	}
	c.locksReleased()
}

// Package ntlm is the server side of SMB2 SESSION_SETUP authentication as
// Azure Files does it: NTLMv2 (MS-NLMP) carried in SPNEGO (RFC 4178,
// MS-SPNG), with the storage account name as the user and an account key
// as the password.
//
// A Server holds the configuration shared by every connection and builds
// the SPNEGO hint for the NEGOTIATE response. Each SMB2 session gets an
// Auth, a state machine fed with the security buffer of each
// SESSION_SETUP request:
//
//	a := srv.NewAuth()
//	out, done, err := a.Step(securityBuffer)
//	// err != nil:        fail the request (errors.Is(err, ErrLogonFailure)
//	//                    → STATUS_LOGON_FAILURE, ErrInvalidToken →
//	//                    STATUS_INVALID_PARAMETER, anything else, i.e. a
//	//                    failing Rand, → an internal error) and drop the session
//	// !done:             STATUS_MORE_PROCESSING_REQUIRED with out
//	// done:              STATUS_SUCCESS with out; a.SessionKey() feeds
//	//                    the SMB2 key derivation, a.User() names the account
//
// Accepted client forms: a GSS-API SPNEGO negTokenInit with an optimistic
// NTLMSSP NEGOTIATE (smbclient), a negTokenInit without one (the NEGOTIATE
// then comes in a negTokenResp), and raw NTLMSSP without any SPNEGO wrapper
// (smbtorture when the hint is empty), which is answered in kind. Only
// NTLMv2 is accepted; anonymous, guest and NTLMv1 logons fail with
// ErrLogonFailure. The AUTHENTICATE MIC is checked when the client says it
// is present, and the SPNEGO mechListMIC is checked and answered as Samba
// does (MS-NLMP 3.4.4.2; RFC 4178 §5: smbclient requires a
// valid mechListMIC back when the CHALLENGE carries MsvAvTimestamp).
package ntlm

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/clock"
)

// Errors returned by Auth.Step. Both are wrapped with detail; test them
// with errors.Is.
var (
	// ErrLogonFailure means the credentials were refused: unknown user,
	// wrong password, anonymous or NTLMv1 logon, a bad MIC or mechListMIC.
	// SMB2 answers STATUS_LOGON_FAILURE.
	ErrLogonFailure = errors.New("ntlm: logon failure")
	// ErrInvalidToken means the security buffer could not be decoded, came
	// at the wrong step, or named no mechanism the server supports. SMB2
	// answers STATUS_INVALID_PARAMETER.
	ErrInvalidToken = errors.New("ntlm: invalid security token")
)

// maxTokenLen bounds the security buffer Step accepts, as Samba does.
const maxTokenLen = 0xffff

// Account is what a Lookup returns for a known user.
type Account struct {
	// Name is the account's canonical name, reported by Auth.User.
	Name string
	// Passwords are the passwords any of which authenticates the user;
	// for a storage account, its two keys as base64 text.
	Passwords []string
}

// Lookup finds the account for the user and domain of an AUTHENTICATE
// message. For Cerulean the user is a storage account name, matched
// case-insensitively, and the domain is ignored. It must be safe for
// concurrent use.
type Lookup func(user, domain string) (Account, bool)

// Config configures a Server. Empty names get defaults.
type Config struct {
	// Lookup resolves users; nil refuses every logon.
	Lookup Lookup
	// NetBIOSComputer is the server's NetBIOS name, also the CHALLENGE's
	// TargetName (default "CERULEAN").
	NetBIOSComputer string
	// NetBIOSDomain is MsvAvNbDomainName (default NetBIOSComputer, as a
	// standalone smbd sends it).
	NetBIOSDomain string
	// DNSComputer is MsvAvDnsComputerName (default "localhost").
	DNSComputer string
	// DNSDomain is MsvAvDnsDomainName (default empty).
	DNSDomain string
	// Clock supplies MsvAvTimestamp (default the wall clock).
	Clock clock.Clock
	// Rand supplies server challenges (default crypto/rand). It must be
	// safe for concurrent use if Auths step concurrently.
	Rand io.Reader
}

// Server authenticates SMB2 sessions. It is safe for concurrent use.
type Server struct {
	cfg Config
}

// NewServer returns a Server for cfg, with defaults filled in.
func NewServer(cfg Config) *Server {
	if cfg.NetBIOSComputer == "" {
		cfg.NetBIOSComputer = "CERULEAN"
	}
	if cfg.NetBIOSDomain == "" {
		cfg.NetBIOSDomain = cfg.NetBIOSComputer
	}
	if cfg.DNSComputer == "" {
		cfg.DNSComputer = "localhost"
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	return &Server{cfg: cfg}
}

// NegotiateHint returns the security buffer for the SMB2 NEGOTIATE
// response: a 74-byte SPNEGO negTokenInit offering NTLMSSP. Sending it
// (rather than an empty buffer) makes every Samba client use SPNEGO.
func (s *Server) NegotiateHint() []byte { return bytes.Clone(negotiateHint) }

// NewAuth starts the authentication of one session.
func (s *Server) NewAuth() *Auth { return &Auth{srv: s} }

type authState int

const (
	stateStart             authState = iota
	stateAwaitNegotiate              // SPNEGO chose NTLMSSP; its NEGOTIATE is still to come
	stateAwaitAuthenticate           // CHALLENGE sent
	stateAwaitMIC                    // authenticated; the client's mechListMIC is still to come
	stateDone
	stateFailed
)

// Auth is the authentication state of one session. It is not safe for
// concurrent use; SMB2 serializes a session's SESSION_SETUPs.
type Auth struct {
	srv   *Server
	state authState

	spnego       bool   // the client speaks SPNEGO (false: raw NTLMSSP)
	mechTypesDER []byte // the client's MechTypeList as sent, signed by mechListMIC
	micRequested bool   // NTLMSSP was not the client's first choice

	negotiateMsg []byte
	challengeMsg []byte
	challenge    [8]byte
	flags        uint32 // negotiated NTLMSSP flags

	authMIC bool   // the AUTHENTICATE carried a verified MIC
	key     []byte // exported session key
	user    string
	domain  string
}

// Step consumes the client's next security token and returns the token to
// send back. done is false while more round trips are needed
// (STATUS_MORE_PROCESSING_REQUIRED) and true once the client is
// authenticated. An empty first token is answered with the
// NegotiateHint, as Samba does. On error the Auth is finished for good; for SPNEGO
// clients out then holds a negTokenResp{reject}, which SMB2 discards since
// its error responses carry no security buffer.
func (a *Auth) Step(token []byte) (out []byte, done bool, err error) {
	if a.state == stateDone || a.state == stateFailed {
		return nil, false, fmt.Errorf("%w: authentication already finished", ErrInvalidToken)
	}
	if len(token) > maxTokenLen {
		err = fmt.Errorf("%w: %d-byte token", ErrInvalidToken, len(token))
	} else {
		out, done, err = a.step(token)
	}
	if err != nil {
		a.state, a.key = stateFailed, nil
		if a.spnego {
			return bytes.Clone(rejectToken), false, err
		}
		return nil, false, err
	}
	if done {
		a.state = stateDone
	}
	return out, done, nil
}

// SessionKey returns the exported session key once Step has reported done,
// nil before. It is the SessionKey input of the SMB2 key derivation.
func (a *Auth) SessionKey() []byte {
	if a.state != stateDone {
		return nil
	}
	return bytes.Clone(a.key)
}

// User returns the authenticated account's Name once Step has reported done.
func (a *Auth) User() string {
	if a.state != stateDone {
		return ""
	}
	return a.user
}

// Domain returns the domain the client sent in its AUTHENTICATE message
// once Step has reported done.
func (a *Auth) Domain() string {
	if a.state != stateDone {
		return ""
	}
	return a.domain
}

func (a *Auth) step(token []byte) ([]byte, bool, error) {
	switch a.state {
	case stateStart:
		return a.start(token)
	case stateAwaitNegotiate:
		resp, err := parseResp(token)
		if err != nil {
			return nil, false, err
		}
		chal, err := a.negotiate(resp.responseToken)
		if err != nil {
			return nil, false, err
		}
		return (&negTokenResp{negState: negStateAcceptIncomplete, supportedMech: oidNTLMSSP, responseToken: chal}).marshal(), false, nil
	case stateAwaitAuthenticate:
		if !a.spnego {
			if err := a.authenticate(token); err != nil {
				return nil, false, err
			}
			return nil, true, nil
		}
		resp, err := parseResp(token)
		if err != nil {
			return nil, false, err
		}
		if err := a.authenticate(resp.responseToken); err != nil {
			return nil, false, err
		}
		return a.finishSPNEGO(resp.mechListMIC)
	case stateAwaitMIC:
		resp, err := parseResp(token)
		if err != nil {
			return nil, false, err
		}
		if resp.responseToken != nil || resp.mechListMIC == nil {
			return nil, false, fmt.Errorf("%w: expected only a mechListMIC", ErrInvalidToken)
		}
		if err := a.checkMechListMIC(resp.mechListMIC); err != nil {
			return nil, false, err
		}
		return (&negTokenResp{negState: negStateAcceptCompleted}).marshal(), true, nil
	}
	return nil, false, fmt.Errorf("%w: unexpected state %d", ErrInvalidToken, a.state)
}

// start handles the first token: raw NTLMSSP or a SPNEGO negTokenInit.
func (a *Auth) start(token []byte) ([]byte, bool, error) {
	if len(token) == 0 {
		// No token yet: offer the mechanisms, as Samba does.
		return a.srv.NegotiateHint(), false, nil
	}
	if isNTLMSSP(token) {
		chal, err := a.negotiate(token)
		return chal, false, err
	}
	init, _, err := parseSPNEGO(token)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if init == nil {
		return nil, false, fmt.Errorf("%w: first SPNEGO token is not a negTokenInit", ErrInvalidToken)
	}
	a.spnego = true
	idx := -1
	for i, oid := range init.mechTypes {
		if bytes.Equal(oid, oidNTLMSSP) {
			idx = i
			break
		}
	}
	if idx < 0 {
		return nil, false, fmt.Errorf("%w: client offers no NTLMSSP", ErrInvalidToken)
	}
	a.mechTypesDER = bytes.Clone(init.mechTypesDER)
	// RFC 4178 §5: choosing other than the client's first mechanism makes
	// the mechListMIC exchange mandatory; an optimistic token is for that
	// first mechanism and is dropped.
	a.micRequested = idx != 0
	if idx == 0 && init.mechToken != nil {
		chal, err := a.negotiate(init.mechToken)
		if err != nil {
			return nil, false, err
		}
		return (&negTokenResp{negState: negStateAcceptIncomplete, supportedMech: oidNTLMSSP, responseToken: chal}).marshal(), false, nil
	}
	a.state = stateAwaitNegotiate
	st := negStateAcceptIncomplete
	if a.micRequested {
		st = negStateRequestMIC
	}
	return (&negTokenResp{negState: st, supportedMech: oidNTLMSSP}).marshal(), false, nil
}

// parseResp decodes a token that must be a negTokenResp.
func parseResp(token []byte) (*negTokenResp, error) {
	_, resp, err := parseSPNEGO(token)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if resp == nil {
		return nil, fmt.Errorf("%w: expected a negTokenResp", ErrInvalidToken)
	}
	if resp.negState == negStateReject {
		return nil, fmt.Errorf("%w: client rejected the negotiation", ErrInvalidToken)
	}
	return resp, nil
}

// negotiate consumes an NTLMSSP NEGOTIATE and returns the CHALLENGE.
func (a *Auth) negotiate(msg []byte) ([]byte, error) {
	clientFlags, err := parseNegotiate(msg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if _, err := io.ReadFull(a.srv.cfg.Rand, a.challenge[:]); err != nil {
		return nil, fmt.Errorf("ntlm: server challenge: %w", err)
	}
	a.negotiateMsg = bytes.Clone(msg)
	a.flags = negotiateFlags(clientFlags)
	c := &a.srv.cfg
	a.challengeMsg = buildChallenge(challengeParams{
		flags:      a.flags,
		challenge:  a.challenge,
		targetName: c.NetBIOSComputer,
		nbDomain:   c.NetBIOSDomain,
		nbComputer: c.NetBIOSComputer,
		dnsDomain:  c.DNSDomain,
		dnsName:    c.DNSComputer,
		now:        c.Clock.Now(),
	})
	a.state = stateAwaitAuthenticate
	return bytes.Clone(a.challengeMsg), nil
}

// authenticate verifies an NTLMSSP AUTHENTICATE (MS-NLMP 3.3.2) and derives
// the exported session key.
func (a *Auth) authenticate(msg []byte) error {
	m, err := parseAuthenticate(msg)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	flags := a.flags
	if m.flags != 0 {
		// The client's final word: it may drop flags, never add them.
		flags &= m.flags
	}
	user, err := decodeString(m.user, flags)
	if err != nil {
		return fmt.Errorf("%w: user name: %v", ErrInvalidToken, err)
	}
	domain, err := decodeString(m.domain, flags)
	if err != nil {
		return fmt.Errorf("%w: domain: %v", ErrInvalidToken, err)
	}
	if user == "" || m.flags&flagAnonymous != 0 {
		return fmt.Errorf("%w: anonymous logon refused", ErrLogonFailure)
	}
	resp, err := parseNTLMv2Response(m.ntResponse)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrLogonFailure, err)
	}
	var acct Account
	ok := false
	if a.srv.cfg.Lookup != nil {
		acct, ok = a.srv.cfg.Lookup(user, domain)
	}
	if !ok {
		return fmt.Errorf("%w: unknown user %q", ErrLogonFailure, user)
	}
	ntowf := a.findKey(acct.Passwords, user, domain, resp)
	if ntowf == nil {
		return fmt.Errorf("%w: wrong password for %q", ErrLogonFailure, user)
	}
	key := hmacMD5(ntowf, resp.ntProofStr) // SessionBaseKey = KeyExchangeKey for NTLMv2
	if flags&flagKeyExch != 0 {
		if len(m.encryptedKey) != 16 {
			return fmt.Errorf("%w: KEY_EXCH with a %d-byte encrypted session key", ErrInvalidToken, len(m.encryptedKey))
		}
		key = rc4Once(key, m.encryptedKey)
	}
	if resp.avFlags&avFlagMIC != 0 {
		if m.payloadStart < micOffset+16 {
			return fmt.Errorf("%w: MIC announced but no room for it", ErrInvalidToken)
		}
		zeroed := bytes.Clone(msg)
		clear(zeroed[micOffset : micOffset+16])
		want := hmacMD5(key, a.negotiateMsg, a.challengeMsg, zeroed)
		if !hmac.Equal(want, msg[micOffset:micOffset+16]) {
			return fmt.Errorf("%w: AUTHENTICATE MIC mismatch", ErrLogonFailure)
		}
		a.authMIC = true
	}
	a.flags, a.key, a.user, a.domain = flags, key, acct.Name, domain
	return nil
}

// findKey returns the NTOWFv2 that reproduces the client's NTProofStr,
// trying every password with the domain as sent, upper-cased and empty
// (as Samba's ntlm_check.c does), or nil.
func (a *Auth) findKey(passwords []string, user, domain string, resp *ntlmv2Response) []byte {
	domains := []string{domain}
	if up := strings.ToUpper(domain); up != domain {
		domains = append(domains, up)
	}
	if domain != "" {
		domains = append(domains, "")
	}
	for _, pw := range passwords {
		h := ntHash(pw)
		for _, d := range domains {
			k := ntowfv2(h, user, d)
			if hmac.Equal(computeNTProofStr(k, a.challenge, resp.blob), resp.ntProofStr) {
				return k
			}
		}
	}
	return nil
}

// finishSPNEGO decides the mechListMIC exchange after a successful
// AUTHENTICATE, following Samba's gensec_spnego server: with signing
// negotiated, a client that sent a mechListMIC, put a MIC in its
// AUTHENTICATE or was steered off its first mechanism must exchange
// mechListMICs; the server checks the client's and signs its own.
func (a *Auth) finishSPNEGO(clientMIC []byte) ([]byte, bool, error) {
	haveSign := a.flags&flagSign != 0
	newSPNEGO := a.authMIC || clientMIC != nil || a.micRequested
	if !haveSign || !newSPNEGO {
		return (&negTokenResp{negState: negStateAcceptCompleted}).marshal(), true, nil
	}
	if a.flags&flagExtendedSecurity == 0 {
		return nil, false, fmt.Errorf("%w: mechListMIC needs extended session security", ErrLogonFailure)
	}
	serverMIC := newSigner(a.key, a.flags, false).sign(0, a.mechTypesDER)
	if clientMIC == nil {
		a.state = stateAwaitMIC
		return (&negTokenResp{negState: negStateAcceptIncomplete, mechListMIC: serverMIC}).marshal(), false, nil
	}
	if err := a.checkMechListMIC(clientMIC); err != nil {
		return nil, false, err
	}
	return (&negTokenResp{negState: negStateAcceptCompleted, mechListMIC: serverMIC}).marshal(), true, nil
}

// checkMechListMIC verifies the client's mechListMIC: the client-to-server
// signature, sequence 0, of the MechTypeList it sent.
func (a *Auth) checkMechListMIC(mic []byte) error {
	if a.flags&flagExtendedSecurity == 0 {
		return fmt.Errorf("%w: mechListMIC needs extended session security", ErrLogonFailure)
	}
	want := newSigner(a.key, a.flags, true).sign(0, a.mechTypesDER)
	if !hmac.Equal(want, mic) {
		return fmt.Errorf("%w: mechListMIC mismatch", ErrLogonFailure)
	}
	return nil
}

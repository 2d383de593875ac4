package ntlm

import (
	"bytes"
	"crypto/rand"
	"encoding/asn1"
	"encoding/binary"
	"errors"
	"testing"
)

// smbclientFlags are the NEGOTIATE flags smbclient 4.17 sends.
const smbclientFlags = 0x62088215

// testClient is a Samba-like NTLMSSP client for paths go-ntlmssp cannot
// take: KEY_EXCH, the AUTHENTICATE MIC, mechListMIC and OEM strings. Its
// primitives are the package's own, which the captured vectors pin.
type testClient struct {
	flags       uint32 // NEGOTIATE flags
	user        string
	domain      string // sent in AUTHENTICATE
	hashDomain  string // used in NTOWFv2
	password    string
	mic         bool   // announce and send the AUTHENTICATE MIC
	extraFlags  uint32 // set in the AUTHENTICATE flags beyond what was negotiated
	mechs       []asn1.ObjectIdentifier
	negotiate   []byte
	sessionKey  []byte // exported session key the client ends up with
	finalFlags  uint32
	mechListMIC []byte // the client's, over mechs
}

func newTestClient(password string) *testClient {
	return &testClient{
		flags: smbclientFlags, user: "acct1", domain: "AZURE", hashDomain: "AZURE",
		password: password, mic: true, mechs: []asn1.ObjectIdentifier{asnNTLMSSP},
	}
}

func (c *testClient) negotiateMsg() []byte {
	b := append([]byte("NTLMSSP\x00"), 1, 0, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, c.flags)
	b = append(b, make([]byte, 16)...)     // no domain, no workstation
	b = append(b, 6, 1, 0, 0, 0, 0, 0, 15) // version
	c.negotiate = b
	return b
}

func (c *testClient) authenticateMsg(t testing.TB, chal []byte) []byte {
	t.Helper()
	chalFlags := binary.LittleEndian.Uint32(chal[20:])
	if chalFlags&^(c.flags|flagTargetInfo|flagTargetTypeServer) != 0 {
		t.Fatalf("server granted flags %#x the client did not ask for (%#x)", chalFlags, c.flags)
	}
	flags := c.flags & chalFlags
	c.finalFlags = flags
	infoLen := int(binary.LittleEndian.Uint16(chal[40:]))
	infoOff := int(binary.LittleEndian.Uint32(chal[44:]))
	pairs, err := parseAVPairs(chal[infoOff : infoOff+infoLen])
	if err != nil {
		t.Fatal(err)
	}
	var ts []byte
	var info []avPair
	for _, p := range pairs {
		if p.id == avTimestamp {
			ts = p.val
		}
		info = append(info, p)
	}
	if len(ts) != 8 {
		t.Fatal("CHALLENGE has no MsvAvTimestamp")
	}
	if c.mic {
		info = append(info, avPair{avFlags, []byte{avFlagMIC, 0, 0, 0}})
	}
	cc := make([]byte, 8)
	rand.Read(cc)
	blob := append([]byte{1, 1, 0, 0, 0, 0, 0, 0}, ts...)
	blob = append(blob, cc...)
	blob = append(blob, 0, 0, 0, 0)
	blob = appendAVPairs(blob, info)
	blob = append(blob, 0, 0, 0, 0)

	ntowf := ntowfv2(ntHash(c.password), c.user, c.hashDomain)
	proof := computeNTProofStr(ntowf, [8]byte(chal[24:32]), blob)
	nt := append(bytes.Clone(proof), blob...)
	key := hmacMD5(ntowf, proof)
	var erk []byte
	if flags&flagKeyExch != 0 {
		random := make([]byte, 16)
		rand.Read(random)
		erk = rc4Once(key, random)
		key = random
	}
	c.sessionKey = key

	fields := [][]byte{make([]byte, 24), nt, encodeString(c.domain, flags), encodeString(c.user, flags), encodeString("WS", flags), erk}
	const hdr = 88 // header, version, MIC
	b := append([]byte("NTLMSSP\x00"), 3, 0, 0, 0)
	off := hdr
	for _, f := range fields {
		b = appendField(b, len(f), off)
		off += len(f)
	}
	b = binary.LittleEndian.AppendUint32(b, flags|c.extraFlags)
	b = append(b, 6, 1, 0, 0, 0, 0, 0, 15)
	b = append(b, make([]byte, 16)...)
	for _, f := range fields {
		b = append(b, f...)
	}
	if c.mic {
		copy(b[micOffset:], hmacMD5(key, c.negotiate, chal, b))
	}
	c.mechListMIC = newSigner(key, flags, true).sign(0, mechTypesDER(t, c.mechs))
	return b
}

// checkServerMIC verifies the server's mechListMIC as a client would.
func (c *testClient) checkServerMIC(t testing.TB, mic []byte) {
	t.Helper()
	want := newSigner(c.sessionKey, c.finalFlags, false).sign(0, mechTypesDER(t, c.mechs))
	if !bytes.Equal(mic, want) {
		t.Errorf("server mechListMIC %x, want %x", mic, want)
	}
}

// spnegoLogon runs the usual two-leg SPNEGO exchange and returns the final
// server token.
func spnegoLogon(t *testing.T, a *Auth, c *testClient, sendMechListMIC bool) (asnNegTokenResp, error) {
	t.Helper()
	out, done, err := a.Step(gssInit(t, c.mechs, c.negotiateMsg()))
	if err != nil || done {
		t.Fatalf("step 1: done=%v err=%v", done, err)
	}
	auth := c.authenticateMsg(t, serverResp(t, out).ResponseToken)
	var mic []byte
	if sendMechListMIC {
		mic = c.mechListMIC
	}
	out, done, err = a.Step(clientResp(t, auth, mic))
	if err != nil {
		return asnNegTokenResp{}, err
	}
	if !done {
		t.Fatal("step 2 not done")
	}
	return serverResp(t, out), nil
}

func TestSambaLikeClient(t *testing.T) {
	t.Run("KEY_EXCH, MIC and mechListMIC with key2", func(t *testing.T) {
		a := testServer(t).NewAuth()
		c := newTestClient(testKey2)
		r, err := spnegoLogon(t, a, c, true)
		if err != nil {
			t.Fatal(err)
		}
		if r.NegState != 0 {
			t.Errorf("negState %d", r.NegState)
		}
		c.checkServerMIC(t, r.MechListMIC)
		if !bytes.Equal(a.SessionKey(), c.sessionKey) {
			t.Errorf("SessionKey %x, client chose %x", a.SessionKey(), c.sessionKey)
		}
	})
	domainCases := []struct{ sent, hashed string }{{"azure", "AZURE"}, {"AZURE", ""}, {"", ""}}
	for _, d := range domainCases {
		t.Run("domain sent "+d.sent+" hashed "+d.hashed, func(t *testing.T) {
			a := testServer(t).NewAuth()
			c := newTestClient(testKey1)
			c.domain, c.hashDomain = d.sent, d.hashed
			if _, err := spnegoLogon(t, a, c, true); err != nil {
				t.Fatal(err)
			}
			if a.Domain() != d.sent {
				t.Errorf("Domain %q", a.Domain())
			}
		})
	}
	t.Run("domain hashed differently", func(t *testing.T) {
		c := newTestClient(testKey1)
		c.hashDomain = "OTHER"
		if _, err := spnegoLogon(t, testServer(t).NewAuth(), c, true); !errors.Is(err, ErrLogonFailure) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("OEM strings", func(t *testing.T) {
		a := testServer(t).NewAuth()
		c := newTestClient(testKey1)
		c.flags = c.flags&^flagUnicode | flagOEM
		if _, err := spnegoLogon(t, a, c, true); err != nil {
			t.Fatal(err)
		}
		if a.User() != "acct1" || a.Domain() != "AZURE" {
			t.Errorf("User %q Domain %q", a.User(), a.Domain())
		}
	})
	for _, f := range []struct {
		name  string
		clear uint32
	}{{"no KEY_EXCH", flagKeyExch}, {"56-bit", flag128}, {"40-bit", flag128 | flag56}} {
		t.Run(f.name, func(t *testing.T) {
			a := testServer(t).NewAuth()
			c := newTestClient(testKey1)
			c.flags &^= f.clear
			r, err := spnegoLogon(t, a, c, true)
			if err != nil {
				t.Fatal(err)
			}
			c.checkServerMIC(t, r.MechListMIC)
			if !bytes.Equal(a.SessionKey(), c.sessionKey) {
				t.Errorf("SessionKey %x, client has %x", a.SessionKey(), c.sessionKey)
			}
		})
	}
	t.Run("AUTHENTICATE cannot add flags", func(t *testing.T) {
		a := testServer(t).NewAuth()
		c := newTestClient(testKey1)
		c.flags &^= flagKeyExch | flagSeal
		c.extraFlags = flagKeyExch | flagSeal
		r, err := spnegoLogon(t, a, c, true)
		if err != nil {
			t.Fatal(err)
		}
		c.checkServerMIC(t, r.MechListMIC)
		if !bytes.Equal(a.SessionKey(), c.sessionKey) {
			t.Errorf("SessionKey %x, client has %x", a.SessionKey(), c.sessionKey)
		}
	})
	t.Run("no signing: no mechListMIC owed", func(t *testing.T) {
		c := newTestClient(testKey1)
		c.flags &^= flagSign
		r, err := spnegoLogon(t, testServer(t).NewAuth(), c, false)
		if err != nil {
			t.Fatal(err)
		}
		if r.NegState != 0 || r.MechListMIC != nil {
			t.Errorf("final %+v", r)
		}
	})
	t.Run("raw NTLMSSP with MIC", func(t *testing.T) {
		a := testServer(t).NewAuth()
		c := newTestClient(testKey1)
		chal, done, err := a.Step(c.negotiateMsg())
		if err != nil || done || !isNTLMSSP(chal) {
			t.Fatalf("step 1: %x done=%v err=%v", chal, done, err)
		}
		out, done, err := a.Step(c.authenticateMsg(t, chal))
		if err != nil || !done || out != nil {
			t.Fatalf("step 2: %x done=%v err=%v", out, done, err)
		}
		if !bytes.Equal(a.SessionKey(), c.sessionKey) {
			t.Error("session key differs")
		}
	})
	t.Run("raw NTLMSSP wrong key", func(t *testing.T) {
		a := testServer(t).NewAuth()
		c := newTestClient(testKey1 + "x")
		chal, _, _ := a.Step(c.negotiateMsg())
		out, done, err := a.Step(c.authenticateMsg(t, chal))
		if !errors.Is(err, ErrLogonFailure) || done || out != nil {
			t.Fatalf("%x done=%v err=%v", out, done, err)
		}
	})
}

// TestMechListMICThirdLeg: a client whose AUTHENTICATE carries a MIC but
// whose mechListMIC is not in the same token gets the server's MIC with
// accept-incomplete and must send its own next.
func TestMechListMICThirdLeg(t *testing.T) {
	third := []struct {
		name string
		tok  func(c *testClient) []byte
		want error
	}{
		{"good", func(c *testClient) []byte { return clientResp(t, nil, c.mechListMIC) }, nil},
		{"bad MIC", func(c *testClient) []byte {
			m := bytes.Clone(c.mechListMIC)
			m[4] ^= 1
			return clientResp(t, nil, m)
		}, ErrLogonFailure},
		{"missing MIC", func(c *testClient) []byte { return clientResp(t, nil, nil) }, ErrInvalidToken},
		{"another token", func(c *testClient) []byte { return clientResp(t, []byte("x"), c.mechListMIC) }, ErrInvalidToken},
		{"reject", func(c *testClient) []byte {
			return mustMarshal(t, asnNegTokenResp{NegState: 2}, "explicit,tag:1")
		}, ErrInvalidToken},
	}
	for _, c3 := range third {
		t.Run(c3.name, func(t *testing.T) {
			a := testServer(t).NewAuth()
			c := newTestClient(testKey1)
			out, _, err := a.Step(gssInit(t, c.mechs, c.negotiateMsg()))
			if err != nil {
				t.Fatal(err)
			}
			auth := c.authenticateMsg(t, serverResp(t, out).ResponseToken)
			out, done, err := a.Step(clientResp(t, auth, nil))
			if err != nil || done {
				t.Fatalf("step 2: done=%v err=%v", done, err)
			}
			r := serverResp(t, out)
			if r.NegState != 1 || r.ResponseToken != nil {
				t.Errorf("step 2 %+v", r)
			}
			c.checkServerMIC(t, r.MechListMIC)
			if a.SessionKey() != nil {
				t.Error("session key before the mechListMIC check")
			}
			out, done, err = a.Step(c3.tok(c))
			if c3.want != nil {
				if !errors.Is(err, c3.want) || done {
					t.Fatalf("step 3: done=%v err=%v, want %v", done, err, c3.want)
				}
				return
			}
			if err != nil || !done {
				t.Fatalf("step 3: done=%v err=%v", done, err)
			}
			if r := serverResp(t, out); r.NegState != 0 || r.MechListMIC != nil {
				t.Errorf("step 3 %+v", r)
			}
			if !bytes.Equal(a.SessionKey(), c.sessionKey) {
				t.Error("session key differs")
			}
		})
	}
}

// TestMechSelection covers negTokenInits without an NTLMSSP optimistic
// token: NTLMSSP listed later (the server must ask for the mechListMIC),
// NTLMSSP first without a token, and no NTLMSSP at all.
func TestMechSelection(t *testing.T) {
	t.Run("Kerberos preferred", func(t *testing.T) {
		for _, sendMIC := range []bool{true, false} {
			a := testServer(t).NewAuth()
			c := newTestClient(testKey1)
			c.mic = false // only the SPNEGO downgrade protection makes the MIC owed
			c.mechs = []asn1.ObjectIdentifier{asnMSKRB5, asnKRB5, asnNTLMSSP}
			out, done, err := a.Step(gssInit(t, c.mechs, []byte("a Kerberos AP-REQ")))
			if err != nil || done {
				t.Fatalf("step 1: done=%v err=%v", done, err)
			}
			r := serverResp(t, out)
			if r.NegState != 3 || !r.SupportedMech.Equal(asnNTLMSSP) || r.ResponseToken != nil {
				t.Fatalf("step 1 %+v, want request-mic for NTLMSSP", r)
			}
			out, done, err = a.Step(clientResp(t, c.negotiateMsg(), nil))
			if err != nil || done {
				t.Fatalf("step 2: done=%v err=%v", done, err)
			}
			auth := c.authenticateMsg(t, serverResp(t, out).ResponseToken)
			var mic []byte
			if sendMIC {
				mic = c.mechListMIC
			}
			out, done, err = a.Step(clientResp(t, auth, mic))
			if err != nil || done != sendMIC {
				t.Fatalf("step 3 (mechListMIC sent %v): done=%v err=%v", sendMIC, done, err)
			}
			c.checkServerMIC(t, serverResp(t, out).MechListMIC)
			if !sendMIC {
				if _, done, err = a.Step(clientResp(t, nil, c.mechListMIC)); err != nil || !done {
					t.Fatalf("step 4: done=%v err=%v", done, err)
				}
			}
			if !bytes.Equal(a.SessionKey(), c.sessionKey) {
				t.Error("session key differs")
			}
		}
	})
	t.Run("NTLMSSP without optimistic token", func(t *testing.T) {
		a := testServer(t).NewAuth()
		c := newTestClient(testKey1)
		out, _, err := a.Step(gssInit(t, c.mechs, nil))
		if err != nil {
			t.Fatal(err)
		}
		if r := serverResp(t, out); r.NegState != 1 || !r.SupportedMech.Equal(asnNTLMSSP) || r.ResponseToken != nil {
			t.Fatalf("step 1 %+v", r)
		}
		out, _, err = a.Step(clientResp(t, c.negotiateMsg(), nil))
		if err != nil {
			t.Fatal(err)
		}
		auth := c.authenticateMsg(t, serverResp(t, out).ResponseToken)
		if _, done, err := a.Step(clientResp(t, auth, c.mechListMIC)); err != nil || !done {
			t.Fatalf("step 3: done=%v err=%v", done, err)
		}
	})
	t.Run("no NTLMSSP offered", func(t *testing.T) {
		a := testServer(t).NewAuth()
		out, done, err := a.Step(gssInit(t, []asn1.ObjectIdentifier{asnKRB5}, []byte("AP-REQ")))
		if !errors.Is(err, ErrInvalidToken) || done {
			t.Fatalf("done=%v err=%v", done, err)
		}
		if serverResp(t, out).NegState != 2 {
			t.Errorf("%x is not a reject", out)
		}
	})
}

func TestProtocolErrors(t *testing.T) {
	c := newTestClient(testKey1)
	neg := c.negotiateMsg()
	cases := []struct {
		name   string
		tokens [][]byte
		want   error
	}{
		{"AUTHENTICATE first", [][]byte{append([]byte("NTLMSSP\x00"), make([]byte, 80)...)}, ErrInvalidToken},
		{"NEGOTIATE twice raw", [][]byte{neg, neg}, ErrInvalidToken},
		{"NEGOTIATE twice SPNEGO", [][]byte{gssInit(t, c.mechs, neg), clientResp(t, neg, nil)}, ErrInvalidToken},
		{"negTokenResp first", [][]byte{clientResp(t, neg, nil)}, ErrInvalidToken},
		{"negTokenInit second", [][]byte{gssInit(t, c.mechs, neg), gssInit(t, c.mechs, neg)}, ErrInvalidToken},
		{"garbage", [][]byte{[]byte("hello")}, ErrInvalidToken},
		{"truncated SPNEGO", [][]byte{gssInit(t, c.mechs, neg)[:30]}, ErrInvalidToken},
		{"oversized", [][]byte{make([]byte, maxTokenLen+1)}, ErrInvalidToken},
		{"anonymous", [][]byte{neg, anonymousAuth()}, ErrLogonFailure},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := testServer(t).NewAuth()
			var err error
			for _, tok := range tc.tokens {
				if _, _, err = a.Step(tok); err != nil {
					break
				}
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if _, _, err := a.Step(neg); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("step after failure: %v", err)
			}
		})
	}
	t.Run("empty first token gets the hint", func(t *testing.T) {
		a := testServer(t).NewAuth()
		out, done, err := a.Step(nil)
		if err != nil || done || !bytes.Equal(out, negotiateHint) {
			t.Fatalf("%x done=%v err=%v", out, done, err)
		}
		if _, err := spnegoLogon(t, a, newTestClient(testKey1), true); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("no Lookup refuses everyone", func(t *testing.T) {
		_, err := spnegoLogon(t, NewServer(Config{}).NewAuth(), newTestClient(testKey1), true)
		if !errors.Is(err, ErrLogonFailure) {
			t.Fatalf("err %v", err)
		}
	})
}

// anonymousAuth is an AUTHENTICATE with empty user and responses, as an
// anonymous client sends it (LM response one zero byte).
func anonymousAuth() []byte {
	b := append([]byte("NTLMSSP\x00"), 3, 0, 0, 0)
	b = appendField(b, 1, 64)
	for range 5 {
		b = appendField(b, 0, 65)
	}
	b = binary.LittleEndian.AppendUint32(b, flagUnicode|flagAnonymous)
	return append(b, 0)
}

package ntlm

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"encoding/asn1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	ntlmssp "github.com/Azure/go-ntlmssp"
	//lint:ignore SA1019 NTLM's NT hash is MD4 of the password (MS-NLMP 3.3.1); there is no other way to compute it.
	"golang.org/x/crypto/md4"

	"github.com/cerulean-storage/cerulean/internal/clock"
)

// Storage-account style credentials: two 88-character base64 keys.
var (
	testKey1 = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x11, 0x22, 0x33}, 22))
	testKey2 = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x44, 0x55, 0x66}, 22))
)

func testServer(t testing.TB) *Server {
	t.Helper()
	if len(testKey1) != 88 {
		t.Fatalf("key is %d characters", len(testKey1))
	}
	return NewServer(Config{
		Lookup: func(user, _ string) (Account, bool) {
			if !strings.EqualFold(user, "acct1") {
				return Account{}, false
			}
			return Account{Name: "acct1", Passwords: []string{testKey1, testKey2}}, true
		},
		Clock: clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
	})
}

// OIDs for the client side, encoded with encoding/asn1 so that the
// server's hand-written DER is checked against an independent codec.
var (
	asnSPNEGO  = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 2}
	asnNTLMSSP = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 2, 2, 10}
	asnKRB5    = asn1.ObjectIdentifier{1, 2, 840, 113554, 1, 2, 2}
	asnMSKRB5  = asn1.ObjectIdentifier{1, 2, 840, 48018, 1, 2, 2}
)

type asnNegTokenInit struct {
	MechTypes []asn1.ObjectIdentifier `asn1:"explicit,tag:0"`
	MechToken []byte                  `asn1:"explicit,optional,tag:2"`
}

type asnNegTokenResp struct {
	NegState      asn1.Enumerated       `asn1:"explicit,optional,tag:0,default:-1"`
	SupportedMech asn1.ObjectIdentifier `asn1:"explicit,optional,tag:1"`
	ResponseToken []byte                `asn1:"explicit,optional,tag:2"`
	MechListMIC   []byte                `asn1:"explicit,optional,tag:3"`
}

func mustMarshal(t testing.TB, v any, params string) []byte {
	t.Helper()
	b, err := asn1.MarshalWithParams(v, params)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gssInit wraps a negTokenInit in the GSS-API initial context token.
func gssInit(t testing.TB, mechs []asn1.ObjectIdentifier, token []byte) []byte {
	inner := mustMarshal(t, asnNegTokenInit{MechTypes: mechs, MechToken: token}, "explicit,tag:0")
	oid := mustMarshal(t, asnSPNEGO, "")
	return mustMarshal(t, asn1.RawValue{Class: asn1.ClassApplication, Tag: 0, IsCompound: true, Bytes: append(oid, inner...)}, "")
}

// mechTypesDER is the DER MechTypeList the client's mechListMIC signs.
func mechTypesDER(t testing.TB, mechs []asn1.ObjectIdentifier) []byte {
	return mustMarshal(t, mechs, "")
}

func clientResp(t testing.TB, token, mic []byte) []byte {
	return mustMarshal(t, asnNegTokenResp{NegState: -1, ResponseToken: token, MechListMIC: mic}, "explicit,tag:1")
}

// serverResp decodes a server negTokenResp with encoding/asn1.
func serverResp(t testing.TB, b []byte) asnNegTokenResp {
	t.Helper()
	var r asnNegTokenResp
	rest, err := asn1.UnmarshalWithParams(b, &r, "explicit,tag:1")
	if err != nil || len(rest) != 0 {
		t.Fatalf("server token %x: %v (rest %x)", b, err, rest)
	}
	return r
}

// expectedSessionKey recomputes NTLMv2's SessionBaseKey from the password
// and the AUTHENTICATE message, independently of the package (go-ntlmssp
// does no key exchange, so the exported key is the base key).
func expectedSessionKey(t testing.TB, password, user, domain string, auth []byte) []byte {
	t.Helper()
	u16 := func(s string) []byte {
		var b []byte
		for _, r := range s {
			b = binary.LittleEndian.AppendUint16(b, uint16(r))
		}
		return b
	}
	h := md4.New()
	h.Write(u16(password))
	m := hmac.New(md5.New, h.Sum(nil))
	m.Write(u16(strings.ToUpper(user) + domain))
	ntowf := m.Sum(nil)
	off := binary.LittleEndian.Uint32(auth[24:])
	m = hmac.New(md5.New, ntowf)
	m.Write(auth[off : off+16])
	return m.Sum(nil)
}

// TestGoNTLMSSPClient authenticates go-ntlmssp (an independent NTLMv2
// client) against the server, raw and inside SPNEGO.
func TestGoNTLMSSPClient(t *testing.T) {
	cases := []struct {
		name     string
		spnego   bool
		user     string
		password string
		tamper   func(auth []byte)
		want     error
	}{
		{"raw key1", false, `AZURE\acct1`, testKey1, nil, nil},
		{"raw key2 no domain", false, `acct1`, testKey2, nil, nil},
		{"spnego key1", true, `AZURE\acct1`, testKey1, nil, nil},
		{"spnego key2 other domain, user case", true, `localhost\ACCT1`, testKey2, nil, nil},
		{"spnego lower-case domain", true, `azure\acct1`, testKey1, nil, nil},
		{"raw wrong key", false, `AZURE\acct1`, testKey1[:87] + "A", nil, ErrLogonFailure},
		{"spnego wrong key", true, `AZURE\acct1`, "Key1pass!", nil, ErrLogonFailure},
		{"spnego wrong user", true, `AZURE\acct2`, testKey1, nil, ErrLogonFailure},
		{"raw tampered NTProofStr", false, `AZURE\acct1`, testKey1, func(auth []byte) {
			auth[binary.LittleEndian.Uint32(auth[24:])+5] ^= 0x80
		}, ErrLogonFailure},
		{"spnego tampered client challenge", true, `AZURE\acct1`, testKey1, func(auth []byte) {
			auth[binary.LittleEndian.Uint32(auth[24:])+16+16] ^= 0x01
		}, ErrLogonFailure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := testServer(t).NewAuth()
			neg, err := ntlmssp.NewNegotiateMessage("", "")
			if err != nil {
				t.Fatal(err)
			}
			tok := neg
			if c.spnego {
				tok = gssInit(t, []asn1.ObjectIdentifier{asnNTLMSSP}, neg)
			}
			out, done, err := a.Step(tok)
			if err != nil || done {
				t.Fatalf("step 1: done=%v err=%v", done, err)
			}
			chal := out
			if c.spnego {
				r := serverResp(t, out)
				if r.NegState != 1 || !r.SupportedMech.Equal(asnNTLMSSP) {
					t.Fatalf("step 1 negState %d mech %v", r.NegState, r.SupportedMech)
				}
				chal = r.ResponseToken
			}
			auth, err := ntlmssp.NewAuthenticateMessage(chal, c.user, c.password, nil)
			if err != nil {
				t.Fatalf("go-ntlmssp refused the CHALLENGE: %v", err)
			}
			if c.tamper != nil {
				c.tamper(auth)
			}
			tok = auth
			if c.spnego {
				tok = clientResp(t, auth, nil)
			}
			out, done, err = a.Step(tok)
			if c.want != nil {
				if !errors.Is(err, c.want) || done {
					t.Fatalf("step 2: done=%v err=%v, want %v", done, err, c.want)
				}
				if c.spnego && serverResp(t, out).NegState != 2 {
					t.Errorf("failure token %x is not a reject", out)
				}
				return
			}
			if err != nil || !done {
				t.Fatalf("step 2: done=%v err=%v", done, err)
			}
			if c.spnego {
				// go-ntlmssp negotiates no signing, so no mechListMIC is owed.
				r := serverResp(t, out)
				if r.NegState != 0 || r.MechListMIC != nil || r.ResponseToken != nil {
					t.Errorf("final token %+v", r)
				}
			} else if out != nil {
				t.Errorf("raw final token %x, want none", out)
			}
			domain, name, found := strings.Cut(c.user, `\`)
			if !found {
				domain, name = "", domain
			}
			if a.User() != "acct1" || a.Domain() != domain {
				t.Errorf("User %q Domain %q", a.User(), a.Domain())
			}
			want := expectedSessionKey(t, c.password, name, domain, auth)
			if got := a.SessionKey(); !bytes.Equal(got, want) {
				t.Errorf("SessionKey %x, want %x", got, want)
			}
		})
	}
}

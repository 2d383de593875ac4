package ntlm

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
)

// vectorDir holds SMB2 exchanges captured between smbclient 4.17.12 and
// smbd 4.17.12 (user root, password Key1pass!), each with the NTLMv2 values
// (MS-NLMP 3.3.2) and SMB2 keys (MS-SMB2 3.1.4.2) recomputed from the
// capture.
const vectorDir = "testdata"

// vector is the part of a capture file these tests use.
type vector struct {
	name         string
	User         string   `json:"user"`
	Password     string   `json:"password"`
	NegotiateRsp hexBytes `json:"negotiate_response"`
	PDUs         []struct {
		Dir string   `json:"dir"`
		Hex hexBytes `json:"hex"`
	} `json:"session_setup_pdus"`
	ServerChallenge    hexBytes `json:"ntlm_server_challenge"`
	NTProofStr         hexBytes `json:"ntlm_ntproofstr"`
	SessionBaseKey     hexBytes `json:"session_base_key"`
	ExportedSessionKey hexBytes `json:"exported_session_key"`
	ClientMechListMIC  hexBytes `json:"client_mechlistmic"`
	ServerMechListMIC  hexBytes `json:"server_mechlistmic"`
}

type hexBytes []byte

func (h *hexBytes) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := hex.DecodeString(s)
	*h = v
	return err
}

// loadVectors reads every capture; the tests need at least one.
func loadVectors(tb testing.TB) []*vector {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(vectorDir, "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no vectors in %s: %v", vectorDir, err)
	}
	var vs []*vector
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		v := &vector{name: strings.TrimSuffix(filepath.Base(f), ".json")}
		if err := json.Unmarshal(b, v); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		if len(v.PDUs) != 4 {
			tb.Fatalf("%s: %d SESSION_SETUP PDUs, want 4", f, len(v.PDUs))
		}
		vs = append(vs, v)
	}
	return vs
}

// secBuf returns the security buffer of an SMB2 SESSION_SETUP request or
// response, or of a NEGOTIATE response.
func secBuf(tb testing.TB, pdu []byte) []byte {
	tb.Helper()
	var at int
	switch cmd, resp := binary.LittleEndian.Uint16(pdu[12:]), pdu[16]&1 != 0; {
	case cmd == 0 && resp:
		at = 64 + 56
	case cmd == 1 && resp:
		at = 64 + 4
	case cmd == 1:
		at = 64 + 12
	default:
		tb.Fatalf("no security buffer in command %d", cmd)
	}
	off := int(binary.LittleEndian.Uint16(pdu[at:]))
	n := int(binary.LittleEndian.Uint16(pdu[at+2:]))
	return pdu[off : off+n]
}

// tokens returns the four SPNEGO tokens of a vector's SESSION_SETUP
// exchange: request 1, response 1, request 2, response 2.
func (v *vector) tokens(tb testing.TB) [4][]byte {
	var t [4][]byte
	for i, p := range v.PDUs {
		t[i] = secBuf(tb, p.Hex)
	}
	return t
}

// ntlm returns the NTLMSSP messages inside the tokens: NEGOTIATE,
// CHALLENGE, AUTHENTICATE, plus the client's MechTypeList DER and the
// client's mechListMIC.
func (v *vector) ntlm(tb testing.TB) (neg, chal, auth, mechTypes, clientMIC []byte) {
	tb.Helper()
	t := v.tokens(tb)
	init, _, err := parseSPNEGO(t[0])
	if err != nil || init == nil {
		tb.Fatalf("request 1: %v", err)
	}
	_, r1, err := parseSPNEGO(t[1])
	if err != nil || r1 == nil {
		tb.Fatalf("response 1: %v", err)
	}
	_, r2, err := parseSPNEGO(t[2])
	if err != nil || r2 == nil {
		tb.Fatalf("request 2: %v", err)
	}
	return init.mechToken, r1.responseToken, r2.responseToken, init.mechTypesDER, r2.mechListMIC
}

// replayServer returns a Server that reproduces smbd's CHALLENGE of v
// byte for byte: same names, same challenge, same timestamp.
func (v *vector) replayServer(tb testing.TB, passwords ...string) *Server {
	tb.Helper()
	_, chal, _, _, _ := v.ntlm(tb)
	info, err := parseAVPairs(chal[binary.LittleEndian.Uint32(chal[44:]):])
	if err != nil {
		tb.Fatal(err)
	}
	var ts time.Time
	for _, p := range info {
		if p.id == avTimestamp {
			ts = fromFiletime(binary.LittleEndian.Uint64(p.val))
		}
	}
	if len(passwords) == 0 {
		passwords = []string{v.Password}
	}
	return NewServer(Config{
		Lookup: func(user, _ string) (Account, bool) {
			if !strings.EqualFold(user, v.User) {
				return Account{}, false
			}
			return Account{Name: v.User, Passwords: passwords}, true
		},
		NetBIOSComputer: "SMBREF",
		NetBIOSDomain:   "SMBREF",
		DNSComputer:     "vm",
		Clock:           clock.NewFake(ts),
		Rand:            bytes.NewReader(v.ServerChallenge),
	})
}

// fromFiletime converts a FILETIME back to a time.
func fromFiletime(ft uint64) time.Time {
	ft -= unixToFiletime
	return time.Unix(int64(ft/1e7), int64(ft%1e7)*100).UTC()
}

func TestNegotiateHintMatchesSmbd(t *testing.T) {
	for _, v := range loadVectors(t) {
		hint := NewServer(Config{}).NegotiateHint()
		if want := secBuf(t, v.NegotiateRsp); !bytes.Equal(hint, want) {
			t.Errorf("%s: hint\n got %x\nwant %x", v.name, hint, want)
		}
		if len(hint) != 74 {
			t.Errorf("hint is %d bytes, want 74", len(hint))
		}
	}
}

// TestVectorCrypto recomputes each capture's NTLMv2 values from the
// password with the package's primitives.
func TestVectorCrypto(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.name, func(t *testing.T) {
			neg, chal, authMsg, mechTypes, clientMIC := v.ntlm(t)
			if got := chal[24:32]; !bytes.Equal(got, v.ServerChallenge) {
				t.Fatalf("CHALLENGE carries %x, vector says %x", got, v.ServerChallenge)
			}
			m, err := parseAuthenticate(authMsg)
			if err != nil {
				t.Fatal(err)
			}
			user, _ := decodeString(m.user, flagUnicode)
			domain, _ := decodeString(m.domain, flagUnicode)
			if user != v.User || domain != "WORKGROUP" {
				t.Fatalf("user %q domain %q", user, domain)
			}
			resp, err := parseNTLMv2Response(m.ntResponse)
			if err != nil {
				t.Fatal(err)
			}
			if resp.avFlags&avFlagMIC == 0 {
				t.Fatal("smbclient's AUTHENTICATE should announce a MIC")
			}
			ntowf := ntowfv2(ntHash(v.Password), user, domain)
			proof := computeNTProofStr(ntowf, [8]byte(v.ServerChallenge), resp.blob)
			check(t, "NTProofStr", proof, v.NTProofStr)
			check(t, "NTProofStr in message", resp.ntProofStr, v.NTProofStr)
			base := hmacMD5(ntowf, proof)
			check(t, "SessionBaseKey", base, v.SessionBaseKey)
			exported := rc4Once(base, m.encryptedKey)
			check(t, "ExportedSessionKey", exported, v.ExportedSessionKey)
			zeroed := bytes.Clone(authMsg)
			clear(zeroed[micOffset : micOffset+16])
			check(t, "MIC", hmacMD5(exported, neg, chal, zeroed), authMsg[micOffset:micOffset+16])
			flags := binary.LittleEndian.Uint32(chal[20:]) & m.flags
			check(t, "client mechListMIC", newSigner(exported, flags, true).sign(0, mechTypes), v.ClientMechListMIC)
			check(t, "client mechListMIC in message", clientMIC, v.ClientMechListMIC)
			check(t, "server mechListMIC", newSigner(exported, flags, false).sign(0, mechTypes), v.ServerMechListMIC)
		})
	}
}

func check(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s\n got %x\nwant %x", what, got, want)
	}
}

// TestVectorReplay drives a Server through each captured exchange: with
// smbd's names, challenge and timestamp it must send smbd's tokens byte
// for byte, accept smbclient's AUTHENTICATE and mechListMIC, and export
// the captured session key.
func TestVectorReplay(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.name, func(t *testing.T) {
			tok := v.tokens(t)
			a := v.replayServer(t).NewAuth()
			out, done, err := a.Step(tok[0])
			if err != nil || done {
				t.Fatalf("step 1: done=%v err=%v", done, err)
			}
			check(t, "response 1", out, tok[1])
			if a.SessionKey() != nil || a.User() != "" {
				t.Error("session key or user visible before done")
			}
			out, done, err = a.Step(tok[2])
			if err != nil || !done {
				t.Fatalf("step 2: done=%v err=%v", done, err)
			}
			check(t, "response 2", out, tok[3])
			check(t, "SessionKey", a.SessionKey(), v.ExportedSessionKey)
			if a.User() != v.User || a.Domain() != "WORKGROUP" {
				t.Errorf("User %q Domain %q", a.User(), a.Domain())
			}
			if _, _, err := a.Step(tok[2]); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("step after done: %v, want ErrInvalidToken", err)
			}
		})
	}
}

// TestVectorTampered replays each capture with one thing wrong; every
// case must fail, and fail with the right error.
func TestVectorTampered(t *testing.T) {
	v := loadVectors(t)[0]
	tok := v.tokens(t)
	_, _, authMsg, _, _ := v.ntlm(t)
	at := bytes.Index(tok[2], authMsg)
	m, err := parseAuthenticate(authMsg)
	if err != nil {
		t.Fatal(err)
	}
	offsetOf := func(field []byte) int { return at + bytes.Index(authMsg, field) }
	flip := func(i int) func([]byte) {
		return func(b []byte) { b[i] ^= 0x01 }
	}
	micAt := bytes.LastIndex(tok[2], v.ClientMechListMIC)
	cases := []struct {
		name      string
		passwords []string
		edit      func([]byte)
		want      error
		why       string // in the error text
	}{
		{"wrong password", []string{"Key1pass?"}, nil, ErrLogonFailure, "wrong password"},
		{"second key works", []string{"other", v.Password}, nil, nil, ""},
		{"NTProofStr", nil, flip(offsetOf(m.ntResponse)), ErrLogonFailure, "wrong password"},
		{"blob", nil, flip(offsetOf(m.ntResponse) + 40), ErrLogonFailure, "wrong password"},
		{"AUTHENTICATE MIC", nil, flip(at + micOffset + 3), ErrLogonFailure, "AUTHENTICATE MIC mismatch"},
		{"workstation", nil, flip(offsetOf(m.workstation)), ErrLogonFailure, "AUTHENTICATE MIC mismatch"},
		{"unused flag bit", nil, flip(at + 61), ErrLogonFailure, "AUTHENTICATE MIC mismatch"},
		{"encrypted session key", nil, flip(offsetOf(m.encryptedKey)), ErrLogonFailure, "AUTHENTICATE MIC mismatch"},
		{"mechListMIC checksum", nil, flip(micAt + 6), ErrLogonFailure, "mechListMIC mismatch"},
		{"mechListMIC sequence", nil, flip(micAt + 12), ErrLogonFailure, "mechListMIC mismatch"},
		{"user upper-cased", nil, func(b []byte) {
			u := offsetOf(m.user)
			copy(b[u:], utf16le(strings.ToUpper(v.User)))
		}, ErrLogonFailure, "AUTHENTICATE MIC mismatch"},
		{"MIC field overlapping payload", nil, func(b []byte) {
			binary.LittleEndian.PutUint32(b[at+12+4:], 80) // LM response at offset 80
		}, ErrInvalidToken, "no room"},
		{"encrypted session key missing", nil, func(b []byte) {
			binary.LittleEndian.PutUint16(b[at+52:], 0)
		}, ErrInvalidToken, "encrypted session key"},
		{"NT response cut to NTLMv1 size", nil, func(b []byte) {
			binary.LittleEndian.PutUint16(b[at+20:], 24)
		}, ErrLogonFailure, "not NTLMv2"},
		{"empty user", nil, func(b []byte) {
			binary.LittleEndian.PutUint16(b[at+36:], 0)
		}, ErrLogonFailure, "anonymous"},
		{"unknown user", nil, func(b []byte) {
			copy(b[offsetOf(m.user):], utf16le("toot"))
		}, ErrLogonFailure, "unknown user"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := v.replayServer(t, c.passwords...).NewAuth()
			if _, _, err := a.Step(tok[0]); err != nil {
				t.Fatal(err)
			}
			req := bytes.Clone(tok[2])
			if c.edit != nil {
				c.edit(req)
			}
			out, done, err := a.Step(req)
			if c.want == nil {
				if err != nil || !done {
					t.Fatalf("done=%v err=%v, want success", done, err)
				}
				check(t, "SessionKey", a.SessionKey(), v.ExportedSessionKey)
				return
			}
			if !errors.Is(err, c.want) || done || !strings.Contains(err.Error(), c.why) {
				t.Fatalf("done=%v err=%v, want %v (%s)", done, err, c.want, c.why)
			}
			check(t, "reject token", out, []byte{0xa1, 0x07, 0x30, 0x05, 0xa0, 0x03, 0x0a, 0x01, 0x02})
			if a.SessionKey() != nil || a.User() != "" {
				t.Error("failed Auth exposes a session key or user")
			}
		})
	}
}

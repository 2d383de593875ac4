package smb2

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rc4"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	//lint:ignore SA1019 NTLM's NT hash is MD4 of the password (MS-NLMP 3.3.1); there is no other way to compute it.
	"golang.org/x/crypto/md4"
)

// vector is one file of testdata/vector_*.json: a capture of smbclient
// 4.17.12 against smbd 4.17.12, with the keys recomputed from it.
type vector struct {
	Capture            string `json:"capture"`
	User               string `json:"user"`
	Password           string `json:"password"`
	Dialect            string `json:"dialect"`
	NegotiateRequest   string `json:"negotiate_request"`
	NegotiateResponse  string `json:"negotiate_response"`
	SessionSetupPDUs   []pdu  `json:"session_setup_pdus"`
	ServerChallenge    string `json:"ntlm_server_challenge"`
	NTProofStr         string `json:"ntlm_ntproofstr"`
	SessionBaseKey     string `json:"session_base_key"`
	ExportedSessionKey string `json:"exported_session_key"`
	ClientMechListMIC  string `json:"client_mechlistmic"`
	ServerMechListMIC  string `json:"server_mechlistmic"`
	SigningKey         string `json:"signing_key"`
	SigningAlgorithm   string `json:"signing_algorithm"`
	SignedPDUs         []pdu  `json:"signed_pdus"`
	PreauthHashFinal   string `json:"preauth_hash_final"`
}

type pdu struct {
	Frame int    `json:"frame"`
	Dir   string `json:"dir"`
	Hex   string `json:"hex"`
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadVectors(t testing.TB) map[string]vector {
	t.Helper()
	files, err := filepath.Glob("testdata/vector_*.json")
	if err != nil || len(files) != 3 {
		t.Fatalf("want 3 vector files, got %v (%v)", files, err)
	}
	out := map[string]vector{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v vector
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields() // a new field in the vectors must get a check here
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = v
	}
	return out
}

// vectorPDUs returns every PDU of a vector, for fuzz seeds.
func vectorPDUs(t testing.TB) [][]byte {
	var out [][]byte
	for _, v := range loadVectors(t) {
		out = append(out, unhex(t, v.NegotiateRequest), unhex(t, v.NegotiateResponse))
		for _, p := range append(v.SessionSetupPDUs, v.SignedPDUs...) {
			out = append(out, unhex(t, p.Hex))
		}
	}
	return out
}

// TestVectors recomputes everything the captured vectors contain: the
// PDUs decode and re-encode byte for byte; the NTLMv2 proof, session keys
// and mechListMICs follow from the password; the preauth hash, the
// signing key and every captured signature follow from those.
func TestVectors(t *testing.T) {
	for name, v := range loadVectors(t) {
		t.Run(name, func(t *testing.T) {
			d, err := strconv.ParseUint(strings.TrimPrefix(v.Dialect, "0x"), 16, 16)
			if err != nil {
				t.Fatal(err)
			}
			dialect := Dialect(d)

			negReq, negResp := unhex(t, v.NegotiateRequest), unhex(t, v.NegotiateResponse)
			nreq := roundTripPDU(t, negReq, DecodeNegotiateRequest)
			nresp := roundTripPDU(t, negResp, DecodeNegotiateResponse)
			if !nreq.Offers(dialect) || nresp.DialectRevision != dialect {
				t.Fatalf("dialect %v: request offers %v, response chose %v", dialect, nreq.Dialects, nresp.DialectRevision)
			}
			if dialect == Dialect311 {
				if nreq.Preauth == nil || nreq.Preauth.HashAlgorithms[0] != HashSHA512 || len(nreq.Preauth.Salt) != 32 {
					t.Fatalf("preauth context %+v", nreq.Preauth)
				}
				if nreq.Signing == nil || nreq.Encryption == nil {
					t.Fatalf("signing %+v encryption %+v", nreq.Signing, nreq.Encryption)
				}
				if len(nresp.Contexts) != 2 || nresp.Contexts[1].Type != ContextSigning {
					t.Fatalf("response contexts %+v", nresp.Contexts)
				}
				s, err := DecodeSigningCapabilities(nresp.Contexts[1].Data)
				if err != nil || len(s.Algorithms) != 1 || s.Algorithms[0] != SigningAESCMAC {
					t.Fatalf("response signing context %+v %v", s, err)
				}
			}

			// SESSION_SETUP: decode, re-encode, and the preauth hash.
			var ss [4][]byte
			var tokens [4][]byte
			var preauth PreauthHash
			preauth.Update(negReq)
			preauth.Update(negResp)
			if len(v.SessionSetupPDUs) != 4 {
				t.Fatalf("%d session setup PDUs", len(v.SessionSetupPDUs))
			}
			for i, p := range v.SessionSetupPDUs {
				ss[i] = unhex(t, p.Hex)
				h, err := ParseHeader(ss[i])
				if err != nil {
					t.Fatal(err)
				}
				if p.Dir == "c2s" {
					tokens[i] = roundTripPDU(t, ss[i], DecodeSessionSetupRequest).SecurityBuffer
					preauth.Update(ss[i])
				} else {
					tokens[i] = roundTripPDU(t, ss[i], DecodeSessionSetupResponse).SecurityBuffer
					if h.Status == StatusMoreProcessingRequired {
						preauth.Update(ss[i])
					}
				}
			}
			if v.PreauthHashFinal != "" {
				if got := hex.EncodeToString(preauth[:]); got != v.PreauthHashFinal {
					t.Fatalf("preauth hash\n got %s\nwant %s", got, v.PreauthHashFinal)
				}
			} else if dialect == Dialect311 {
				t.Fatal("3.1.1 vector without preauth_hash_final")
			}

			// NTLMv2 (MS-NLMP 3.3.2) from the password, as a cross-check
			// of the session key the signing key is derived from.
			chal := ntlmMessage(t, tokens[1], 2)
			if got := hex.EncodeToString(chal[24:32]); got != v.ServerChallenge {
				t.Fatalf("server challenge %s, want %s", got, v.ServerChallenge)
			}
			auth := ntlmMessage(t, tokens[2], 3)
			nt := ntlmField(t, auth, 20)
			domain := ntlmField(t, auth, 28)
			user := ntlmField(t, auth, 36)
			if string(user) != string(utf16le(v.User)) {
				t.Fatalf("user %q", user)
			}
			ntHash := md4.New()
			ntHash.Write(utf16le(v.Password))
			ntowf := hmacMD5(ntHash.Sum(nil), utf16le(strings.ToUpper(v.User)), domain)
			proof := hmacMD5(ntowf, chal[24:32], nt[16:])
			if hex.EncodeToString(proof) != v.NTProofStr || !bytes.Equal(proof, nt[:16]) {
				t.Fatalf("NTProofStr %x, want %s", proof, v.NTProofStr)
			}
			baseKey := hmacMD5(ntowf, proof)
			if hex.EncodeToString(baseKey) != v.SessionBaseKey {
				t.Fatalf("session base key %x", baseKey)
			}
			flags := le.Uint32(auth[60:])
			if flags&0x40000000 == 0 { // NTLMSSP_NEGOTIATE_KEY_EXCH
				t.Fatal("vector without key exchange")
			}
			esk := make([]byte, 16)
			rc, _ := rc4.NewCipher(baseKey)
			rc.XORKeyStream(esk, ntlmField(t, auth, 52))
			if hex.EncodeToString(esk) != v.ExportedSessionKey {
				t.Fatalf("exported session key %x", esk)
			}

			// mechListMIC (MS-NLMP 3.4.4.2) over the DER mechTypes list.
			mechTypes := unhex(t, "300c060a2b06010401823702020a")
			if !bytes.Contains(tokens[0], mechTypes) {
				t.Fatal("mechTypes not in the client's negTokenInit")
			}
			for _, m := range []struct {
				token     []byte
				dir, want string
			}{
				{tokens[2], "client-to-server", v.ClientMechListMIC},
				{tokens[3], "server-to-client", v.ServerMechListMIC},
			} {
				got := ntlmMIC(esk, m.dir, mechTypes)
				if hex.EncodeToString(got) != m.want || !bytes.HasSuffix(m.token, append([]byte{0xa3, 0x12, 0x04, 0x10}, got...)) {
					t.Fatalf("%s mechListMIC %x, want %s", m.dir, got, m.want)
				}
			}

			// Keys and signatures.
			keys, err := DeriveKeys(dialect, esk, preauth)
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(keys.Signing[:]); got != v.SigningKey {
				t.Fatalf("signing key %s, want %s", got, v.SigningKey)
			}
			alg := DefaultSigningAlgorithm(dialect)
			if want := map[string]SigningAlgorithm{"hmac": SigningHMACSHA256, "cmac": SigningAESCMAC}[v.SigningAlgorithm]; want != alg {
				t.Fatalf("algorithm %v, vector says %s", alg, v.SigningAlgorithm)
			}
			if !bytes.Equal(ss[3], unhex(t, v.SignedPDUs[0].Hex)) {
				t.Fatal("final SESSION_SETUP response is not the first signed PDU")
			}
			for _, p := range v.SignedPDUs {
				msg := unhex(t, p.Hex)
				if !Verify(msg, keys.Signing[:], alg) {
					t.Fatalf("frame %d: signature does not verify", p.Frame)
				}
				resigned := bytes.Clone(msg)
				clear(resigned[48:64])
				le.PutUint32(resigned[16:], le.Uint32(resigned[16:])&^uint32(FlagSigned))
				if err := Sign(resigned, keys.Signing[:], alg); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(resigned, msg) {
					t.Fatalf("frame %d: Sign gave\n%x\nwant\n%x", p.Frame, resigned, msg)
				}
				for _, i := range []int{0, 20, 48, 63, len(msg) - 1} {
					bad := bytes.Clone(msg)
					bad[i] ^= 0x01
					if Verify(bad, keys.Signing[:], alg) {
						t.Fatalf("frame %d: flipped byte %d still verifies", p.Frame, i)
					}
				}
				if Verify(msg, keys.Application[:], alg) && dialect >= Dialect300 {
					t.Fatalf("frame %d verifies under the application key", p.Frame)
				}
				checkSignedPDU(t, msg, nreq, nresp)
			}
		})
	}
}

// checkSignedPDU decodes and re-encodes a captured post-authentication
// PDU and checks what it carries.
func checkSignedPDU(t *testing.T, msg []byte, nreq NegotiateRequest, nresp NegotiateResponse) {
	t.Helper()
	h, err := ParseHeader(msg)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case h.Command == CommandSessionSetup:
	case h.Command == CommandTreeConnect && !h.IsResponse():
		r := roundTripPDU(t, msg, DecodeTreeConnectRequest)
		if _, share, ok := SplitSharePath(r.Path); !ok || (share != "IPC$" && share != "share") {
			t.Fatalf("tree connect path %q", r.Path)
		}
	case h.Command == CommandTreeConnect:
		r := roundTripPDU(t, msg, DecodeTreeConnectResponse)
		if r.ShareType != ShareTypePipe || r.MaximalAccess != 0x001F00A9 {
			t.Fatalf("tree connect response %+v", r)
		}
	case h.Command == CommandIoctl && !h.IsResponse():
		r := roundTripPDU(t, msg, DecodeIoctlRequest)
		if r.CtlCode != FsctlValidateNegotiateInfo || !r.FileID.IsAllOnes() || r.Flags != IoctlFlagIsFsctl || r.MaxOutputResponse != 24 {
			t.Fatalf("ioctl %+v", r)
		}
		vn, err := DecodeValidateNegotiateInfoRequest(r.Input)
		if err != nil {
			t.Fatal(err)
		}
		if !vn.Matches(nreq) {
			t.Fatalf("VALIDATE_NEGOTIATE %+v does not match NEGOTIATE %+v", vn, nreq)
		}
		if !bytes.Equal(vn.Encode(), r.Input) {
			t.Fatalf("VALIDATE_NEGOTIATE re-encodes as %x, want %x", vn.Encode(), r.Input)
		}
		vn.Dialects = vn.Dialects[1:]
		if vn.Matches(nreq) {
			t.Fatal("Matches ignores the dialect list")
		}
		out := ValidateNegotiateInfoResponse{Capabilities: nresp.Capabilities, GUID: nresp.ServerGUID, SecurityMode: nresp.SecurityMode, Dialect: nresp.DialectRevision}
		back, err := DecodeValidateNegotiateInfoResponse(out.Encode())
		if err != nil || back != out || len(out.Encode()) != 24 {
			t.Fatalf("VALIDATE_NEGOTIATE response %+v %v", back, err)
		}
	default:
		t.Fatalf("unexpected signed PDU %v", h.Command)
	}
}

// roundTripPDU decodes msg and checks that its header followed by the
// re-encoded body is byte-identical to msg.
func roundTripPDU[T interface{ Encode() []byte }](t *testing.T, msg []byte, decode func([]byte) (T, error)) T {
	t.Helper()
	v, err := decode(msg)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if got := append(bytes.Clone(msg[:HeaderSize]), v.Encode()...); !bytes.Equal(got, msg) {
		t.Fatalf("re-encoded %T differs\n got %x\nwant %x", v, got, msg)
	}
	return v
}

func hmacMD5(key []byte, parts ...[]byte) []byte {
	m := hmac.New(md5.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// ntlmMessage finds the NTLMSSP message of the given type in a token.
func ntlmMessage(t *testing.T, token []byte, typ uint32) []byte {
	t.Helper()
	i := bytes.Index(token, []byte("NTLMSSP\x00"))
	if i < 0 || len(token) < i+64 || le.Uint32(token[i+8:]) != typ {
		t.Fatalf("no NTLMSSP type %d message", typ)
	}
	return token[i:]
}

// ntlmField returns the payload an NTLM (len, maxlen, offset) field at off
// points to.
func ntlmField(t *testing.T, msg []byte, off int) []byte {
	t.Helper()
	n, start := int(le.Uint16(msg[off:])), int(le.Uint32(msg[off+4:]))
	if start+n > len(msg) {
		t.Fatalf("NTLM field at %d outside the message", off)
	}
	return msg[start : start+n]
}

// ntlmMIC computes an NTLMSSP signature with sequence number 0 and key
// exchange (MS-NLMP 3.4.4.2), as SPNEGO's mechListMIC uses it.
func ntlmMIC(esk []byte, dir string, msg []byte) []byte {
	sum := func(s string) []byte {
		h := md5.Sum(append(bytes.Clone(esk), s...))
		return h[:]
	}
	signKey := sum("session key to " + dir + " signing key magic constant\x00")
	sealKey := sum("session key to " + dir + " sealing key magic constant\x00")
	checksum := hmacMD5(signKey, []byte{0, 0, 0, 0}, msg)[:8]
	rc, _ := rc4.NewCipher(sealKey)
	rc.XORKeyStream(checksum, checksum)
	out := []byte{1, 0, 0, 0}
	out = append(out, checksum...)
	return append(out, 0, 0, 0, 0)
}

// TestDeriveKeysKnownAnswers checks the application keys, which the
// captures do not exercise, against values computed independently with
// Python's hmac module from the vectors' session keys.
func TestDeriveKeysKnownAnswers(t *testing.T) {
	vs := loadVectors(t)
	v300 := vs["vector_smb300.json"]
	k, err := DeriveKeys(Dialect300, unhex(t, v300.ExportedSessionKey), PreauthHash{})
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(k.Application[:]); got != "30d924391e51d9ab70f0bf4aa9d20181" {
		t.Fatalf("3.0 application key %s", got)
	}
	k302, _ := DeriveKeys(Dialect302, unhex(t, v300.ExportedSessionKey), PreauthHash{1})
	if k302 != k {
		t.Fatal("3.0.2 keys differ from 3.0 (or depend on the preauth hash)")
	}
	v311 := vs["vector_smb311_cmac.json"]
	var h PreauthHash
	copy(h[:], unhex(t, v311.PreauthHashFinal))
	k, err = DeriveKeys(Dialect311, unhex(t, v311.ExportedSessionKey), h)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(k.Application[:]); got != "5e9a70339e23b2f2470c411fe31b59d2" {
		t.Fatalf("3.1.1 application key %s", got)
	}
	v210 := vs["vector_smb210.json"]
	k, _ = DeriveKeys(Dialect202, unhex(t, v210.ExportedSessionKey), PreauthHash{})
	if hex.EncodeToString(k.Signing[:]) != v210.ExportedSessionKey || k.Application != k.Signing {
		t.Fatalf("2.0.2 keys %x %x", k.Signing, k.Application)
	}
	// Short session keys are zero-padded, long ones cut (MS-SMB2 3.3.5.5.3).
	long := append(unhex(t, v300.ExportedSessionKey), 0xAA, 0xBB)
	kLong, _ := DeriveKeys(Dialect300, long, PreauthHash{})
	k300, _ := DeriveKeys(Dialect300, unhex(t, v300.ExportedSessionKey), PreauthHash{})
	if kLong != k300 {
		t.Fatal("a 18-byte session key is not cut to 16")
	}
	kShort, _ := DeriveKeys(Dialect210, []byte{1, 2}, PreauthHash{})
	if kShort.Signing != [16]byte{1, 2} {
		t.Fatalf("short key %x", kShort.Signing)
	}
	if _, err := DeriveKeys(DialectWildcard, long, PreauthHash{}); err == nil {
		t.Fatal("DeriveKeys accepted dialect 0x02FF")
	}
}

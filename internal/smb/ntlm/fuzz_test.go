package ntlm

import (
	"bytes"
	"testing"
)

// Seeds come from the captured smbclient exchanges; `go test` runs them,
// `go test -fuzz FuzzX` explores from them.

func FuzzParseSPNEGO(f *testing.F) {
	for _, v := range loadVectors(f) {
		for _, tok := range v.tokens(f) {
			f.Add(tok)
		}
	}
	f.Add(negotiateHint)
	f.Add(rejectToken)
	f.Fuzz(func(t *testing.T, b []byte) {
		init, resp, err := parseSPNEGO(b)
		if err != nil {
			if init != nil || resp != nil {
				t.Fatal("result with error")
			}
			return
		}
		if (init == nil) == (resp == nil) {
			t.Fatal("want exactly one of init and resp")
		}
		if init != nil {
			// The mechListMIC input must be one whole DER element.
			_, _, whole, rest, err := readTLV(init.mechTypesDER)
			if err != nil || len(rest) != 0 || len(whole) != len(init.mechTypesDER) {
				t.Fatalf("mechTypesDER %x is not one element", init.mechTypesDER)
			}
			return
		}
		_, again, err := parseSPNEGO(resp.marshal())
		if err != nil || !respEqual(again, resp) {
			t.Fatalf("round trip of %+v: %+v %v", resp, again, err)
		}
	})
}

func FuzzParseNTLMSSP(f *testing.F) {
	for _, v := range loadVectors(f) {
		neg, chal, auth, _, _ := v.ntlm(f)
		f.Add(neg)
		f.Add(chal)
		f.Add(auth)
	}
	f.Add(anonymousAuth())
	f.Fuzz(func(t *testing.T, b []byte) {
		if flags, err := parseNegotiate(b); err == nil {
			// Whatever the client asks, the server grants only what it
			// asked among the echoed flags, plus the server's own bits.
			if got := negotiateFlags(flags); got&^(flags|flagTargetInfo|flagTargetTypeServer|flagOEM) != 0 || got&flagLMKey != 0 {
				t.Fatalf("client %#x granted %#x", flags, got)
			}
		}
		if _, err := messageType(b); err == nil && len(b) > 40 {
			_, _ = parseAVPairs(b[40:])
		}
		m, err := parseAuthenticate(b)
		if err != nil {
			return
		}
		if m.payloadStart > len(b) || m.payloadStart < authHeaderLen {
			t.Fatalf("payloadStart %d of %d", m.payloadStart, len(b))
		}
		for _, s := range [][]byte{m.domain, m.user, m.workstation} {
			_, _ = decodeString(s, flagUnicode)
			_, _ = decodeString(s, 0)
		}
		if r, err := parseNTLMv2Response(m.ntResponse); err == nil {
			if len(r.ntProofStr) != 16 || !bytes.Equal(append(bytes.Clone(r.ntProofStr), r.blob...), m.ntResponse) {
				t.Fatal("NTLMv2 response split wrongly")
			}
		}
	})
}

// FuzzAuthStep drives a whole Auth with two arbitrary tokens, against a
// server replaying the first capture (so the seeds reach success).
func FuzzAuthStep(f *testing.F) {
	vs := loadVectors(f)
	v := vs[0]
	tok := v.tokens(f)
	neg, _, auth, _, _ := v.ntlm(f)
	f.Add(tok[0], tok[2])
	f.Add(neg, auth)
	f.Add(tok[0], []byte{})
	f.Add([]byte{}, tok[0])
	f.Fuzz(func(t *testing.T, t1, t2 []byte) {
		a := v.replayServer(t).NewAuth()
		for _, in := range [][]byte{t1, t2} {
			_, done, err := a.Step(in)
			if err != nil {
				if a.SessionKey() != nil || a.User() != "" {
					t.Fatal("failed Auth exposes credentials")
				}
				return
			}
			if done {
				if len(a.SessionKey()) != 16 || a.User() != v.User {
					t.Fatalf("done with key %x user %q", a.SessionKey(), a.User())
				}
				return
			}
		}
	})
}

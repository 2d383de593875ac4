package smb2

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// mustMalformed fails unless err is the decoders' typed error.
func mustMalformed(t *testing.T, what string, err error) {
	t.Helper()
	var me *MalformedError
	if !errors.As(err, &me) && !errors.Is(err, StatusInvalidInfoClass) {
		t.Fatalf("%s: error %T %v is not a *MalformedError", what, err, err)
	}
	if s, ok := AsStatus(err); !ok || (s != StatusInvalidParameter && s != StatusInvalidInfoClass) {
		t.Fatalf("%s: error %v maps to %v", what, err, s)
	}
}

// FuzzDecodeMessage runs every message decoder on the same input. A
// decoder must not panic; it either returns a *MalformedError or a value
// whose encoding (behind the same header) decodes to the same value. The
// header, compound splitting and signature checks get the input too.
func FuzzDecodeMessage(f *testing.F) {
	for _, m := range sampleMessages() {
		f.Add(m)
	}
	for _, m := range vectorPDUs(f) {
		f.Add(m)
	}
	key := []byte("0123456789abcdef")
	f.Fuzz(func(t *testing.T, msg []byte) {
		for _, c := range codecs {
			v, err := c.decode(msg)
			if err != nil {
				mustMalformed(t, c.name, err)
				continue
			}
			re := append(bytes.Clone(msg[:HeaderSize]), v.Encode()...)
			v2, err := c.decode(re)
			if err != nil {
				t.Fatalf("%s: re-encoding of %+v does not decode: %v", c.name, v, err)
			}
			if !reflect.DeepEqual(v, v2) {
				t.Fatalf("%s: round trip\n got %+v\nwant %+v", c.name, v2, v)
			}
		}
		if h, err := ParseHeader(msg); err == nil {
			if h2, err := ParseHeader(h.AppendTo(nil)); err != nil || h2 != h {
				t.Fatalf("header round trip %+v → %+v %v", h, h2, err)
			}
		} else {
			mustMalformed(t, "header", err)
		}
		parts, err := SplitCompound(msg)
		if err != nil {
			mustMalformed(t, "compound", err)
		} else {
			n := 0
			for _, p := range parts {
				if &p[0] != &msg[n] || len(p) < HeaderSize || ProtocolOf(p) != ProtocolSMB2 {
					t.Fatalf("part at %d is not a contiguous SMB2 PDU", n)
				}
				n += len(p)
			}
			if n != len(msg) {
				t.Fatalf("parts cover %d of %d bytes", n, len(msg))
			}
		}
		for _, alg := range []SigningAlgorithm{SigningHMACSHA256, SigningAESCMAC} {
			if Verify(msg, key, alg) {
				t.Fatalf("random input verifies under %v", alg)
			}
			if len(msg) >= HeaderSize {
				signed := bytes.Clone(msg)
				if err := Sign(signed, key, alg); err != nil || !Verify(signed, key, alg) {
					t.Fatalf("%v: signed input does not verify (%v)", alg, err)
				}
			}
		}
	})
}

// FuzzDecodeStructures runs the decoders of structures that live inside
// message buffers: information classes, directory listings, security
// descriptors, create and negotiate contexts, VALIDATE_NEGOTIATE and
// the SMB1 NEGOTIATE. Same contract as FuzzDecodeMessage.
func FuzzDecodeStructures(f *testing.F) {
	for _, c := range infoCodecs {
		for _, s := range c.samples {
			f.Add(s.Encode())
		}
	}
	for _, class := range []InfoClass{1, 2, 3, 12, 37, 38} {
		b, _, _ := EncodeDirEntries(class, dirEntries(), 1<<16)
		f.Add(b)
	}
	f.Add(SecurityDescriptor{Owner: &SIDSystem, DACL: &ACL{Revision: 2, ACEs: []ACE{{Mask: 1, SID: SIDEveryone}, {Type: 9, Raw: []byte{1}}}}}.Encode())
	e := enc{}
	appendCreateContexts(&e, []CreateContext{{Name: "MxAc"}, {Name: "QFid", Data: []byte{1, 2, 3}}})
	f.Add(e.b)
	f.Add(PreauthIntegrityCapabilities{HashAlgorithms: []uint16{1}, Salt: []byte{1, 2}}.Context().Data)
	f.Add(ValidateNegotiateInfoRequest{Dialects: []Dialect{Dialect202, Dialect302}}.Encode())
	f.Add(EncodeSMB1Negotiate([]string{"NT LM 0.12", "SMB 2.???"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, c := range infoCodecs {
			v, err := c.decode(b)
			if err != nil {
				mustMalformed(t, c.name, err)
				continue
			}
			if v2, err := c.decode(v.Encode()); err != nil || !reflect.DeepEqual(v, v2) {
				t.Fatalf("%s: round trip %+v → %+v %v", c.name, v, v2, err)
			}
		}
		for _, class := range []InfoClass{1, 2, 3, 12, 37, 38} {
			ents, err := DecodeDirEntries(class, b)
			if err != nil {
				mustMalformed(t, "directory", err)
				continue
			}
			re, n, err := EncodeDirEntries(class, ents, 1<<30)
			if err != nil || n != len(ents) {
				t.Fatalf("class %d: re-encoded %d of %d entries: %v", class, n, len(ents), err)
			}
			if ents2, err := DecodeDirEntries(class, re); err != nil || !reflect.DeepEqual(ents, ents2) {
				t.Fatalf("class %d: round trip %+v → %+v %v", class, ents, ents2, err)
			}
		}
		if sd, err := DecodeSecurityDescriptor(b); err != nil {
			mustMalformed(t, "security descriptor", err)
		} else if sd2, err := DecodeSecurityDescriptor(sd.Encode()); err != nil || !reflect.DeepEqual(sd, sd2) {
			t.Fatalf("security descriptor round trip %+v → %+v %v", sd, sd2, err)
		}
		if len(b) > 0 {
			if ctxs, err := DecodeCreateContexts(b); err != nil {
				mustMalformed(t, "create contexts", err)
			} else {
				e := enc{}
				appendCreateContexts(&e, ctxs)
				if ctxs2, err := DecodeCreateContexts(e.b); err != nil || !reflect.DeepEqual(ctxs, ctxs2) {
					t.Fatalf("create contexts round trip %+v → %+v %v", ctxs, ctxs2, err)
				}
			}
		}
		if p, err := DecodePreauthIntegrityCapabilities(b); err != nil {
			mustMalformed(t, "preauth", err)
		} else if p2, err := DecodePreauthIntegrityCapabilities(p.Context().Data); err != nil || !reflect.DeepEqual(p, p2) {
			t.Fatalf("preauth round trip %+v → %+v %v", p, p2, err)
		}
		if s, err := DecodeSigningCapabilities(b); err != nil {
			mustMalformed(t, "signing", err)
		} else if s2, err := DecodeSigningCapabilities(s.Context().Data); err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("signing round trip %+v → %+v %v", s, s2, err)
		}
		if x, err := DecodeEncryptionCapabilities(b); err != nil {
			mustMalformed(t, "encryption", err)
		} else if x2, err := DecodeEncryptionCapabilities(x.Context().Data); err != nil || !reflect.DeepEqual(x, x2) {
			t.Fatalf("encryption round trip %+v → %+v %v", x, x2, err)
		}
		if v, err := DecodeValidateNegotiateInfoRequest(b); err != nil {
			mustMalformed(t, "validate negotiate", err)
		} else if v2, err := DecodeValidateNegotiateInfoRequest(v.Encode()); err != nil || !reflect.DeepEqual(v, v2) {
			t.Fatalf("validate negotiate round trip %+v → %+v %v", v, v2, err)
		}
		if v, err := DecodeValidateNegotiateInfoResponse(b); err != nil {
			mustMalformed(t, "validate negotiate response", err)
		} else if v2, _ := DecodeValidateNegotiateInfoResponse(v.Encode()); v2 != v {
			t.Fatalf("validate negotiate response round trip %+v → %+v", v, v2)
		}
		if ds, err := DecodeSMB1Negotiate(b); err != nil {
			mustMalformed(t, "SMB1 negotiate", err)
		} else if ds2, err := DecodeSMB1Negotiate(EncodeSMB1Negotiate(ds)); err != nil || !reflect.DeepEqual(ds, ds2) {
			t.Fatalf("SMB1 round trip %q → %q %v", ds, ds2, err)
		}
		if sid, err := ParseSID(string(b)); err == nil {
			if sid2, err := ParseSID(sid.String()); err != nil || !reflect.DeepEqual(sid, sid2) {
				t.Fatalf("SID round trip %v → %v %v", sid, sid2, err)
			}
		}
	})
}

// FuzzReadFrame reads frames from an arbitrary byte stream: every frame
// returned respects the size limit, and every failure is one of the
// documented errors.
func FuzzReadFrame(f *testing.F) {
	for _, m := range sampleMessages()[:4] {
		var b bytes.Buffer
		WriteFrame(&b, m)
		WriteFrame(&b, m)
		f.Add(b.Bytes(), 1024)
	}
	f.Add([]byte{0, 0xFF, 0xFF, 0xFF, 1}, MaxFrameSize)
	f.Add([]byte{0x85, 0, 0, 0}, 100)
	f.Fuzz(func(t *testing.T, stream []byte, limit int) {
		r := bytes.NewReader(stream)
		total := 0
		for {
			frame, err := ReadFrame(r, limit)
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF && err != ErrFrameType && err != ErrEmptyFrame && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("error %v", err)
				}
				return
			}
			if len(frame) == 0 || len(frame) > limit || len(frame) > MaxFrameSize {
				t.Fatalf("frame of %d bytes with limit %d", len(frame), limit)
			}
			total += 4 + len(frame)
			if !bytes.Equal(frame, stream[total-len(frame):total]) {
				t.Fatal("frame is not the stream's bytes")
			}
		}
	})
}

package smb2

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func TestReadFrame(t *testing.T) {
	payload := Marshal(Header{Command: CommandEcho}, EchoRequest{}.Encode())
	var stream bytes.Buffer
	if err := WriteFrame(&stream, payload[:10], nil, payload[10:]); err != nil {
		t.Fatal(err)
	}
	if err := WriteFrame(&stream, payload); err != nil {
		t.Fatal(err)
	}
	raw := stream.Bytes()
	if !bytes.Equal(raw[:4], []byte{0, 0, 0, byte(len(payload))}) {
		t.Fatalf("frame header %x", raw[:4])
	}
	r := iotest.OneByteReader(bytes.NewReader(raw))
	for range 2 {
		got, err := ReadFrame(r, 1024)
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("%x %v", got, err)
		}
	}
	if _, err := ReadFrame(r, 1024); err != io.EOF {
		t.Fatalf("clean end: %v", err)
	}
	if _, err := ReadFrame(bytes.NewReader(raw[:20]), 1024); err != io.ErrUnexpectedEOF {
		t.Fatalf("cut frame: %v", err)
	}
	if _, err := ReadFrame(bytes.NewReader(raw[:2]), 1024); err != io.ErrUnexpectedEOF {
		t.Fatalf("cut header: %v", err)
	}
	if _, err := ReadFrame(bytes.NewReader(raw), len(payload)-1); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("limit: %v", err)
	}
	if _, err := ReadFrame(bytes.NewReader([]byte{0x85, 0, 0, 0}), 1024); err != ErrFrameType {
		t.Fatalf("NetBIOS keepalive: %v", err)
	}
	if _, err := ReadFrame(bytes.NewReader([]byte{0, 0, 0, 0}), 1024); err != ErrEmptyFrame {
		t.Fatalf("empty frame: %v", err)
	}
	big := []byte{0, 0xFF, 0xFF, 0xFF}
	if _, err := ReadFrame(bytes.NewReader(big), MaxFrameSize); err != io.ErrUnexpectedEOF {
		t.Fatalf("max-size frame header: %v", err)
	}
	if h := FrameHeader(0x123456); h != [4]byte{0, 0x12, 0x34, 0x56} {
		t.Fatalf("FrameHeader %x", h)
	}
	if err := WriteFrame(io.Discard); err == nil {
		t.Fatal("empty frame written")
	}
	if err := WriteFrame(io.Discard, make([]byte, MaxFrameSize+1)); err == nil {
		t.Fatal("oversize frame written")
	}
}

func TestCompound(t *testing.T) {
	key := bytes.Repeat([]byte{0x42}, 16)
	var pdus [][]byte
	for i, body := range [][]byte{
		CreateResponse{FileID: fid}.Encode(),                // 64+89 bytes: needs padding
		QueryInfoResponse{Output: []byte{1, 2, 3}}.Encode(), // 64+11
		CloseResponse{}.Encode(),                            // 64+60, last: no padding
	} {
		pdus = append(pdus, Marshal(Header{Flags: FlagResponse, MessageID: uint64(i)}, body))
	}
	orig := make([][]byte, len(pdus))
	for i := range pdus {
		orig[i] = bytes.Clone(pdus[i])
	}
	var signed []int
	payload, err := BuildCompound(pdus, func(i int, pdu []byte) error {
		signed = append(signed, i)
		return Sign(pdu, key, SigningAESCMAC)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pdus {
		if !bytes.Equal(pdus[i], orig[i]) {
			t.Fatal("BuildCompound modified its input")
		}
	}
	if want := align8(64+89) + align8(64+11) + 64 + 60; len(payload) != want || len(signed) != 3 {
		t.Fatalf("payload %d bytes, want %d; signed %v", len(payload), want, signed)
	}
	parts, err := SplitCompound(payload)
	if err != nil || len(parts) != 3 {
		t.Fatalf("%d parts, %v", len(parts), err)
	}
	for i, p := range parts {
		h, err := ParseHeader(p)
		if err != nil || h.MessageID != uint64(i) {
			t.Fatalf("part %d: %+v %v", i, h, err)
		}
		if i < 2 && (int(h.NextCommand) != len(p) || len(p)%8 != 0) {
			t.Fatalf("part %d: NextCommand %d, length %d", i, h.NextCommand, len(p))
		}
		if i == 2 && h.NextCommand != 0 {
			t.Fatal("last NextCommand not 0")
		}
		if !Verify(p, key, SigningAESCMAC) || h.Flags&FlagSigned == 0 {
			t.Fatalf("part %d does not verify", i)
		}
		if !bytes.Equal(p[HeaderSize:len(orig[i])], orig[i][HeaderSize:]) {
			t.Fatalf("part %d body changed", i)
		}
	}
	if _, err := DecodeCreateResponse(parts[0]); err != nil {
		t.Fatalf("padded PDU no longer decodes: %v", err)
	}
	single := Marshal(Header{}, EchoRequest{}.Encode())
	if parts, err := SplitCompound(single); err != nil || len(parts) != 1 || !bytes.Equal(parts[0], single) {
		t.Fatalf("single: %v %v", parts, err)
	}
	setNext := func(b []byte, at int, v uint32) []byte {
		b = bytes.Clone(b)
		le.PutUint32(b[at+20:], v)
		return b
	}
	for name, bad := range map[string][]byte{
		"misaligned":       setNext(payload, 0, 156),
		"past the end":     setNext(payload, 0, uint32(len(payload))),
		"no room":          setNext(payload, 0, uint32(len(payload)-56)),
		"below header":     setNext(payload, 0, 56),
		"second not smb2":  func() []byte { b := bytes.Clone(payload); b[160] = 0xFD; return b }(),
		"trailing garbage": setNext(append(bytes.Clone(single), make([]byte, 70)...), 0, 72),
		"short":            single[:40],
	} {
		if _, err := SplitCompound(bad); !errors.Is(err, StatusInvalidParameter) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := BuildCompound(nil, nil); err == nil {
		t.Fatal("empty compound built")
	}
	if _, err := BuildCompound([][]byte{make([]byte, 10)}, nil); err == nil {
		t.Fatal("short PDU accepted")
	}
	boom := errors.New("boom")
	if _, err := BuildCompound(pdus, func(int, []byte) error { return boom }); err != boom {
		t.Fatalf("sign error %v", err)
	}
}

// TestCMAC checks AES-CMAC against the four examples of RFC 4493 section
// 4, one-shot and fed in every split.
func TestCMAC(t *testing.T) {
	key, _ := hex.DecodeString("2b7e151628aed2a6abf7158809cf4f3c")
	msg, _ := hex.DecodeString("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710")
	m, err := newCMAC(key)
	if err != nil {
		t.Fatal(err)
	}
	c := m.(*cmac)
	if hex.EncodeToString(c.k1[:]) != "fbeed618357133667c85e08f7236a8de" || hex.EncodeToString(c.k2[:]) != "f7ddac306ae266ccf90bc11ee46d513b" {
		t.Fatalf("subkeys %x %x", c.k1, c.k2)
	}
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "bb1d6929e95937287fa37d129b756746"},
		{16, "070a16b46b4d4144f79bdd9dd04a287c"},
		{40, "dfa66747de9ae63030ca32611497c827"},
		{64, "51f0bebf7e3b9d92fc49741779363cfe"},
	} {
		for split := 0; split <= tc.n; split++ {
			m.Reset()
			m.Write(msg[:split])
			m.Write(msg[split:tc.n])
			if got := hex.EncodeToString(m.Sum(nil)); got != tc.want {
				t.Fatalf("len %d split %d: %s, want %s", tc.n, split, got, tc.want)
			}
		}
		// Sum does not disturb the state.
		m.Reset()
		m.Write(msg[:tc.n])
		a := m.Sum(nil)
		if b := m.Sum([]byte{0xAA}); !bytes.Equal(b[1:], a) || b[0] != 0xAA {
			t.Fatal("Sum changed the state or ignored its argument")
		}
	}
	if m.Size() != 16 || m.BlockSize() != 16 {
		t.Fatal("sizes")
	}
	if _, err := newCMAC(make([]byte, 15)); err == nil {
		t.Fatal("15-byte key accepted")
	}
}

func TestSignVerify(t *testing.T) {
	key := []byte("0123456789abcdef")
	for _, alg := range []SigningAlgorithm{SigningHMACSHA256, SigningAESCMAC} {
		msg := Marshal(Header{Command: CommandWrite, MessageID: 9}, WriteRequest{Data: []byte("data")}.Encode())
		if Verify(msg, key, alg) {
			t.Fatalf("%v: unsigned message verifies", alg)
		}
		if err := Sign(msg, key, alg); err != nil {
			t.Fatal(err)
		}
		h, _ := ParseHeader(msg)
		if h.Flags&FlagSigned == 0 || h.Signature == [16]byte{} {
			t.Fatalf("%v: %+v", alg, h)
		}
		if !Verify(msg, key, alg) {
			t.Fatalf("%v: does not verify", alg)
		}
		if Verify(msg, []byte("0123456789abcdeF"), alg) {
			t.Fatalf("%v: verifies under another key", alg)
		}
		other := SigningHMACSHA256 + SigningAESCMAC - alg
		if Verify(msg, key, other) {
			t.Fatalf("%v: verifies as %v", alg, other)
		}
		again := bytes.Clone(msg)
		if err := Sign(again, key, alg); err != nil || !bytes.Equal(again, msg) {
			t.Fatalf("%v: re-signing a signed message changed it", alg)
		}
	}
	msg := Marshal(Header{}, EchoRequest{}.Encode())
	if err := Sign(msg, make([]byte, 16), SigningAESGMAC); !errors.Is(err, ErrUnsupportedSigning) {
		t.Fatalf("GMAC: %v", err)
	}
	if Verify(msg, make([]byte, 16), SigningAESGMAC) || Verify(msg[:63], make([]byte, 16), SigningHMACSHA256) {
		t.Fatal("unsupported or short message verified")
	}
	if err := Sign(msg[:63], make([]byte, 16), SigningHMACSHA256); err == nil {
		t.Fatal("short message signed")
	}
	if err := Sign(msg, make([]byte, 5), SigningAESCMAC); err == nil {
		t.Fatal("CMAC with a 5-byte key")
	}
	for d, want := range map[Dialect]SigningAlgorithm{
		Dialect202: SigningHMACSHA256, Dialect210: SigningHMACSHA256, DialectWildcard: SigningHMACSHA256,
		Dialect300: SigningAESCMAC, Dialect302: SigningAESCMAC, Dialect311: SigningAESCMAC,
	} {
		if got := DefaultSigningAlgorithm(d); got != want {
			t.Errorf("%v: %v", d, got)
		}
	}
}

func TestPreauthHash(t *testing.T) {
	var h PreauthHash
	if h != (PreauthHash{}) {
		t.Fatal("zero value not zero")
	}
	h.Update([]byte("abc"))
	// SHA-512(64 zero bytes || "abc") and SHA-512(that || "x"), computed
	// with Python's hashlib.
	if got := hex.EncodeToString(h[:]); got != "7682b6b84c6f692545a896ad210299bcc6f74e189d829e165739b11dd83b6f2c8cfacf27e812bf064df756d6235ac33c062b89ecb80f8215516dbbb844ce8480" {
		t.Fatalf("first update %s", got)
	}
	session := h // a session copies the connection's value
	session.Update([]byte("x"))
	if got := hex.EncodeToString(session[:]); got != "b05c09801dcefa37f82af1ec89bcca42a23be35515fb60e96426bbd5ab8def19bfaace8064e938de917cf87545f41802907b80aeda736618cd4d8e70316854d6" {
		t.Fatalf("second update %s", got)
	}
	if session == h {
		t.Fatal("the copy shares state")
	}
}

// TestKDF checks the SP800-108 construction against the 3.0 vector's
// signing key with the labels spelled out.
func TestKDF(t *testing.T) {
	v := loadVectors(t)["vector_smb300.json"]
	got := KDF(unhex(t, v.ExportedSessionKey), []byte("SMB2AESCMAC\x00"), []byte("SmbSign\x00"))
	if hex.EncodeToString(got[:]) != v.SigningKey {
		t.Fatalf("%x", got)
	}
	if other := KDF(unhex(t, v.ExportedSessionKey), []byte("SMB2AESCMAC"), []byte("SmbSign\x00")); other == got {
		t.Fatal("the label's NUL does not matter")
	}
}

package smb2

import (
	"bytes"
	"crypto/aes"
	"errors"
	"testing"
)

// The CCM, key derivation and transform vectors below were computed
// independently with OpenSSL through Python's cryptography package
// (AESCCM, AESGCM, KBKDFHMAC in counter mode), besides the published
// NIST SP 800-38C and RFC 3610 examples.

func TestCCMPublishedVectors(t *testing.T) {
	for _, v := range []struct {
		name                      string
		key, nonce, ad, pt, ctTag string
		tag                       int
	}{
		// NIST SP 800-38C Appendix C, Examples 1 to 3.
		{"SP800-38C C.1", "404142434445464748494a4b4c4d4e4f", "10111213141516", "0001020304050607", "20212223", "7162015b4dac255d", 4},
		{"SP800-38C C.2", "404142434445464748494a4b4c4d4e4f", "1011121314151617", "000102030405060708090a0b0c0d0e0f", "202122232425262728292a2b2c2d2e2f", "d2a1f0e051ea5f62081a7792073d593d1fc64fbfaccd", 6},
		{"SP800-38C C.3", "404142434445464748494a4b4c4d4e4f", "101112131415161718191a1b", "000102030405060708090a0b0c0d0e0f10111213", "202122232425262728292a2b2c2d2e2f3031323334353637", "e3b201a9f5b71a7a9b1ceaeccd97e70b6176aad9a4428aa5484392fbc1b09951", 8},
		// RFC 3610 Packet Vector #1.
		{"RFC3610 #1", "c0c1c2c3c4c5c6c7c8c9cacbcccdcecf", "00000003020100a0a1a2a3a4a5", "0001020304050607", "08090a0b0c0d0e0f101112131415161718191a1b1c1d1e", "588c979a61c663d2f066d0c2c0f989806d5f6b61dac38417e8d12cfdf926e0", 8},
		// SMB's sizes (11-byte nonce, 16-byte tag), AES-128 and AES-256,
		// with and without plaintext.
		{"SMB AES-128 empty", "01080f161d242b323940474e555c636a", "a0a1a2a3a4a5a6a7a8a9aa", ccmAD, "", "84e2990105f98c20e8e2bdcd41ad6aea", 16},
		{"SMB AES-128", "01080f161d242b323940474e555c636a", "a0a1a2a3a4a5a6a7a8a9aa", ccmAD, ccmPT, "2328007ccccbf1436b4823ced4144023bfafafe472f8d3620bd9a0c92b74576ef6bff1d1afe683e8d917d106a071704014198a27031260b82eafed16a6351be2632629ae1b2a2f2c0f14c874facffbf79578afd9547300d2107e23737f8454ff829e60e5cd59b4fe21e36885bd3637c6263ad1c2", 16},
		{"SMB AES-256 empty", "01080f161d242b323940474e555c636a71787f868d949ba2a9b0b7bec5ccd3da", "a0a1a2a3a4a5a6a7a8a9aa", ccmAD, "", "c2fcc28b9d7a66171b712d6ba1b80d33", 16},
		{"SMB AES-256", "01080f161d242b323940474e555c636a71787f868d949ba2a9b0b7bec5ccd3da", "a0a1a2a3a4a5a6a7a8a9aa", ccmAD, ccmPT, "c1092824cedbb6e254952218f58654ab56ddc5de3e5fc8b8d21ee75ad1487239f1b25e2076440325b6c0c90cd1aa1c5874ca55e0483c318d55380e0ca14aac1edad52f3665cddf497ba3dfa51687b3254ca6efda35850a22f3318823dc727c855b6a3c37ca1bd479f0dd8c9fe253b2e85a065146", 16},
	} {
		t.Run(v.name, func(t *testing.T) {
			b, err := aes.NewCipher(unhex(t, v.key))
			if err != nil {
				t.Fatal(err)
			}
			nonce := unhex(t, v.nonce)
			a, err := NewCCM(b, len(nonce), v.tag)
			if err != nil {
				t.Fatal(err)
			}
			pt, ad, want := unhex(t, v.pt), unhex(t, v.ad), unhex(t, v.ctTag)
			got := a.Seal(nil, nonce, pt, ad)
			if !bytes.Equal(got, want) {
				t.Fatalf("Seal = %x, want %x", got, want)
			}
			back, err := a.Open(nil, nonce, got, ad)
			if err != nil || !bytes.Equal(back, pt) {
				t.Fatalf("Open = %x, %v; want %x", back, err, pt)
			}
			// Any flipped bit of ciphertext, tag or data fails.
			for i := range len(got) {
				bad := bytes.Clone(got)
				bad[i] ^= 1
				if _, err := a.Open(nil, nonce, bad, ad); err == nil {
					t.Fatalf("Open accepted a change in byte %d", i)
				}
			}
			if len(ad) > 0 {
				bad := bytes.Clone(ad)
				bad[0] ^= 0x80
				if _, err := a.Open(nil, nonce, got, bad); err == nil {
					t.Fatal("Open accepted changed associated data")
				}
			}
			// In place.
			buf := bytes.Clone(pt)
			sealed := a.Seal(buf[:0], nonce, buf, ad)
			if !bytes.Equal(sealed, want) {
				t.Fatalf("in-place Seal = %x", sealed)
			}
		})
	}
}

const (
	ccmAD = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	ccmPT = "000d1a2734414e5b6875828f9ca9b6c3d0ddeaf704111e2b3845525f6c798693a0adbac7d4e1eefb0815222f3c495663707d8a97a4b1becbd8e5f2ff0c192633404d5a6774818e9ba8b5c2cfdce9f603101d2a3744515e6b7885929facb9c6d3e0edfa07"
)

// TestCCMLongAssociatedData covers the 6-byte encoding of the associated
// data's length (0xFFFE || 32 bits), used from 0xFF00 bytes on.
func TestCCMLongAssociatedData(t *testing.T) {
	ad := make([]byte, 70000)
	for i := range ad {
		ad[i] = byte(i)
	}
	pt := bytes.Repeat([]byte("x"), 33)
	for _, v := range []struct{ key, want string }{
		{"01080f161d242b323940474e555c636a", "5b5d622380f2c7607b45d93930c58e98170a3d6b0e91b5314be48aee3f75a9852e4125eff4255b504d54306171fcd19c19"},
		{"01080f161d242b323940474e555c636a71787f868d949ba2a9b0b7bec5ccd3da", "b97c4a7b82e280c14498d8ef11579a10fe7857514236aeeb9223cd7dc5498cd22914cca7dc50141005030a8e4c21eab36e"},
	} {
		b, _ := aes.NewCipher(unhex(t, v.key))
		a, err := NewCCM(b, 11, 16)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Seal(nil, unhex(t, "a0a1a2a3a4a5a6a7a8a9aa"), pt, ad); !bytes.Equal(got, unhex(t, v.want)) {
			t.Fatalf("%d-bit key: Seal = %x, want %s", 4*len(v.key), got, v.want)
		}
	}
}

func TestCCMParameters(t *testing.T) {
	b, _ := aes.NewCipher(make([]byte, 16))
	for _, p := range [][2]int{{6, 16}, {14, 16}, {11, 3}, {11, 18}, {11, 5}} {
		if _, err := NewCCM(b, p[0], p[1]); err == nil {
			t.Errorf("NewCCM(nonce %d, tag %d) accepted", p[0], p[1])
		}
	}
	a, _ := NewCCM(b, 11, 16)
	if _, err := a.Open(nil, make([]byte, 11), make([]byte, 15), nil); err == nil {
		t.Error("Open accepted a message shorter than the tag")
	}
}

// TestDeriveCipherKeys checks the encryption keys of MS-SMB2 3.3.5.5.3
// against an independent SP800-108 KDF (KBKDFHMAC).
func TestDeriveCipherKeys(t *testing.T) {
	sk := unhex(t, "101112131415161718191a1b1c1d1e1f")
	var preauth PreauthHash
	copy(preauth[:], unhex(t, "62d5dbbb76ad8a61c8ac3462103edb184b00fe2b43d980e29c481c4e2001d452f46c09a391835a5da86ee3944b488814a4b8818c18225fee33c61be599d2a2b7"))
	for _, v := range []struct {
		d       Dialect
		cipher  uint16
		in, out string
	}{
		{Dialect300, CipherAES128CCM, "fe85e20ea4633a2437828b14d1833584", "fa192f82747e0174f720cdaea0e2f537"},
		{Dialect302, CipherAES128CCM, "fe85e20ea4633a2437828b14d1833584", "fa192f82747e0174f720cdaea0e2f537"},
		{Dialect311, CipherAES128GCM, "1c051ff7b0a2b55f34a6bc5d44afc389", "20b11e698883733884f5085e77b968c6"},
		{Dialect311, CipherAES128CCM, "1c051ff7b0a2b55f34a6bc5d44afc389", "20b11e698883733884f5085e77b968c6"},
		{Dialect311, CipherAES256GCM, "0a551df9b014369e9f2588213e8d949404701627dc7ef3db7f085b037a98001b", "7ebff38fb86c36bc1e5acee9849dc00cb800a19a6ba36ad84c4ce7c54ed8735f"},
		{Dialect311, CipherAES256CCM, "0a551df9b014369e9f2588213e8d949404701627dc7ef3db7f085b037a98001b", "7ebff38fb86c36bc1e5acee9849dc00cb800a19a6ba36ad84c4ce7c54ed8735f"},
	} {
		k, err := DeriveCipherKeys(v.d, v.cipher, sk, preauth)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(k.ServerIn, unhex(t, v.in)) || !bytes.Equal(k.ServerOut, unhex(t, v.out)) {
			t.Errorf("%v %s: in %x out %x, want %s %s", v.d, CipherName(v.cipher), k.ServerIn, k.ServerOut, v.in, v.out)
		}
	}
	if _, err := DeriveCipherKeys(Dialect210, CipherAES128CCM, sk, preauth); err == nil {
		t.Error("keys derived for 2.1")
	}
	if _, err := DeriveCipherKeys(Dialect311, 9, sk, preauth); err == nil {
		t.Error("keys derived for an unknown cipher")
	}
}

// transformVectors are whole transform messages of one SMB2 message
// under the 3.1.1 S2C key above, for each cipher, with nonce 01 02 …
var transformVectors = []struct {
	cipher uint16
	key    string
	msg    string
}{
	{CipherAES128CCM, "20b11e698883733884f5085e77b968c6", "fd534d4279714b15bc17ca92c9f733876ba9544e0102030405060708090a0b000000000054000000000001008877665544332211796192a785ec6857b815c7b31e0c312f8e2cc75698e1beda0dc3ad57b05d425674e7334e88232d96a5aa50bf4fcd5ecb09e6e206c3005f29df4c176852b22657f68666bf589a6787314e2403630809e9dd073690"},
	{CipherAES128GCM, "20b11e698883733884f5085e77b968c6", "fd534d426e7c61deb370a76a99d0f5b90798ccee0102030405060708090a0b0c00000000540000000000010088776655443322111de498c8d4871fa00c813a97505fee95d936b686f59fff730146063176a7f4ec7266008b002628e8730dd5c75301fc7b950adbd6f71b4107acfbaee0f324e15cc787bfb2e8184856ce68c804a4750bfbb624e3e7"},
	{CipherAES256CCM, "7ebff38fb86c36bc1e5acee9849dc00cb800a19a6ba36ad84c4ce7c54ed8735f", "fd534d427f4743e4855b6d14f7314006434c8bba0102030405060708090a0b0000000000540000000000010088776655443322116653397d69eb1e6ff543e6a04c9a983acf4af0dd065a3cb32849b1a83225f8b4e1ae8045735b4a9a914a53552c87ae9566b288a031d00273d198a77f223d4b67bc6a331e55c50c8c4321d00b964447fc4704412e"},
	{CipherAES256GCM, "7ebff38fb86c36bc1e5acee9849dc00cb800a19a6ba36ad84c4ce7c54ed8735f", "fd534d42cd293872abb8439c03cc056dae124fe70102030405060708090a0b0c00000000540000000000010088776655443322114b9b1131cb42e4bfc5bc3e7e1cd624cc3c2f80a06298c6c48e1344f0d4d3c4d671a1c721014e1efb4c490a6951ea33cb471a5566b1c98215edfe690adc30bcaca87dd6714d6e769e2a683526715f4403e574d854"},
}

// transformPlain is the message of transformVectors.
func transformPlain() []byte {
	m := []byte{0xfe, 'S', 'M', 'B'}
	for i := range 60 {
		m = append(m, byte(i))
	}
	return append(m, "hello, encrypted SMB"...)
}

func TestTransformVectors(t *testing.T) {
	const sid = 0x1122334455667788
	for _, v := range transformVectors {
		t.Run(CipherName(v.cipher), func(t *testing.T) {
			aead, err := NewCipher(v.cipher, unhex(t, v.key))
			if err != nil {
				t.Fatal(err)
			}
			nonce := make([]byte, aead.NonceSize())
			for i := range nonce {
				nonce[i] = byte(i + 1)
			}
			want := unhex(t, v.msg)
			got := Encrypt(aead, nonce, sid, transformPlain())
			if !bytes.Equal(got, want) {
				t.Fatalf("Encrypt =\n%x\nwant\n%x", got, want)
			}
			h, err := ParseTransformHeader(want)
			if err != nil {
				t.Fatal(err)
			}
			if h.SessionID != sid || h.OriginalMessageSize != uint32(len(transformPlain())) || h.Flags != TransformFlagEncrypted {
				t.Fatalf("header %+v", h)
			}
			if enc := h.AppendTo(nil); !bytes.Equal(enc, want[:TransformHeaderSize]) {
				t.Fatalf("AppendTo = %x", enc)
			}
			msg, err := Decrypt(aead, h, bytes.Clone(want))
			if err != nil || !bytes.Equal(msg, transformPlain()) {
				t.Fatalf("Decrypt = %x, %v", msg, err)
			}
			// Tampering with any byte past the ProtocolId fails to
			// parse or to decrypt.
			for i := 4; i < len(want); i++ {
				bad := bytes.Clone(want)
				bad[i] ^= 0x01
				h, err := ParseTransformHeader(bad)
				if err == nil {
					_, err = Decrypt(aead, h, bad)
				}
				if !errors.Is(err, ErrTransform) {
					t.Fatalf("byte %d changed: %v", i, err)
				}
			}
		})
	}
}

func TestParseTransformHeaderErrors(t *testing.T) {
	good := unhex(t, transformVectors[1].msg)
	for name, b := range map[string][]byte{
		"short":          good[:TransformHeaderSize-1],
		"protocol":       append([]byte{0xfe}, good[1:]...),
		"size too large": good[:len(good)-1],
		"size too small": append(bytes.Clone(good), 0),
		"flags":          func() []byte { b := bytes.Clone(good); b[42] = 2; return b }(),
		"tiny message": func() []byte {
			h := TransformHeader{OriginalMessageSize: 4, Flags: 1}
			return append(h.AppendTo(nil), 1, 2, 3, 4)
		}(),
		"header only": good[:TransformHeaderSize],
	} {
		if _, err := ParseTransformHeader(b); !errors.Is(err, ErrTransform) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := NewCipher(CipherAES128GCM, make([]byte, 32)); err == nil {
		t.Error("AES-128-GCM with a 32-byte key")
	}
	if _, err := NewCipher(7, make([]byte, 16)); err == nil {
		t.Error("unknown cipher accepted")
	}
}

// FuzzTransform feeds arbitrary frames to the transform parser and
// decryption: no panic, and anything accepted decrypts to exactly
// OriginalMessageSize bytes that re-encrypt to the same frame.
func FuzzTransform(f *testing.F) {
	for _, v := range transformVectors {
		f.Add(v.cipher, unhex(f, v.msg))
	}
	f.Add(CipherAES128GCM, []byte{0xfd, 'S', 'M', 'B'})
	f.Fuzz(func(t *testing.T, id uint16, frame []byte) {
		id = id%4 + 1
		key := unhex(t, transformVectors[id-1].key)
		aead, err := NewCipher(id, key)
		if err != nil {
			t.Fatal(err)
		}
		h, err := ParseTransformHeader(frame)
		if err != nil {
			if !errors.Is(err, ErrTransform) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		// Reserved (bytes 40-41) is not kept.
		if enc := h.AppendTo(nil); !bytes.Equal(enc[:40], frame[:40]) || !bytes.Equal(enc[42:], frame[42:TransformHeaderSize]) {
			t.Fatalf("header does not round-trip: %x vs %x", enc, frame[:TransformHeaderSize])
		}
		msg, err := Decrypt(aead, h, bytes.Clone(frame))
		if err != nil {
			if !errors.Is(err, ErrTransform) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if len(msg) != int(h.OriginalMessageSize) {
			t.Fatalf("%d bytes decrypted, header says %d", len(msg), h.OriginalMessageSize)
		}
		if frame[40] != 0 || frame[41] != 0 {
			return
		}
		again := Encrypt(aead, h.Nonce[:aead.NonceSize()], h.SessionID, msg)
		if !bytes.Equal(again, frame) {
			t.Fatal("re-encryption differs")
		}
	})
}

func BenchmarkCipherSeal(b *testing.B) {
	msg := make([]byte, 1<<20)
	for _, id := range []uint16{CipherAES128CCM, CipherAES128GCM, CipherAES256CCM, CipherAES256GCM} {
		b.Run(CipherName(id), func(b *testing.B) {
			aead, err := NewCipher(id, make([]byte, CipherKeySize(id)))
			if err != nil {
				b.Fatal(err)
			}
			nonce := make([]byte, aead.NonceSize())
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				Encrypt(aead, nonce, 1, msg)
			}
		})
	}
}

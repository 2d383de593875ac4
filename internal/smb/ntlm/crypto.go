package ntlm

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rc4"
	"encoding/binary"
	"strings"

	//lint:ignore SA1019 NTLM's NT hash is MD4 of the password (MS-NLMP 3.3.1); there is no other way to compute it.
	"golang.org/x/crypto/md4"
)

// ntHash is NTOWFv1's NT hash: MD4 of the UTF-16LE password (MS-NLMP 3.3.1).
// For Azure Files the password is the account key's base64 text, as typed.
func ntHash(password string) []byte {
	h := md4.New()
	h.Write(utf16le(password))
	return h.Sum(nil)
}

// ntowfv2 is NTOWFv2 (MS-NLMP 3.3.2): HMAC-MD5 keyed with the NT hash over
// the upper-cased user name and the domain as given.
func ntowfv2(ntHash []byte, user, domain string) []byte {
	return hmacMD5(ntHash, utf16le(strings.ToUpper(user)+domain))
}

// computeNTProofStr computes HMAC-MD5(NTOWFv2, ServerChallenge || blob).
func computeNTProofStr(ntowf []byte, serverChallenge [8]byte, blob []byte) []byte {
	return hmacMD5(ntowf, serverChallenge[:], blob)
}

// hmacMD5 returns HMAC-MD5(key, parts...).
func hmacMD5(key []byte, parts ...[]byte) []byte {
	m := hmac.New(md5.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// rc4Once encrypts (or decrypts) src with a fresh RC4 stream keyed by key.
func rc4Once(key, src []byte) []byte {
	c, err := rc4.NewCipher(key)
	if err != nil {
		panic(err) // key is always 16 bytes here
	}
	dst := make([]byte, len(src))
	c.XORKeyStream(dst, src)
	return dst
}

// Magic constants of SIGNKEY and SEALKEY (MS-NLMP 3.4.5.2, 3.4.5.3),
// NUL included.
const (
	signC2S = "session key to client-to-server signing key magic constant\x00"
	signS2C = "session key to server-to-client signing key magic constant\x00"
	sealC2S = "session key to client-to-server sealing key magic constant\x00"
	sealS2C = "session key to server-to-client sealing key magic constant\x00"
)

// signer produces NTLMSSP message signatures with extended session security
// (MS-NLMP 3.4.4.2) for one direction. SPNEGO's mechListMIC is such a
// signature, over the DER mechTypes, with sequence number 0.
type signer struct {
	signKey []byte
	seal    *rc4.Cipher // sealing handle; nil unless KEY_EXCH was negotiated
}

// newSigner derives the signing and sealing keys for one direction from the
// exported session key and the negotiated flags.
func newSigner(exportedKey []byte, flags uint32, clientToServer bool) *signer {
	signMagic, sealMagic := signS2C, sealS2C
	if clientToServer {
		signMagic, sealMagic = signC2S, sealC2S
	}
	s := &signer{signKey: md5Sum(exportedKey, []byte(signMagic))}
	if flags&flagKeyExch != 0 {
		sealBase := exportedKey
		switch {
		case flags&flag128 != 0:
		case flags&flag56 != 0:
			sealBase = exportedKey[:7]
		default:
			sealBase = exportedKey[:5]
		}
		c, err := rc4.NewCipher(md5Sum(sealBase, []byte(sealMagic)))
		if err != nil {
			panic(err) // MD5 output is a valid RC4 key
		}
		s.seal = c
	}
	return s
}

// sign returns the 16-byte NTLMSSP_MESSAGE_SIGNATURE of msg:
// Version 1, the (RC4-sealed) first 8 bytes of HMAC-MD5, the sequence number.
// It advances the sealing handle, as the protocol requires.
func (s *signer) sign(seq uint32, msg []byte) []byte {
	seqb := binary.LittleEndian.AppendUint32(nil, seq)
	sum := hmacMD5(s.signKey, seqb, msg)[:8]
	if s.seal != nil {
		s.seal.XORKeyStream(sum, sum)
	}
	out := binary.LittleEndian.AppendUint32(make([]byte, 0, 16), 1)
	out = append(out, sum...)
	return append(out, seqb...)
}

// md5Sum returns MD5 of the concatenated parts.
func md5Sum(parts ...[]byte) []byte {
	h := md5.New()
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

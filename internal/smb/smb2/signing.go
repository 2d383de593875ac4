package smb2

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
)

// KeySize is the size of the session key and of every derived key: SMB2
// uses the first 16 bytes of the GSS session key (MS-SMB2 3.3.5.5.3).
const KeySize = 16

// Keys are the keys derived from a session's key (MS-SMB2 3.3.5.5.3).
// The encryption keys are DeriveCipherKeys' (transform.go).
type Keys struct {
	// Signing signs and verifies messages of the session.
	Signing [KeySize]byte
	// Application is the key handed to applications over the session
	// (for example DCE/RPC over named pipes).
	Application [KeySize]byte
}

// PreauthHash is the 3.1.1 preauthentication integrity hash value
// (MS-SMB2 3.2.5.2, 3.3.5.4, 3.3.5.5): SHA-512 chained over the
// NEGOTIATE request and response, then, per session, every SESSION_SETUP
// request and every SESSION_SETUP response whose status is
// STATUS_MORE_PROCESSING_REQUIRED. The zero value is the initial 64 zero
// bytes. Copy the connection's value into each new session (it is an
// array, so assignment copies it).
type PreauthHash [sha512.Size]byte

// Update sets h to SHA-512(h || msg). msg is one whole PDU without the
// 4-byte transport header.
func (h *PreauthHash) Update(msg []byte) {
	s := sha512.New()
	s.Write(h[:])
	s.Write(msg)
	s.Sum(h[:0])
}

// KDF is the SP800-108 counter-mode key derivation with HMAC-SHA256 that
// SMB 3.x uses (MS-SMB2 3.1.4.2), for a 128-bit output:
// HMAC-SHA256(key, BE32(1) || label || 0x00 || context || BE32(128))[:16].
// The label and context are passed with their trailing NUL where MS-SMB2
// lists one (as the label constants below do).
func KDF(key, label, context []byte) [KeySize]byte {
	m := hmac.New(sha256.New, key)
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], 1)
	m.Write(n[:])
	m.Write(label)
	m.Write([]byte{0})
	m.Write(context)
	binary.BigEndian.PutUint32(n[:], 8*KeySize)
	m.Write(n[:])
	var out [KeySize]byte
	copy(out[:], m.Sum(nil))
	return out
}

// Key derivation labels and contexts (MS-SMB2 3.3.5.5.3), NUL included.
var (
	labelSMB30Signing = []byte("SMB2AESCMAC\x00")
	ctxSMB30Signing   = []byte("SmbSign\x00")
	labelSMB30App     = []byte("SMB2APP\x00")
	ctxSMB30App       = []byte("SmbRpc\x00")
	labelSMB311Sign   = []byte("SMBSigningKey\x00")
	labelSMB311App    = []byte("SMBAppKey\x00")
)

// DeriveKeys derives a session's keys from its session key (the NTLM
// ExportedSessionKey) for the negotiated dialect:
//   - 2.0.2 and 2.1: the session key itself;
//   - 3.0 and 3.0.2: KDF(SK, "SMB2AESCMAC", "SmbSign") and
//     KDF(SK, "SMB2APP", "SmbRpc");
//   - 3.1.1: KDF(SK, "SMBSigningKey", preauth) and
//     KDF(SK, "SMBAppKey", preauth), where preauth is the session's
//     PreauthHash after the last SESSION_SETUP request.
//
// preauth is ignored below 3.1.1. The session key is cut to, or padded
// with zeros to, 16 bytes.
func DeriveKeys(d Dialect, sessionKey []byte, preauth PreauthHash) (Keys, error) {
	var sk [KeySize]byte
	copy(sk[:], sessionKey)
	var k Keys
	switch d {
	case Dialect202, Dialect210:
		k.Signing, k.Application = sk, sk
	case Dialect300, Dialect302:
		k.Signing = KDF(sk[:], labelSMB30Signing, ctxSMB30Signing)
		k.Application = KDF(sk[:], labelSMB30App, ctxSMB30App)
	case Dialect311:
		k.Signing = KDF(sk[:], labelSMB311Sign, preauth[:])
		k.Application = KDF(sk[:], labelSMB311App, preauth[:])
	default:
		return Keys{}, fmt.Errorf("smb2: no key derivation for dialect %v", d)
	}
	return k, nil
}

// DefaultSigningAlgorithm is the signing algorithm of a dialect when no
// SIGNING context was negotiated: HMAC-SHA256 for 2.x, AES-CMAC for 3.x
// (MS-SMB2 3.1.4.1).
func DefaultSigningAlgorithm(d Dialect) SigningAlgorithm {
	if d >= Dialect300 && d != DialectWildcard {
		return SigningAESCMAC
	}
	return SigningHMACSHA256
}

// ErrUnsupportedSigning is returned for a signing algorithm this package
// does not implement (AES-GMAC: the server never selects it).
var ErrUnsupportedSigning = errors.New("smb2: unsupported signing algorithm")

// newMAC returns the keyed MAC of alg.
func newMAC(key []byte, alg SigningAlgorithm) (hash.Hash, error) {
	switch alg {
	case SigningHMACSHA256:
		return hmac.New(sha256.New, key), nil
	case SigningAESCMAC:
		return newCMAC(key)
	}
	return nil, fmt.Errorf("%w: %v", ErrUnsupportedSigning, alg)
}

var zeroSignature [16]byte

// signature computes the signature of one PDU as if its Signature field
// were zero, without modifying msg.
func signature(msg, key []byte, alg SigningAlgorithm) ([16]byte, error) {
	var sig [16]byte
	if len(msg) < HeaderSize {
		return sig, errors.New("smb2: message shorter than the header")
	}
	m, err := newMAC(key, alg)
	if err != nil {
		return sig, err
	}
	m.Write(msg[:offSignature])
	m.Write(zeroSignature[:])
	m.Write(msg[HeaderSize:])
	copy(sig[:], m.Sum(nil))
	return sig, nil
}

// Sign signs one PDU in place (MS-SMB2 3.1.4.1): it sets FlagSigned,
// computes the MAC over the whole PDU with the Signature field zeroed, and
// stores the first 16 bytes of it in the Signature field. For a compound,
// sign each PDU over its own bytes, padding included, after its
// NextCommand is final (see BuildCompound).
func Sign(msg, key []byte, alg SigningAlgorithm) error {
	if len(msg) < HeaderSize {
		return errors.New("smb2: message shorter than the header")
	}
	flags := le.Uint32(msg[offFlags:]) | uint32(FlagSigned)
	le.PutUint32(msg[offFlags:], flags)
	sig, err := signature(msg, key, alg)
	if err != nil {
		return err
	}
	copy(msg[offSignature:HeaderSize], sig[:])
	return nil
}

// Verify reports whether the Signature field of one PDU is the MAC of the
// PDU under key; msg is not modified. It does not look at FlagSigned:
// whether a message must be signed is the caller's policy (MS-SMB2
// 3.3.4.1.1).
// An unsupported algorithm or a short message verifies as false.
func Verify(msg, key []byte, alg SigningAlgorithm) bool {
	sig, err := signature(msg, key, alg)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(sig[:], msg[offSignature:HeaderSize]) == 1
}

package smb2

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// SMB 3 encryption (MS-SMB2 2.2.41 SMB2 TRANSFORM_HEADER, 3.1.4.3
// Encrypting the Message, 3.3.5.2.1.1 Decrypting the Message): a message
// (one PDU or a whole compound) is encrypted with the session's key under
// an AEAD cipher, and sent after a 52-byte transform header whose last 32
// bytes (Nonce to SessionId) are the associated data and whose Signature
// field holds the AEAD tag.

// TransformHeaderSize is the size of SMB2 TRANSFORM_HEADER.
const TransformHeaderSize = 52

// transformAADOffset is where the authenticated part of the transform
// header starts: the Nonce field.
const transformAADOffset = 20

// TransformFlagEncrypted is the transform header's Flags value for an
// encrypted message (3.1.1's Flags; 3.0 and 3.0.2 call the same field
// EncryptionAlgorithm, where 0x0001 means SMB2_ENCRYPTION_AES128_CCM).
const TransformFlagEncrypted uint16 = 0x0001

// TransformHeader is SMB2 TRANSFORM_HEADER (MS-SMB2 2.2.41).
type TransformHeader struct {
	// Signature is the AEAD tag of the message.
	Signature [16]byte
	// Nonce holds the AEAD nonce in its first 11 (CCM) or 12 (GCM)
	// bytes; the rest is zero.
	Nonce               [16]byte
	OriginalMessageSize uint32
	Flags               uint16
	SessionID           uint64
}

// ErrTransform is wrapped by the errors of ParseTransformHeader and
// Decrypt: the connection cannot continue (MS-SMB2 3.3.5.2.1.1
// disconnects).
var ErrTransform = errors.New("smb2: bad encrypted message")

// ParseTransformHeader decodes the transform header at the start of
// payload, checking its ProtocolId, that OriginalMessageSize is the size
// of what follows it less nothing (the ciphertext is exactly as long as
// the message), and that Flags is TransformFlagEncrypted.
func ParseTransformHeader(payload []byte) (TransformHeader, error) {
	if len(payload) < TransformHeaderSize {
		return TransformHeader{}, fmt.Errorf("%w: shorter than the transform header", ErrTransform)
	}
	if le.Uint32(payload) != protocolTransform {
		return TransformHeader{}, fmt.Errorf("%w: ProtocolId is not FD 'SMB'", ErrTransform)
	}
	var h TransformHeader
	copy(h.Signature[:], payload[4:20])
	copy(h.Nonce[:], payload[20:36])
	h.OriginalMessageSize = le.Uint32(payload[36:])
	h.Flags = le.Uint16(payload[42:])
	h.SessionID = le.Uint64(payload[44:])
	if h.Flags != TransformFlagEncrypted {
		return TransformHeader{}, fmt.Errorf("%w: Flags/EncryptionAlgorithm is %#x, not 0x0001", ErrTransform, h.Flags)
	}
	if h.OriginalMessageSize < HeaderSize || uint64(h.OriginalMessageSize) != uint64(len(payload)-TransformHeaderSize) {
		return TransformHeader{}, fmt.Errorf("%w: OriginalMessageSize %d does not match the %d bytes sent", ErrTransform, h.OriginalMessageSize, len(payload)-TransformHeaderSize)
	}
	return h, nil
}

// AppendTo appends the 52-byte encoding of h to dst.
func (h TransformHeader) AppendTo(dst []byte) []byte {
	dst = le.AppendUint32(dst, protocolTransform)
	dst = append(dst, h.Signature[:]...)
	dst = append(dst, h.Nonce[:]...)
	dst = le.AppendUint32(dst, h.OriginalMessageSize)
	dst = le.AppendUint16(dst, 0) // Reserved
	dst = le.AppendUint16(dst, h.Flags)
	return le.AppendUint64(dst, h.SessionID)
}

// CipherName is the MS-SMB2 name of a cipher ID (2.2.3.1.2).
func CipherName(id uint16) string {
	switch id {
	case CipherAES128CCM:
		return "AES-128-CCM"
	case CipherAES128GCM:
		return "AES-128-GCM"
	case CipherAES256CCM:
		return "AES-256-CCM"
	case CipherAES256GCM:
		return "AES-256-GCM"
	}
	return fmt.Sprintf("cipher(%#x)", id)
}

// CipherKeySize is the key size of a cipher ID in bytes, 0 for an
// unknown one.
func CipherKeySize(id uint16) int {
	switch id {
	case CipherAES128CCM, CipherAES128GCM:
		return 16
	case CipherAES256CCM, CipherAES256GCM:
		return 32
	}
	return 0
}

// CCM and GCM nonce sizes in SMB 3 (MS-SMB2 2.2.41).
const (
	ccmNonceSize = 11
	gcmNonceSize = 12
)

// NewCipher returns the AEAD of cipher id under key: AES-CCM with an
// 11-byte nonce or AES-GCM with a 12-byte nonce, both with a 16-byte tag.
func NewCipher(id uint16, key []byte) (cipher.AEAD, error) {
	if n := CipherKeySize(id); n == 0 || len(key) != n {
		return nil, fmt.Errorf("smb2: no %d-byte key for %s", len(key), CipherName(id))
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	switch id {
	case CipherAES128CCM, CipherAES256CCM:
		return NewCCM(b, ccmNonceSize, 16)
	default:
		return cipher.NewGCM(b)
	}
}

// Encrypt returns the transform message (header and ciphertext) of msg,
// an SMB2 message or compound, for session sessionID, under aead with
// nonce (of aead's NonceSize; the caller makes it unique per key).
func Encrypt(aead cipher.AEAD, nonce []byte, sessionID uint64, msg []byte) []byte {
	if len(nonce) != aead.NonceSize() || aead.Overhead() != 16 {
		panic("smb2: Encrypt with a bad nonce or AEAD")
	}
	h := TransformHeader{OriginalMessageSize: uint32(len(msg)), Flags: TransformFlagEncrypted, SessionID: sessionID}
	copy(h.Nonce[:], nonce)
	out := make([]byte, 0, TransformHeaderSize+len(msg)+16)
	out = h.AppendTo(out)
	sealed := aead.Seal(out[TransformHeaderSize:TransformHeaderSize], nonce, msg, out[transformAADOffset:TransformHeaderSize])
	copy(out[4:20], sealed[len(msg):])
	return out[:TransformHeaderSize+len(msg)]
}

// Decrypt authenticates and decrypts a transform message whose header h
// was parsed with ParseTransformHeader, and returns the message. It
// decrypts in place: payload is overwritten.
func Decrypt(aead cipher.AEAD, h TransformHeader, payload []byte) ([]byte, error) {
	n := aead.NonceSize()
	for _, b := range h.Nonce[n:] {
		if b != 0 {
			return nil, fmt.Errorf("%w: nonce padding is not zero", ErrTransform)
		}
	}
	// The AEAD wants the tag after the ciphertext: one copy of the
	// message, the price of the tag's place in the header.
	ct := make([]byte, 0, len(payload)-TransformHeaderSize+16)
	ct = append(ct, payload[TransformHeaderSize:]...)
	ct = append(ct, h.Signature[:]...)
	msg, err := aead.Open(ct[:0], h.Nonce[:n], ct, payload[transformAADOffset:TransformHeaderSize])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTransform, err)
	}
	return msg, nil
}

// Key derivation labels of the encryption keys (MS-SMB2 3.3.5.5.3), NUL
// included. The server encrypts with the "ServerOut"/S2C key and
// decrypts with the "ServerIn "/C2S key.
var (
	labelSMB30Cipher   = []byte("SMB2AESCCM\x00")
	ctxSMB30ServerIn   = []byte("ServerIn \x00")
	ctxSMB30ServerOut  = []byte("ServerOut\x00")
	labelSMB311C2SKey  = []byte("SMBC2SCipherKey\x00")
	labelSMB311S2CKey  = []byte("SMBS2CCipherKey\x00")
	errNoCipherForDial = errors.New("smb2: no encryption below dialect 3.0")
)

// CipherKeys are a session's encryption keys, from the server's side.
type CipherKeys struct {
	// ServerOut encrypts what the server sends (the client's
	// DecryptionKey): S2C.
	ServerOut []byte
	// ServerIn decrypts what the client sends (the client's
	// EncryptionKey): C2S.
	ServerIn []byte
}

// DeriveCipherKeys derives a session's encryption keys for cipher id
// (MS-SMB2 3.3.5.5.3):
//   - 3.0 and 3.0.2: KDF(SK, "SMB2AESCCM", "ServerIn ") and
//     KDF(SK, "SMB2AESCCM", "ServerOut");
//   - 3.1.1: KDF(SK, "SMBC2SCipherKey", preauth) and
//     KDF(SK, "SMBS2CCipherKey", preauth);
//
// with L = 256 and the full session key for AES-256 ciphers, else L = 128
// and the session key cut or padded to 16 bytes.
func DeriveCipherKeys(d Dialect, id uint16, sessionKey []byte, preauth PreauthHash) (CipherKeys, error) {
	size := CipherKeySize(id)
	if size == 0 {
		return CipherKeys{}, fmt.Errorf("smb2: unknown cipher %#x", id)
	}
	sk := sessionKey
	if size == 16 || len(sk) < 16 {
		var k [KeySize]byte
		copy(k[:], sessionKey)
		sk = k[:]
	}
	switch d {
	case Dialect300, Dialect302:
		return CipherKeys{
			ServerIn:  kdf(sk, labelSMB30Cipher, ctxSMB30ServerIn, size),
			ServerOut: kdf(sk, labelSMB30Cipher, ctxSMB30ServerOut, size),
		}, nil
	case Dialect311:
		return CipherKeys{
			ServerIn:  kdf(sk, labelSMB311C2SKey, preauth[:], size),
			ServerOut: kdf(sk, labelSMB311S2CKey, preauth[:], size),
		}, nil
	}
	return CipherKeys{}, errNoCipherForDial
}

// kdf is SP800-108 counter-mode KDF with HMAC-SHA256 (MS-SMB2 3.1.4.2)
// for an output of n bytes (16 or 32: one HMAC block).
func kdf(key, label, context []byte, n int) []byte {
	m := hmac.New(sha256.New, key)
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], 1)
	m.Write(b[:])
	m.Write(label)
	m.Write([]byte{0})
	m.Write(context)
	binary.BigEndian.PutUint32(b[:], uint32(8*n))
	m.Write(b[:])
	return m.Sum(nil)[:n]
}

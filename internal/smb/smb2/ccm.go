package smb2

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
)

// CCM is Counter with CBC-MAC (NIST SP 800-38C; RFC 3610) over a 128-bit
// block cipher, as a cipher.AEAD. The standard library has no CCM; SMB 3
// uses it with an 11-byte nonce and a 16-byte tag (MS-SMB2 3.1.4.3,
// AES-128-CCM and AES-256-CCM), but any of the sizes SP 800-38C allows
// work: nonce 7 to 13 bytes, tag 4 to 16 bytes (even).
type ccm struct {
	b         cipher.Block
	nonceSize int
	tagSize   int
	// maxLen is the longest plaintext the length field (15 - nonceSize
	// bytes) can express.
	maxLen uint64
}

var errCCMOpen = errors.New("smb2: CCM message authentication failed")

// NewCCM returns CCM over b (whose block size must be 16) with the given
// nonce and tag sizes.
func NewCCM(b cipher.Block, nonceSize, tagSize int) (cipher.AEAD, error) {
	if b.BlockSize() != aes.BlockSize {
		return nil, errors.New("smb2: CCM needs a 128-bit block cipher")
	}
	if nonceSize < 7 || nonceSize > 13 {
		return nil, errors.New("smb2: CCM nonce size must be 7 to 13 bytes")
	}
	if tagSize < 4 || tagSize > 16 || tagSize%2 != 0 {
		return nil, errors.New("smb2: CCM tag size must be 4, 6, …, 16 bytes")
	}
	q := 15 - nonceSize
	maxLen := ^uint64(0)
	if q < 8 {
		maxLen = 1<<(8*q) - 1
	}
	return &ccm{b: b, nonceSize: nonceSize, tagSize: tagSize, maxLen: maxLen}, nil
}

func (c *ccm) NonceSize() int { return c.nonceSize }
func (c *ccm) Overhead() int  { return c.tagSize }

// counter returns counter block i: flags (q-1), the nonce, then i in the
// q-byte length field (SP 800-38C A.3).
func (c *ccm) counter(nonce []byte, i byte) [aes.BlockSize]byte {
	var ctr [aes.BlockSize]byte
	ctr[0] = byte(14 - c.nonceSize) // q - 1
	copy(ctr[1:], nonce)
	ctr[aes.BlockSize-1] = i
	return ctr
}

// mac computes the CBC-MAC of B0, the encoded associated data and the
// plaintext (SP 800-38C A.2 and 6.1 steps 1-4), all of it.
func (c *ccm) mac(nonce, plaintext, ad []byte) [aes.BlockSize]byte {
	var x [aes.BlockSize]byte
	// B0: flags, nonce, Q.
	x[0] = byte((c.tagSize-2)/2)<<3 | byte(14-c.nonceSize)
	if len(ad) > 0 {
		x[0] |= 0x40
	}
	copy(x[1:], nonce)
	q := 15 - c.nonceSize
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(plaintext)))
	copy(x[aes.BlockSize-q:], n[8-q:])
	c.b.Encrypt(x[:], x[:])
	if len(ad) > 0 {
		// The length of the associated data, then the data, padded with
		// zeros to a block boundary.
		var hdr []byte
		switch a := uint64(len(ad)); {
		case a < 1<<16-1<<8:
			hdr = binary.BigEndian.AppendUint16(nil, uint16(a))
		case a <= 1<<32-1:
			hdr = binary.BigEndian.AppendUint32([]byte{0xFF, 0xFE}, uint32(a))
		default:
			hdr = binary.BigEndian.AppendUint64([]byte{0xFF, 0xFF}, a)
		}
		c.absorb(&x, hdr, ad)
	}
	if len(plaintext) > 0 {
		c.absorb(&x, nil, plaintext)
	}
	return x
}

// absorb runs the CBC-MAC chaining value x over prefix||data, padded with
// zeros to a whole number of blocks. prefix is shorter than a block.
func (c *ccm) absorb(x *[aes.BlockSize]byte, prefix, data []byte) {
	var first [aes.BlockSize]byte
	n := copy(first[:], prefix)
	k := copy(first[n:], data)
	data = data[k:]
	if n+k == 0 {
		return
	}
	c.chain(x, first[:])
	if whole := len(data) &^ (aes.BlockSize - 1); whole > 0 {
		// The whole blocks through the block cipher's CBC mode (which
		// has an assembly implementation for AES), keeping only the
		// last output block: the CBC-MAC.
		cbc := cipher.NewCBCEncrypter(c.b, x[:])
		var scratch [4096]byte
		for d := data[:whole]; len(d) > 0; {
			n := min(len(d), len(scratch))
			cbc.CryptBlocks(scratch[:n], d[:n])
			d = d[n:]
			if len(d) == 0 {
				copy(x[:], scratch[n-aes.BlockSize:n])
			}
		}
		data = data[whole:]
	}
	if len(data) > 0 {
		var last [aes.BlockSize]byte
		copy(last[:], data)
		c.chain(x, last[:])
	}
}

// chain sets x to E(x xor blk).
func (c *ccm) chain(x *[aes.BlockSize]byte, blk []byte) {
	subtle.XORBytes(x[:], x[:], blk)
	c.b.Encrypt(x[:], x[:])
}

// crypt xors src with the keystream from counter block 1 on into dst.
func (c *ccm) crypt(dst, src, nonce []byte) {
	ctr := c.counter(nonce, 1)
	cipher.NewCTR(c.b, ctr[:]).XORKeyStream(dst, src)
}

// tagMask is the first block of keystream (counter 0), which masks the
// MAC.
func (c *ccm) tagMask(nonce []byte) [aes.BlockSize]byte {
	s0 := c.counter(nonce, 0)
	c.b.Encrypt(s0[:], s0[:])
	return s0
}

// Seal encrypts and authenticates plaintext, authenticates ad, and
// appends the ciphertext and tag to dst.
func (c *ccm) Seal(dst, nonce, plaintext, ad []byte) []byte {
	if len(nonce) != c.nonceSize {
		panic("smb2: CCM nonce of the wrong size")
	}
	if uint64(len(plaintext)) > c.maxLen {
		panic("smb2: CCM plaintext too long for the nonce size")
	}
	t := c.mac(nonce, plaintext, ad)
	s0 := c.tagMask(nonce)
	subtle.XORBytes(t[:], t[:], s0[:])
	ret, out := sliceForAppend(dst, len(plaintext)+c.tagSize)
	c.crypt(out[:len(plaintext)], plaintext, nonce)
	copy(out[len(plaintext):], t[:c.tagSize])
	return ret
}

// Open authenticates and decrypts ciphertext (which ends with the tag)
// and ad, and appends the plaintext to dst. On failure nothing is
// revealed: the output is zeroed and errCCMOpen returned.
func (c *ccm) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	if len(nonce) != c.nonceSize {
		panic("smb2: CCM nonce of the wrong size")
	}
	if len(ciphertext) < c.tagSize {
		return nil, errCCMOpen
	}
	n := len(ciphertext) - c.tagSize
	if uint64(n) > c.maxLen {
		return nil, errCCMOpen
	}
	var tag [aes.BlockSize]byte
	copy(tag[:], ciphertext[n:])
	ret, out := sliceForAppend(dst, n)
	c.crypt(out, ciphertext[:n], nonce)
	t := c.mac(nonce, out, ad)
	s0 := c.tagMask(nonce)
	subtle.XORBytes(t[:], t[:], s0[:])
	if subtle.ConstantTimeCompare(t[:c.tagSize], tag[:c.tagSize]) != 1 {
		clear(out)
		return nil, errCCMOpen
	}
	return ret, nil
}

// sliceForAppend extends in by n bytes and returns the whole slice and
// the new part.
func sliceForAppend(in []byte, n int) (head, tail []byte) {
	if total := len(in) + n; cap(in) >= total {
		head = in[:total]
	} else {
		head = make([]byte, total)
		copy(head, in)
	}
	tail = head[len(in):]
	return
}

package smb2

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"hash"
)

// cmac is AES-CMAC (RFC 4493; NIST SP 800-38B) as a hash.Hash. The
// standard library has CMAC only in an internal package.
type cmac struct {
	c      cipher.Block
	k1, k2 [aes.BlockSize]byte
	x      [aes.BlockSize]byte // chaining value
	buf    [aes.BlockSize]byte // pending input, at most one block
	n      int                 // bytes in buf
}

// newCMAC returns an AES-CMAC for a 16-, 24- or 32-byte key.
func newCMAC(key []byte) (hash.Hash, error) {
	c, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	m := &cmac{c: c}
	// RFC 4493 2.3: L = AES-K(0); K1 = L<<1 (^0x87 if msb(L)); K2 = K1<<1 (likewise).
	var l [aes.BlockSize]byte
	c.Encrypt(l[:], l[:])
	shiftXor(&m.k1, &l)
	shiftXor(&m.k2, &m.k1)
	return m, nil
}

// shiftXor sets dst to src shifted left one bit, xored with Rb = 0x87 in
// the last byte when the bit shifted out was set.
func shiftXor(dst, src *[aes.BlockSize]byte) {
	var carry byte
	for i := aes.BlockSize - 1; i >= 0; i-- {
		b := src[i]
		dst[i] = b<<1 | carry
		carry = b >> 7
	}
	dst[aes.BlockSize-1] ^= subtleSelect(carry, 0x87)
}

// subtleSelect returns v if bit is 1 and 0 if it is 0, without a branch.
func subtleSelect(bit, v byte) byte { return byte(subtle.ConstantTimeByteEq(bit, 1)) * v }

func (m *cmac) Size() int      { return aes.BlockSize }
func (m *cmac) BlockSize() int { return aes.BlockSize }

func (m *cmac) Reset() {
	m.x = [aes.BlockSize]byte{}
	m.n = 0
}

// Write absorbs p. A full block stays buffered until more input arrives,
// because the last block is processed differently (RFC 4493 2.4 step 4).
func (m *cmac) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		if m.n == aes.BlockSize {
			subtle.XORBytes(m.x[:], m.x[:], m.buf[:])
			m.c.Encrypt(m.x[:], m.x[:])
			m.n = 0
		}
		k := copy(m.buf[m.n:], p)
		m.n += k
		p = p[k:]
	}
	return total, nil
}

// Sum appends the 16-byte MAC of the input so far to b; the state is not
// changed.
func (m *cmac) Sum(b []byte) []byte {
	var last [aes.BlockSize]byte
	copy(last[:], m.buf[:m.n])
	if m.n == aes.BlockSize {
		subtle.XORBytes(last[:], last[:], m.k1[:])
	} else {
		last[m.n] = 0x80
		subtle.XORBytes(last[:], last[:], m.k2[:])
	}
	var t [aes.BlockSize]byte
	subtle.XORBytes(t[:], m.x[:], last[:])
	m.c.Encrypt(t[:], t[:])
	return append(b, t[:]...)
}

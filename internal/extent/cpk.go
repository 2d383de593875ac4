package extent

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"io"
)

// Cipher encrypts the data items of content written with a
// customer-provided key (Blob's x-ms-encryption-key, "Provide an
// encryption key on a request to Blob storage") and decrypts them on
// read. It holds the AES-256 key for one request only; nothing of it is
// stored (the Blob layer keeps the key's SHA-256 to check later requests).
//
// Each data item is AES-256 in counter mode: the initial counter block is
// derived from the item's id (random, never reused: a data item is
// written once and never changed), and byte i of the item is encrypted
// with keystream byte i. A part referring to bytes [DOff, DOff+Len) of an
// item is decrypted from counter block DOff/16 on, so a range read costs
// the range, not the item. Embedded parts (bytes in the part record) are
// never encrypted: content staged with a Cipher always becomes data items.
type Cipher struct {
	block cipher.Block
}

// NewCipher returns the Cipher of a 32-byte AES-256 key.
func NewCipher(key []byte) (*Cipher, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return &Cipher{block: b}, nil
}

// stream returns the keystream of data item id from byte off on.
func (c *Cipher) stream(id string, off int64) cipher.Stream {
	sum := sha256.Sum256([]byte("cerulean customer-provided key item\x00" + id))
	var iv [16]byte
	copy(iv[:], sum[:16])
	// The counter block of byte off: iv + off/16, a 128-bit big-endian
	// addition.
	hi, lo := binary.BigEndian.Uint64(iv[:8]), binary.BigEndian.Uint64(iv[8:])
	add := uint64(off / aes.BlockSize)
	nlo := lo + add
	if nlo < lo {
		hi++
	}
	binary.BigEndian.PutUint64(iv[:8], hi)
	binary.BigEndian.PutUint64(iv[8:], nlo)
	s := cipher.NewCTR(c.block, iv[:])
	if skip := int(off % aes.BlockSize); skip > 0 {
		var discard [aes.BlockSize]byte
		s.XORKeyStream(discard[:skip], discard[:skip])
	}
	return s
}

// Seal returns data item id's bytes p, written from item offset off,
// encrypted (in a new slice).
func (c *Cipher) Seal(id string, off int64, p []byte) []byte {
	out := make([]byte, len(p))
	c.stream(id, off).XORKeyStream(out, p)
	return out
}

// decryptReader decrypts a data item read from item offset off.
type decryptReader struct {
	r io.Reader
	s cipher.Stream
}

func (d *decryptReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.s.XORKeyStream(p[:n], p[:n])
	return n, err
}

// encryptWriter encrypts what it writes to w, from item offset 0.
type encryptWriter struct {
	w   io.Writer
	s   cipher.Stream
	buf []byte
}

func (e *encryptWriter) Write(p []byte) (int, error) {
	if cap(e.buf) < len(p) {
		e.buf = make([]byte, len(p))
	}
	b := e.buf[:len(p)]
	e.s.XORKeyStream(b, p)
	return e.w.Write(b)
}

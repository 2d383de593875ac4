package extent

import (
	"encoding/binary"
	"hash"
	"hash/crc64"
)

// CRC64Table is the CRC-64 the Storage service uses for
// x-ms-content-crc64 (polynomial 0x9A6C9329AC4BC9B5, reflected).
var CRC64Table = crc64.MakeTable(0x9A6C9329AC4BC9B5)

// crc64Slicing8 extends CRC64Table to eight tables, to fold eight bytes
// per step. hash/crc64 does so itself only for its ISO and ECMA
// polynomials; for any other table it goes a byte at a time below 2 KiB
// and builds the extension again on every call from 2 KiB up: a 1 KiB
// Put Blob spent twice as long on its CRC64 as on its MD5.
var crc64Slicing8 = func() *[8][256]uint64 {
	var t [8][256]uint64
	t[0] = *CRC64Table
	for i := range 256 {
		crc := t[0][i]
		for j := 1; j < 8; j++ {
			crc = t[0][crc&0xff] ^ crc>>8
			t[j][i] = crc
		}
	}
	return &t
}()

// UpdateCRC64 is crc64.Update(crc, CRC64Table, p), eight bytes a step.
func UpdateCRC64(crc uint64, p []byte) uint64 {
	t := crc64Slicing8
	crc = ^crc
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][crc&0xff] ^ t[6][crc>>8&0xff] ^ t[5][crc>>16&0xff] ^ t[4][crc>>24&0xff] ^
			t[3][crc>>32&0xff] ^ t[2][crc>>40&0xff] ^ t[1][crc>>48&0xff] ^ t[0][crc>>56]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return ^crc
}

// NewCRC64 returns a hash of the Storage CRC-64: crc64.New(CRC64Table)'s
// sums (Sum appends the big-endian form, as it does), computed by
// UpdateCRC64.
func NewCRC64() hash.Hash64 { return new(crc64Digest) }

type crc64Digest struct{ crc uint64 }

func (d *crc64Digest) Write(p []byte) (int, error) {
	d.crc = UpdateCRC64(d.crc, p)
	return len(p), nil
}

func (d *crc64Digest) Sum64() uint64 { return d.crc }

func (d *crc64Digest) Sum(in []byte) []byte { return binary.BigEndian.AppendUint64(in, d.crc) }

func (d *crc64Digest) Reset() { d.crc = 0 }

func (d *crc64Digest) Size() int { return crc64.Size }

func (d *crc64Digest) BlockSize() int { return 1 }

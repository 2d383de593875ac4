// Package xsm is the structured message format, XSM/1.0 with CRC64, in
// which Blob, File and Data Lake writes may send their content and reads
// may ask for it ("Structured Body Format",
// https://learn.microsoft.com/en-us/rest/api/storageservices/structured-body-format):
//
//	header:   uint8 version (1), uint64 message length, uint16 flags
//	          (1: CRC64), uint16 segment count
//	segment:  uint16 number (1, 2, ...), uint64 data length, data,
//	          8-byte CRC64 of the data
//	trailer:  8-byte CRC64 of the whole content
//
// All integers are little-endian; the CRC64 is the Storage service's
// (extent.CRC64Table), stored little-endian as x-ms-content-crc64 is.
// Decoder and Encoder stream: neither holds more than a frame.
package xsm

import (
	"encoding/binary"

	"github.com/cerulean-storage/cerulean/internal/extent"
)

const (
	// HeaderValue is the x-ms-structured-body value of the only version
	// and property set Azure defines.
	HeaderValue = "XSM/1.0; properties=crc64"

	version   = 1
	flagCRC64 = 1

	headerLen    = 13 // version, message length, flags, segment count
	segHeaderLen = 10 // segment number, data length
	crcLen       = 8  // segment footer and message trailer

	// DefaultSegment is the segment size of the responses Cerulean
	// encodes: the Azure SDKs' default (azblob internal/shared
	// structured_message.go, SMDefaultSegmentSize).
	DefaultSegment = 4 << 20

	maxSegments = 1<<16 - 1
)

// update is crc64.Update(crc, extent.CRC64Table, p).
func update(crc uint64, p []byte) uint64 { return extent.UpdateCRC64(crc, p) }

// Layout returns the segment size and count Encoder uses for n content
// bytes with segments of at most seg bytes (DefaultSegment when seg <= 0):
// at least one segment, and the size raised when n would need more than
// the 65535 segments a uint16 counts.
func Layout(n, seg int64) (size int64, count int) {
	if seg <= 0 {
		seg = DefaultSegment
	}
	c := (n + seg - 1) / seg
	if c > maxSegments {
		seg = (n + maxSegments - 1) / maxSegments
		c = (n + seg - 1) / seg
	}
	if c == 0 {
		c = 1
	}
	return seg, int(c)
}

// EncodedLen is the length of the message framing n content bytes in
// count segments.
func EncodedLen(n int64, count int) int64 {
	return headerLen + int64(count)*(segHeaderLen+crcLen) + n + crcLen
}

func putHeader(b []byte, msgLen int64, count int) []byte {
	b = append(b, version)
	b = binary.LittleEndian.AppendUint64(b, uint64(msgLen))
	b = binary.LittleEndian.AppendUint16(b, flagCRC64)
	return binary.LittleEndian.AppendUint16(b, uint16(count))
}

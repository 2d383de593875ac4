package smb2

import (
	"fmt"
	"io"
	"net"
)

// MaxFrameSize is the largest payload Direct TCP framing can carry: the
// length is 24 bits (MS-SMB2 2.1).
const MaxFrameSize = 0xFFFFFF

// ReadFrame reads one Direct TCP frame from r (MS-SMB2 2.1): a zero byte,
// a 24-bit big-endian length, then the payload, which it returns in a new
// slice. maxSize bounds the payload (use the negotiated MaxTransactSize
// plus room for headers, or MaxFrameSize); a longer frame is rejected
// with ErrFrameTooLarge before any of it is read, and the buffer grows
// as the payload arrives (ReadFrameChecked). io.EOF is returned only
// when r ends cleanly between frames; a frame cut short gives
// io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader, maxSize int) ([]byte, error) {
	return ReadFrameChecked(r, maxSize, nil)
}

// FrameHeader returns the 4-byte Direct TCP header for a payload of n
// bytes. It panics if n is out of range, which is a server bug.
func FrameHeader(n int) [4]byte {
	if n < 0 || n > MaxFrameSize {
		panic(fmt.Sprintf("smb2: frame length %d out of range", n))
	}
	return [4]byte{0, byte(n >> 16), byte(n >> 8), byte(n)}
}

// WriteFrame writes one frame whose payload is the concatenation of parts
// (for example a compound built by BuildCompound, or a READ response's
// header and data). It uses a single vectored write, so parts are not
// copied; callers that share w between goroutines must serialise calls.
func WriteFrame(w io.Writer, parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 || n > MaxFrameSize {
		return fmt.Errorf("smb2: frame length %d out of range", n)
	}
	hdr := FrameHeader(n)
	bufs := make(net.Buffers, 0, len(parts)+1)
	bufs = append(bufs, hdr[:])
	for _, p := range parts {
		if len(p) > 0 {
			bufs = append(bufs, p)
		}
	}
	_, err := bufs.WriteTo(w)
	return err
}

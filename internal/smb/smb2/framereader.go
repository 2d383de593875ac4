package smb2

import (
	"errors"
	"fmt"
	"io"
)

// FrameHeadSize is how much of a frame's payload ReadFrameChecked reads
// before it allocates anything: the SMB2 header (64 bytes) is the
// largest of the headers a frame can begin with (SMB1 32, transform 52,
// compression 8 or 16).
const FrameHeadSize = HeaderSize

// frameChunk is the most ReadFrameChecked allocates for a frame before
// its bytes arrive: the buffer starts at this size (or the frame's, if
// smaller) and grows frameGrowth-fold each time it fills, so a peer
// announcing a large frame holds at most frameGrowth times what it has
// sent (and no more than frameChunk for nothing), while an 8 MiB WRITE
// costs four allocations and 1.1 MiB of copying.
const (
	frameChunk  = 16 << 10
	frameGrowth = 8
)

// ReadFrameChecked reads one Direct TCP frame from r (MS-SMB2 2.1) like
// ReadFrame, with bounded memory: it checks the 4-byte transport header
// against maxSize, then reads the first min(n, FrameHeadSize) bytes of
// the payload into a fixed array and, if check is not nil, passes them
// and the announced length n to check; an error from check is returned
// before any buffer is allocated. The rest is read into a buffer that
// grows as bytes arrive, never beyond n.
func ReadFrameChecked(r io.Reader, maxSize int, check func(head []byte, n int) error) ([]byte, error) {
	var th [4]byte
	if _, err := io.ReadFull(r, th[:]); err != nil {
		return nil, err
	}
	if th[0] != 0 {
		return nil, ErrFrameType
	}
	n := int(th[1])<<16 | int(th[2])<<8 | int(th[3])
	if n == 0 {
		return nil, ErrEmptyFrame
	}
	if n > maxSize {
		return nil, fmt.Errorf("%w: %d > %d", ErrFrameTooLarge, n, maxSize)
	}
	var headBuf [FrameHeadSize]byte
	head := headBuf[:min(n, FrameHeadSize)]
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, unexpected(err)
	}
	if check != nil {
		if err := check(head, n); err != nil {
			return nil, err
		}
	}
	buf := make([]byte, len(head), min(n, max(frameChunk, len(head))))
	copy(buf, head)
	for len(buf) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(n, frameGrowth*cap(buf)))
			copy(grown, buf)
			buf = grown
		}
		m, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err != nil {
			return nil, unexpected(err)
		}
	}
	return buf, nil
}

// unexpected turns io.EOF inside a frame into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Framing errors. The connection cannot continue after any of them: the
// stream is out of sync or the peer is not speaking Direct TCP.
var (
	// ErrFrameType: the first byte of the 4-byte transport header is not
	// zero (a NetBIOS session message type other than "session message").
	ErrFrameType = errors.New("smb2: transport header type is not 0")
	// ErrFrameTooLarge: the announced length exceeds the limit the caller
	// gave ReadFrame.
	ErrFrameTooLarge = errors.New("smb2: frame exceeds the maximum message size")
	// ErrEmptyFrame: a frame of length 0.
	ErrEmptyFrame = errors.New("smb2: empty frame")
)

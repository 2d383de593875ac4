package xsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
)

// Encoder writes n content bytes to w as a structured message: the
// framing goes out around the content as it is written, and Close ends
// the message. Writing more or fewer than n bytes is an error.
type Encoder struct {
	w       io.Writer
	n       int64
	seg     int64 // segment size
	count   int
	written int64
	segNum  int   // segments begun
	segLeft int64 // data bytes of the current segment still to come
	segCRC  uint64
	msgCRC  uint64
	started bool
	closed  bool
	frame   []byte
}

// NewEncoder returns an Encoder of n content bytes in segments of at most
// seg bytes (see Layout).
func NewEncoder(w io.Writer, n, seg int64) *Encoder {
	size, count := Layout(n, seg)
	return &Encoder{w: w, n: n, seg: size, count: count, frame: make([]byte, 0, headerLen+segHeaderLen)}
}

// Len is the length of the whole message.
func (e *Encoder) Len() int64 { return EncodedLen(e.n, e.count) }

var (
	errLong  = errors.New("xsm: more content written than declared")
	errShort = errors.New("xsm: less content written than declared")
)

func (e *Encoder) Write(p []byte) (int, error) {
	if e.closed || int64(len(p)) > e.n-e.written {
		return 0, errLong
	}
	done := 0
	for len(p) > 0 {
		e.frame = e.frame[:0]
		if !e.started {
			e.frame = putHeader(e.frame, e.Len(), e.count)
			e.started = true
		}
		if e.segLeft == 0 {
			e.beginSegment()
		}
		if err := e.flushFrame(); err != nil {
			return done, err
		}
		k := int64(len(p))
		if k > e.segLeft {
			k = e.segLeft
		}
		m, err := e.w.Write(p[:k])
		e.segCRC = update(e.segCRC, p[:m])
		e.msgCRC = update(e.msgCRC, p[:m])
		e.segLeft -= int64(m)
		e.written += int64(m)
		done += m
		if err != nil {
			return done, err
		}
		p = p[k:]
		if e.segLeft == 0 {
			e.frame = binary.LittleEndian.AppendUint64(e.frame[:0], e.segCRC)
			if err := e.flushFrame(); err != nil {
				return done, err
			}
		}
	}
	return done, nil
}

func (e *Encoder) beginSegment() {
	e.segNum++
	e.segLeft = min(e.seg, e.n-e.written)
	e.segCRC = 0
	e.frame = binary.LittleEndian.AppendUint16(e.frame, uint16(e.segNum))
	e.frame = binary.LittleEndian.AppendUint64(e.frame, uint64(e.segLeft))
}

func (e *Encoder) flushFrame() error {
	if len(e.frame) == 0 {
		return nil
	}
	_, err := e.w.Write(e.frame)
	e.frame = e.frame[:0]
	return err
}

// Close writes what is left of the framing: the header and the one empty
// segment of a message without content, and the trailer.
func (e *Encoder) Close() error {
	if e.closed {
		return nil
	}
	if e.written != e.n {
		return errShort
	}
	e.closed = true
	e.frame = e.frame[:0]
	if !e.started {
		e.frame = putHeader(e.frame, e.Len(), e.count)
		e.started = true
	}
	if e.segNum < e.count { // only when n == 0: one empty segment
		e.beginSegment()
		e.frame = binary.LittleEndian.AppendUint64(e.frame, 0)
	}
	e.frame = binary.LittleEndian.AppendUint64(e.frame, e.msgCRC)
	return e.flushFrame()
}

// Encode returns data as a structured message in segments of at most seg
// bytes.
func Encode(data []byte, seg int64) []byte {
	var b bytes.Buffer
	e := NewEncoder(&b, int64(len(data)), seg)
	b.Grow(int(e.Len()))
	_, _ = e.Write(data)
	_ = e.Close()
	return b.Bytes()
}

// Decode returns the content of the structured message msg, which must
// hold contentLen bytes.
func Decode(msg []byte, contentLen int64) ([]byte, error) {
	d := NewDecoder(bytes.NewReader(msg), int64(len(msg)), contentLen)
	out, err := io.ReadAll(d)
	if err != nil {
		return nil, err
	}
	if !d.Done() {
		return nil, errShort
	}
	return out, nil
}

package xsm

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// Decoder reads the content of a structured message from its source,
// checking the framing, every segment's CRC64, the trailer's CRC64 and
// the declared lengths as it goes. A Read that hands out the last content
// byte has already checked the last footer and the trailer and seen the
// source end, so a consumer that stops after exactly the declared content
// length (io.ReadFull) still sees a bad message as an error. On any error
// Read returns no bytes, only the error, from then on.
//
// The errors are Azure's (inferred: Azure documents no code for a bad
// structured body): a CRC64 that does not match is 400 Crc64Mismatch, the
// code of a mismatched x-ms-content-crc64; malformed framing, lengths that
// disagree and a truncated message are 400 InvalidInput.
type Decoder struct {
	src        io.Reader
	msgLen     int64 // the declared Content-Length, -1 if unknown
	contentLen int64 // x-ms-structured-content-length

	started  bool
	count    uint16 // segments the header declares
	seg      uint16 // the current (last begun) segment's number
	inSeg    bool   // inside segment seg: data or its footer pending
	segLeft  int64  // data bytes of segment seg not yet read
	segCRC   uint64
	msgCRC   uint64
	out      int64 // content bytes handed out
	consumed int64 // message bytes read from src
	done     bool
	err      error
	buf      [headerLen]byte
}

// NewDecoder returns a Decoder of the message src holds, msgLen bytes
// long (its Content-Length; -1 when not known, e.g. a chunked body),
// holding contentLen content bytes (x-ms-structured-content-length).
func NewDecoder(src io.Reader, msgLen, contentLen int64) *Decoder {
	return &Decoder{src: src, msgLen: msgLen, contentLen: contentLen}
}

// Start reads the message header and the first segment header, and the
// whole message when it holds no content, so that a malformed start is
// answered before any content is staged.
func (d *Decoder) Start() error {
	if d.err != nil {
		return d.err
	}
	if err := d.advance(); err != nil {
		return d.fail(err)
	}
	return nil
}

// Done reports whether the whole message was read and found good.
func (d *Decoder) Done() bool { return d.done }

// CRC64 returns the content's CRC64 as x-ms-content-crc64 carries it;
// valid once Done.
func (d *Decoder) CRC64() string {
	return base64.StdEncoding.EncodeToString(binary.LittleEndian.AppendUint64(nil, d.msgCRC))
}

// ContentLength is the number of content bytes the message carries.
func (d *Decoder) ContentLength() int64 { return d.contentLen }

func (d *Decoder) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if err := d.advance(); err != nil {
		return 0, d.fail(err)
	}
	if d.done {
		return 0, io.EOF
	}
	if int64(len(p)) > d.segLeft {
		p = p[:d.segLeft]
	}
	n, err := d.src.Read(p)
	d.consumed += int64(n)
	d.segLeft -= int64(n)
	d.out += int64(n)
	d.segCRC = update(d.segCRC, p[:n])
	d.msgCRC = update(d.msgCRC, p[:n])
	if err != nil && d.segLeft > 0 {
		if err == io.EOF {
			err = truncated()
		}
		return 0, d.fail(err)
	}
	if d.segLeft == 0 {
		// Check the footer now, and after the last segment the
		// trailer and the end of the source, before these bytes leave.
		if err := d.advance(); err != nil {
			return 0, d.fail(err)
		}
	}
	return n, nil
}

func (d *Decoder) fail(err error) error {
	d.err = err
	return err
}

// advance reads framing until segment data is pending or the message
// is done.
func (d *Decoder) advance() error {
	for !d.done {
		switch {
		case !d.started:
			if err := d.header(); err != nil {
				return err
			}
			d.started = true
		case d.inSeg && d.segLeft > 0:
			return nil
		case d.inSeg:
			b, err := d.frame(crcLen)
			if err != nil {
				return err
			}
			if got := binary.LittleEndian.Uint64(b); got != d.segCRC {
				return crcMismatch(fmt.Sprintf("segment %d", d.seg), got, d.segCRC)
			}
			d.inSeg = false
		case d.seg < d.count:
			b, err := d.frame(segHeaderLen)
			if err != nil {
				return err
			}
			num := binary.LittleEndian.Uint16(b[0:2])
			n := binary.LittleEndian.Uint64(b[2:10])
			if num != d.seg+1 {
				return malformed("segment %d is numbered %d", d.seg+1, num)
			}
			if n > uint64(d.contentLen-d.out) {
				return malformed("segment %d holds %d bytes, more than the %d of x-ms-structured-content-length left", num, n, d.contentLen-d.out)
			}
			d.seg, d.inSeg, d.segLeft, d.segCRC = num, true, int64(n), 0
		default:
			b, err := d.frame(crcLen)
			if err != nil {
				return err
			}
			if got := binary.LittleEndian.Uint64(b); got != d.msgCRC {
				return crcMismatch("message", got, d.msgCRC)
			}
			if d.out != d.contentLen {
				return malformed("the segments hold %d bytes, x-ms-structured-content-length says %d", d.out, d.contentLen)
			}
			// The message must end the body.
			var one [1]byte
			n, err := io.ReadFull(d.src, one[:])
			if n > 0 {
				return malformed("the request body goes on after the message trailer")
			}
			if err != nil && err != io.EOF {
				return err
			}
			d.done = true
		}
	}
	return nil
}

func (d *Decoder) header() error {
	b, err := d.frame(headerLen)
	if err != nil {
		return err
	}
	if b[0] != version {
		return malformed("version %d is not 1", b[0])
	}
	msgLen := binary.LittleEndian.Uint64(b[1:9])
	flags := binary.LittleEndian.Uint16(b[9:11])
	d.count = binary.LittleEndian.Uint16(b[11:13])
	// Version 1 defines the one flag, CRC64, which x-ms-structured-body's
	// properties=crc64 promises (inferred: another bit would change the
	// layout in a way v1 does not say).
	if flags != flagCRC64 {
		return malformed("flags 0x%04x are not 0x0001 (crc64)", flags)
	}
	if d.msgLen >= 0 && msgLen != uint64(d.msgLen) {
		return malformed("the message length %d is not the Content-Length %d", msgLen, d.msgLen)
	}
	if want := EncodedLen(d.contentLen, int(d.count)); msgLen != uint64(want) {
		return malformed("the message length %d does not frame %d content bytes in %d segments (%d)", msgLen, d.contentLen, d.count, want)
	}
	return nil
}

// frame reads n framing bytes.
func (d *Decoder) frame(n int) ([]byte, error) {
	b := d.buf[:n]
	m, err := io.ReadFull(d.src, b)
	d.consumed += int64(m)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, truncated()
		}
		return nil, err
	}
	return b, nil
}

func malformed(format string, args ...any) error {
	return azerr.Newf(azerr.InvalidInput, "The structured message body is malformed: "+format+".", args...)
}

func truncated() error {
	return azerr.Newf(azerr.InvalidInput, "The structured message body ends before its framing does.")
}

func crcMismatch(what string, sent, computed uint64) error {
	return azerr.Newf(azerr.CRC64Mismatch, "The CRC64 of structured message %s did not match the content received.", what).
		With("UserSpecifiedCrc", crcText(sent)).With("ServerCalculatedCrc", crcText(computed))
}

func crcText(v uint64) string {
	return base64.StdEncoding.EncodeToString(binary.LittleEndian.AppendUint64(nil, v))
}

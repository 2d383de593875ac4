package extent

import (
	"bytes"
	"encoding/base64"
	"io"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// CheckDigests verifies the digests a client sent with a body (sent:
// nil fields were not sent) against those computed for it when staged:
// 400 Md5Mismatch or Crc64Mismatch, naming both values.
func (st *Staged) CheckDigests(sent Digests) error {
	if sent.MD5 != nil && !bytes.Equal(sent.MD5, st.MD5) {
		return azerr.New(azerr.MD5Mismatch).With("UserSpecifiedMd5", spelled(sent.MD5Text, sent.MD5)).With("ServerCalculatedMd5", base64.StdEncoding.EncodeToString(st.MD5))
	}
	if sent.CRC64 != nil && !bytes.Equal(sent.CRC64, st.CRC64) {
		// The detail elements are UserSpecifiedCrc and
		// ServerCalculatedCrc (azure-sdk-for-js recording "stageBlock
		// with invalid CRC64 should fail").
		return azerr.New(azerr.CRC64Mismatch).With("UserSpecifiedCrc", spelled(sent.CRC64Text, sent.CRC64)).With("ServerCalculatedCrc", base64.StdEncoding.EncodeToString(st.CRC64))
	}
	return nil
}

// spelled is v as the client sent it, else b's canonical Base64.
func spelled(v string, b []byte) string {
	if v != "" {
		return v
	}
	return base64.StdEncoding.EncodeToString(b)
}

// Digests returns the digests computed for a staged body (a nil field
// was not computed), which a write answers with.
func (st *Staged) Digests() Digests {
	return Digests{MD5: st.MD5, CRC64: st.CRC64}
}

// LimitBody caps a request body at max bytes given its declared length n
// (-1 for a chunked body): a declared length over max is
// RequestBodyTooLarge at once; a chunked body is cut at max, and reading
// past it fails so that Stage reports RequestBodyTooLarge (see BodyErr).
func LimitBody(body io.Reader, n, max int64) (io.Reader, error) {
	if n > max {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	if n < 0 {
		return &capReader{r: body, left: max}, nil
	}
	return body, nil
}

type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if m, _ := c.r.Read(one[:]); m > 0 {
			return 0, &maxBytesError{}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

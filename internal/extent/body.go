package extent

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// CheckDigests verifies the transactional Content-MD5 and
// x-ms-content-crc64 of h against the digests computed for a staged body.
func (st *Staged) CheckDigests(h http.Header) error {
	if v := h.Get("Content-MD5"); v != "" {
		want, err := wire.ParseContentMD5(v)
		if err != nil {
			return err
		}
		if !bytes.Equal(want, st.MD5) {
			return azerr.New(azerr.MD5Mismatch).With("UserSpecifiedMd5", v).With("ServerCalculatedMd5", base64.StdEncoding.EncodeToString(st.MD5))
		}
	}
	if v := h.Get("x-ms-content-crc64"); v != "" {
		want, err := ParseContentCRC64(v)
		if err != nil {
			return err
		}
		if !bytes.Equal(want, st.CRC64) {
			// The detail elements are UserSpecifiedCrc and
			// ServerCalculatedCrc (azure-sdk-for-js recording "stageBlock
			// with invalid CRC64 should fail").
			return azerr.New(azerr.CRC64Mismatch).With("UserSpecifiedCrc", v).With("ServerCalculatedCrc", base64.StdEncoding.EncodeToString(st.CRC64))
		}
	}
	return nil
}

// ParseContentCRC64 decodes a transactional x-ms-content-crc64: anything
// but 8 Base64-encoded bytes is 400 InvalidCrc64, the code Microsoft's
// own tools give it next to InvalidMd5 (the Azure Storage Emulator's
// CommonStatusEntries.InvalidCrc64, "CRC64 value must be 64 bits and
// base64 encoded"; Microsoft.Azure.Storage.Common's
// StorageErrorCodeStrings.InvalidCrc64).
func ParseContentCRC64(v string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != 8 {
		return nil, azerr.New(azerr.InvalidCRC64)
	}
	return b, nil
}

// EchoDigests returns the digests computed for a stored body.
func (st *Staged) EchoDigests(w http.ResponseWriter) {
	if st.MD5 != nil {
		w.Header().Set("Content-MD5", base64.StdEncoding.EncodeToString(st.MD5))
	}
	if st.CRC64 != nil {
		w.Header().Set("x-ms-content-crc64", base64.StdEncoding.EncodeToString(st.CRC64))
	}
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

package server

import (
	"encoding/base64"
	"net/http"
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// This file is the REST side of the byte layer (internal/extent), which
// knows nothing of HTTP: the transactional digests a request carries and
// a write answers with, and the streaming of a read's body.

// ParseDigests reads the transactional Content-MD5 and x-ms-content-crc64
// of a request with a body: a malformed Content-MD5 is 400 InvalidMd5, a
// malformed x-ms-content-crc64 400 InvalidCrc64; an absent or empty header
// leaves its field nil.
func ParseDigests(h http.Header) (extent.Digests, error) {
	var d extent.Digests
	var err error
	if v := h.Get("Content-Md5"); v != "" {
		if d.MD5, err = wire.ParseContentMD5(v); err != nil {
			return d, err
		}
		d.MD5Text = v
	}
	if v := h.Get("X-Ms-Content-Crc64"); v != "" {
		if d.CRC64, err = wire.ParseContentCRC64(v); err != nil {
			return d, err
		}
		d.CRC64Text = v
	}
	return d, nil
}

// SetDigests sets the Content-MD5 and x-ms-content-crc64 of a write's
// response to the digests of the content stored (a nil field: not set),
// on any HeaderSetter; SetDigestHeaders is the same for a *Response.
func SetDigests(h HeaderSetter, d extent.Digests) {
	md5, crc := digestValues(d)
	if md5 != "" {
		h.Set("Content-Md5", md5)
	}
	if crc != "" {
		h.Set("X-Ms-Content-Crc64", crc)
	}
}

// SetDigestHeaders is SetDigests for a typed answer. It takes the
// *Response itself: one passed through an interface escapes to the
// heap, one more allocation per request.
func SetDigestHeaders(r *Response, d extent.Digests) {
	md5, crc := digestValues(d)
	if md5 != "" {
		r.Set("Content-Md5", md5)
	}
	if crc != "" {
		r.Set("X-Ms-Content-Crc64", crc)
	}
}

// digestValues are the header values of d's digests ("" for a nil one).
func digestValues(d extent.Digests) (md5, crc64 string) {
	if d.MD5 != nil {
		md5 = base64.StdEncoding.EncodeToString(d.MD5)
	}
	if d.CRC64 != nil {
		crc64 = base64.StdEncoding.EncodeToString(d.CRC64)
	}
	return md5, crc64
}

// SetContentHeaders sets the Content-Length of a read's body b (a typed
// answer's Content) and, when md5Wanted, its Content-MD5 (the body was
// then opened with wantMD5 and read in full).
func SetContentHeaders(r *Response, b *extent.Body, md5Wanted bool) {
	r.Set("Content-Length", strconv.FormatInt(b.Size(), 10))
	if md5Wanted {
		if sum := b.MD5(); sum != nil {
			r.Set("Content-Md5", base64.StdEncoding.EncodeToString(sum))
		}
	}
}

package server

import (
	"encoding/base64"
	"log/slog"
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
// response to the digests of the content stored (a nil field: not set).
func SetDigests(h HeaderSetter, d extent.Digests) {
	if d.MD5 != nil {
		h.Set("Content-Md5", base64.StdEncoding.EncodeToString(d.MD5))
	}
	if d.CRC64 != nil {
		h.Set("X-Ms-Content-Crc64", base64.StdEncoding.EncodeToString(d.CRC64))
	}
}

// SetBodyHeaders sets the Content-Length of a read's body and, when
// md5Wanted, its Content-MD5 (the body was then opened with wantMD5 and
// read in full).
func SetBodyHeaders(h http.Header, b *extent.Body, md5Wanted bool) {
	h.Set("Content-Length", strconv.FormatInt(b.Size(), 10))
	if md5Wanted {
		if sum := b.MD5(); sum != nil {
			h.Set("Content-Md5", base64.StdEncoding.EncodeToString(sum))
		}
	}
}

// ContentHeaders is SetBodyHeaders for a typed answer (a *Response) or
// any other HeaderSetter: the Content-Length of a read's body and, when
// md5Wanted, its Content-MD5.
func ContentHeaders(h HeaderSetter, b *extent.Body, md5Wanted bool) {
	h.Set("Content-Length", strconv.FormatInt(b.Size(), 10))
	if md5Wanted {
		if sum := b.MD5(); sum != nil {
			h.Set("Content-Md5", base64.StdEncoding.EncodeToString(sum))
		}
	}
}

// SendBody writes a read's body after the status line (nothing for
// HEAD) and closes it. The headers are gone by then, so a failure
// mid-stream aborts the connection: the client sees a truncated body,
// never a short success.
func SendBody(w http.ResponseWriter, r *http.Request, b *extent.Body, log *slog.Logger) {
	defer b.Close()
	if r.Method == http.MethodHead {
		return
	}
	if _, err := b.WriteTo(w); err != nil {
		log.Debug("download: streaming failed", "path", r.URL.Path, "err", err)
		panic(http.ErrAbortHandler)
	}
}

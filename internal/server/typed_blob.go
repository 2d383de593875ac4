package server

import (
	"encoding/base64"
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/extent"
)

// The header writers of the Blob service's typed answers: a read's
// (Get Blob, Get Blob Properties) and a write's digests. They take the
// *Response itself, not a HeaderSetter: a Response passed through an
// interface escapes to the heap, one more allocation per request.

// SetContentHeaders is SetBodyHeaders for a typed answer: the Content-Length
// of a read's body b (its Content) and, when md5Wanted, its Content-MD5.
func SetContentHeaders(r *Response, b *extent.Body, md5Wanted bool) {
	r.Set("Content-Length", strconv.FormatInt(b.Size(), 10))
	if md5Wanted {
		if sum := b.MD5(); sum != nil {
			r.Set("Content-Md5", base64.StdEncoding.EncodeToString(sum))
		}
	}
}

// SetSASOverrides is ApplySASOverrides for a typed answer: the response
// header overrides (rscc, rscd, rsce, rscl, rsct) of eff, a verified
// service SAS, replacing the headers of the same names set before.
func SetSASOverrides(r *Response, eff *auth.SAS) {
	if eff == nil || eff.IsAccount() {
		return
	}
	for _, o := range [...]struct{ name, v string }{
		{"Cache-Control", eff.CacheControl},
		{"Content-Disposition", eff.ContentDisposition},
		{"Content-Encoding", eff.ContentEncoding},
		{"Content-Language", eff.ContentLanguage},
		{"Content-Type", eff.ContentType},
	} {
		if o.v != "" {
			r.Set(o.name, o.v)
		}
	}
}

// SetDigestHeaders is SetDigests for a typed answer: the Content-MD5 and
// x-ms-content-crc64 of a write's response (a nil field: not set).
func SetDigestHeaders(r *Response, d extent.Digests) {
	if d.MD5 != nil {
		r.Set("Content-Md5", base64.StdEncoding.EncodeToString(d.MD5))
	}
	if d.CRC64 != nil {
		r.Set("X-Ms-Content-Crc64", base64.StdEncoding.EncodeToString(d.CRC64))
	}
}

package blobrest

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/cond"
)

// blobIfConds reads the x-ms-blob-if-match, x-ms-blob-if-none-match,
// x-ms-blob-if-modified-since and x-ms-blob-if-unmodified-since headers
// Get Blob Tags and Set Blob Tags take from version 2026-02-06 on
// (azblob 1.6.4 "conditional headers on getTags/setTags"): the blob's
// ETag and Last-Modified conditions, named apart from the standard
// If-* headers.
func blobIfConds(h http.Header) (c cond.Conditions, err error) {
	m := http.Header{}
	if v := h.Values("X-Ms-Blob-If-Match"); len(v) > 0 {
		m[cond.HeaderIfMatch] = v
	}
	if v := h.Values("X-Ms-Blob-If-None-Match"); len(v) > 0 {
		m[http.CanonicalHeaderKey(cond.HeaderIfNoneMatch)] = v
	}
	if c, err = cond.Parse(m); err != nil {
		return c, err
	}
	if c.IfModifiedSince, err = dateHeader(h, "x-ms-blob-if-modified-since"); err != nil {
		return c, err
	}
	c.IfUnmodifiedSince, err = dateHeader(h, "x-ms-blob-if-unmodified-since")
	return c, err
}

package blob

import (
	"errors"
	"net/http"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
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
	if v := h.Values("x-ms-blob-if-match"); len(v) > 0 {
		m[cond.HeaderIfMatch] = v
	}
	if v := h.Values("x-ms-blob-if-none-match"); len(v) > 0 {
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

// checkBlobIf evaluates the conditions against a blob's ETag and
// Last-Modified: one not met is 412 ConditionNotMet, for Get Blob Tags as
// for Set Blob Tags (tags are not the content a 304 would revalidate).
func checkBlobIf(c cond.Conditions, etag string, mod time.Time) error {
	if err := c.CheckWrite(true, etag, mod); err != nil {
		if errors.Is(err, cond.ErrExists) {
			return azerr.New(azerr.ConditionNotMet)
		}
		return err
	}
	return nil
}

package blobrest

import (
	"net/http"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
)

// parseTierCondition reads the access-tier conditions of a request; a
// date that does not parse is 400 InvalidHeaderValue.
func parseTierCondition(h http.Header) (c blob.TierCondition, err error) {
	if c.ModifiedSince, err = dateHeader(h, "x-ms-access-tier-if-modified-since"); err != nil {
		return c, err
	}
	c.UnmodifiedSince, err = dateHeader(h, "x-ms-access-tier-if-unmodified-since")
	return c, err
}

// dateHeader reads header name as an HTTP date, to the second (nil when
// absent); one that does not parse is 400 InvalidHeaderValue naming it.
func dateHeader(h http.Header, name string) (*time.Time, error) {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return nil, nil
	}
	t, err := http.ParseTime(v)
	if err != nil {
		if t, err = time.Parse(time.RFC1123Z, v); err != nil {
			return nil, azerr.InvalidHeader(name, v)
		}
	}
	t = t.UTC().Truncate(time.Second)
	return &t, nil
}

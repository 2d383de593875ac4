package blob

import (
	"net/http"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// TierCondition is Delete Blob's access-tier conditions (version
// 2026-04-06, "Delete Blob", x-ms-access-tier-if-modified-since and
// x-ms-access-tier-if-unmodified-since): the delete goes ahead only if
// the blob's access tier was (or was not) changed since the time. A
// tier never changed with Set Blob Tier dates from the blob's creation.
// A condition not met is 412 AccessTierChangeTimeConditionNotMet
// (azblob's recorded TestBlobDeleteAccessTierIfModifiedSinceFalse).
type TierCondition struct {
	ModifiedSince   *time.Time
	UnmodifiedSince *time.Time
}

// check evaluates the conditions against b.
func (c TierCondition) check(b *blobRec) error {
	if c.ModifiedSince == nil && c.UnmodifiedSince == nil {
		return nil
	}
	at := b.Created
	if b.TierChanged != nil {
		at = *b.TierChanged
	}
	at = at.UTC().Truncate(time.Second)
	if c.ModifiedSince != nil && !at.After(*c.ModifiedSince) {
		return azerr.New(azerr.AccessTierChangeTimeConditionNotMet)
	}
	if c.UnmodifiedSince != nil && at.After(*c.UnmodifiedSince) {
		return azerr.New(azerr.AccessTierChangeTimeConditionNotMet)
	}
	return nil
}

// parseTierCondition reads the access-tier conditions of a request; a
// date that does not parse is 400 InvalidHeaderValue.
func parseTierCondition(h http.Header) (c TierCondition, err error) {
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

package blob

import (
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

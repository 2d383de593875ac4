package blob

import (
	"errors"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/cond"
)

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

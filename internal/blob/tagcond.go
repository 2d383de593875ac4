package blob

import (
	"errors"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
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

// checkNodeTags evaluates the x-ms-if-tags condition t of a write on
// the file n it writes or replaces (nil: none, which matches no
// condition: 412 ConditionNotMet, as for a missing blob), in the
// write's transaction, so a failure aborts the write: the replacing
// writes (Put Blob, Put Block List, Copy Blob) on the node ns.Create
// replaced, once it has applied the other conditions and the lease; Set
// Blob Metadata/Properties and Delete Blob on the live node they found
// before the namespace applies those.
func checkNodeTags(t TagCondition, n *ns.Node, container string) error {
	if t.expr == nil && t.err == nil {
		return nil
	}
	if n == nil {
		return t.check(nil, container)
	}
	return t.check(&blobRec{Tags: n.Tags}, container)
}

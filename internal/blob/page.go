package blob

import (
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// MaxPageWrite is the most bytes one Put Page writes (4 MiB), which the
// REST front end also checks before it reads a body; maxAppendBlock is
// the most one Append Block takes, maxAppends the most blocks an append
// blob takes.
const (
	MaxPageWrite   = 4 << 20
	maxAppendBlock = 100 << 20
	maxAppends     = 50000
)

// appendParts appends size bytes, held by parts (offsets from 0), to the
// append blob b, after Append Block's checks; it returns the offset they
// landed at.
func appendParts(tx kv.Tx, now time.Time, b *blobRec, appendPos, maxSize, size int64, parts []extent.Part) (int64, error) {
	if err := appendAllowed(b, appendPos, maxSize, size); err != nil {
		return 0, err
	}
	offset := b.Size
	added := make([]extent.Part, 0, len(parts))
	for _, p := range parts {
		p.Off += offset
		added = append(added, p)
	}
	b.Parts = append(b.Parts, added...)
	b.Size += size
	b.Appends++
	return offset, extent.AdjustRefs(tx, now, nil, added)
}

// appendAllowed is appendParts' checks: an append blob, not sealed,
// below the block count limit, at appendPos and within maxSize (-1:
// absent) after size more bytes.
func appendAllowed(b *blobRec, appendPos, maxSize, size int64) error {
	if b.Type != AppendBlob {
		return azerr.New(azerr.InvalidBlobType)
	}
	if b.Sealed {
		return azerr.New(azerr.BlobIsSealed)
	}
	if b.Appends >= maxAppends {
		return azerr.New(azerr.BlockCountExceedsLimit)
	}
	if appendPos >= 0 && appendPos != b.Size {
		return azerr.New(azerr.AppendPositionConditionNotMet)
	}
	if maxSize >= 0 && b.Size+size > maxSize {
		return azerr.New(azerr.MaxBlobSizeConditionNotMet)
	}
	return nil
}

package blob

import (
	"encoding/base64"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

const maxCommittedBlocks = 50000

// stageBlock records block idParam (rawID decoded) of size bytes, held by
// parts, as an uncommitted block of the blob ref, after Put Block's
// checks (leaseID: the lease the caller holds, "" for none).
// blockTarget is stageBlock's read-only part: the container exists and
// the blob, if any, takes blocks under leaseID (on a hierarchical
// account, hns non-nil, the file: stagePath).
func blockTarget(tx kv.Tx, hns *ns.Namespace, ref BlobRef, leaseID string, now time.Time) error {
	if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
		return err
	}
	if hns != nil {
		return stagePath(tx, hns, ref, leaseID, now)
	}
	b, err := findBlob(tx, ref.Account, ref.Container, ref.Blob, "")
	switch {
	case err != nil:
		return err
	case b != nil:
		return blockWritable(b.Type, b.Lease, b.Tier, leaseID, now)
	case leaseID != "":
		return azerr.New(azerr.LeaseNotPresentWithBlobOperation)
	}
	return nil
}

func (s *Service) stageBlock(tx kv.Tx, ref BlobRef, leaseID string, now time.Time, rawID []byte, idParam string, size int64, parts []extent.Part, cpk string) error {
	if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
		return err
	}
	if hns := s.nsOf(ref.Account); hns != nil {
		// A file of a hierarchical account: its node holds the lease
		// and the tier (stagePath).
		if err := stagePath(tx, hns, ref, leaseID, now); err != nil {
			return err
		}
	} else if b, err := findBlob(tx, ref.Account, ref.Container, ref.Blob, ""); err != nil {
		return err
	} else if b != nil {
		if err := blockWritable(b.Type, b.Lease, b.Tier, leaseID, now); err != nil {
			return err
		}
	} else if leaseID != "" {
		return azerr.New(azerr.LeaseNotPresentWithBlobOperation)
	} else if err := s.settleDeletedBase(tx, ref, now, BlockBlob); err != nil {
		// Put Block on a soft-deleted blob starts a new blob: the
		// soft-deleted one becomes a soft-deleted snapshot of it.
		return err
	}
	prefix := blocksPrefix(ref.Account, ref.Container, ref.Blob)
	var sameLen = true
	// All block ids of a blob have one length, checked here against the
	// uncommitted blocks only (Put Block reference: "If a block is uploaded
	// with a block ID of a different length than the block IDs for any
	// existing uncommitted blocks, the service returns error response code
	// 400"): a blob committed with ids of one length can be rewritten with
	// ids of another, and Put Block List still refuses a list that mixes
	// them. The first uncommitted block tells the length (all have one);
	// skip the sequence record.
	if err := tx.Scan(prefix, kv.PrefixEnd(prefix), 2, false, func(k, v []byte) bool {
		parts, _ := kv.Split(k)
		if len(parts) != 5 || parts[4] == "" {
			return true
		}
		sameLen = blockIDLen(parts[4]) == len(rawID)
		return false
	}); err != nil {
		return err
	}
	if !sameLen {
		return azerr.Newf(azerr.InvalidBlobOrBlock, "The specified block ID length differs from the uncommitted block IDs.")
	}
	// Upload order: a per-blob counter, so blocks staged within one
	// clock tick (or by processes with skewed clocks) keep their order.
	var last uncommitted
	if _, err := kv.GetJSON(tx, blockSeqKey(ref.Account, ref.Container, ref.Blob), &last); err != nil {
		return err
	}
	seq := max(last.Seq+1, now.UnixNano())
	if err := kv.PutJSON(tx, blockSeqKey(ref.Account, ref.Container, ref.Blob), &uncommitted{Seq: seq}); err != nil {
		return err
	}
	key := BlockKey(ref.Account, ref.Container, ref.Blob, idParam)
	var old uncommitted
	found, err := kv.GetJSON(tx, key, &old)
	if err != nil {
		return err
	}
	var oldParts []extent.Part
	if found {
		oldParts = old.Parts
	}
	if err := extent.AdjustRefs(tx, now, oldParts, parts); err != nil {
		return err
	}
	return kv.PutJSON(tx, key, &uncommitted{Size: size, Parts: parts, Seq: seq, CPK: cpk})
}

// blockSeqKey holds the last upload sequence number of a blob's
// uncommitted blocks. It lives among the blocks under the empty id (never a
// valid block id, and sorted first), so everything that drops the
// uncommitted blocks (Put Block List, Put Blob, Delete Blob, Delete
// Container) drops it too; readers of the blocks skip it.
func blockSeqKey(acct, c, name string) []byte { return BlockKey(acct, c, name, "") }

func blockIDLen(b64 string) int {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return -1
	}
	return len(raw)
}

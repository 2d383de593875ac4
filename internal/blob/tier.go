package blob

import (
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// parseTier returns the canonical spelling of a block blob tier.
func parseTier(v string) (string, bool) {
	for _, t := range [...]string{tierHot, tierCool, tierCold, tierArchive, tierSmart} {
		if strings.EqualFold(v, t) {
			return t, true
		}
	}
	return "", false
}

// CheckTier validates tier v ("": none) for a blob of type typ and
// returns its canonical spelling.
func CheckTier(v, typ string) (string, error) {
	if v == "" {
		return "", nil
	}
	if typ != BlockBlob {
		return "", azerr.New(azerr.AccessTierNotSupportedForBlobType)
	}
	t, ok := parseTier(v)
	if !ok {
		return "", azerr.New(azerr.InvalidBlobTier).With("HeaderName", "x-ms-access-tier").With("HeaderValue", v)
	}
	return t, nil
}

// notArchived fails operations that need the blob's data online.
func notArchived(b *blobRec) error {
	if b == nil {
		return nil
	}
	return onlineTier(b.Tier)
}

// onlineTier is 409 BlobArchived when tier is Archive: the one rule for
// blobs of flat accounts and files of hierarchical ones, whose node keeps
// the tier.
func onlineTier(tier string) error {
	if tier == tierArchive {
		return azerr.New(azerr.BlobArchived)
	}
	return nil
}

// PathOnline is onlineTier of the file n of a hierarchical account: the
// ns.CreateInput.Replace of every write that replaces a file, so that an
// archived file is not overwritten (409 BlobArchived), as Put Blob over
// an archived blob of a flat account is refused.
func PathOnline(n *ns.Node) error { return onlineTier(n.Tier) }

// rehydrates reports whether moving from tier from to tier to is a
// rehydration out of Archive (Set Blob Tier answers 202 Accepted).
func rehydrates(from, to string) bool { return from == tierArchive && to != tierArchive }

// blockWritable is Put Block's rule for the blob it stages to, one for
// both account kinds: the lease (lease.CheckWrite: an active lease must
// be named), the data online (onlineTier: 409 BlobArchived, as every
// write of an archived blob), and a block blob (409 InvalidBlobType).
func blockWritable(typ string, l lease.Lease, tier, leaseID string, now time.Time) error {
	if err := lease.CheckWrite(l, leaseID, lease.Blob, now); err != nil {
		return err
	}
	if err := onlineTier(tier); err != nil {
		return err
	}
	if typ != BlockBlob {
		return azerr.New(azerr.InvalidBlobType)
	}
	return nil
}

// tier returns a block blob's tier and whether it is the inferred default.
func (b *blobRec) tier() (string, bool) {
	if b.Tier == "" {
		return tierHot, true
	}
	return b.Tier, false
}

// smartTier is the underlying tier of a blob in tier t: Hot for Smart
// (see tierSmart), "" for any other tier.
func smartTier(t string) string {
	if t == tierSmart {
		return tierHot
	}
	return ""
}

// Access tiers of block blobs in a standard account. A block blob written
// without x-ms-access-tier is in the account's default tier, Hot, which
// Azure reports as inferred. Page and append blobs have no tier there.
//
// An archived blob is offline: its data cannot be read (Get Blob), nor its
// content, properties or metadata changed, nor the blob overwritten or
// snapshotted (409 BlobArchived); its properties can be read, its lease
// managed, and it can be deleted, re-tiered, or copied to an online tier.
// Azure takes hours to rehydrate it to an online tier (Set Blob Tier
// answers 202 Accepted); Cerulean, like Azurite, completes the
// rehydration at once, so the next read finds the blob online.
const (
	tierHot     = "Hot"
	tierCool    = "Cool"
	tierCold    = "Cold"
	tierArchive = "Archive"
	// tierSmart is Smart Tier (2026-06-06, azblob 1.8.0-beta.1 "Blob
	// Smart Tier"): the service moves the blob between the online tiers
	// by its access, reporting the tier it is in as x-ms-smart-access-tier.
	// Cerulean stores every tier alike, so a Smart blob is always in Hot
	// underneath.
	tierSmart = "Smart"
)

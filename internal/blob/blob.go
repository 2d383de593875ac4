package blob

import (
	"context"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

const (
	maxPutBlob  = 5000 << 20
	maxPutBlock = 4000 << 20
)

// loadBlobWORM is loadBlob that also returns the container-level WORM
// settings of the blob's container (containerworm.go), taken from the
// container record findBlob reads anyway.
func loadBlobWORM(tx kv.Tx, ref BlobRef) (*blobRec, *containerWORM, error) {
	if ref.VersionID == "" {
		b, crec, err := findBlobIn(tx, ref.Account, ref.Container, ref.Blob, ref.Snapshot)
		if err != nil {
			return nil, nil, err
		}
		if b != nil {
			w, err := wormFrom(crec)
			return b, w, err
		}
	}
	// A version, or nothing: loadBlob finds the one or says what is
	// missing.
	b, err := loadBlob(tx, ref)
	if err != nil {
		return nil, nil, err
	}
	w, err := wormOf(tx, ref.Account, ref.Container)
	return b, w, err
}

// beginReplace starts a write that creates or replaces the base blob: the
// container must exist, then the write rules hold against the current
// blob, which it returns (nil when there is none). createOnly is a caller
// allowed to create but not to overwrite (a SAS with Create and without
// Write permission): an existing blob is then 403
// AuthorizationPermissionMismatch.
func beginReplace(tx kv.Tx, ref BlobRef, a Access, createOnly bool, now time.Time) (*blobRec, error) {
	old, _, err := beginReplaceIn(tx, ref, a, createOnly, now)
	return old, err
}

// beginReplaceIn is beginReplace that also returns the container record
// it read.
func beginReplaceIn(tx kv.Tx, ref BlobRef, a Access, createOnly bool, now time.Time) (*blobRec, *container, error) {
	// The replace reads these independent keys (beforeOverwrite reads the
	// soft-deleted base or the retention policy) and, in both callers, the
	// blob's uncommitted blocks (Put Blob discards them, Put Block List
	// commits from them): one round trip on a backend where reads are
	// remote.
	if kv.Prefetches(tx) { // the keys are built only for a store that reads ahead
		if err := kv.Prefetch(tx, ContainerKey(ref.Account, ref.Container), BlobKey(ref.Account, ref.Container, ref.Blob, ""),
			deletedKey(ref.Account, ref.Container, ref.Blob, ""), servicePropsKey(ref.Account)); err != nil {
			return nil, nil, err
		}
		blocks := blocksPrefix(ref.Account, ref.Container, ref.Blob)
		if err := kv.PrefetchRanges(tx, 0, kv.Range{Start: blocks, End: kv.PrefixEnd(blocks)}); err != nil {
			return nil, nil, err
		}
	}
	c, err := loadContainer(tx, ref.Account, ref.Container)
	if err != nil {
		return nil, nil, err
	}
	// The container's record was just read: findBlob's check of it
	// would read it again.
	old, err := loadBlobRec(tx, ref.Account, ref.Container, ref.Blob, "")
	if err != nil {
		return nil, nil, err
	}
	if old != nil && createOnly {
		return nil, nil, azerr.New(azerr.AuthorizationPermissionMismatch)
	}
	if err := a.checkWrite(old, ref.Container, now); err != nil {
		return nil, nil, err
	}
	// Overwriting a blob under a container-level WORM policy or legal
	// hold (containerworm.go).
	if err := c.WORM.refuse(old, wormWrite, now); err != nil {
		return nil, nil, err
	}
	return old, c, notArchived(old)
}

// replaces stamps b as the new version of old (nil: a new blob): a new
// ETag and Last-Modified, the original creation time, and old's lease
// (kept while active, as Azure keeps a lease across an overwrite).
func (b *blobRec) replaces(old *blobRec, now time.Time) {
	b.Created, b.Modified, b.ETag = now, now, newETag(now)
	if b.Tier != "" && b.TierChanged == nil {
		// A tier given on the write is set now: Get Blob Properties
		// reports x-ms-access-tier-change-time for it (azblob's recorded
		// TestBlobDeleteAccessTierIfModifiedSinceTrue relies on it).
		t := now
		b.TierChanged = &t
	}
	if old != nil {
		b.Created = old.Created
		b.Lease = lease.OnWrite(old.Lease, now)
	}
}

// replaceBlob writes rec as the base blob, creating it or replacing the
// current one (Put Blob, Put Blob From URL): the write rules, the old
// content's references released (or kept by a soft-deleted snapshot),
// the uncommitted blocks dropped. It returns rec stamped with its new
// ETag and times; rec itself is left as it was, so the transaction may
// run again. The data items of rec.Parts must be written already.
func (s *Service) replaceBlob(tx kv.Tx, ref BlobRef, a Access, createOnly bool, now time.Time, rec *blobRec) (*blobRec, error) {
	return s.replaceBlobIf(tx, ref, a, createOnly, now, rec, nil)
}

// replaceBlobIf is replaceBlob with a further check of the blob replaced
// (nil: none), after the write rules.
func (s *Service) replaceBlobIf(tx kv.Tx, ref BlobRef, a Access, createOnly bool, now time.Time, rec *blobRec, check func(old *blobRec) error) (*blobRec, error) {
	old, c, err := beginReplaceIn(tx, ref, a, createOnly, now)
	if err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(old); err != nil {
			return nil, err
		}
	}
	nb := *rec
	nb.replaces(old, now)
	if nb.Imm == nil {
		nb.Imm = s.inheritedPolicy(ref.Account, c, now) // immutability.go
	}
	oldParts, err := s.beforeOverwrite(tx, ref, now, old, &nb)
	if err != nil {
		return nil, err
	}
	if err := extent.AdjustRefs(tx, now, oldParts, nb.Parts); err != nil {
		return nil, err
	}
	if err := s.dropUncommitted(tx, ref, now); err != nil {
		return nil, err
	}
	return &nb, kv.PutJSON(tx, BlobKey(ref.Account, ref.Container, ref.Blob, ""), &nb)
}

// dropUncommitted discards the blob's uncommitted blocks.
func (s *Service) dropUncommitted(tx kv.Tx, ref BlobRef, now time.Time) error {
	prefix := blocksPrefix(ref.Account, ref.Container, ref.Blob)
	// What the scan finds, in one allocation (the closure escapes into
	// Scan; most blobs have no uncommitted blocks).
	f := &struct {
		keys  [][]byte
		parts []extent.Part
		err   error
	}{}
	err := tx.Scan(prefix, kv.PrefixEnd(prefix), 0, false, func(k, v []byte) bool {
		var u uncommitted
		// A record that does not decode cannot be deleted: its chunk
		// references would never be released.
		if f.err = kv.DecodeJSON(k, v, &u); f.err != nil {
			return false
		}
		f.parts = append(f.parts, u.Parts...)
		f.keys = append(f.keys, append([]byte(nil), k...))
		return true
	})
	if err == nil {
		err = f.err
	}
	if err != nil || len(f.keys) == 0 {
		return err
	}
	parts := f.parts
	for _, k := range f.keys {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	return extent.AdjustRefs(tx, now, parts, nil)
}

// updateBlob runs a read-modify-write of the base blob with the write
// rules applied (op names the container-level WORM rule that applies:
// containerworm.go); fn edits the record in place.
func (s *Service) updateBlob(ctx context.Context, ref BlobRef, a Access, op wormOp, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error) {
	var out *blobRec
	err := s.store.Update(ctx, func(tx kv.Tx) (err error) {
		out, err = updateBlobTx(tx, ref, a, op, now, fn)
		return err
	})
	return out, err
}

// updateBlobTx is updateBlob's transaction body.
func updateBlobTx(tx kv.Tx, ref BlobRef, a Access, op wormOp, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error) {
	b, w, err := loadBlobWORM(tx, ref)
	if err != nil {
		return nil, err
	}
	if err := a.checkUpdate(b, ref.Container, now); err != nil {
		return nil, err
	}
	if err := w.refuse(b, op, now); err != nil {
		return nil, err
	}
	if err := fn(tx, b); err != nil {
		return nil, err
	}
	b.Modified, b.ETag = now, newETag(now)
	b.Lease = lease.OnWrite(b.Lease, now)
	return b, kv.PutJSON(tx, BlobKey(ref.Account, ref.Container, ref.Blob, ""), b)
}

// blockListTarget is Put Block List's write rules on a flat account
// (beginReplace) and the blob it replaces, if any, a block blob.
func blockListTarget(tx kv.Tx, ref BlobRef, acc Access, createOnly bool, now time.Time) (*blobRec, *container, error) {
	old, c, err := beginReplaceIn(tx, ref, acc, createOnly, now)
	if err != nil {
		return nil, nil, err
	}
	if old != nil && old.Type != BlockBlob {
		return nil, nil, azerr.New(azerr.InvalidBlobType)
	}
	return old, c, nil
}

// inheritedPolicy is the policy a version written at now into c gets
// when the write sets none of its own: the container's default
// version-level policy, else the account's (nil: none; see
// containerWORM.defaultPolicy).
func (s *Service) inheritedPolicy(acct string, c *container, now time.Time) *immPolicy {
	if !s.immutabilityOn(acct) {
		return nil
	}
	if c != nil {
		if p := c.WORM.defaultPolicy(now); p != nil {
			return p
		}
	}
	if s.immutabilityDefault == nil {
		return nil
	}
	d := s.immutabilityDefault(acct)
	if d == nil || d.Days <= 0 {
		return nil
	}
	mode := PolicyUnlocked
	if d.Locked {
		mode = PolicyLocked
	}
	return &immPolicy{Until: now.Add(time.Duration(d.Days) * 24 * time.Hour), Mode: mode}
}

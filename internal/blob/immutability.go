package blob

import (
	"context"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Version-level immutability (Azure's "Version-level WORM policies for
// immutable blob data" and "Configure immutability policies for blob
// versions"), for containers with version-level immutability support:
// every container of an account with blob versioning on whose
// immutability is on (SetImmutability; Azure enables it on the
// management plane only, at account or container creation).
//
//   - Each version (the current one, a previous one by versionid, or a
//     snapshot) may carry one time-based retention policy (blobRec.Imm:
//     until-date and mode) and one legal hold (blobRec.Hold), set by Set
//     Blob Immutability Policy and Set Blob Legal Hold or on the write
//     that creates it (Put Blob, Put Block List, Copy Blob, Put Blob From
//     URL with x-ms-immutability-policy-until-date/-mode and
//     x-ms-legal-hold; azblob's UploadBlobFromURL does not send them). A
//     copy or a snapshot does not take its source's.
//   - An Unlocked policy may be shortened, extended, locked or deleted; a
//     Locked one only extended (nextPolicy): shortening or unlocking it is
//     409 BlobImmutableDueToPolicy, deleting it 409
//     ImmutabilityPolicyDeleteOnLockedPolicy.
//   - While a version's policy is unexpired (on the injected clock) or
//     its legal hold is set, Delete Blob of it is refused (409
//     BlobImmutableDueToLegalHold for a hold, else
//     BlobImmutableDueToPolicy); Set Blob Metadata and Put Page stay
//     refused even after the policy expired, as the scenarios table
//     says. Put Blob, Put Block List and Copy Blob onto the blob are
//     allowed: they make a new current version, which has no policy,
//     and the protected one becomes a previous version with its policy
//     ("Set Blob Immutability Policy", remarks).
//   - Delete Container of a container with support is refused (409
//     ContainerImmutableStorageWithVersioningEnabled) while it holds any
//     blob or version: "the account or container must be empty to be
//     deleted".
//   - A container without support refuses the policy and hold operations
//     and the headers on writes (400 InvalidOperation).
//
// Nothing of this costs a write without the headers a read: the
// policy and hold live in the blob's record, read anyway.

// Immutability policy modes as requests give them
// (x-ms-immutability-policy-mode); reads answer them in lower case.
const (
	PolicyUnlocked = "Unlocked"
	PolicyLocked   = "Locked"
)

// active reports whether the policy still protects at now.
func (p *immPolicy) active(now time.Time) bool { return p != nil && now.Before(p.Until) }

// ParsePolicyMode returns the mode named by x-ms-immutability-policy-mode
// (any case; "" is Unlocked), or false.
func ParsePolicyMode(s string) (string, bool) {
	switch strings.ToLower(s) {
	case "", "unlocked":
		return PolicyUnlocked, true
	case "locked":
		return PolicyLocked, true
	}
	return "", false
}

// nextPolicy is the state machine of Set Blob Immutability Policy: the
// policy that replaces cur when until and mode are set at now. until
// must be in the future ("Past times are not valid"). A Locked policy
// stays Locked and may only be extended (the same date is no change).
func nextPolicy(cur *immPolicy, until time.Time, mode string, now time.Time) (*immPolicy, error) {
	if !until.After(now) {
		return nil, azerr.Newf(azerr.InvalidHeaderValue, "The immutability policy until-date must be in the future.").
			With("HeaderName", "x-ms-immutability-policy-until-date")
	}
	if cur != nil && cur.Mode == PolicyLocked {
		if mode != PolicyLocked {
			return nil, azerr.Newf(azerr.BlobImmutableDueToPolicy, "A locked immutability policy cannot be unlocked.")
		}
		if until.Before(cur.Until) {
			return nil, azerr.Newf(azerr.BlobImmutableDueToPolicy, "A locked immutability policy can only be extended.")
		}
	}
	return &immPolicy{Until: until.UTC(), Mode: mode}, nil
}

// deletePolicy is Delete Blob Immutability Policy's rule: a Locked
// policy stays.
func deletePolicy(cur *immPolicy) error {
	if cur != nil && cur.Mode == PolicyLocked {
		return azerr.New(azerr.ImmutabilityPolicyDeleteOnLockedPolicy)
	}
	return nil
}

// deleteProtected returns the refusal of deleting b at now: a legal
// hold, or an unexpired policy.
func (b *blobRec) deleteProtected(now time.Time) error {
	switch {
	case b.Hold:
		return azerr.New(azerr.BlobImmutableDueToLegalHold)
	case b.Imm.active(now):
		return azerr.New(azerr.BlobImmutableDueToPolicy)
	}
	return nil
}

// writeProtected returns the refusal of Set Blob Metadata or Put Page on
// b: a legal hold, or any policy, expired or not.
func (b *blobRec) writeProtected() error {
	switch {
	case b.Hold:
		return azerr.New(azerr.BlobImmutableDueToLegalHold)
	case b.Imm != nil:
		return azerr.New(azerr.BlobImmutableDueToPolicy)
	}
	return nil
}

// SetImmutability says which accounts' containers have version-level
// immutability support (nil: none). Only accounts with versioning on
// have it (immutabilityOn).
func (s *Service) SetImmutability(on func(account string) bool) { s.immutability = on }

// SetImmutabilityDefault gives the accounts with version-level
// immutability support their default policy (nil, or nil from it:
// none). "The object-level immutability policy has higher precedence
// than the container-level immutability policy, which has a higher
// precedence than the account-level immutability policy" (ARM's
// ImmutableStorageAccount.immutabilityPolicy).
func (s *Service) SetImmutabilityDefault(p func(account string) *DefaultPolicy) {
	s.immutabilityDefault = p
}

// immutabilityOn reports whether acct's containers support
// version-level immutability.
func (s *Service) immutabilityOn(acct string) bool {
	return s.immutability != nil && s.immutability(acct) && s.versioningOn(acct)
}

// ImmutabilityOn reports whether account's containers support
// version-level immutability (Get Container Properties'
// x-ms-immutable-storage-with-versioning-enabled).
func (s *Service) ImmutabilityOn(account string) bool { return s.immutabilityOn(account) }

// errNoImmutability is the refusal of an immutability operation in a
// container without version-level immutability support.
func errNoImmutability() error {
	return azerr.Newf(azerr.InvalidOperation, "The container does not have version-level immutability support enabled.")
}

// none reports whether im sets nothing.
func (im *Immutability) none() bool { return im == nil || (im.Until.IsZero() && !im.Hold) }

// checkWriteImmutability refuses im where acct has no support and an
// until-date in the past; it returns the policy to store.
func (s *Service) checkWriteImmutability(acct string, im *Immutability, now time.Time) (*immPolicy, bool, error) {
	if im.none() {
		return nil, false, nil
	}
	if !s.immutabilityOn(acct) {
		return nil, false, errNoImmutability()
	}
	var p *immPolicy
	if !im.Until.IsZero() {
		var err error
		if p, err = nextPolicy(nil, im.Until, im.Mode, now); err != nil {
			return nil, false, err
		}
	}
	return p, im.Hold, nil
}

// SetImmutabilityPolicyInput is Set Blob Immutability Policy of a blob,
// snapshot or version: Until and Mode (PolicyUnlocked or PolicyLocked),
// under If-Unmodified-Since (Cond).
type SetImmutabilityPolicyInput struct {
	Call
	Ref   BlobRef
	Until time.Time
	Mode  string
	// IfUnmodifiedSince is the only condition the operation takes
	// (zero: none).
	IfUnmodifiedSince time.Time
}

// ImmutabilityPolicyOutput is the policy set.
type ImmutabilityPolicyOutput struct {
	Until time.Time
	Mode  string
}

// SetImmutabilityPolicy is Set Blob Immutability Policy
// (https://learn.microsoft.com/en-us/rest/api/storageservices/set-blob-immutability-policy):
// it changes neither the ETag nor Last-Modified.
func (s *Service) SetImmutabilityPolicy(ctx context.Context, in SetImmutabilityPolicyInput) (ImmutabilityPolicyOutput, error) {
	now := s.now(in.Call)
	var out ImmutabilityPolicyOutput
	err := s.editImmutability(ctx, in.Ref, now, func(b *blobRec) error {
		if !in.IfUnmodifiedSince.IsZero() && b.Modified.Truncate(time.Second).After(in.IfUnmodifiedSince) {
			return azerr.New(azerr.ConditionNotMet)
		}
		p, err := nextPolicy(b.Imm, in.Until, in.Mode, now)
		if err != nil {
			return err
		}
		b.Imm = p
		out = ImmutabilityPolicyOutput{Until: p.Until, Mode: p.Mode}
		return nil
	})
	return out, err
}

// DeleteImmutabilityPolicyInput is Delete Blob Immutability Policy.
type DeleteImmutabilityPolicyInput struct {
	Call
	Ref BlobRef
}

// DeleteImmutabilityPolicy is Delete Blob Immutability Policy
// (https://learn.microsoft.com/en-us/rest/api/storageservices/delete-blob-immutability-policy).
func (s *Service) DeleteImmutabilityPolicy(ctx context.Context, in DeleteImmutabilityPolicyInput) error {
	return s.editImmutability(ctx, in.Ref, s.now(in.Call), func(b *blobRec) error {
		if err := deletePolicy(b.Imm); err != nil {
			return err
		}
		b.Imm = nil
		return nil
	})
}

// SetLegalHoldInput is Set Blob Legal Hold.
type SetLegalHoldInput struct {
	Call
	Ref  BlobRef
	Hold bool
}

// SetLegalHold is Set Blob Legal Hold
// (https://learn.microsoft.com/en-us/rest/api/storageservices/set-blob-legal-hold).
func (s *Service) SetLegalHold(ctx context.Context, in SetLegalHoldInput) error {
	return s.editImmutability(ctx, in.Ref, s.now(in.Call), func(b *blobRec) error {
		b.Hold = in.Hold
		return nil
	})
}

// editImmutability applies fn to the record ref names (base blob,
// snapshot or version) in the container's account with support.
func (s *Service) editImmutability(ctx context.Context, ref BlobRef, now time.Time, fn func(b *blobRec) error) error {
	if !s.immutabilityOn(ref.Account) {
		return s.store.View(ctx, func(tx kv.Tx) error {
			if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
				return err
			}
			return errNoImmutability()
		})
	}
	return s.store.Update(ctx, func(tx kv.Tx) error {
		b, err := loadBlob(tx, ref)
		if err != nil {
			return err
		}
		if err := fn(b); err != nil {
			return err
		}
		return putRec(tx, ref, b)
	})
}

// containerHoldsBlobs reports whether the container has a blob, a
// snapshot or a version, soft-deleted ones included (Delete Container's
// rule with immutability support).
func containerHoldsBlobs(tx kv.Tx, acct, c string) (bool, error) {
	found := false
	for _, p := range [][]byte{blobsPrefix(acct, c), containerVersionsPrefix(acct, c), deletedPrefix(acct, c)} {
		if err := tx.Scan(p, kv.PrefixEnd(p), 1, false, func(_, _ []byte) bool {
			found = true
			return false
		}); err != nil || found {
			return found, err
		}
	}
	return false, nil
}

// versioningOn reports whether acct keeps versions.
func (s *Service) versioningOn(acct string) bool {
	return s.versioning != nil && s.versioning(acct) && s.nsOf(acct) == nil
}

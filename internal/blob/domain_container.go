package blob

import (
	"context"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// CreateContainerInput is Create Container. PublicAccess is "",
// "container" or "blob".
type CreateContainerInput struct {
	Call
	Ref          ContainerRef
	Metadata     map[string]string
	PublicAccess string
}

// CreateContainerOutput is the container created.
type CreateContainerOutput struct {
	ETag         string
	LastModified time.Time
}

// CreateContainer is Create Container
// (https://learn.microsoft.com/en-us/rest/api/storageservices/create-container):
// 409 ContainerAlreadyExists when the name is taken.
func (s *Service) CreateContainer(ctx context.Context, in CreateContainerInput) (CreateContainerOutput, error) {
	if err := wire.ReservedContainer(in.Ref.Container); err != nil {
		return CreateContainerOutput{}, err
	}
	now := s.now(in.Call)
	ref, meta, access := in.Ref, in.Metadata, in.PublicAccess
	var out CreateContainerOutput
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		key := ContainerKey(ref.Account, ref.Container)
		if _, err := tx.Get(key); err == nil {
			return azerr.New(azerr.ContainerAlreadyExists)
		} else if err != kv.ErrNotFound {
			return err
		}
		// Delete Container, Remarks: while a container is being
		// deleted, creating one of the same name fails with 409.
		if busy, err := containerBeingDeleted(tx, ref.Account, ref.Container); err != nil {
			return err
		} else if busy {
			return azerr.New(azerr.ContainerBeingDeleted)
		}
		// A soft-deleted container of the name still moving off it.
		if busy, err := containerMoving(tx, ref.Account, ref.Container); err != nil {
			return err
		} else if busy {
			return azerr.New(azerr.ContainerBeingDeleted)
		}
		c := container{Created: now, Modified: now, ETag: newETag(now), Meta: meta, PublicAccess: access}
		out = CreateContainerOutput{ETag: c.ETag, LastModified: c.Modified}
		if err := s.layoutOf(ref.Account).containerCreated(tx, ref); err != nil {
			return err
		}
		return kv.PutJSON(tx, key, &c)
	})
	if err != nil {
		return CreateContainerOutput{}, err
	}
	return out, nil
}

// GetContainerPropertiesInput is Get Container Properties (also Get
// Container Metadata). LeaseID, when set, must be the container's active
// lease.
type GetContainerPropertiesInput struct {
	Call
	Ref     ContainerRef
	LeaseID string
}

// ContainerProperties are what Get Container Properties reports.
type ContainerProperties struct {
	ETag         string
	LastModified time.Time
	Metadata     map[string]string
	Lease        lease.Effective // at the time of the read
	PublicAccess string          // "", "container" or "blob"
	// HasImmutabilityPolicy and HasLegalHold are the container-level
	// WORM settings (containerworm.go).
	HasImmutabilityPolicy bool
	HasLegalHold          bool
	// Features Cerulean does not have, reported as Azure reports a
	// container without them.
	DefaultEncryptionScope      string
	DenyEncryptionScopeOverride bool
	// ImmutableStorageWithVersioning is version-level immutability
	// support (immutability.go).
	ImmutableStorageWithVersioning bool
}

// GetContainerProperties is Get Container Properties
// (https://learn.microsoft.com/en-us/rest/api/storageservices/get-container-properties).
func (s *Service) GetContainerProperties(ctx context.Context, in GetContainerPropertiesInput) (ContainerProperties, error) {
	now := s.now(in.Call)
	var c *container
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		c, err = s.loadContainerOrFeed(tx, in.Ref.Account, in.Ref.Container)
		return err
	})
	if err != nil {
		return ContainerProperties{}, err
	}
	if err := lease.CheckRead(c.Lease, in.LeaseID, lease.Container, now); err != nil {
		return ContainerProperties{}, err
	}
	return ContainerProperties{
		ETag: c.ETag, LastModified: c.Modified, Metadata: c.Meta, Lease: c.Lease.Effective(now), PublicAccess: c.PublicAccess,
		DefaultEncryptionScope: "$account-encryption-key", ImmutableStorageWithVersioning: s.immutabilityOn(in.Ref.Account),
		HasImmutabilityPolicy: c.WORM != nil && c.WORM.Policy != nil, HasLegalHold: c.WORM.holding(),
	}, nil
}

// DeleteContainerInput is Delete Container: Cond (of which Azure takes
// only the date conditions) and LeaseID, which must be the container's
// active lease when it has one.
type DeleteContainerInput struct {
	Call
	Ref     ContainerRef
	Cond    cond.Conditions
	LeaseID string
	// ControlPlane is the delete of the management plane (the WORM admin
	// endpoint, containerworm.go), which deletes an empty container with
	// a Locked policy that Delete Container refuses.
	ControlPlane bool
}

// DeleteContainer is Delete Container
// (https://learn.microsoft.com/en-us/rest/api/storageservices/delete-container):
// the container record is replaced by a tombstone in one transaction, so
// the request costs the same whatever the container holds; its blobs,
// snapshots and uncommitted blocks (soft-deleted ones included: Azure
// does not recover blobs of a deleted container) are reclaimed by one
// bounded step before the answer when that is all (reclaim.Inline), in
// the background otherwise (container_reclaim.go). With a container
// delete retention (SetContainerSoftDelete) the container is kept as a
// deleted version instead (domain_containersd.go).
func (s *Service) DeleteContainer(ctx context.Context, in DeleteContainerInput) error {
	now := s.now(in.Call)
	ref, conds, leaseID := in.Ref, in.Cond, in.LeaseID
	days := s.containerRetention(ref.Account)
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		c, err := loadContainer(tx, ref.Account, ref.Container)
		if err != nil {
			return err
		}
		if err := conds.CheckWrite(true, c.ETag, c.Modified); err != nil {
			return err
		}
		if err := lease.CheckWrite(c.Lease, leaseID, lease.Container, now); err != nil {
			return err
		}
		// Container-level WORM settings (containerworm.go).
		if err := s.containerDeleteRefusal(tx, ref, c.WORM, in.ControlPlane); err != nil {
			return err
		}
		if s.immutabilityOn(ref.Account) {
			// Version-level immutability support: the container must be
			// empty (immutability.go), whether or not it would be kept.
			held, err := containerHoldsBlobs(tx, ref.Account, ref.Container)
			if err != nil {
				return err
			}
			if held {
				return azerr.New(azerr.ContainerImmutableStorageWithVersioningEnabled)
			}
		}
		if days > 0 {
			return s.softDeleteContainer(tx, ref.Account, ref.Container, c, days, now)
		}
		if err := tx.Delete(ContainerKey(ref.Account, ref.Container)); err != nil {
			return err
		}
		if err := s.layoutOf(ref.Account).containerDeleted(tx, ref); err != nil {
			return err
		}
		return reclaim.Mark(tx, nil, reclaimKindContainer, ref.Account, ref.Container)
	})
	if err != nil {
		return err
	}
	if days > 0 {
		// A small container moves to its alias before the answer; the
		// Reclaimer's sweep moves the rest.
		if err := s.finishContainerMove(ctx, ref.Account, ref.Container); err != nil {
			s.log.Warn("blob: moving a soft-deleted container", "account", ref.Account, "container", ref.Container, "err", err)
		}
		return nil
	}
	// A small container is reclaimed before the answer (reclaim.Inline);
	// the rest in the background.
	gone, err := s.reclaim.Finish(context.WithoutCancel(ctx), reclaimKindContainer, ref.Account, ref.Container)
	if err != nil {
		s.log.Warn("blob: reclaiming a deleted container", "account", ref.Account, "container", ref.Container, "err", err)
	}
	if !gone {
		s.reclaim.Kick()
	}
	return nil
}

// updateContainer is the read-modify-write of a container record under
// its write conditions; fn edits the record (and applies any lease rule).
// With touch the write gets a new ETag and Last-Modified (lease actions
// do not).
func (s *Service) updateContainer(ctx context.Context, ref ContainerRef, conds cond.Conditions, now time.Time, touch bool, fn func(c *container) error) (*container, error) {
	var c *container
	err := s.store.Update(ctx, func(tx kv.Tx) (err error) {
		c, err = loadContainer(tx, ref.Account, ref.Container)
		if err != nil {
			return err
		}
		if err := conds.CheckWrite(true, c.ETag, c.Modified); err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
		if touch {
			c.Modified, c.ETag = now, newETag(now)
		}
		return kv.PutJSON(tx, ContainerKey(ref.Account, ref.Container), c)
	})
	return c, err
}

// ContainerWriteOutput is a container after a write.
type ContainerWriteOutput struct {
	ETag         string
	LastModified time.Time
}

// SetContainerMetadataInput is Set Container Metadata: Metadata replaces
// the container's. LeaseID, when set, must be the container's active
// lease; Cond are the conditions (Azure takes If-Modified-Since only).
type SetContainerMetadataInput struct {
	Call
	Ref      ContainerRef
	Cond     cond.Conditions
	LeaseID  string
	Metadata map[string]string
}

// SetContainerMetadata is Set Container Metadata
// (https://learn.microsoft.com/en-us/rest/api/storageservices/set-container-metadata).
func (s *Service) SetContainerMetadata(ctx context.Context, in SetContainerMetadataInput) (ContainerWriteOutput, error) {
	now := s.now(in.Call)
	meta, leaseID := in.Metadata, in.LeaseID
	c, err := s.updateContainer(ctx, in.Ref, in.Cond, now, true, func(c *container) error {
		c.Meta = meta
		return lease.CheckRead(c.Lease, leaseID, lease.Container, now)
	})
	if err != nil {
		return ContainerWriteOutput{}, err
	}
	return ContainerWriteOutput{ETag: c.ETag, LastModified: c.Modified}, nil
}

// GetContainerACLInput is Get Container ACL. LeaseID, when set, must be
// the container's active lease.
type GetContainerACLInput struct {
	Call
	Ref     ContainerRef
	LeaseID string
}

// ContainerACL is a container's public access ("", "container" or
// "blob") and stored access policies.
type ContainerACL struct {
	ETag         string
	LastModified time.Time
	PublicAccess string
	Policies     []policy.Stored
}

// GetContainerACL is Get Container ACL
// (https://learn.microsoft.com/en-us/rest/api/storageservices/get-container-acl).
func (s *Service) GetContainerACL(ctx context.Context, in GetContainerACLInput) (ContainerACL, error) {
	now := s.now(in.Call)
	ref := in.Ref
	var c *container
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		c, err = loadContainer(tx, ref.Account, ref.Container)
		return err
	})
	if err != nil {
		return ContainerACL{}, err
	}
	if err := lease.CheckRead(c.Lease, in.LeaseID, lease.Container, now); err != nil {
		return ContainerACL{}, err
	}
	return ContainerACL{ETag: c.ETag, LastModified: c.Modified, PublicAccess: c.PublicAccess, Policies: c.ACL}, nil
}

// SetContainerACLInput is Set Container ACL: the public access and the
// stored access policies (at most five, validated by the caller) replace
// the container's.
type SetContainerACLInput struct {
	Call
	Ref          ContainerRef
	Cond         cond.Conditions
	LeaseID      string
	PublicAccess string
	Policies     []policy.Stored
}

// SetContainerACL is Set Container ACL
// (https://learn.microsoft.com/en-us/rest/api/storageservices/set-container-acl).
func (s *Service) SetContainerACL(ctx context.Context, in SetContainerACLInput) (ContainerWriteOutput, error) {
	now := s.now(in.Call)
	policies, access, leaseID := in.Policies, in.PublicAccess, in.LeaseID
	c, err := s.updateContainer(ctx, in.Ref, in.Cond, now, true, func(c *container) error {
		c.ACL, c.PublicAccess = policies, access
		return lease.CheckRead(c.Lease, leaseID, lease.Container, now)
	})
	if err != nil {
		return ContainerWriteOutput{}, err
	}
	return ContainerWriteOutput{ETag: c.ETag, LastModified: c.Modified}, nil
}

// LeaseContainerInput is Lease Container: one lease action under Cond.
type LeaseContainerInput struct {
	Call
	Ref     ContainerRef
	Cond    cond.Conditions
	Request lease.Request
}

// LeaseContainerOutput is the outcome of the lease action and the
// container's ETag and Last-Modified, which a lease action does not
// change.
type LeaseContainerOutput struct {
	ETag         string
	LastModified time.Time
	Result       lease.Result
}

// LeaseContainer is Lease Container
// (https://learn.microsoft.com/en-us/rest/api/storageservices/lease-container).
func (s *Service) LeaseContainer(ctx context.Context, in LeaseContainerInput) (LeaseContainerOutput, error) {
	now := s.now(in.Call)
	lr := in.Request
	var res lease.Result
	// A lease action is not a write: ETag and Last-Modified stay.
	c, err := s.updateContainer(ctx, in.Ref, in.Cond, now, false, func(c *container) (err error) {
		res, err = lease.Apply(c.Lease, lr, lease.Container, now)
		c.Lease = res.Lease
		return err
	})
	if err != nil {
		return LeaseContainerOutput{}, err
	}
	return LeaseContainerOutput{ETag: c.ETag, LastModified: c.Modified, Result: res}, nil
}

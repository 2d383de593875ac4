package blob

import (
	"context"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// ContainerRef addresses a container in an account.
type ContainerRef struct {
	Account   string
	Container string
}

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
	now := s.now(in.Call)
	ref, meta, access := in.Ref, in.Metadata, in.PublicAccess
	var out CreateContainerOutput
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		key := containerKey(ref.Account, ref.Container)
		if _, err := tx.Get(key); err == nil {
			return azerr.New(azerr.ContainerAlreadyExists)
		} else if err != kv.ErrNotFound {
			return err
		}
		c := container{Created: now, Modified: now, ETag: newETag(now), Meta: meta, PublicAccess: access}
		out = CreateContainerOutput{ETag: c.ETag, LastModified: c.Modified}
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
	// Features Cerulean does not have, reported as Azure reports a
	// container without them.
	HasImmutabilityPolicy       bool
	HasLegalHold                bool
	DefaultEncryptionScope      string
	DenyEncryptionScopeOverride bool
}

// GetContainerProperties is Get Container Properties
// (https://learn.microsoft.com/en-us/rest/api/storageservices/get-container-properties).
func (s *Service) GetContainerProperties(ctx context.Context, in GetContainerPropertiesInput) (ContainerProperties, error) {
	now := s.now(in.Call)
	var c *container
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		c, err = loadContainer(tx, in.Ref.Account, in.Ref.Container)
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
		DefaultEncryptionScope: "$account-encryption-key",
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
}

// DeleteContainer is Delete Container
// (https://learn.microsoft.com/en-us/rest/api/storageservices/delete-container):
// the container and, in the same transaction, every blob, snapshot and
// uncommitted block in it.
func (s *Service) DeleteContainer(ctx context.Context, in DeleteContainerInput) error {
	now := s.now(in.Call)
	ref, conds, leaseID := in.Ref, in.Cond, in.LeaseID
	return s.store.Update(ctx, func(tx kv.Tx) error {
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
		if err := tx.Delete(containerKey(ref.Account, ref.Container)); err != nil {
			return err
		}
		return s.deleteAllBlobs(tx, ref, now)
	})
}

package blob

import (
	"context"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// LeaseState is a blob's lease as an operator sees it (the web console):
// beside what Get Blob Properties reports, when a fixed lease expires and
// when a breaking lease breaks, which the REST API does not tell.
type LeaseState struct {
	lease.Effective
	// Expires is the end of a fixed lease still held (zero otherwise).
	Expires time.Time
	// BreakAt is the end of the break period of a breaking lease (zero
	// otherwise).
	BreakAt time.Time
}

// InspectLease reads the lease of a base blob, in one view transaction,
// changing nothing: through the account's name layout, so a hierarchical
// account's file reports the lease its namespace node keeps. ok is false
// for a missing blob.
func (s *Service) InspectLease(ctx context.Context, ref BlobRef) (st LeaseState, ok bool, err error) {
	now := s.clock.Now()
	ref.Snapshot = ""
	l := s.layoutOf(ref.Account)
	err = s.store.View(ctx, func(tx kv.Tx) error {
		// A nil caller is the account's superuser (Shared Key), who may
		// read every path.
		b, _, err := l.resolve(tx, ref, now, nil, acl.Read, false)
		if err != nil {
			if ae, isAz := azerr.As(err); isAz && ae.Status == 404 {
				return nil
			}
			return err
		}
		if b == nil {
			return nil
		}
		ok, st = true, leaseState(b.Lease, now)
		return nil
	})
	return st, ok, err
}

// InspectContainerLease reads a container's lease as InspectLease reads
// a blob's; ok is false for a missing container.
func (s *Service) InspectContainerLease(ctx context.Context, acct, name string) (st LeaseState, ok bool, err error) {
	now := s.clock.Now()
	err = s.store.View(ctx, func(tx kv.Tx) error {
		c, err := loadContainer(tx, acct, name)
		if err != nil {
			if ae, isAz := azerr.As(err); isAz && ae.Code == azerr.ContainerNotFound {
				return nil
			}
			return err
		}
		ok, st = true, leaseState(c.Lease, now)
		return nil
	})
	return st, ok, err
}

func leaseState(l lease.Lease, now time.Time) LeaseState {
	st := LeaseState{Effective: l.Effective(now)}
	switch st.State {
	case lease.StateLeased:
		if l.Duration != lease.Infinite {
			st.Expires = l.Expires
		}
	case lease.StateBreaking:
		st.BreakAt = l.BreakAt
	}
	return st
}

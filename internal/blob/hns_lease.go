package blob

import (
	"context"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// A path's lease is the node's (ns.Node.Lease): Path Lease on the dfs
// endpoint, Lease Blob on the Blob view, and the lease actions of append
// and flush all change that one record, and every write or delete of the
// path checks it (ns checks it in Create, Set, Delete and Rename).

// Lease actions of Path - Update append and flush (x-ms-lease-action).
const (
	PathLeaseAcquire        = "acquire"
	PathLeaseAutoRenew      = "auto-renew"
	PathLeaseRelease        = "release"
	PathLeaseAcquireRelease = "acquire-release"
)

// PathLeaseAction is the lease part of an append or flush: LeaseID is
// x-ms-lease-id; Action x-ms-lease-action ("" for none): acquire takes a
// lease with ProposedID for Duration seconds (-1 infinite) before the
// write, auto-renew renews LeaseID, release releases LeaseID once a
// flush is done (on an append only with flush=true), acquire-release
// takes a lease for the write alone (DataLakeFileAppendOptions.LeaseAction
// and FileAppendOptions.leaseAction of the .NET and JavaScript SDKs;
// azdatalake's TestFileAppendDataWithReleaseLease expects the lease
// available after an append with release and flush).
type PathLeaseAction struct {
	Action     string
	LeaseID    string
	ProposedID string
	Duration   *int
}

// before applies the first half of a to n and checks the write under the
// resulting lease; it returns the lease id the write holds.
func (a PathLeaseAction) before(n *ns.Node, now time.Time) (string, error) {
	id := a.LeaseID
	switch a.Action {
	case "", PathLeaseRelease:
	case PathLeaseAcquire, PathLeaseAcquireRelease:
		if a.Duration == nil {
			return "", azerr.MissingHeader(lease.HeaderDuration)
		}
		res, err := lease.Apply(n.Lease, lease.Request{Action: lease.ActionAcquire, ProposedID: a.ProposedID, Duration: a.Duration}, lease.Blob, now)
		if err != nil {
			return "", err
		}
		n.Lease, id = res.Lease, res.LeaseID
	case PathLeaseAutoRenew:
		res, err := lease.Apply(n.Lease, lease.Request{Action: lease.ActionRenew, LeaseID: a.LeaseID}, lease.Blob, now)
		if err != nil {
			return "", err
		}
		n.Lease = res.Lease
	default:
		return "", azerr.InvalidHeader(lease.HeaderAction, a.Action)
	}
	return id, lease.CheckWrite(n.Lease, id, lease.Blob, now)
}

// after applies the second half of a: release and acquire-release let
// the lease go once the write is done.
func (a PathLeaseAction) after(n *ns.Node, id string, now time.Time) error {
	if a.Action != PathLeaseRelease && a.Action != PathLeaseAcquireRelease {
		return nil
	}
	res, err := lease.Apply(n.Lease, lease.Request{Action: lease.ActionRelease, LeaseID: id}, lease.Blob, now)
	if err != nil {
		return err
	}
	n.Lease = res.Lease
	return nil
}

// LeasePathInput is one lease action on a path: Path - Lease on the dfs
// endpoint, Lease Blob on the Blob view of a hierarchical account.
type LeasePathInput struct {
	Call
	PathRef
	Cond    cond.Conditions
	Request lease.Request
	// IfTags is x-ms-if-tags of Lease Blob on the Blob view.
	IfTags TagCondition
}

// LeasePath is Path - Lease
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/path/lease)
// and Lease Blob of a path: the action applied to the node's lease under
// the conditions, with Azure's lease rules and codes (lease.Apply); the
// ETag and last-modified time stay.
func (s *Service) LeasePath(ctx context.Context, in LeasePathInput) (LeaseBlobOutput, error) {
	now := s.now(in.Call)
	var out LeaseBlobOutput
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		n, err := s.hns.Modify(tx, in.fs(), in.Path, in.Call.Caller, acl.Write, func(n *ns.Node, _ time.Time) error {
			if n.Expired(now) {
				return ns.ErrPathNotFound
			}
			if err := in.Cond.CheckWrite(true, n.ETag, n.Modified); err != nil {
				return ns.ErrConditionNotMet
			}
			if err := checkNodeTags(in.IfTags, n, in.Filesystem); err != nil {
				return err
			}
			res, err := lease.Apply(n.Lease, in.Request, lease.Blob, now)
			if err != nil {
				return err
			}
			n.Lease = res.Lease
			out.Result = res
			return nil
		})
		if err != nil {
			return err
		}
		out.ETag, out.LastModified = n.ETag, n.Modified
		return nil
	})
	return out, err
}

// leasePathBlob is Lease Blob on a hierarchical account.
func (s *Service) leasePathBlob(ctx context.Context, in LeaseBlobInput) (LeaseBlobOutput, error) {
	if in.Ref.Snapshot != "" {
		return LeaseBlobOutput{}, azerr.New(azerr.BlobNotFound)
	}
	out, err := s.LeasePath(ctx, LeasePathInput{Call: in.Call, PathRef: PathRef{Account: in.Ref.Account, Filesystem: in.Ref.Container, Path: in.Ref.Blob},
		Cond: in.Access.withoutNoneMatchAny().Cond, Request: in.Request, IfTags: in.Access.IfTags})
	return out, blobErr(err)
}

// ParseLeaseDuration reads x-ms-lease-duration of an append or flush
// that acquires (nil when absent): -1 or 15 to 60 seconds.
func ParseLeaseDuration(v string) (*int, error) {
	if v == "" {
		return nil, nil
	}
	d, err := strconv.Atoi(v)
	if err != nil || (d != lease.Infinite && (d < lease.MinDuration || d > lease.MaxDuration)) {
		return nil, azerr.InvalidHeader(lease.HeaderDuration, v)
	}
	return &d, nil
}

package ns

import (
	"time"

	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// checkLease is the lease rule of a write or delete of n
// (lease.CheckWrite, as for a blob): an active lease must be named by
// leaseID (412 LeaseIdMissing, LeaseIdMismatchWithBlobOperation), and a
// lease id where none is active is 412 LeaseNotPresentWithBlobOperation.
// The errors are the Blob API's; the dfs endpoint renames them to its
// path-operation codes.
func checkLease(n *Node, leaseID string, now time.Time) error {
	return lease.CheckWrite(n.Lease, leaseID, lease.Blob, now)
}

// Modify runs fn on the item at path, found for c with want on it, and
// stores what fn changed in place: the ETag and last-modified time stay
// (a lease action, or content staged before a flush, is not a write of
// the item). fn's error aborts and is returned as is.
func (s *Namespace) Modify(tx kv.Tx, fs FS, path string, c Caller, want acl.Perm, fn func(n *Node, now time.Time) error) (*Node, error) {
	parts, err := SplitPath(path)
	if err != nil {
		return nil, err
	}
	chain, err := s.walk(tx, fs, parts, c)
	if err != nil {
		return nil, err
	}
	if len(chain) != len(parts)+1 || len(parts) == 0 {
		if len(parts) == 0 {
			return nil, ErrPathConflict
		}
		return nil, ErrPathNotFound
	}
	at := chain[len(chain)-1]
	n := at.node
	now := s.now()
	if n.Expired(now) {
		return nil, ErrPathNotFound
	}
	if want != 0 && !allows(c, n, want) {
		return nil, ErrPermissionMismatch
	}
	if err := fn(n, now); err != nil {
		return nil, err
	}
	return n, kv.PutJSON(tx, at.key, n)
}

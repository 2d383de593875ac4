package blob

import (
	"context"
	"errors"

	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// SetAccessControlInput is Path - Update with action=setAccessControl:
// the owner, group, permissions or ACL of a path in FS (or of FS's root).
type SetAccessControlInput struct {
	// FS is the path's filesystem.
	FS ns.FS
	// Set is the change (ns.Set).
	Set ns.SetInput
}

// SetAccessControlOutput is the changed path.
type SetAccessControlOutput struct {
	// Node is the path after the change.
	Node *ns.Node
}

// SetAccessControl changes a path's access control in one transaction.
func (s *Service) SetAccessControl(ctx context.Context, in SetAccessControlInput) (SetAccessControlOutput, error) {
	var n *ns.Node
	err := s.store.Update(ctx, func(tx kv.Tx) (err error) {
		n, err = s.hns.Set(tx, in.FS, in.Set)
		return err
	})
	if err != nil {
		return SetAccessControlOutput{}, err
	}
	return SetAccessControlOutput{Node: n}, nil
}

// SetAccessControlRecursiveInput is Path - Update with
// action=setAccessControlRecursive: one page of an ACL change applied to
// a path and its subtree in FS.
type SetAccessControlRecursiveInput struct {
	// FS is the path's filesystem.
	FS ns.FS
	// Change is the mode, ACL or entries, page size, continuation and
	// caller (ns.SetACLRecursive).
	Change ns.SetACLRecursiveInput
}

// SetAccessControlRecursiveOutput is one page's outcome.
type SetAccessControlRecursiveOutput struct {
	// Result counts the directories and files changed and the failures,
	// lists the failed entries, and carries the next page's token.
	Result ns.SetACLRecursiveOutput
}

// SetAccessControlRecursive applies one page of the change in one
// transaction. A continuation this server did not issue changes nothing
// and is answered with zero counts, as Azure answers one (azdatalake
// TestDirSetAccessControlRecursiveWithBadContinuation, recorded: Marker
// "garbage", no error, every count 0).
func (s *Service) SetAccessControlRecursive(ctx context.Context, in SetAccessControlRecursiveInput) (SetAccessControlRecursiveOutput, error) {
	var out *ns.SetACLRecursiveOutput
	err := s.store.Update(ctx, func(tx kv.Tx) (err error) {
		out, err = s.hns.SetACLRecursive(tx, in.FS, in.Change)
		return err
	})
	if errors.Is(err, ns.ErrInvalidContinuation) {
		return SetAccessControlRecursiveOutput{}, nil
	}
	if err != nil {
		return SetAccessControlRecursiveOutput{}, err
	}
	return SetAccessControlRecursiveOutput{Result: *out}, nil
}

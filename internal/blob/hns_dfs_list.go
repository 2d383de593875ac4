package blob

import (
	"context"

	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// PathInfo is a path as Path - List and Path - Get Properties show it:
// its node, and its owner, owning group and ACL named as asked (object
// ids, or user principal names with UPN).
type PathInfo struct {
	// Path is the path's name in its filesystem ("" for a lookup).
	Path string
	// Node is the path's node.
	Node *ns.Node
	// Owner and Group name the path's owner and owning group.
	Owner, Group string
	// ACL is the path's ACL with its entries' ids named likewise.
	ACL acl.ACL
}

// ListPathsInput is Path - List in FS.
type ListPathsInput struct {
	// FS is the filesystem listed.
	FS ns.FS
	// List is the directory, recursion, page size, continuation, start
	// and caller (ns.List).
	List ns.ListInput
	// UPN names owners and groups by user principal name (PathNames).
	UPN bool
}

// ListPathsOutput is one page of paths.
type ListPathsOutput struct {
	// Paths are the page's paths, in the listing's order.
	Paths []PathInfo
	// Continuation is the next page's token, "" on the last page.
	Continuation string
}

// ListPaths reads one page of paths and names their owners in one read
// transaction.
func (s *Service) ListPaths(ctx context.Context, in ListPathsInput) (ListPathsOutput, error) {
	var res ListPathsOutput
	err := s.store.View(ctx, func(tx kv.Tx) error {
		out, err := s.hns.List(tx, in.FS, in.List)
		if err != nil {
			return err
		}
		res = ListPathsOutput{Paths: make([]PathInfo, 0, len(out.Paths)), Continuation: out.Continuation}
		names := pathNames(tx, in.UPN)
		for _, p := range out.Paths {
			pi := PathInfo{Path: p.Path, Node: p.Node}
			if pi.Owner, pi.Group, pi.ACL, err = names.of(p.Node); err != nil {
				return err
			}
			res.Paths = append(res.Paths, pi)
		}
		return nil
	})
	if err != nil {
		return ListPathsOutput{}, err
	}
	return res, nil
}

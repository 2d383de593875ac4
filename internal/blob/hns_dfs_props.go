package blob

import (
	"context"

	"github.com/cerulean-storage/cerulean/internal/cond"

	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// GetPathStatusInput is Path - Get Properties (getStatus or
// getAccessControl) of a path in FS, or of FS's root for "".
type GetPathStatusInput struct {
	// FS is the path's filesystem.
	FS ns.FS
	// Path is the path in FS.
	Path string
	// Caller is who asks (nil: a superuser); the path's ancestors must
	// let it through.
	Caller ns.Caller
	// UPN names the owner, group and ACL ids by user principal name.
	UPN bool
	// Cond are the request's read conditions on the path's ETag and
	// Last-Modified (304 or 412).
	Cond cond.Conditions
}

// GetPathStatusOutput is the path found.
type GetPathStatusOutput struct {
	PathInfo
}

// GetPathStatus looks a path up, checks the read conditions on it and
// names its owners in one read transaction.
func (s *Service) GetPathStatus(ctx context.Context, in GetPathStatusInput) (GetPathStatusOutput, error) {
	var out GetPathStatusOutput
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		if out.Node, err = s.hns.Lookup(tx, in.FS, in.Path, in.Caller); err != nil {
			return err
		}
		if err := in.Cond.CheckRead(out.Node.ETag, out.Node.Modified); err != nil {
			return err
		}
		out.Owner, out.Group, out.ACL, err = pathNames(tx, in.UPN).of(out.Node)
		return err
	})
	if err != nil {
		return GetPathStatusOutput{}, err
	}
	return out, nil
}

package blob

import (
	"context"
	"time"

	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// The Data Lake operations on a hierarchical account's paths, each in one
// transaction of its own: the dfs endpoint (internal/datalake) parses a
// request into one of these inputs and renders the output, and opens no
// transaction itself. They act on the namespace set by SetNamespace; the
// endpoint calls them only for accounts it reports hierarchical.

// CreatePathInput is Path - Create of a file or directory in FS.
type CreatePathInput struct {
	// Call is the request (its ids are recorded for events).
	Call Call
	// FS is the filesystem (the account and container) the path is in.
	FS ns.FS
	// Create is what to create and how (ns.Create); its Path is the
	// path in FS.
	Create ns.CreateInput
}

// CreatePathOutput is the created path.
type CreatePathOutput struct {
	// Node is the path as created (its ETag and Last-Modified).
	Node *ns.Node
}

// CreatePath creates the file or directory in.Create describes (with its
// missing parents when in.Create.MakeParents): a file created over one
// keeps that file's snapshots (KeepSnapshots), in the same transaction.
func (s *Service) CreatePath(ctx context.Context, in CreatePathInput) (CreatePathOutput, error) {
	var out *ns.CreateOutput
	err := s.store.Update(ctx, func(tx kv.Tx) (err error) {
		if out, err = s.hns.Create(tx, in.FS, in.Create); err != nil {
			return err
		}
		// A file replaced is overwritten, and an expiry deletes
		// (hns_worm.go).
		now := s.clock.Now()
		if err := pathWORMRefuse(tx, in.FS, out.Replaced, wormWrite, now); err != nil {
			return err
		}
		if err := refuseExpiry(tx, in.FS, out.Node, out.Node.Expiry, now); err != nil {
			return err
		}
		if err := s.KeepSnapshots(tx, in.FS, in.Create.Path, in.Create.Caller, out); err != nil {
			return err
		}
		return s.dfsCreated(tx, in.Call, in.FS, in.Create.Path, out.Node)
	})
	if err != nil {
		return CreatePathOutput{}, err
	}
	return CreatePathOutput{Node: out.Node}, nil
}

// RenamePathInput is Path - Create with x-ms-rename-source: in.Rename's
// source (in its SourceFilesystem of the same account) moves to its Dest
// in FS. The caller has already authorized the source.
type RenamePathInput struct {
	// Call is the request (its ids are recorded for events).
	Call Call
	// FS is the destination's filesystem.
	FS ns.FS
	// Rename is the move (ns.Rename); its Retain is set here from the
	// account's delete retention policy.
	Rename ns.RenameInput
}

// RenamePathOutput is the renamed path.
type RenamePathOutput struct {
	// Node is the path at its destination.
	Node *ns.Node
}

// RenamePath moves a path in one transaction whatever it holds. With soft
// delete on, a replaced destination is soft-deleted ("Soft delete for
// blobs", hierarchical namespace table; the policy is read only when
// there is one); a replaced file that has snapshots refuses the rename
// (409 SnapshotsPresent, RefuseSnapshots) and nothing moves.
func (s *Service) RenamePath(ctx context.Context, in RenamePathInput) (RenamePathOutput, error) {
	var out *ns.RenameOutput
	err := s.store.Update(ctx, func(tx kv.Tx) (err error) {
		rn := in.Rename
		rn.Retain = func() (time.Duration, error) { return DeleteRetention(tx, in.FS.Account) }
		if out, err = s.hns.Rename(tx, in.FS, rn); err != nil {
			return err
		}
		src := in.FS
		if rn.SourceFilesystem != "" {
			src.Filesystem = rn.SourceFilesystem
		}
		if err := s.refuseRename(tx, src, in.FS, out.Node, out.Replaced, s.clock.Now()); err != nil { // hns_worm.go
			return err
		}
		if out.Replaced != nil {
			if err := RefuseSnapshots(tx, in.FS.Account, "file")(out.Replaced); err != nil {
				return err
			}
		}
		return s.dfsRenamed(tx, in.Call, in.FS, rn.Dest, rn.SourceFilesystem, rn.Source, out.Node)
	})
	if err != nil {
		return RenamePathOutput{}, err
	}
	return RenamePathOutput{Node: out.Node}, nil
}

// What the block and blob rules below the namespace files need of a
// hierarchical account: a container's filesystem, the namespace's refusals
// as Blob errors, and where a staged block of a path is kept.

package blob

import (
	"errors"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

func blobFS(ref BlobRef) ns.FS { return ns.FS{Account: ref.Account, Filesystem: ref.Container} }

// blobErr turns a namespace error into the Blob API's answer for the
// same condition.
func blobErr(err error) error {
	var e *ns.Error
	if !errors.As(err, &e) {
		return err
	}
	switch {
	case errors.Is(err, ns.ErrFilesystemNotFound):
		return azerr.New(azerr.ContainerNotFound)
	case errors.Is(err, ns.ErrPathNotFound):
		return azerr.New(azerr.BlobNotFound)
	case errors.Is(err, ns.ErrPathAlreadyExists):
		return azerr.New(azerr.BlobAlreadyExists)
	case errors.Is(err, ns.ErrConditionNotMet):
		return azerr.New(azerr.ConditionNotMet)
	}
	// PathConflict, DirectoryNotEmpty, AuthorizationPermissionMismatch,
	// InvalidResourceName (a name with an empty, "." or ".." segment,
	// which no path can have): the Blob endpoint of a hierarchical
	// account answers the namespace's codes.
	return azerr.Newf(e.Code, "%s", e.Message).WithStatus(e.Status)
}

// stagePath is Put Block's check of the path a block is staged for on a
// hierarchical account: the staging is kept by name as on a flat account
// (see putBlockListPath), but a file or directory there is the blob the
// block is for, so blockWritable holds against its node's lease, tier
// and blob type, as against a flat blob's record: a block for an
// archived file is 409 BlobArchived, one for an append blob file 409
// InvalidBlobType, one for a leased path needs its lease. Where nothing is
// (or the name cannot be a path, which the commit refuses), a lease id is
// 412 LeaseNotPresentWithBlobOperation, as on a flat account. The lookup
// is a superuser's: the commit checks the caller's access.
func stagePath(tx kv.Tx, hns *ns.Namespace, ref BlobRef, leaseID string, now time.Time) error {
	n, err := hns.Lookup(tx, blobFS(ref), ref.Blob, nil)
	switch {
	case errors.Is(err, ns.ErrPathNotFound), errors.Is(err, ns.ErrInvalidPath), errors.Is(err, ns.ErrPathConflict):
		if leaseID != "" {
			return azerr.New(azerr.LeaseNotPresentWithBlobOperation)
		}
		return nil
	case err != nil:
		return blobErr(err)
	}
	typ := BlockBlob
	if n.Append != nil {
		typ = AppendBlob
	}
	return blockWritable(typ, n.Lease, n.Tier, leaseID, now)
}

// The hierarchical layout (Layout, model.go): an account with a
// hierarchical namespace, whose names resolve through the tree of
// internal/hns/ns. Each method hands the operation to the namespace files
// (hns*.go) below it.

package blob

import (
	"context"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

func (l *hierLayout) resolve(tx kv.Tx, ref BlobRef, now time.Time, c ns.Caller, want acl.Perm, upn bool) (*blobRec, *PathProperties, error) {
	b, path, err := loadPath(tx, l.ns, ref, now, c, want)
	if err == nil && upn {
		err = namePath(tx, path)
	}
	return b, path, err
}

func (l *hierLayout) create(ctx context.Context, in PutBlobInput) (PutBlobOutput, error) {
	return l.s.putPath(ctx, l.ns, in)
}

func (l *hierLayout) replace(ctx context.Context, in PutBlockListInput) (PutBlockListOutput, error) {
	return l.s.putBlockListPath(ctx, l.ns, in)
}

func (l *hierLayout) update(ctx context.Context, ref BlobRef, a Access, op wormOp, c ns.Caller, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error) {
	return l.s.updatePath(ctx, l.ns, ref, a, op, c, now, fn)
}

func (l *hierLayout) updateTx(tx kv.Tx, ref BlobRef, a Access, op wormOp, c ns.Caller, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error) {
	return l.s.updatePathTx(tx, l.ns, ref, a, op, c, now, fn)
}

func (l *hierLayout) delete(ctx context.Context, in DeleteBlobInput) (DeleteBlobOutput, error) {
	return l.s.deletePath(ctx, l.ns, in)
}

func (l *hierLayout) list(ctx context.Context, in ListBlobsInput) (ListBlobsOutput, error) {
	return l.s.listPath(ctx, l.ns, in)
}

func (l *hierLayout) pageBlobs() error { return hnsUnsupported() }

// checkReplace checks nothing first: the namespace applies the write
// rules in the write alone.
func (l *hierLayout) checkReplace(context.Context, PutBlockListInput) error { return nil }

// source is the file ref names as loadPath reads it, for c; a directory,
// or nothing, is no source (nil).
func (l *hierLayout) source(tx kv.Tx, ref BlobRef, now time.Time, c ns.Caller) (*blobRec, error) {
	b, pp, err := loadPath(tx, l.ns, ref, now, c, acl.Read)
	if azerr.Has(err, azerr.BlobNotFound) || azerr.Has(err, azerr.ContainerNotFound) || (err == nil && pp.Dir) {
		return nil, nil
	}
	return b, err
}

// containerCreated creates the filesystem's root directory with its
// container (owned by $superuser, 0750, as Azure creates a filesystem's
// root). A root left from a time the account was flat is detached first,
// so the new filesystem starts empty.
func (l *hierLayout) containerCreated(tx kv.Tx, ref ContainerRef) error {
	if err := detachFilesystem(l.ns, tx, ref); err != nil {
		return err
	}
	_, err := l.ns.CreateFilesystem(tx, fsOfContainer(ref), ns.FilesystemInput{})
	return err
}

// containerDeleted detaches the filesystem's tree with its container (one
// write; the collector reclaims it).
func (l *hierLayout) containerDeleted(tx kv.Tx, ref ContainerRef) error {
	return detachFilesystem(l.ns, tx, ref)
}

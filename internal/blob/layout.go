package blob

import (
	"context"
	"errors"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Layout is how an account lays out the names of its blobs, chosen once
// per account (layoutOf): flat, where a blob's name is its key, or
// hierarchical (Data Lake Storage Gen2), where names resolve through the
// namespace tree of internal/hns/ns and a container is a filesystem. The
// Blob domain asks the account's layout for what differs between the two
// and keeps the rest to itself. internal/app wires the namespace
// (SetNamespace); the dfs endpoint (internal/datalake) only calls the
// domain's methods.
type Layout interface {
	// resolve reads the blob ref names as the Blob API shows it: a blob
	// record, or a file of the tree (with its PathProperties, its user
	// principal names filled in when upn) that c may access for want.
	resolve(tx kv.Tx, ref BlobRef, now time.Time, c ns.Caller, want acl.Perm, upn bool) (*blobRec, *PathProperties, error)
	// create is Put Blob: the blob, or the file with its missing
	// parents, created or replaced.
	create(ctx context.Context, in PutBlobInput) (PutBlobOutput, error)
	// replace is Put Block List's commit: the blob or file replaced by
	// the named blocks.
	replace(ctx context.Context, in PutBlockListInput) (PutBlockListOutput, error)
	// update reads the blob or file ref, checks the write rules (the
	// conditions, the lease, and the container-level WORM rule op,
	// containerworm.go), lets fn change it and writes it back, in a
	// transaction of its own; updateTx does the same in tx.
	update(ctx context.Context, ref BlobRef, a Access, op wormOp, c ns.Caller, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error)
	updateTx(tx kv.Tx, ref BlobRef, a Access, op wormOp, c ns.Caller, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error)
	// delete is Delete Blob.
	delete(ctx context.Context, in DeleteBlobInput) (DeleteBlobOutput, error)
	// checkReplace applies replace's write rules before the block list
	// is read (Expect: 100-continue, checkfirst.go).
	checkReplace(ctx context.Context, in PutBlockListInput) error
	// source reads ref as a copy's source (copySource): nil when there
	// is nothing to copy there.
	source(tx kv.Tx, ref BlobRef, now time.Time, c ns.Caller) (*blobRec, error)
	// list is List Blobs.
	list(ctx context.Context, in ListBlobsInput) (ListBlobsOutput, error)
	// pageBlobs is nil when page blobs may be written, else the
	// refusal (a hierarchical account keeps none).
	pageBlobs() error
	// containerCreated runs in the transaction that creates the
	// container ref.
	containerCreated(tx kv.Tx, ref ContainerRef) error
	// containerDeleted runs in the transaction that deletes the
	// container ref.
	containerDeleted(tx kv.Tx, ref ContainerRef) error
}

// flatLayout is the layout of an account without a hierarchical
// namespace: the Blob domain's own records. ns is the namespace of the
// process's hierarchical accounts (nil: there are none), kept for the
// tree a container may have from a time the account was hierarchical.
type flatLayout struct {
	s  *Service
	ns *ns.Namespace
}

// hierLayout is the layout of a hierarchical account: its names are
// paths of ns, whose nodes own a file's properties and lease while the
// Blob domain keeps its bytes (hns.go).
type hierLayout struct {
	s  *Service
	ns *ns.Namespace
}

// layouts are a service's two layouts, made once (layoutOf returns them
// without allocating: it is on every read's path).
type layouts struct {
	flat, hier Layout
	// isHier reports the hierarchical accounts (SetNamespace); nil:
	// none is.
	isHier func(account string) bool
}

func (s *Service) setLayouts(n *ns.Namespace, hier func(account string) bool) {
	s.layouts = layouts{flat: &flatLayout{s: s, ns: n}, isHier: hier}
	if n != nil && hier != nil {
		s.layouts.hier = &hierLayout{s: s, ns: n}
	}
}

// layoutOf is account's layout: hierarchical when SetNamespace's hier
// reports it, else flat. It is the one place the choice is made.
func (s *Service) layoutOf(account string) Layout {
	if s.layouts.hier != nil && s.layouts.isHier(account) {
		return s.layouts.hier
	}
	return s.layouts.flat
}

func (l *flatLayout) resolve(tx kv.Tx, ref BlobRef, _ time.Time, _ ns.Caller, _ acl.Perm, _ bool) (*blobRec, *PathProperties, error) {
	b, err := l.s.loadBlobOrFeed(tx, ref)
	return b, nil, err
}

func (l *flatLayout) create(ctx context.Context, in PutBlobInput) (PutBlobOutput, error) {
	return l.s.putBlobFlat(ctx, in)
}

func (l *flatLayout) replace(ctx context.Context, in PutBlockListInput) (PutBlockListOutput, error) {
	return l.s.putBlockListFlat(ctx, in)
}

func (l *flatLayout) update(ctx context.Context, ref BlobRef, a Access, op wormOp, _ ns.Caller, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error) {
	return l.s.updateBlob(ctx, ref, a, op, now, fn)
}

func (l *flatLayout) updateTx(tx kv.Tx, ref BlobRef, a Access, op wormOp, _ ns.Caller, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error) {
	return updateBlobTx(tx, ref, a, op, now, fn)
}

func (l *flatLayout) delete(ctx context.Context, in DeleteBlobInput) (DeleteBlobOutput, error) {
	return l.s.deleteBlobFlat(ctx, in)
}

func (l *flatLayout) list(ctx context.Context, in ListBlobsInput) (ListBlobsOutput, error) {
	return l.s.listBlobsFlat(ctx, in)
}

func (l *flatLayout) pageBlobs() error { return nil }

func (l *flatLayout) checkReplace(ctx context.Context, in PutBlockListInput) error {
	return l.s.checkPutBlockListFlat(ctx, in)
}

// source is the blob record (or snapshot, or version) ref names, nil
// when there is none.
func (l *flatLayout) source(tx kv.Tx, ref BlobRef, _ time.Time, _ ns.Caller) (*blobRec, error) {
	return findRef(tx, ref)
}

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

func (l *flatLayout) containerCreated(kv.Tx, ContainerRef) error { return nil }

// containerDeleted detaches a tree left in the container from a time the
// account was hierarchical (one write; the collector reclaims it).
func (l *flatLayout) containerDeleted(tx kv.Tx, ref ContainerRef) error {
	if l.ns == nil {
		return nil
	}
	return detachFilesystem(l.ns, tx, ref)
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

// detachFilesystem detaches the tree of ref's filesystem, if it has one.
func detachFilesystem(n *ns.Namespace, tx kv.Tx, ref ContainerRef) error {
	err := n.DeleteFilesystem(tx, fsOfContainer(ref))
	if errors.Is(err, ns.ErrFilesystemNotFound) {
		return nil
	}
	return err
}

func fsOfContainer(ref ContainerRef) ns.FS {
	return ns.FS{Account: ref.Account, Filesystem: ref.Container}
}

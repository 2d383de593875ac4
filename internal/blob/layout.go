package blob

import (
	"errors"

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
	// containerCreated runs in the transaction that creates the
	// container ref.
	containerCreated(tx kv.Tx, ref ContainerRef) error
	// containerDeleted runs in the transaction that deletes the
	// container ref.
	containerDeleted(tx kv.Tx, ref ContainerRef) error
}

// flatLayout is the layout of an account without a hierarchical
// namespace. ns is the namespace of the process's hierarchical accounts
// (nil: there are none), kept for the tree a container may have from a
// time the account was hierarchical.
type flatLayout struct{ ns *ns.Namespace }

// hierLayout is the layout of a hierarchical account: its names are
// paths of ns.
type hierLayout struct{ ns *ns.Namespace }

// layoutOf is account's layout: hierarchical when SetNamespace's hier
// reports it, else flat.
func (s *Service) layoutOf(account string) Layout {
	if s.hns != nil && s.hier != nil && s.hier(account) {
		return hierLayout{s.hns}
	}
	return flatLayout{s.hns}
}

func (l flatLayout) containerCreated(kv.Tx, ContainerRef) error { return nil }

// containerDeleted detaches a tree left in the container from a time the
// account was hierarchical (one write; the collector reclaims it).
func (l flatLayout) containerDeleted(tx kv.Tx, ref ContainerRef) error {
	if l.ns == nil {
		return nil
	}
	return detachFilesystem(l.ns, tx, ref)
}

// containerCreated creates the filesystem's root directory with its
// container (owned by $superuser, 0750, as Azure creates a filesystem's
// root). A root left from a time the account was flat is detached first,
// so the new filesystem starts empty.
func (l hierLayout) containerCreated(tx kv.Tx, ref ContainerRef) error {
	if err := detachFilesystem(l.ns, tx, ref); err != nil {
		return err
	}
	_, err := l.ns.CreateFilesystem(tx, fsOfContainer(ref), ns.FilesystemInput{})
	return err
}

// containerDeleted detaches the filesystem's tree with its container (one
// write; the collector reclaims it).
func (l hierLayout) containerDeleted(tx kv.Tx, ref ContainerRef) error {
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

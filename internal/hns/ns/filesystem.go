package ns

import (
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// FilesystemInput is the root directory of a new filesystem.
type FilesystemInput struct {
	// Owner and Group of the root; "" is $superuser.
	Owner, Group string
	// ACL of the root; nil is user::rwx,group::r-x,other::---
	// (0750, the root ACL Azure gives a new filesystem).
	ACL *acl.ACL
}

// CreateFilesystem creates the root directory of fs.
func (s *Namespace) CreateFilesystem(tx kv.Tx, fs FS, in FilesystemInput) (*Node, error) {
	if _, err := tx.Get(rootKey(fs.Account, fs.Filesystem)); err == nil {
		return nil, ErrFilesystemExists
	} else if err != kv.ErrNotFound {
		return nil, err
	}
	now := s.now()
	n := &Node{ID: newID(), Dir: true, ETag: newETag(now), Created: now, Modified: now,
		Owner: orSuper(in.Owner), Group: orSuper(in.Group)}
	a := acl.FromMode(0o750)
	if in.ACL != nil {
		a = *in.ACL
	}
	n.setACL(a)
	return n, kv.PutJSON(tx, rootKey(fs.Account, fs.Filesystem), n)
}

func orSuper(s string) string {
	if s == "" {
		return acl.Superuser
	}
	return s
}

// DeleteFilesystem detaches the whole tree of fs in one write: its root
// becomes garbage (see Collect), and so do its soft-deleted paths (one
// write each: they go with their filesystem).
func (s *Namespace) DeleteFilesystem(tx kv.Tx, fs FS) error {
	root, err := s.root(tx, fs)
	if err != nil {
		return err
	}
	if err := tx.Delete(rootKey(fs.Account, fs.Filesystem)); err != nil {
		return err
	}
	if err := dropFilesystemDeleted(tx, fs); err != nil {
		return err
	}
	return kv.PutJSON(tx, garbageKey(fs.Account, root.ID), garbage{Dir: true})
}

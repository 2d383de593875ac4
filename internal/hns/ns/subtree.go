package ns

import (
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// EachFile calls fn on every live file under dir (its subtree, depth
// first; expired files are gone and left out) until fn fails, and returns
// fn's error. A caller that must refuse a change of a directory because
// of a file below it (a rename or recursive delete under an immutability
// policy, internal/blob) reads the subtree with it in its transaction.
func (s *Namespace) EachFile(tx kv.Tx, fs FS, dir *Node, fn func(n *Node) error) error {
	if !dir.Dir {
		return nil
	}
	kids, err := s.children(tx, fs, dir, "", -1)
	if err != nil {
		return err
	}
	now := s.now()
	for _, k := range kids {
		switch {
		case k.node.Dir:
			if err := s.EachFile(tx, fs, k.node, fn); err != nil {
				return err
			}
		case !k.node.Expired(now):
			if err := fn(k.node); err != nil {
				return err
			}
		}
	}
	return nil
}

// Empty reports whether dir has no child but expired files (which are
// gone for every operation).
func (s *Namespace) Empty(tx kv.Tx, fs FS, dir *Node) (bool, error) {
	return s.isEmpty(tx, fs, dir)
}

// FilesystemEmpty reports whether fs holds no path, live or soft-deleted
// (a soft-deleted path can still be restored, so it is still held).
func (s *Namespace) FilesystemEmpty(tx kv.Tx, fs FS) (bool, error) {
	root, err := s.root(tx, fs)
	if err != nil {
		return false, err
	}
	if empty, err := s.isEmpty(tx, fs, root); err != nil || !empty {
		return empty, err
	}
	found := false
	p := deletedPrefix(fs)
	err = tx.Scan(p, kv.PrefixEnd(p), 1, false, func(_, _ []byte) bool {
		found = true
		return false
	})
	return !found, err
}

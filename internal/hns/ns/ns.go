// Package ns is the hierarchical namespace of Azure Data Lake Storage Gen2
// over the kv store: files and directories of one filesystem (a container
// of a hierarchical account), keyed by parent directory id and child name,
// so that renaming or deleting a directory costs the same whatever it
// holds.
//
// Every operation is one function that runs inside the caller's kv
// transaction (kv.Store.Update or View): it takes typed input (no HTTP),
// reads time from the injected clock, and returns typed output or an
// *Error carrying the Data Lake error code. It may be run more than once
// by the store (see kv.Store.Update): it changes nothing outside tx.
//
// Content bytes are not stored here: a file holds an opaque content
// reference and a size that the Blob layer owns; the collector hands the
// references of deleted files back to it (see Collect).
package ns

import (
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Namespace runs the operations. The zero value uses the wall clock.
type Namespace struct {
	Clock clock.Clock
}

// New returns a namespace that takes time from clk.
func New(clk clock.Clock) *Namespace { return &Namespace{Clock: clk} }

func (s *Namespace) now() time.Time {
	if s.Clock == nil {
		return clock.Real{}.Now()
	}
	return s.Clock.Now()
}

// FS names a filesystem.
type FS struct{ Account, Filesystem string }

// Caller is who performs an operation: nil is a superuser (Shared Key,
// SAS), for whom no ACL is checked.
type Caller = *acl.Principal

func isSuper(c Caller) bool { return c == nil || c.Super }

// owner is the owning user recorded for items c creates.
func owner(c Caller) string {
	if isSuper(c) || c.User == "" {
		return acl.Superuser
	}
	return c.User
}

func allows(c Caller, n *Node, want acl.Perm) bool {
	if isSuper(c) {
		return true
	}
	return n.Access().Allows(n.Owner, n.Group, *c, want)
}

func (s *Namespace) root(tx kv.Tx, fs FS) (*Node, error) {
	var n Node
	ok, err := kv.GetJSON(tx, rootKey(fs.Account, fs.Filesystem), &n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrFilesystemNotFound
	}
	return &n, nil
}

// loc is a node and where its record lives.
type loc struct {
	node *Node
	key  []byte
	name string // "" for the root
}

// walk resolves parts from the root. It returns the chain of nodes found,
// root first: len(chain) == len(parts)+1 when the whole path exists.
// It stops early at the first missing component, and at a file that
// still has components after it (the caller tells those apart by
// chain[len(chain)-1].node.Dir). Every directory walked through to reach
// a further component must grant the caller x (traverse).
func (s *Namespace) walk(tx kv.Tx, fs FS, parts []string, c Caller) ([]loc, error) {
	root, err := s.root(tx, fs)
	if err != nil {
		return nil, err
	}
	chain := make([]loc, 1, len(parts)+1)
	chain[0] = loc{node: root, key: rootKey(fs.Account, fs.Filesystem)}
	for _, name := range parts {
		cur := chain[len(chain)-1].node
		if !cur.Dir {
			return chain, nil
		}
		if !allows(c, cur, acl.Execute) {
			return nil, ErrPermissionMismatch
		}
		k := childKey(fs.Account, cur.ID, name)
		var n Node
		ok, err := kv.GetJSON(tx, k, &n)
		if err != nil {
			return nil, err
		}
		if !ok {
			return chain, nil
		}
		chain = append(chain, loc{node: &n, key: k, name: name})
	}
	return chain, nil
}

// Lookup returns the node at path ("" or "/" is the root directory).
// Traverse (x) is checked on every parent; nothing on the item itself, as
// for Path Get Properties.
func (s *Namespace) Lookup(tx kv.Tx, fs FS, path string, c Caller) (*Node, error) {
	parts, err := SplitPath(path)
	if err != nil {
		return nil, err
	}
	chain, err := s.walk(tx, fs, parts, c)
	if err != nil {
		return nil, err
	}
	if len(chain) != len(parts)+1 || chain[len(chain)-1].node.Expired(s.now()) {
		return nil, ErrPathNotFound
	}
	return chain[len(chain)-1].node, nil
}

// LookupFor is Lookup plus want on the item itself: read for Path Read,
// write for append and flush ("Access control model in Azure Data Lake
// Storage Gen2": read a file needs r on it, append to a file w on it).
func (s *Namespace) LookupFor(tx kv.Tx, fs FS, path string, c Caller, want acl.Perm) (*Node, error) {
	n, err := s.Lookup(tx, fs, path, c)
	if err != nil {
		return nil, err
	}
	if !allows(c, n, want) {
		return nil, ErrPermissionMismatch
	}
	return n, nil
}

// children returns up to limit (< 0: all) children of dir with names >=
// from, in name order.
func (s *Namespace) children(tx kv.Tx, fs FS, dir *Node, from string, limit int) ([]loc, error) {
	p := childrenPrefix(fs.Account, dir.ID)
	start := p
	if from != "" {
		start = kv.AppendComponent(append([]byte(nil), p...), from)
	}
	var out []loc
	var derr error
	n := limit
	if n < 0 {
		n = 0
	}
	err := tx.Scan(start, kv.PrefixEnd(p), n, false, func(k, v []byte) bool {
		var nd Node
		if derr = kv.DecodeJSON(k, v, &nd); derr != nil {
			return false
		}
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 4 {
			derr = errBadKey(k)
			return false
		}
		out = append(out, loc{node: &nd, key: append([]byte(nil), k...), name: parts[3]})
		return true
	})
	if err == nil {
		err = derr
	}
	return out, err
}

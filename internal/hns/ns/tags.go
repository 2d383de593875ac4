package ns

import (
	"bytes"
	"encoding/base64"
	"errors"
	"maps"
	"slices"

	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Blob index tags of files (Set Blob Tags, x-ms-tags on the Blob view's
// writes) and the index Find Blobs by Tags reads.
//
//	("dlt", account, tag key, tag value, node id) -> ""  the tag index
//	("dlu", account, node id) -> up entry                where the node is
//
// A file's tags are part of its node record (Node.Tags); the index names
// the file by its node id, never by its path, so renaming a directory
// rewrites no index entry whatever the directory holds. A path is found
// from an id at query time by following up entries: the up entry of a
// node is its parent's id and its name, ("c", parent id, name), and the
// up entry of a root is its filesystem, ("r", filesystem). Each step is
// verified against the entry that names the node (its dln key must hold
// that id, the root key of the filesystem that root), so an up entry or
// index entry left behind by a delete, a replacement or a detached
// directory resolves to nothing rather than to a wrong name.
//
// Up entries exist for the chain of every tagged file: a write of tags
// adds the missing ones from the file up to its root (ensureUp, which
// reads them first and writes only what differs), a rename rewrites the
// moved node's entry when it has one (one Get, one Put) and adds the
// destination's missing ones, an undelete does the same. Nothing else
// pays for them. The collector deletes the up entry of every node it
// removes; index entries are removed in the transaction that detaches
// their file (delete, soft delete, replacement, expiry), or by the
// collector for the files of a deleted directory.

func tagKey(acct, key, value string, id []byte) []byte {
	return kv.Key("dlt", acct, key, value, string(id))
}

func upKey(acct string, id []byte) []byte { return kv.Key("dlu", acct, string(id)) }

// indexTags adds the index entries of file n.
func indexTags(tx kv.Tx, acct string, n *Node) error {
	if n.Dir {
		return nil
	}
	for k, v := range n.Tags {
		if err := tx.Put(tagKey(acct, k, v, n.ID), nil); err != nil {
			return err
		}
	}
	return nil
}

// dropTags removes the index entries of file n (detached, replaced, or
// about to be given other tags).
func dropTags(tx kv.Tx, acct string, n *Node) error {
	if n == nil || n.Dir {
		return nil
	}
	for k, v := range n.Tags {
		if err := tx.Delete(tagKey(acct, k, v, n.ID)); err != nil {
			return err
		}
	}
	return nil
}

// forget removes what the tag index knows of node id of acct (its up
// entry) and of file n when given (its index entries): the collector
// calls it for every node it removes.
func forget(tx kv.Tx, acct string, id []byte, n *Node) error {
	if err := dropTags(tx, acct, n); err != nil {
		return err
	}
	return tx.Delete(upKey(acct, id))
}

// putUp writes the up entry of id when it is not already v.
func putUp(tx kv.Tx, acct string, id, v []byte) error {
	k := upKey(acct, id)
	cur, err := tx.Get(k)
	switch {
	case err == nil && bytes.Equal(cur, v):
		return nil
	case err != nil && !errors.Is(err, kv.ErrNotFound):
		return err
	}
	return tx.Put(k, v)
}

// ensureUp writes the missing up entries of chain (root first, each
// element the parent of the next) in fs, and marks each node of the
// chain Up in its record (written here; a caller that writes a chain
// node again writes the same pointer).
func ensureUp(tx kv.Tx, fs FS, chain []loc) error {
	for i, l := range chain {
		v := kv.Key("r", fs.Filesystem)
		if i > 0 {
			v = kv.Key("c", string(chain[i-1].node.ID), l.name)
		}
		if err := putUp(tx, fs.Account, l.node.ID, v); err != nil {
			return err
		}
		if !l.node.Up {
			l.node.Up = true
			if err := kv.PutJSON(tx, l.key, l.node); err != nil {
				return err
			}
		}
	}
	return nil
}

// placeTagged records where node n now is, named name in the directory
// at the end of parents (root first), when n is on the chain of a tagged
// file: a tagged file itself, or a node that has an up entry already (Up:
// a directory above one). Create, Rename and Undelete call it for the
// node they place, and write n after it (n.Up is set here); a node that
// is on no tagged chain costs nothing.
func placeTagged(tx kv.Tx, fs FS, parents []loc, n *Node, name string) error {
	if (n.Dir || len(n.Tags) == 0) && !n.Up {
		return nil
	}
	if err := ensureUp(tx, fs, parents); err != nil {
		return err
	}
	n.Up = true
	return putUp(tx, fs.Account, n.ID, kv.Key("c", string(parents[len(parents)-1].node.ID), name))
}

// SetTags replaces the tags of the file at path (none: no tags), checked
// by check first (the Blob layer's lease and x-ms-if-tags rules; its
// error is returned as is), and stores the node in place: Set Blob Tags
// changes neither the ETag nor the last-modified time. A directory is
// 409 PathConflict: the Blob API's tags are a file's. The caller needs
// write permission on the file.
func (s *Namespace) SetTags(tx kv.Tx, fs FS, path string, tags map[string]string, c Caller, check func(n *Node) error) (*Node, error) {
	parts, err := SplitPath(path)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, ErrPathConflict
	}
	chain, err := s.walk(tx, fs, parts, c)
	if err != nil {
		return nil, err
	}
	if len(chain) != len(parts)+1 {
		return nil, ErrPathNotFound
	}
	at := chain[len(parts)]
	n := at.node
	if n.Expired(s.now()) {
		return nil, ErrPathNotFound
	}
	if check != nil {
		if err := check(n); err != nil {
			return nil, err
		}
	}
	if n.Dir {
		return nil, ErrPathConflict
	}
	if !allows(c, n, acl.Write) {
		return nil, ErrPermissionMismatch
	}
	if err := dropTags(tx, fs.Account, n); err != nil {
		return nil, err
	}
	n.Tags = nil
	if len(tags) > 0 {
		n.Tags = maps.Clone(tags)
		if err := indexTags(tx, fs.Account, n); err != nil {
			return nil, err
		}
		if err := ensureUp(tx, fs, chain); err != nil {
			return nil, err
		}
	}
	return n, kv.PutJSON(tx, at.key, n)
}

// TagFilter narrows the index scan of FindTagged to the entries of one
// tag key (Key "" : every key), with values Op Value when Op is set
// (=, >, >=, <, <=). It only chooses what is read: Match decides.
type TagFilter struct {
	Key, Op, Value string
}

// FindTaggedInput is a Find Blobs by Tags over the files of an account.
type FindTaggedInput struct {
	Account string
	Filter  TagFilter
	// Match is the whole where expression, on a file's current tags and
	// filesystem.
	Match func(tags map[string]string, filesystem string) bool
	// Marker is the NextMarker of the previous page ("" : the first).
	Marker string
	Max    int
	Caller Caller
}

// TaggedPath is a file FindTagged found: its filesystem and full path
// now, and its node.
type TaggedPath struct {
	Filesystem, Path string
	Node             *Node
}

// FindTagged returns up to in.Max live files of the account whose tags
// match, in index order (the filter key's value, then node id), and the
// marker of the next page ("" when none: it is the next index key,
// opaque). Each candidate's path is resolved from its id through the up
// entries (a walk to its root, directories remembered for the page), so
// a file is found under its current name after any rename of a
// directory above it; files detached (deleted, soft-deleted, replaced,
// inside a deleted directory or filesystem) or expired are not found.
// A caller that is not a superuser finds only the files it could read:
// traverse on every directory above and read on the file.
func (s *Namespace) FindTagged(tx kv.Tx, in FindTaggedInput) ([]TaggedPath, string, error) {
	base := kv.Key("dlt", in.Account)
	start, end := base, kv.PrefixEnd(base)
	if f := in.Filter; f.Key != "" {
		kp := kv.Key("dlt", in.Account, f.Key)
		start, end = kp, kv.PrefixEnd(kp)
		vp := kv.AppendComponent(bytes.Clone(kp), f.Value)
		switch f.Op {
		case "=":
			start, end = vp, kv.PrefixEnd(vp)
		case ">=":
			start = vp
		case ">":
			start = kv.PrefixEnd(vp)
		case "<":
			end = vp
		case "<=":
			end = kv.PrefixEnd(vp)
		}
	}
	if in.Marker != "" {
		k, err := base64.RawURLEncoding.DecodeString(in.Marker)
		if err != nil || bytes.Compare(k, base) < 0 || bytes.Compare(k, kv.PrefixEnd(base)) >= 0 {
			return nil, "", ErrInvalidContinuation
		}
		if bytes.Compare(k, start) > 0 {
			start = k
		}
	}
	now := s.now()
	r := &resolver{s: s, tx: tx, acct: in.Account, c: in.Caller, dirs: map[string]dirPlace{}}
	var out []TaggedPath
	next := ""
	var ferr error
	err := tx.Scan(start, end, 0, false, func(k, _ []byte) bool {
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 5 {
			ferr = errBadKey(k)
			return false
		}
		key, value, id := parts[2], parts[3], []byte(parts[4])
		var tp *TaggedPath
		if tp, ferr = r.file(id); ferr != nil {
			return false
		}
		if tp == nil || tp.Node.Expired(now) {
			return true // detached or expired
		}
		if v, has := tp.Node.Tags[key]; !has || v != value {
			return true // an entry its tags no longer have
		}
		if in.Filter.Key == "" && slices.Min(slices.Collect(maps.Keys(tp.Node.Tags))) != key {
			return true // the file is counted at its first key only
		}
		if in.Match != nil && !in.Match(tp.Node.Tags, tp.Filesystem) {
			return true
		}
		if len(out) == in.Max {
			next = base64.RawURLEncoding.EncodeToString(k)
			return false
		}
		out = append(out, *tp)
		return true
	})
	if err == nil {
		err = ferr
	}
	return out, next, err
}

// maxDepth bounds a walk up the tree: no real path is deeper (the Blob
// API limits names to 1,024 characters, so to 512 segments).
const maxDepth = 1024

// dirPlace is where a directory was found to be: ok false when it is
// not reachable (or, for a caller that is not a superuser, not
// traversable down to it).
type dirPlace struct {
	fs, path string
	ok       bool
}

// resolver finds paths from node ids in one transaction, remembering the
// directories it resolved.
type resolver struct {
	s    *Namespace
	tx   kv.Tx
	acct string
	c    Caller
	dirs map[string]dirPlace
}

// up reads the up entry of id: a parent id and name, or the filesystem
// of a root (root true); ok false when there is none.
func (r *resolver) up(id []byte) (parent []byte, name string, root, ok bool, err error) {
	v, err := r.tx.Get(upKey(r.acct, id))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, "", false, false, nil
	}
	if err != nil {
		return nil, "", false, false, err
	}
	p, okk := kv.Split(v)
	switch {
	case okk && len(p) == 2 && p[0] == "r":
		return nil, p[1], true, true, nil
	case okk && len(p) == 3 && p[0] == "c":
		return []byte(p[1]), p[2], false, true, nil
	}
	return nil, "", false, false, errBadKey(v)
}

// named reads the node named name in directory parent, when it is id.
func (r *resolver) named(parent []byte, name string, id []byte) (*Node, error) {
	var n Node
	ok, err := kv.GetJSON(r.tx, childKey(r.acct, parent, name), &n)
	if err != nil || !ok || !bytes.Equal(n.ID, id) {
		return nil, err
	}
	return &n, nil
}

// file resolves the file id: nil when it is not a reachable file.
func (r *resolver) file(id []byte) (*TaggedPath, error) {
	parent, name, root, ok, err := r.up(id)
	if err != nil || !ok || root {
		return nil, err
	}
	n, err := r.named(parent, name, id)
	if err != nil || n == nil || n.Dir {
		return nil, err
	}
	d, err := r.dir(parent, 0)
	if err != nil || !d.ok {
		return nil, err
	}
	if !allows(r.c, n, acl.Read) {
		return nil, nil
	}
	p := name
	if d.path != "" {
		p = d.path + "/" + name
	}
	return &TaggedPath{Filesystem: d.fs, Path: p, Node: n}, nil
}

// dir resolves directory id (depth steps below the file).
func (r *resolver) dir(id []byte, depth int) (dirPlace, error) {
	if d, seen := r.dirs[string(id)]; seen {
		return d, nil
	}
	d, err := r.resolveDir(id, depth)
	if err != nil {
		return dirPlace{}, err
	}
	r.dirs[string(id)] = d
	return d, nil
}

func (r *resolver) resolveDir(id []byte, depth int) (dirPlace, error) {
	if depth > maxDepth {
		return dirPlace{}, nil
	}
	parent, name, root, ok, err := r.up(id)
	if err != nil || !ok {
		return dirPlace{}, err
	}
	var n *Node
	if root {
		n, err = r.s.root(r.tx, FS{Account: r.acct, Filesystem: name})
		if errors.Is(err, ErrFilesystemNotFound) || (err == nil && !bytes.Equal(n.ID, id)) {
			return dirPlace{}, nil
		}
		if err != nil {
			return dirPlace{}, err
		}
		return dirPlace{fs: name, ok: allows(r.c, n, acl.Execute)}, nil
	}
	if n, err = r.named(parent, name, id); err != nil || n == nil || !n.Dir {
		return dirPlace{}, err
	}
	d, err := r.dir(parent, depth+1)
	if err != nil || !d.ok {
		return dirPlace{}, err
	}
	p := name
	if d.path != "" {
		p = d.path + "/" + name
	}
	return dirPlace{fs: d.fs, path: p, ok: allows(r.c, n, acl.Execute)}, nil
}

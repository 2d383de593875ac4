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
	"bytes"
	"maps"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
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

// CreateInput describes Path Create of a file or directory (without
// x-ms-rename-source).
type CreateInput struct {
	Path string
	Dir  bool
	// Cond are the conditions on an existing item at Path. If-None-Match:
	// * ("only if absent") fails with PathAlreadyExists when it exists.
	Cond cond.Conditions
	// MakeParents creates missing parent directories (the Blob endpoint:
	// a blob named a/b/c.txt creates a and a/b); without it a missing
	// parent is PathNotFound.
	MakeParents bool
	Metadata    map[string]string
	Props       ContentProps
	Size        int64
	Ref         []byte
	// RefFor, when set, gives a new file its content reference from its
	// node id (instead of Ref): the Blob layer keys a file's content by
	// the id, which is chosen here.
	RefFor func(id []byte) []byte
	// Copy is the concluded copy that writes this file (Copy Blob onto a
	// path), kept as the file's copy state.
	Copy *CopyState
	// Tier is the access tier a Blob write gives the file
	// (x-ms-access-tier; "" : the account default).
	Tier string
	// Permissions is x-ms-permissions (nil: 0666 for a file, 0777 for a
	// directory), Umask x-ms-umask (nil: 0027), ACL x-ms-acl (replaces the
	// computed ACL when set). Group is x-ms-group ("" : the parent's group).
	Permissions *acl.Mode
	Umask       *acl.Mode
	ACL         *acl.ACL
	Owner       string // x-ms-owner; "" : the caller
	Group       string
	// Expiry is a file's expiry time (x-ms-expiry-option and
	// x-ms-expiry-time; zero: none).
	Expiry time.Time
	// LeaseID is x-ms-lease-id: an existing item's active lease must be
	// named (see checkLease).
	LeaseID string
	// Acquire, when set, is a lease the new item takes as it is created
	// (Path Create's x-ms-proposed-lease-id and x-ms-lease-duration).
	Acquire *lease.Request
	Caller  Caller
	// Replace, when set, vets an existing file before it is replaced,
	// after the conditions and the lease (the Blob layer refuses to
	// overwrite an archived file). Its error is returned as is.
	Replace func(old *Node) error
	// Tags are a new file's blob index tags (x-ms-tags); a replaced
	// file's tags go with it.
	Tags map[string]string
	// Append makes a new file an append blob with this state (Put Blob
	// of an append blob, Copy Blob of one); nil: a block blob.
	Append *AppendState
	// CPK is the SHA-256 of the request's customer-provided key ("":
	// none), the new item's (Node.CPK). A replaced file, or the metadata
	// of a directory created again, takes it as a replacing write does.
	CPK string
}

// CreateOutput is the created (or replaced) node. Replaced is the file
// node that was at Path before, if any: its content was handed to the
// collector.
type CreateOutput struct {
	Node     *Node
	Replaced *Node
}

// Create creates a file or directory at in.Path.
//
// An existing directory asked for as a directory keeps its id, children,
// owner, group and ACL (unless the request sets them) and gets the new
// metadata and properties, as Azure answers 201 to Create Directory on an
// existing directory (azdatalake directory/client_test.go,
// TestCreateDirWithNilAccessConditions); an existing file asked for as a
// file is replaced (its content becomes garbage). A different resource
// type at Path, or a file where a parent directory should be, is 409
// PathConflict.
func (s *Namespace) Create(tx kv.Tx, fs FS, in CreateInput) (*CreateOutput, error) {
	parts, err := SplitPath(in.Path)
	if err != nil {
		return nil, err
	}
	if err := CheckNewPath(parts); err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, withMessage(ErrPathConflict, "The root directory cannot be created.")
	}
	chain, err := s.walk(tx, fs, parts, in.Caller)
	if err != nil {
		return nil, err
	}
	now := s.now()
	// An expired file where a parent directory is needed is gone: the
	// parent is missing (and made with MakeParents in its place).
	if at := chain[len(chain)-1]; len(chain) <= len(parts) && at.node.Expired(now) {
		if err := kv.PutJSON(tx, garbageKey(fs.Account, at.node.ID), garbage{Ref: at.node.Ref}); err != nil {
			return nil, err
		}
		if err := dropTags(tx, fs.Account, at.node); err != nil {
			return nil, err
		}
		if err := tx.Delete(at.key); err != nil {
			return nil, err
		}
		chain = chain[:len(chain)-1]
	}
	// Missing parents.
	for len(chain) < len(parts) {
		last := chain[len(chain)-1].node
		if !last.Dir {
			return nil, ErrPathConflict
		}
		if !in.MakeParents {
			return nil, ErrPathNotFound
		}
		if !allows(in.Caller, last, acl.Write|acl.Execute) {
			return nil, ErrPermissionMismatch
		}
		name := parts[len(chain)-1]
		d := s.newNode(last, true, now, nil, nil, in.Caller)
		k := childKey(fs.Account, last.ID, name)
		if err := kv.PutJSON(tx, k, d); err != nil {
			return nil, err
		}
		chain = append(chain, loc{node: d, key: k, name: name})
	}
	parent := chain[len(parts)-1].node
	if !parent.Dir {
		return nil, ErrPathConflict
	}
	name := parts[len(parts)-1]
	var existing, expired *Node
	if len(chain) == len(parts)+1 {
		existing = chain[len(parts)].node
		if existing.Expired(now) {
			existing, expired = nil, existing
		}
	}
	if existing == nil && len(in.Cond.IfMatch) > 0 {
		return nil, ErrConditionNotMet
	}
	if existing != nil {
		switch err := in.Cond.CheckWrite(true, existing.ETag, existing.Modified); {
		case err == cond.ErrExists:
			return nil, ErrPathAlreadyExists
		case err != nil:
			return nil, ErrConditionNotMet
		}
		if existing.Dir != in.Dir {
			return nil, ErrPathConflict
		}
		if err := checkLease(existing, in.LeaseID, now); err != nil {
			return nil, err
		}
		if in.Replace != nil && !existing.Dir {
			if err := in.Replace(existing); err != nil {
				return nil, err
			}
		}
	}
	if !allows(in.Caller, parent, acl.Write|acl.Execute) {
		return nil, ErrPermissionMismatch
	}
	n := s.newNode(parent, in.Dir, now, in.Permissions, in.Umask, in.Caller)
	if existing != nil && existing.Dir {
		// The same directory again: its id, children, creation time and
		// access control stay, unless the request sets them.
		n.ID, n.Created = existing.ID, existing.Created
		n.Owner, n.Group, n.ACL = existing.Owner, existing.Group, existing.ACL
		n.Lease = existing.Lease
		if in.Permissions != nil {
			n.setACL(existing.ACL.WithMode(*in.Permissions))
		}
	}
	if in.ACL != nil {
		a := *in.ACL
		if !in.Dir {
			a = a.Access()
		}
		a.Sticky = n.ACL.Sticky
		n.setACL(a)
	}
	if in.Owner != "" {
		n.Owner = in.Owner
	}
	if in.Group != "" {
		n.Group = in.Group
	}
	n.Metadata = maps.Clone(in.Metadata)
	n.Props = in.Props
	n.CPK = in.CPK
	if !in.Dir {
		n.Size = in.Size
		n.Ref = bytes.Clone(in.Ref)
		if in.RefFor != nil {
			n.Ref = in.RefFor(n.ID)
		}
		n.Expiry = in.Expiry
		n.Copy = in.Copy
		n.Tier = in.Tier
		if len(in.Tags) > 0 {
			n.Tags = maps.Clone(in.Tags)
		}
		if in.Append != nil {
			a := *in.Append
			n.Append = &a
		}
	}
	if existing != nil {
		// An overwrite keeps an active lease, as Put Blob does.
		n.Lease = lease.OnWrite(existing.Lease, now)
	}
	if in.Acquire != nil {
		res, err := lease.Apply(n.Lease, *in.Acquire, lease.Blob, now)
		if err != nil {
			return nil, err
		}
		n.Lease = res.Lease
	}
	if expired != nil {
		if err := kv.PutJSON(tx, garbageKey(fs.Account, expired.ID), garbage{Ref: expired.Ref}); err != nil {
			return nil, err
		}
		if err := dropTags(tx, fs.Account, expired); err != nil {
			return nil, err
		}
	}
	out := &CreateOutput{Node: n}
	if existing != nil && !existing.Dir {
		out.Replaced = existing
		if err := kv.PutJSON(tx, garbageKey(fs.Account, existing.ID), garbage{Ref: existing.Ref}); err != nil {
			return nil, err
		}
		if err := dropTags(tx, fs.Account, existing); err != nil {
			return nil, err
		}
	}
	key := childKey(fs.Account, parent.ID, name)
	if err := indexExpiry(tx, fs.Account, key, n); err != nil {
		return nil, err
	}
	if len(n.Tags) > 0 {
		// A new file (a new id): its index entries and the up entries
		// of its chain (tags.go).
		if err := indexTags(tx, fs.Account, n); err != nil {
			return nil, err
		}
		if err := placeTagged(tx, fs, chain[:len(parts)], n, name); err != nil {
			return nil, err
		}
	}
	return out, kv.PutJSON(tx, key, n)
}

// newNode builds a node created in parent by c: owner the caller, group
// copied from the parent ("Access control lists (ACLs) in Azure Data Lake
// Storage Gen2", "The owning group": a new item's owning group is the
// parent directory's), ACL from the parent's default ACL or the mode and
// umask (acl.ForChild).
func (s *Namespace) newNode(parent *Node, dir bool, now time.Time, perm, umask *acl.Mode, c Caller) *Node {
	mode := acl.DefaultFileMode
	if dir {
		mode = acl.DefaultDirMode
	}
	if perm != nil {
		mode = *perm
	}
	um := acl.DefaultUmask
	if umask != nil {
		um = *umask
	}
	n := &Node{ID: newID(), Dir: dir, ETag: newETag(now), Created: now, Modified: now,
		Owner: owner(c), Group: parent.Group}
	n.setACL(acl.ForChild(parent.Access(), dir, mode, um))
	return n
}

// SetInput changes properties of an existing item (Path Update
// action=setProperties / setAccessControl, and the flush that sets a
// file's content). nil fields are left as they are.
type SetInput struct {
	Path     string
	Cond     cond.Conditions
	Metadata *map[string]string
	Props    *ContentProps
	// Content replaces a file's content (size and reference); the old
	// reference goes to the collector.
	Content *Content
	Expiry  *time.Time
	// Access control: Owner needs a superuser; Group the owner (of a group
	// it belongs to) or a superuser; ACL and Permissions the owner or a
	// superuser ("Access control model in Azure Data Lake Storage Gen2":
	// Set ACL requires the owning user or the superuser). ACL and
	// Permissions together are invalid (Path Update: x-ms-permissions and
	// x-ms-acl are mutually exclusive).
	Owner       *string
	Group       *string
	ACL         *acl.ACL
	Permissions *acl.Mode
	// Append replaces an append blob file's state (Append Block, Seal),
	// with Content for an append.
	Append *AppendState
	// LeaseID is x-ms-lease-id (see checkLease).
	LeaseID string
	Caller  Caller
	// KeepVersion keeps the item's ETag and last-modified time: Azure
	// answers Set Blob Expiry and setAccessControl with the item's
	// unchanged ETag.
	KeepVersion bool
}

// Content is a file's content as the Blob layer describes it.
type Content struct {
	Size int64
	Ref  []byte
}

// Set applies in to the item at in.Path and returns it with a new ETag
// and last-modified time (unless in.KeepVersion).
func (s *Namespace) Set(tx kv.Tx, fs FS, in SetInput) (*Node, error) {
	if in.ACL != nil && in.Permissions != nil {
		return nil, withMessage(ErrInvalidInput, "x-ms-permissions and x-ms-acl are mutually exclusive.")
	}
	parts, err := SplitPath(in.Path)
	if err != nil {
		return nil, err
	}
	chain, err := s.walk(tx, fs, parts, in.Caller)
	if err != nil {
		return nil, err
	}
	if len(chain) != len(parts)+1 {
		return nil, ErrPathNotFound
	}
	at := chain[len(chain)-1]
	n := *at.node
	now := s.now()
	if n.Expired(now) {
		return nil, ErrPathNotFound
	}
	if err := in.Cond.CheckWrite(true, n.ETag, n.Modified); err != nil && err != cond.ErrExists {
		return nil, ErrConditionNotMet
	}
	if err := checkLease(&n, in.LeaseID, now); err != nil {
		return nil, err
	}
	c := in.Caller
	if in.Metadata != nil || in.Props != nil || in.Content != nil || in.Expiry != nil || in.Append != nil {
		if !allows(c, &n, acl.Write) {
			return nil, ErrPermissionMismatch
		}
	}
	isOwner := isSuper(c) || (c.User != "" && c.User == n.Owner)
	if in.Owner != nil && !isSuper(c) {
		return nil, ErrPermissionMismatch
	}
	if in.Group != nil && !isSuper(c) && !(isOwner && c.InGroup(*in.Group)) {
		return nil, ErrPermissionMismatch
	}
	if (in.ACL != nil || in.Permissions != nil) && !isOwner {
		return nil, ErrPermissionMismatch
	}
	if in.Content != nil && n.Dir {
		return nil, ErrPathConflict
	}
	if in.Metadata != nil {
		n.Metadata = maps.Clone(*in.Metadata)
	}
	if in.Props != nil {
		n.Props = *in.Props
		n.Copy = nil // "modified after a concluded Copy Blob operation using Set Blob Properties"
	}
	if in.Expiry != nil {
		n.Expiry = *in.Expiry
	}
	if in.Owner != nil {
		n.Owner = orSuper(*in.Owner)
	}
	if in.Group != nil {
		n.Group = orSuper(*in.Group)
	}
	if in.ACL != nil {
		a := *in.ACL
		if !n.Dir {
			a = a.Access()
		}
		a.Sticky = n.ACL.Sticky
		n.setACL(a)
	}
	if in.Permissions != nil {
		n.setACL(n.Access().WithMode(*in.Permissions))
	}
	if in.Content != nil {
		if len(n.Ref) > 0 && !bytes.Equal(n.Ref, in.Content.Ref) {
			if err := kv.PutJSON(tx, garbageKey(fs.Account, newID()), garbage{Ref: n.Ref}); err != nil {
				return nil, err
			}
		}
		n.Size, n.Ref = in.Content.Size, bytes.Clone(in.Content.Ref)
		if in.Append == nil {
			// A new content; an append (with Append) keeps the copy
			// state, as Append Block keeps a flat blob's.
			n.Copy = nil
		}
	}
	if in.Append != nil {
		if n.Dir || n.Append == nil {
			return nil, ErrPathConflict
		}
		a := *in.Append
		n.Append = &a
	}
	n.Lease = lease.OnWrite(n.Lease, now)
	if !in.KeepVersion {
		n.ETag, n.Modified = newETag(now), now
	}
	if in.Expiry != nil {
		if err := indexExpiry(tx, fs.Account, at.key, &n); err != nil {
			return nil, err
		}
	}
	return &n, kv.PutJSON(tx, at.key, &n)
}

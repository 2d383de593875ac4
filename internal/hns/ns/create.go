package ns

import (
	"bytes"
	"maps"
	"time"

	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

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

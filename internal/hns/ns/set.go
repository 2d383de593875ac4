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

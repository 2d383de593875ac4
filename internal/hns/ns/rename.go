package ns

import (
	"slices"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// RenameMode is the mode query parameter of Path Create with
// x-ms-rename-source: "legacy" or "posix" (the default). They differ only
// when the destination is an existing directory (see Rename).
type RenameMode int

// Rename modes.
const (
	Posix RenameMode = iota
	Legacy
)

// RenameInput describes Path Create with x-ms-rename-source
// ("/{filesystem}/{path}"): Dest is in the filesystem the operation is
// called on, Source in SourceFilesystem ("" : the same one). Node ids are
// unique in the account and children are keyed by them alone, so a move
// to another filesystem of the account costs what a move within one does.
type RenameInput struct {
	SourceFilesystem string
	Source, Dest     string
	Mode             RenameMode
	// SourceCond are the x-ms-source-if-* conditions (412
	// SourceConditionNotMet), Cond the conditions on the destination
	// (412 ConditionNotMet; If-None-Match: * and an existing destination
	// is 409 PathAlreadyExists, as for Create).
	SourceCond cond.Conditions
	Cond       cond.Conditions
	// SourceLeaseID is x-ms-source-lease-id, LeaseID x-ms-lease-id: the
	// active leases of the source and of an existing destination must be
	// named (see checkLease).
	SourceLeaseID, LeaseID string
	Caller                 Caller
	// Retain, when set, is asked in the transaction only when the rename
	// replaces a destination: a positive answer soft-deletes the
	// destination for that long (Blob soft delete on: the account's
	// retention days), as DeleteInput.Retain does a deleted path. A
	// rename onto a free name reads no policy.
	Retain func() (time.Duration, error)

	// into is set on the second step of a posix rename onto an existing
	// directory (the destination is then that directory's child): no
	// second redirection.
	into bool
}

// RenameOutput is the moved node, under its new name, and the node the
// rename replaced at the destination, if any, with the deletion id it
// was kept under when it was soft-deleted.
type RenameOutput struct {
	Node               *Node
	Replaced           *Node
	ReplacedDeletionID string
}

// Rename moves a file or directory. It rewrites one entry (the source's
// record under the destination parent's id and the new name), whatever
// the directory holds; the node keeps its id, properties, ETag and
// last-modified time, and its children stay keyed under that id.
//
// The errors, in the order they are checked:
//   - SourcePathNotFound: the source does not exist;
//   - SourceConditionNotMet: x-ms-source-if-* fail on it;
//   - InvalidRenameSourcePath: the destination is the source or inside it;
//   - RenameDestinationParentPathNotFound: a parent of the destination is
//     missing; InvalidDestinationPath: one of them is a file;
//   - ConditionNotMet / PathAlreadyExists: the destination conditions;
//   - InvalidSourceOrDestinationResourceType: the destination exists with
//     the other resource type;
//   - posix mode (the default), destination an existing directory: the
//     source moves into it, under its own name, as a command line's mv
//     does; that child is then the destination, renamed onto as in
//     legacy mode, and the destination conditions and lease apply to it
//     (Hadoop's ABFS driver sends If-None-Match: * with every rename, so
//     as not to replace a file). This is what the PathRenameMode description
//     of the REST specification says ("When renaming a directory to a
//     destination directory that already exists, the source directory is
//     moved into the destination directory as a subdirectory";
//     azure-rest-api-specs pull request 45340), what the az CLI's
//     --move-mode help says of posix mode, and what Hadoop's ABFS driver
//     relies on: AzureBlobFileSystem.rename sends a rename onto an
//     existing directory unchanged when the namespace is enabled (it
//     appends the source's name itself only without one), and Hadoop's
//     ABFS contract tests (ITestAbfsFileSystemContractRename,
//     ITestAzureBlobFileSystemBasics) expect the source inside it, for a
//     file as for a directory, the directory empty or not.
//   - otherwise (legacy mode, the SDKs' mode) an existing destination
//     file is replaced ("By default, the destination is overwritten",
//     Path Create), an existing empty destination directory is replaced,
//     a non-empty one is DirectoryNotEmpty (rename(2)): azure-sdk-for-net's
//     recorded directory tests RenameAsync_DestinationConditions and
//     RenameAsync_SourceConditions rename a directory onto an existing
//     empty one successfully in legacy mode.
//
// With Retain, the replaced destination is soft-deleted at the
// destination's path, as the hierarchical namespace table of "Soft
// delete for blobs" says of Path - Create that renames: "Existing
// destination blob or empty directory will get soft deleted and the
// source will replace it." An expired destination file is gone already
// and is not kept (an expired blob does not become a soft-deleted one).
func (s *Namespace) Rename(tx kv.Tx, fs FS, in RenameInput) (*RenameOutput, error) {
	src, err := SplitPath(in.Source)
	if err != nil {
		return nil, err
	}
	dst, err := SplitPath(in.Dest)
	if err != nil {
		return nil, err
	}
	// The name rules, on the destination and on the source as named
	// (x-ms-rename-source), as the Blob rules apply to both names.
	if err := CheckNewPath(src); err != nil {
		return nil, err
	}
	if err := CheckNewPath(dst); err != nil {
		return nil, err
	}
	if len(src) == 0 {
		return nil, ErrInvalidRenameSource
	}
	if len(dst) == 0 {
		return nil, ErrInvalidDestinationPath
	}
	c := in.Caller
	sfs := fs
	if in.SourceFilesystem != "" {
		sfs.Filesystem = in.SourceFilesystem
	}
	schain, err := s.walk(tx, sfs, src, c)
	if err != nil {
		return nil, err
	}
	if len(schain) != len(src)+1 {
		return nil, ErrSourcePathNotFound
	}
	sp, sl := schain[len(src)-1].node, schain[len(src)]
	now := s.now()
	if sl.node.Expired(now) {
		return nil, ErrSourcePathNotFound
	}
	if err := in.SourceCond.CheckSource(sl.node.ETag, sl.node.Modified); err != nil {
		return nil, ErrSourceConditionNotMet
	}
	if err := checkLease(sl.node, in.SourceLeaseID, now); err != nil {
		return nil, err
	}
	if sfs == fs && len(dst) >= len(src) && slices.Equal(dst[:len(src)], src) {
		return nil, ErrInvalidRenameSource
	}
	dchain, err := s.walk(tx, fs, dst, c)
	if err != nil {
		return nil, err
	}
	// An expired file where a destination parent is needed is gone: the
	// parent is absent.
	if at := dchain[len(dchain)-1].node; len(dchain) <= len(dst) && at.Expired(now) {
		return nil, ErrRenameDestParentAbsent
	}
	if len(dchain) < len(dst) {
		if !dchain[len(dchain)-1].node.Dir {
			return nil, ErrInvalidDestinationPath
		}
		return nil, ErrRenameDestParentAbsent
	}
	dp := dchain[len(dst)-1].node
	if !dp.Dir {
		return nil, ErrInvalidDestinationPath
	}
	// The destination's parents must not include the source (a directory
	// cannot move into its own subtree). The name check above covers it
	// within one transaction; the id check keeps it true by construction.
	for _, l := range dchain[:len(dst)] {
		if string(l.node.ID) == string(sl.node.ID) {
			return nil, ErrInvalidRenameSource
		}
	}
	var existing, expired *loc
	if len(dchain) == len(dst)+1 {
		existing = &dchain[len(dst)]
		if existing.node.Expired(now) {
			existing, expired = nil, existing
		}
	}
	if existing == nil && len(in.Cond.IfMatch) > 0 {
		return nil, ErrConditionNotMet
	}
	if existing != nil && existing.node.Dir && in.Mode == Posix && !in.into {
		next := in
		next.Dest = strings.Join(append(slices.Clone(dst), src[len(src)-1]), "/")
		next.into = true
		return s.Rename(tx, fs, next)
	}
	if existing != nil {
		switch err := in.Cond.CheckWrite(true, existing.node.ETag, existing.node.Modified); {
		case err == cond.ErrExists:
			return nil, ErrPathAlreadyExists
		case err != nil:
			return nil, ErrConditionNotMet
		}
		if err := checkLease(existing.node, in.LeaseID, now); err != nil {
			return nil, err
		}
		if existing.node.Dir != sl.node.Dir {
			return nil, ErrSourceDestTypeMismatch
		}
		if existing.node.Dir {
			empty, err := s.isEmpty(tx, fs, existing.node)
			if err != nil {
				return nil, err
			}
			if !empty {
				return nil, withMessage(ErrDirectoryNotEmpty, "The destination directory is not empty.")
			}
		}
	}
	if !isSuper(c) {
		if !allows(c, sp, acl.Write|acl.Execute) || !allows(c, dp, acl.Write|acl.Execute) {
			return nil, ErrPermissionMismatch
		}
		if !acl.StickyAllows(sp.Access(), sp.Owner, sl.node.Owner, *c) {
			return nil, ErrPermissionMismatch
		}
		if existing != nil && !acl.StickyAllows(dp.Access(), dp.Owner, existing.node.Owner, *c) {
			return nil, ErrPermissionMismatch
		}
	}
	out := &RenameOutput{Node: sl.node}
	if expired != nil {
		if err := kv.PutJSON(tx, garbageKey(fs.Account, expired.node.ID), garbage{Ref: expired.node.Ref}); err != nil {
			return nil, err
		}
		if err := dropTags(tx, fs.Account, expired.node); err != nil {
			return nil, err
		}
	}
	if existing != nil {
		out.Replaced = existing.node
		if err := dropTags(tx, fs.Account, existing.node); err != nil {
			return nil, err
		}
		var retain time.Duration
		if in.Retain != nil {
			var err error
			if retain, err = in.Retain(); err != nil {
				return nil, err
			}
		}
		if retain > 0 {
			// Its entry is overwritten below; an empty directory keeps no
			// children, so the record alone is the soft-deleted path.
			id, err := s.softDelete(tx, fs, strings.Join(dst, "/"), existing.node, now, retain)
			if err != nil {
				return nil, err
			}
			out.ReplacedDeletionID = id
		} else if err := kv.PutJSON(tx, garbageKey(fs.Account, existing.node.ID), garbage{Dir: existing.node.Dir, Ref: existing.node.Ref}); err != nil {
			return nil, err
		}
	}
	if err := tx.Delete(sl.key); err != nil {
		return nil, err
	}
	key := childKey(fs.Account, dp.ID, dst[len(dst)-1])
	if err := indexExpiry(tx, fs.Account, key, sl.node); err != nil {
		return nil, err
	}
	// The moved node's up entry, if it is on a tagged file's chain: one
	// entry, whatever the node holds (tags.go).
	if err := placeTagged(tx, fs, dchain[:len(dst)], sl.node, dst[len(dst)-1]); err != nil {
		return nil, err
	}
	return out, kv.PutJSON(tx, key, sl.node)
}

// isEmpty reports whether dir has no child but expired files, which are
// gone for every operation (the collector removes their records).
func (s *Namespace) isEmpty(tx kv.Tx, fs FS, dir *Node) (bool, error) {
	p := childrenPrefix(fs.Account, dir.ID)
	now := s.now()
	empty := true
	var derr error
	err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, v []byte) bool {
		var n Node
		if derr = kv.DecodeJSON(k, v, &n); derr != nil {
			return false
		}
		empty = n.Expired(now)
		return empty
	})
	if err == nil {
		err = derr
	}
	return empty, err
}

// DeleteInput describes Path Delete.
type DeleteInput struct {
	Path      string
	Recursive bool
	Cond      cond.Conditions
	// LeaseID is x-ms-lease-id (see checkLease).
	LeaseID string
	Caller  Caller
	// Retain, when positive, soft-deletes the path for that long (Blob
	// soft delete on: the account's retention days) instead of handing
	// it to the collector at once.
	Retain time.Duration
	// Vet, when set, vets the item after the conditions and the lease,
	// before anything is removed (the Blob layer refuses a file that has
	// snapshots). Its error is returned as is.
	Vet func(n *Node) error
	// DeletionID, when not nil, receives the deletion id of a retained
	// path (what Path - Delete answers in x-ms-deletion-id).
	DeletionID *string
}

// Delete removes a file or directory. A non-empty directory needs
// Recursive (else 409 DirectoryNotEmpty). The item's entry is removed and
// a garbage record written in the same transaction: the item and
// everything under it are unreachable at once, whatever their number, and
// Collect reclaims their records and content afterwards.
//
// For a caller that is not a superuser, Azure checks the permissions of
// every item of a recursive delete; so does Delete (w and x on every
// directory of the subtree, and the sticky bit), which is the one case
// where its cost grows with the subtree.
func (s *Namespace) Delete(tx kv.Tx, fs FS, in DeleteInput) (*Node, error) {
	parts, err := SplitPath(in.Path)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, withMessage(ErrPathConflict, "The root directory cannot be deleted.")
	}
	chain, err := s.walk(tx, fs, parts, in.Caller)
	if err != nil {
		return nil, err
	}
	if len(chain) != len(parts)+1 {
		return nil, ErrPathNotFound
	}
	parent, at := chain[len(parts)-1].node, chain[len(parts)]
	if at.node.Expired(s.now()) {
		return nil, ErrPathNotFound
	}
	// Every unmet condition is 412, If-None-Match: * on the existing item
	// included (as for Delete Blob; only creates answer it with 409).
	if err := in.Cond.CheckWrite(true, at.node.ETag, at.node.Modified); err != nil {
		return nil, ErrConditionNotMet
	}
	if err := checkLease(at.node, in.LeaseID, s.now()); err != nil {
		return nil, err
	}
	if in.Vet != nil {
		if err := in.Vet(at.node); err != nil {
			return nil, err
		}
	}
	if at.node.Dir && !in.Recursive {
		empty, err := s.isEmpty(tx, fs, at.node)
		if err != nil {
			return nil, err
		}
		if !empty {
			return nil, ErrDirectoryNotEmpty
		}
	}
	if c := in.Caller; !isSuper(c) {
		if !allows(c, parent, acl.Write|acl.Execute) || !acl.StickyAllows(parent.Access(), parent.Owner, at.node.Owner, *c) {
			return nil, ErrPermissionMismatch
		}
		if at.node.Dir && in.Recursive {
			if err := s.checkSubtreeDelete(tx, fs, at.node, c); err != nil {
				return nil, err
			}
		}
	}
	if err := tx.Delete(at.key); err != nil {
		return nil, err
	}
	// A deleted file leaves the tag index now (a soft-deleted one comes
	// back to it when restored, as "Manage and find Azure Blob data with
	// blob index tags" says of soft-deleted blobs).
	if err := dropTags(tx, fs.Account, at.node); err != nil {
		return nil, err
	}
	if in.Retain > 0 {
		id, err := s.softDelete(tx, fs, strings.Join(parts, "/"), at.node, s.now(), in.Retain)
		if err == nil && in.DeletionID != nil {
			*in.DeletionID = id
		}
		return at.node, err
	}
	return at.node, kv.PutJSON(tx, garbageKey(fs.Account, at.node.ID), garbage{Dir: at.node.Dir, Ref: at.node.Ref})
}

// checkSubtreeDelete checks that c may delete every item under dir.
func (s *Namespace) checkSubtreeDelete(tx kv.Tx, fs FS, dir *Node, c Caller) error {
	kids, err := s.children(tx, fs, dir, "", -1)
	if err != nil {
		return err
	}
	now := s.now()
	kids = slices.DeleteFunc(kids, func(l loc) bool { return l.node.Expired(now) })
	if len(kids) > 0 && !allows(c, dir, acl.Write|acl.Execute) {
		return ErrPermissionMismatch
	}
	for _, k := range kids {
		if !acl.StickyAllows(dir.Access(), dir.Owner, k.node.Owner, *c) {
			return ErrPermissionMismatch
		}
		if k.node.Dir {
			if err := s.checkSubtreeDelete(tx, fs, k.node, c); err != nil {
				return err
			}
		}
	}
	return nil
}

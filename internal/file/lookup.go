package file

import (
	"fmt"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// loadShare reads the share (or share snapshot) record: 404 ShareNotFound
// when it does not exist.
func loadShare(tx kv.Tx, acct, sh, snap string) (*Share, error) {
	var s Share
	ok, err := kv.GetJSON(tx, shareKey(acct, sh, snap), &s)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, azerr.New(azerr.ShareNotFound)
	}
	return &s, nil
}

// loadEntry reads the entry named folded in directory parent; nil if none.
func loadEntry(tx kv.Tx, acct, sh, snap string, parent uint64, folded string) (*Entry, error) {
	var e Entry
	ok, err := kv.GetJSON(tx, entryKey(acct, sh, snap, parent, folded), &e)
	if err != nil || !ok {
		return nil, err
	}
	return &e, nil
}

// loadByID reads the entry with file ID id through the ID index; nil if
// none.
func loadByID(tx kv.Tx, acct, sh, snap string, id uint64) (*Entry, error) {
	if id == RootID {
		return loadEntry(tx, acct, sh, snap, RootID, "")
	}
	var l loc
	ok, err := kv.GetJSON(tx, idKey(acct, sh, snap, id), &l)
	if err != nil || !ok {
		return nil, err
	}
	e, err := loadEntry(tx, acct, sh, snap, l.Parent, l.Name)
	if err != nil {
		return nil, err
	}
	if e == nil || e.ID != id {
		return nil, fmt.Errorf("file id index of %d points at a missing entry", id)
	}
	return e, nil
}

// walk resolves comps below the share's root. It returns the parent
// directory of the last component and the entry itself (nil when it does
// not exist). An empty comps resolves the root (parent nil). A missing or
// non-directory intermediate component is 404 ParentNotFound.
func walk(tx kv.Tx, acct, sh, snap string, comps []string) (parent, e *Entry, err error) {
	if err := prefetchPath(tx, acct, sh, snap, comps, false); err != nil {
		return nil, nil, err
	}
	dir, err := loadEntry(tx, acct, sh, snap, RootID, "")
	if err != nil {
		return nil, nil, err
	}
	if dir == nil {
		return nil, nil, fmt.Errorf("share %s/%s has no root directory", acct, sh)
	}
	if len(comps) == 0 {
		return nil, dir, nil
	}
	for _, c := range comps[:len(comps)-1] {
		next, err := loadEntry(tx, acct, sh, snap, dir.ID, fold(c))
		if err != nil {
			return nil, nil, err
		}
		if next == nil || !next.Dir {
			return nil, nil, azerr.New(azerr.ParentNotFound)
		}
		dir = next
	}
	e, err = loadEntry(tx, acct, sh, snap, dir.ID, fold(comps[len(comps)-1]))
	return dir, e, err
}

// prefetchPath names the keys a walk of comps starts with, and the share
// record when withShare: the root and the first component's entry (deeper
// entries are keyed by the IDs found on the way). On PostgreSQL they are
// read in one round trip instead of one each; keys read already cost
// nothing, so walk calls it after resolve has.
func prefetchPath(tx kv.Tx, acct, sh, snap string, comps []string, withShare bool) error {
	if !kv.Prefetches(tx) {
		return nil // the keys are built only for a store that reads ahead
	}
	keys := make([][]byte, 0, 3)
	if withShare {
		keys = append(keys, shareKey(acct, sh, snap))
	}
	keys = append(keys, rootKey(acct, sh, snap))
	if len(comps) > 0 {
		keys = append(keys, entryKey(acct, sh, snap, RootID, fold(comps[0])))
	}
	return kv.Prefetch(tx, keys...)
}

// target is a resolved request path.
type target struct {
	share  *Share
	parent *Entry // nil for the root
	e      *Entry // nil when the path does not exist
}

// resolvePath loads share sh (snapshot snap) of acct and the path comps
// in it.
func resolvePath(tx kv.Tx, acct, sh, snap string, comps []string) (target, error) {
	if err := prefetchPath(tx, acct, sh, snap, comps, true); err != nil {
		return target{}, err
	}
	rec, err := loadShare(tx, acct, sh, snap)
	if err != nil {
		return target{}, err
	}
	parent, e, err := walk(tx, acct, sh, snap, comps)
	if err != nil {
		return target{}, err
	}
	return target{share: rec, parent: parent, e: e}, nil
}

// putEntry writes e under its parent and name, and its ID index.
func putEntry(tx kv.Tx, acct, sh, snap string, e *Entry) error {
	folded := fold(e.Name)
	if e.ID == RootID {
		folded = ""
	}
	if err := kv.PutJSON(tx, entryKey(acct, sh, snap, e.Parent, folded), e); err != nil {
		return err
	}
	if e.ID == RootID {
		return nil
	}
	return kv.PutJSON(tx, idKey(acct, sh, snap, e.ID), loc{Parent: e.Parent, Name: folded})
}

// deleteEntry removes e's record and ID index (not its data references).
func deleteEntry(tx kv.Tx, acct, sh, snap string, e *Entry) error {
	if err := tx.Delete(entryKey(acct, sh, snap, e.Parent, fold(e.Name))); err != nil {
		return err
	}
	return tx.Delete(idKey(acct, sh, snap, e.ID))
}

// touch marks e written at now: a new ETag and Last-Modified.
func touch(e *Entry, now time.Time) {
	e.Modified = now
	e.ETag = newETag(now)
}

// hasChildren reports whether directory id has any entry.
func hasChildren(tx kv.Tx, acct, sh, snap string, id uint64) (bool, error) {
	pre := childrenPrefix(acct, sh, snap, id)
	found := false
	err := tx.Scan(pre, kv.PrefixEnd(pre), 1, false, func(_, _ []byte) bool {
		found = true
		return false
	})
	return found, err
}

// newRoot writes the root directory of a new share created at now, with
// the default permission.
func newRoot(tx kv.Tx, acct, sh string, now time.Time) error {
	key, err := storePermission(tx, acct, sh, defaultSDDL)
	if err != nil {
		return err
	}
	root := &Entry{ID: RootID, Dir: true, Created: now, SMB: SMBProps{Attrs: AttrDirectory, Created: now, LastWrite: now, Changed: now, PermKey: key}}
	touch(root, now)
	return putEntry(tx, acct, sh, "", root)
}

package ns

import (
	"bytes"
	"errors"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// A filesystem kept under another name: container soft delete on a
// hierarchical account ("Soft delete for containers" covers Data Lake
// Storage accounts: the Data Lake SDKs list deleted filesystems and
// restore them, e.g. azure-sdk-for-net DataLakeServiceClient.UndeleteFileSystem)
// keeps a deleted filesystem whole under an alias no live filesystem can
// have, and gives it back (internal/blob/domain_containersd.go).
//
// What names a filesystem, and what the keeping does with it:
//
//   - its root record ("dlr", account, filesystem): moved to the alias in
//     one write (KeepFilesystem, RestoreFilesystem). Every other node is
//     keyed under its parent's id, so the whole tree, with its owners,
//     groups, ACLs, properties, leases, tags and content references,
//     goes with the root, values unchanged;
//   - its soft-deleted paths ("dld", account, filesystem, path, id) and
//     their retention index entries ("dly", time, dld key), whose keys
//     embed the record's: the caller moves the records in bounded
//     transactions (DeletedPathsPrefix), each with its entry
//     (MoveRetention);
//   - the up entry of its root in the tag index ("dlu", account, root
//     id) -> ("r", filesystem): left naming the filesystem while it is
//     kept, so Find Blobs by Tags does not find its files (the resolver
//     checks the root of that name holds that id: there is none, or a new
//     filesystem's with another id), and made to name the filesystem it
//     is restored as (RestoreFilesystem).
//
// Node ids, content references ("dlc", "dlp", "dls" in internal/blob),
// the expiry index ("dlx") and garbage records ("dlg") name no
// filesystem and stay as they are.

// KeepFilesystem moves the root record of fs to alias, the whole tree
// with it. It reports whether fs had a root; a root already under alias
// is ErrFilesystemExists.
func KeepFilesystem(tx kv.Tx, fs FS, alias string) (bool, error) {
	_, ok, err := moveRoot(tx, fs.Account, fs.Filesystem, alias)
	return ok, err
}

// RestoreFilesystem moves the root kept under alias back as the root of
// fs, the whole tree with it, and makes the root's up entry, when it has
// one, name fs (it is restored under another name than it had). It
// reports whether there was a root under alias; a root of fs is
// ErrFilesystemExists.
func RestoreFilesystem(tx kv.Tx, alias string, fs FS) (bool, error) {
	root, ok, err := moveRoot(tx, fs.Account, alias, fs.Filesystem)
	if err != nil || !ok || !root.Up {
		return ok, err
	}
	return true, putUp(tx, fs.Account, root.ID, kv.Key("r", fs.Filesystem))
}

// moveRoot moves the root record of filesystem from of acct to name to.
func moveRoot(tx kv.Tx, acct, from, to string) (*Node, bool, error) {
	v, err := tx.Get(rootKey(acct, from))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v = bytes.Clone(v)
	var root Node
	if err := kv.DecodeJSON(rootKey(acct, from), v, &root); err != nil {
		return nil, false, err
	}
	if _, err := tx.Get(rootKey(acct, to)); err == nil {
		return nil, false, ErrFilesystemExists
	} else if !errors.Is(err, kv.ErrNotFound) {
		return nil, false, err
	}
	if err := tx.Put(rootKey(acct, to), v); err != nil {
		return nil, false, err
	}
	return &root, true, tx.Delete(rootKey(acct, from))
}

// DeletedPathsPrefix is the key range of fs's soft-deleted paths: a
// move of fs's records to another name carries the range, calling
// MoveRetention for each record it moves.
func DeletedPathsPrefix(fs FS) []byte { return deletedPrefix(fs) }

// MoveRetention moves the retention index entry of the soft-deleted path
// record v, moved from key k to key nk, so that the end of its retention
// still finds it.
func MoveRetention(tx kv.Tx, k, v, nk []byte) error {
	var rec deletedRec
	if err := kv.DecodeJSON(k, v, &rec); err != nil {
		return err
	}
	old := retainKey(rec.Expires, k)
	if _, err := tx.Get(old); errors.Is(err, kv.ErrNotFound) {
		return nil // its retention ended, and the collector took it
	} else if err != nil {
		return err
	}
	if err := tx.Delete(old); err != nil {
		return err
	}
	return tx.Put(retainKey(rec.Expires, nk), nil)
}

// DetachRoot detaches the tree of fs in one write, as DeleteFilesystem
// does, but leaves its soft-deleted paths to DropDeletedPaths, so a
// filesystem with many of them is reclaimed in bounded transactions. It
// reports whether fs had a root.
func DetachRoot(tx kv.Tx, fs FS) (bool, error) {
	var root Node
	ok, err := kv.GetJSON(tx, rootKey(fs.Account, fs.Filesystem), &root)
	if err != nil || !ok {
		return false, err
	}
	if err := tx.Delete(rootKey(fs.Account, fs.Filesystem)); err != nil {
		return false, err
	}
	return true, kv.PutJSON(tx, garbageKey(fs.Account, root.ID), garbage{Dir: true})
}

// DropDeletedPaths ends up to limit soft-deleted paths of fs, whose
// filesystem is gone (DetachRoot): each becomes a garbage record for the
// collector, and its retention index entry goes with it. It returns how
// many it ended; fewer than limit when none is left.
func DropDeletedPaths(tx kv.Tx, fs FS, limit int) (int, error) {
	p := deletedPrefix(fs)
	type rec struct{ k, v []byte }
	var recs []rec
	if err := tx.Scan(p, kv.PrefixEnd(p), limit, false, func(k, v []byte) bool {
		recs = append(recs, rec{bytes.Clone(k), bytes.Clone(v)})
		return true
	}); err != nil {
		return 0, err
	}
	for _, r := range recs {
		var d deletedRec
		if err := kv.DecodeJSON(r.k, r.v, &d); err != nil {
			return 0, err
		}
		if err := tx.Delete(retainKey(d.Expires, r.k)); err != nil {
			return 0, err
		}
		if err := dropDeleted(tx, r.k); err != nil {
			return 0, err
		}
	}
	return len(recs), nil
}

package ns

import (
	"strings"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// ScanDeleted calls fn with the soft-deleted paths of fs still retained
// at the namespace's time whose path starts with prefix, in path order
// (deletion ids in order within a path), from position (from, afterID):
// the deletions of path from with an id after afterID ("" for all of
// them), then those of the paths after from. It stops when fn returns
// false. List Blobs with include=deleted merges it with ScanBlobs, whose
// byte order of full names it shares. The filesystem must exist (its
// caller has checked).
func (s *Namespace) ScanDeleted(tx kv.Tx, fs FS, prefix, from, afterID string, fn func(DeletedPath) bool) error {
	lo := kv.AppendPartial(deletedPrefix(fs), prefix)
	hi := kv.PrefixEnd(lo)
	start := kv.AppendComponent(deletedPrefix(fs), from)
	if afterID != "" {
		start = append(kv.AppendComponent(start, afterID), 0)
	}
	if string(start) < string(lo) {
		start = lo
	}
	now := s.now()
	var derr error
	err := tx.Scan(start, hi, 0, false, func(k, v []byte) bool {
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 5 {
			derr = errBadKey(k)
			return false
		}
		var rec deletedRec
		if derr = kv.DecodeJSON(k, v, &rec); derr != nil {
			return false
		}
		if !now.Before(rec.Expires) {
			return true
		}
		return fn(DeletedPath{Path: parts[3], DeletionID: parts[4], Node: rec.Node, At: rec.At, Expires: rec.Expires})
	})
	if err == nil {
		err = derr
	}
	return err
}

// LatestDeletion is the deletion id of the most recent retained deletion
// of path in fs, "" when none is retained: what Undelete Blob without
// x-ms-undelete-source restores on a hierarchical account.
func (s *Namespace) LatestDeletion(tx kv.Tx, fs FS, path string) (string, error) {
	parts, err := SplitPath(path)
	if err != nil {
		return "", err
	}
	path = strings.Join(parts, "/")
	latest := ""
	err = s.ScanDeleted(tx, fs, path, path, "", func(d DeletedPath) bool {
		if d.Path != path {
			return false
		}
		// Ids are FILETIME ticks of one width: later is greater.
		if len(d.DeletionID) > len(latest) || (len(d.DeletionID) == len(latest) && d.DeletionID > latest) {
			latest = d.DeletionID
		}
		return true
	})
	return latest, err
}

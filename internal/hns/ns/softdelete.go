package ns

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// Soft-deleted paths, for accounts whose Blob service has soft delete on
// (DeleteRetentionPolicy; "Soft delete for blobs" covers accounts with a
// hierarchical namespace). A deleted file or directory keeps its node
// record, under its filesystem, its full path and a deletion id, until its
// retention ends: a directory's descendants stay keyed under its id, so
// deleting and restoring a directory are still one write each whatever it
// holds. List Blobs with showonly=deleted lists these records (ListDeleted),
// Path Undelete restores one at its path (Undelete), and the collector
// turns the ones whose retention has ended into garbage records.
//
//	("dld", account, filesystem, path, deletion id) -> deletedRec
//	("dly", time, dld key)                          -> "" (retention ends at time)

func deletedKey(fs FS, path, id string) []byte {
	return kv.Key("dld", fs.Account, fs.Filesystem, path, id)
}

func deletedPrefix(fs FS) []byte { return kv.Key("dld", fs.Account, fs.Filesystem) }

func retainKey(t time.Time, dk []byte) []byte {
	return kv.Key("dly", fmt.Sprintf("%016x", max(t.UnixNano(), 0)), string(dk))
}

// deletedRec is a soft-deleted path: its node as it was, when it was
// deleted and when its retention ends.
type deletedRec struct {
	Node    *Node     `json:"n"`
	At      time.Time `json:"at"`
	Expires time.Time `json:"ex"`
}

// DeletedPath is one soft-deleted path as List Blobs (showonly=deleted)
// shows it.
type DeletedPath struct {
	Path       string
	DeletionID string
	Node       *Node
	At         time.Time // x-ms-deleted-time
	Expires    time.Time // the end of its retention
}

// RemainingDays is RemainingRetentionDays at now: whole days left, not
// counting the day in progress, as Blob soft delete reports it.
func (d DeletedPath) RemainingDays(now time.Time) int {
	left := d.Expires.Sub(now)
	if left <= 0 {
		return 0
	}
	const day = 24 * time.Hour
	return int((left+day-1)/day) - 1
}

// deletionID is a deletion id for a path deleted at now: FILETIME ticks,
// the form Azure's deletion ids take ("132658816156507617" in the
// Restore-AzDataLakeGen2DeletedItem examples), one more while a path
// already has that id.
func deletionID(tx kv.Tx, fs FS, path string, now time.Time) (string, error) {
	ticks := uint64(now.UnixNano()/100) + 116444736000000000
	for {
		id := strconv.FormatUint(ticks, 10)
		switch _, err := tx.Get(deletedKey(fs, path, id)); {
		case errors.Is(err, kv.ErrNotFound):
			return id, nil
		case err != nil:
			return "", err
		}
		ticks++
	}
}

// softDelete keeps n, just removed from path, as a soft-deleted path for
// retain, and returns its deletion id.
func (s *Namespace) softDelete(tx kv.Tx, fs FS, path string, n *Node, now time.Time, retain time.Duration) (string, error) {
	id, err := deletionID(tx, fs, path, now)
	if err != nil {
		return "", err
	}
	kept := *n
	kept.Lease = lease.Lease{} // a restored path is not leased
	rec := deletedRec{Node: &kept, At: now, Expires: now.Add(retain)}
	dk := deletedKey(fs, path, id)
	if err := tx.Put(retainKey(rec.Expires, dk), nil); err != nil {
		return "", err
	}
	return id, kv.PutJSON(tx, dk, &rec)
}

// ListDeletedInput describes a listing of soft-deleted paths: those whose
// path starts with Prefix, after the entry Marker names (a marker returned
// by a previous page), at most Max (<= 0: 5,000).
type ListDeletedInput struct {
	Prefix, Marker string
	Max            int
}

// ListDeleted lists the soft-deleted paths of fs still retained at the
// namespace's time, in path order (ids in order within a path), and the
// marker of the next page ("" when there is none; opaque: the last path,
// base64url, a dot and its deletion id).
func (s *Namespace) ListDeleted(tx kv.Tx, fs FS, in ListDeletedInput) ([]DeletedPath, string, error) {
	if _, err := s.root(tx, fs); err != nil {
		return nil, "", err
	}
	max := in.Max
	if max <= 0 || max > DefaultMaxResults {
		max = DefaultMaxResults
	}
	p := deletedPrefix(fs)
	start := p
	if in.Marker != "" {
		enc, id, ok := strings.Cut(in.Marker, ".")
		raw, err := base64.RawURLEncoding.DecodeString(enc)
		if !ok || err != nil || id == "" {
			return nil, "", ErrInvalidContinuation
		}
		path := string(raw)
		start = append(deletedKey(fs, path, id), 0)
	}
	now := s.now()
	var out []DeletedPath
	next := ""
	var derr error
	err := tx.Scan(start, kv.PrefixEnd(p), 0, false, func(k, v []byte) bool {
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 5 {
			derr = errBadKey(k)
			return false
		}
		if !strings.HasPrefix(parts[3], in.Prefix) {
			return true
		}
		var rec deletedRec
		if derr = kv.DecodeJSON(k, v, &rec); derr != nil {
			return false
		}
		if !now.Before(rec.Expires) {
			return true
		}
		if len(out) == max {
			last := out[len(out)-1]
			next = base64.RawURLEncoding.EncodeToString([]byte(last.Path)) + "." + last.DeletionID
			return false
		}
		out = append(out, DeletedPath{Path: parts[3], DeletionID: parts[4], Node: rec.Node, At: rec.At, Expires: rec.Expires})
		return true
	})
	if err == nil {
		err = derr
	}
	return out, next, err
}

// Undelete restores the soft-deleted path deleted with deletion id id at
// its path: a file with its content, a directory with everything it held
// when it was deleted. The path must not exist (409 PathAlreadyExists; an
// expired file there is replaced) and its parent must be a directory (404
// PathNotFound: restore the parent first); an unknown or no longer
// retained deletion is 404 PathNotFound. Restoring is as creating the
// path: the caller needs write and execute on the parent.
func (s *Namespace) Undelete(tx kv.Tx, fs FS, path, id string, c Caller) (*Node, error) {
	parts, err := SplitPath(path)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, ErrPathNotFound
	}
	dk := deletedKey(fs, strings.Join(parts, "/"), id)
	var rec deletedRec
	ok, err := kv.GetJSON(tx, dk, &rec)
	if err != nil {
		return nil, err
	}
	now := s.now()
	if !ok || !now.Before(rec.Expires) {
		return nil, ErrPathNotFound
	}
	chain, err := s.walk(tx, fs, parts, c)
	if err != nil {
		return nil, err
	}
	if len(chain) < len(parts) || !chain[len(parts)-1].node.Dir {
		return nil, ErrPathNotFound
	}
	parent := chain[len(parts)-1].node
	if len(chain) == len(parts)+1 {
		at := chain[len(parts)]
		if !at.node.Expired(now) {
			return nil, ErrPathAlreadyExists
		}
		if err := kv.PutJSON(tx, garbageKey(fs.Account, at.node.ID), garbage{Ref: at.node.Ref}); err != nil {
			return nil, err
		}
		if err := dropTags(tx, fs.Account, at.node); err != nil {
			return nil, err
		}
	}
	if !allows(c, parent, acl.Write|acl.Execute) {
		return nil, ErrPermissionMismatch
	}
	key := childKey(fs.Account, parent.ID, parts[len(parts)-1])
	if err := indexExpiry(tx, fs.Account, key, rec.Node); err != nil {
		return nil, err
	}
	// Back in the tag index, under its parent now (tags.go).
	if err := indexTags(tx, fs.Account, rec.Node); err != nil {
		return nil, err
	}
	if err := placeTagged(tx, fs, chain[:len(parts)], rec.Node, parts[len(parts)-1]); err != nil {
		return nil, err
	}
	if err := tx.Delete(retainKey(rec.Expires, dk)); err != nil {
		return nil, err
	}
	if err := tx.Delete(dk); err != nil {
		return nil, err
	}
	return rec.Node, kv.PutJSON(tx, key, rec.Node)
}

// retainStep turns up to batch soft-deleted paths whose retention ended
// by now into garbage records; false when none was due.
func retainStep(tx kv.Tx, now time.Time, batch int) (bool, error) {
	p := kv.Key("dly")
	end := kv.Key("dly", fmt.Sprintf("%016x", now.UnixNano()+1))
	var due [][]byte
	if err := tx.Scan(p, end, batch, false, func(k, _ []byte) bool {
		due = append(due, append([]byte(nil), k...))
		return true
	}); err != nil {
		return false, err
	}
	for _, k := range due {
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 3 {
			return false, errBadKey(k)
		}
		if err := dropDeleted(tx, []byte(parts[2])); err != nil {
			return false, err
		}
		if err := tx.Delete(k); err != nil {
			return false, err
		}
	}
	return len(due) > 0, nil
}

// dropDeleted ends the soft-deleted path at dk, if it is still there: its
// node becomes a garbage record for the collector.
func dropDeleted(tx kv.Tx, dk []byte) error {
	var rec deletedRec
	ok, err := kv.GetJSON(tx, dk, &rec)
	if err != nil || !ok {
		return err
	}
	parts, ok := kv.Split(dk)
	if !ok || len(parts) != 5 {
		return errBadKey(dk)
	}
	if err := kv.PutJSON(tx, garbageKey(parts[1], rec.Node.ID), garbage{Dir: rec.Node.Dir, Ref: rec.Node.Ref}); err != nil {
		return err
	}
	return tx.Delete(dk)
}

// dropFilesystemDeleted ends every soft-deleted path of fs (its
// filesystem is being deleted). Their retention index entries are left
// for the collector, which finds nothing at them.
func dropFilesystemDeleted(tx kv.Tx, fs FS) error {
	p := deletedPrefix(fs)
	var keys [][]byte
	if err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, _ []byte) bool {
		keys = append(keys, append([]byte(nil), k...))
		return true
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := dropDeleted(tx, k); err != nil {
			return err
		}
	}
	return nil
}

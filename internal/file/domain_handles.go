package file

import (
	"context"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// List Handles and Force Close Handles as domain methods, over the
// store-backed handle records of package handle (filerest/handles_rest.go is
// their front end).
//
// Handle records name a file or directory by its file ID in decimal
// (FormatID(entry.ID), the x-ms-file-id) and its parent likewise; a
// record's Path is where the item was when it was opened, so listings
// report the item's current path and parent from the tree instead (an
// item renamed since keeps its handles: they follow the file ID).

// ListHandlesInput is the input of ListHandles.
type ListHandlesInput struct {
	// Ref names the file or directory (Path nil: the share root).
	Ref
	// Recursive covers a directory's whole subtree (ignored for a file).
	Recursive bool
	// After is where the previous page stopped (zero: the start).
	After handle.Position
	// MaxResults bounds the page (at least 1).
	MaxResults int
}

// ListHandlesOutput is a page of ListHandles.
type ListHandlesOutput struct {
	// Handles are the open handles, each with the item's current Path
	// and ParentID.
	Handles []handle.Handle
	// NextMarker continues the listing (handle.EncodeMarker); "" when it
	// is complete.
	NextMarker string
}

// ListHandles is List Handles on a file, a directory or the share root,
// in one read transaction. A share snapshot has no open handles: its
// listing is empty (inferred). Handle management must work on a
// delete-pending item (it is how its last handle gets closed), so no
// handlesAt check here (inferred).
func (s *Service) ListHandles(ctx context.Context, in ListHandlesInput) (ListHandlesOutput, error) {
	var out ListHandlesOutput
	ht := &handleTarget{c: caller{acct: in.Account, share: in.Share, snap: in.Snapshot, path: in.Path, at: in.Now}, recursive: in.Recursive}
	err := s.store.View(ctx, func(tx kv.Tx) error {
		out = ListHandlesOutput{}
		sc, err := newHandleScope(tx, ht)
		if err != nil || ht.c.snap != "" {
			return err
		}
		var last handle.Position
		return sc.each(in.After, func(h handle.Handle) (bool, error) {
			if len(out.Handles) == in.MaxResults {
				out.NextMarker = handle.EncodeMarker(last)
				return false, nil
			}
			last = h.Position()
			if err := sc.current(&h); err != nil {
				return false, err
			}
			out.Handles = append(out.Handles, h)
			return true, nil
		})
	})
	return out, err
}

// current sets h's Path and ParentID to the item's current ones, when the
// item still exists.
func (sc *handleScope) current(h *handle.Handle) error {
	id, err := handleFileID(*h)
	if err != nil {
		return err
	}
	p, ok, err := sc.path(id)
	if err != nil {
		return err
	}
	if ok {
		h.Path = p
		if id != RootID {
			e, _ := sc.node(id)
			h.ParentID = FormatID(e.Parent)
		}
	}
	return nil
}

// ForceCloseHandlesInput is the input of ForceCloseHandles.
type ForceCloseHandlesInput struct {
	// Ref names the file or directory (Path nil: the share root).
	Ref
	// Recursive covers a directory's whole subtree (ignored for a file).
	Recursive bool
	// HandleID is the handle to close, or "*" for every handle of the
	// scope.
	HandleID string
	// After is where the previous call stopped (zero: the start).
	After handle.Position
}

// ForceCloseHandlesOutput is the result of ForceCloseHandles.
type ForceCloseHandlesOutput struct {
	// Closed is how many handles were closed.
	Closed int
	// NextMarker is where the next call resumes (handle.EncodeMarker);
	// "" when none is left.
	NextMarker string
}

// ForceCloseHandles is Force Close Handles: HandleID "*" closes every
// handle of the scope, an ID only that handle (none closed if it is not
// open: not an error) (Force Close Handles,
// https://learn.microsoft.com/en-us/rest/api/storageservices/force-close-handles).
// At most forceCloseBatch handles close per call; NextMarker then says
// where the next call resumes. A closed delete-on-close handle, or the
// last handle of a delete-pending item, deletes the item in the same
// transaction.
func (s *Service) ForceCloseHandles(ctx context.Context, in ForceCloseHandlesInput) (ForceCloseHandlesOutput, error) {
	var out ForceCloseHandlesOutput
	ht := &handleTarget{c: caller{acct: in.Account, share: in.Share, snap: in.Snapshot, path: in.Path, at: in.Now}, recursive: in.Recursive}
	hid := in.HandleID
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		out = ForceCloseHandlesOutput{}
		sc, err := newHandleScope(tx, ht)
		if err != nil {
			return err
		}
		var victims []handle.Handle
		err = sc.each(in.After, func(h handle.Handle) (bool, error) {
			if hid != "*" && h.HandleID != hid {
				return true, nil
			}
			if len(victims) == forceCloseBatch {
				out.NextMarker = handle.EncodeMarker(victims[len(victims)-1].Position())
				return false, nil
			}
			victims = append(victims, h)
			return true, nil
		})
		if err != nil {
			return err
		}
		for _, h := range victims {
			res, err := handle.ForceClose(tx, sc.now, sc.acct, sc.sh, h.FileID, h.HandleID, 0)
			if err != nil {
				return err
			}
			out.Closed += len(res.Handles)
			for _, f := range res.Delete {
				if err := deleteClosedEntry(tx, f.Account, f.Share, f.FileID, sc.now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return out, err
}

// forceCloseBatch is how many handles one Force Close Handles request
// closes; when more match, x-ms-marker says where the next call resumes
// (inferred: the service closes what it can before its timeout). A variable so
// that tests can make batches small.
var forceCloseBatch = 1000

// handleScope is the set of handles a request covers: those of one file
// or directory, or with x-ms-recursive those of a directory and
// everything below it (the whole share for the root).
type handleScope struct {
	tx        kv.Tx
	now       time.Time
	acct, sh  string
	target    *Entry
	recursive bool
	nodes     map[uint64]*Entry // file ID → live entry (nil: none)
}

// node returns the live entry with file ID id (nil if none), cached.
func (sc *handleScope) node(id uint64) (*Entry, error) {
	if e, ok := sc.nodes[id]; ok {
		return e, nil
	}
	e, err := loadByID(sc.tx, sc.acct, sc.sh, "", id)
	if err != nil {
		return nil, err
	}
	sc.nodes[id] = e
	return e, nil
}

// path returns the current share-relative path of the item with file
// ID id; ok is false when the item is gone.
func (sc *handleScope) path(id uint64) (p string, ok bool, err error) {
	var names []string
	for id != RootID {
		e, err := sc.node(id)
		if err != nil || e == nil {
			return "", false, err
		}
		names = append(names, e.Name)
		id = e.Parent
	}
	for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
		names[i], names[j] = names[j], names[i]
	}
	return joinPath(names), true, nil
}

func joinPath(names []string) string {
	n := 0
	for _, s := range names {
		n += len(s) + 1
	}
	b := make([]byte, 0, n)
	for i, s := range names {
		if i > 0 {
			b = append(b, '/')
		}
		b = append(b, s...)
	}
	return string(b)
}

// covers reports whether a handle of the share belongs to the scope.
func (sc *handleScope) covers(h handle.Handle) (bool, error) {
	if !sc.recursive {
		return h.FileID == FormatID(sc.target.ID), nil
	}
	if sc.target.ID == RootID {
		return true, nil
	}
	id, err := handleFileID(h)
	if err != nil {
		return false, err
	}
	for id != RootID {
		if id == sc.target.ID {
			return true, nil
		}
		e, err := sc.node(id)
		if err != nil || e == nil {
			return false, err
		}
		id = e.Parent
	}
	return false, nil
}

// each calls fn with the live handles of the scope in listing order,
// strictly after the position after; fn returns false to stop.
func (sc *handleScope) each(after handle.Position, fn func(handle.Handle) (bool, error)) error {
	var ferr error
	visit := func(h handle.Handle) bool {
		ok, err := sc.covers(h)
		if err == nil && ok {
			ok, err = fn(h)
		} else {
			ok = err == nil
		}
		if err != nil {
			ferr = err
			return false
		}
		return ok
	}
	var err error
	if sc.recursive {
		err = handle.List(sc.tx, sc.now, sc.acct, sc.sh, after, visit)
	} else {
		fid := FormatID(sc.target.ID)
		from := ""
		if after != (handle.Position{}) {
			if after.FileID != fid {
				return BadHandleMarker(handle.EncodeMarker(after))
			}
			from = after.HandleID
		}
		err = handle.ListFile(sc.tx, sc.now, sc.acct, sc.sh, fid, from, visit)
	}
	if err != nil {
		return err
	}
	return ferr
}

// handleTarget is the item of a List Handles or Force Close Handles
// request: its account, share, snapshot and path, the request's time, and
// x-ms-recursive.
type handleTarget struct {
	c         caller
	recursive bool
}

// newHandleScope resolves ht's path (a file or a directory, live or in
// a snapshot) inside tx and its handle scope.
func newHandleScope(tx kv.Tx, ht *handleTarget) (*handleScope, error) {
	c := &ht.c
	t, err := resolvePath(tx, c.acct, c.share, c.snap, c.path)
	if err != nil {
		return nil, err
	}
	if t.e == nil {
		return nil, azerr.New(azerr.ResourceNotFound)
	}
	// x-ms-recursive only applies to directories (List Handles,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/list-handles).
	return &handleScope{
		tx: tx, now: c.at, acct: c.acct, sh: c.share, target: t.e,
		recursive: ht.recursive && t.e.Dir, nodes: map[uint64]*Entry{},
	}, nil
}

// deleteClosedEntry deletes the live item a handle close reported (its
// last handle closed while it was delete-pending): a file with its data
// references; a directory only if it is empty (NTFS does not let a
// non-empty directory become delete-pending, so one that is has gained
// children through REST meanwhile and stays) (inferred). A file ID that names
// no item is ignored.
func deleteClosedEntry(tx kv.Tx, acct, sh, fileID string, now time.Time) error {
	id, err := strconv.ParseUint(fileID, 10, 64)
	if err != nil || id == RootID {
		return nil
	}
	e, err := loadByID(tx, acct, sh, "", id)
	if err != nil || e == nil {
		return err
	}
	if e.Dir {
		busy, err := hasChildren(tx, acct, sh, "", e.ID)
		if err != nil || busy {
			return err
		}
	}
	return removeItem(tx, now, acct, sh, e)
}

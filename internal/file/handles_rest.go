package file

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// List Handles and Force Close Handles, over the store-backed handle
// records of package handle.
//
// Handle records name a file or directory by its file ID in decimal
// (FormatID(entry.ID), the x-ms-file-id) and its parent likewise; a
// record's Path is where the item was when it was opened, so listings
// report the item's current path and parent from the tree instead (an
// item renamed since keeps its handles: they follow the file ID).

// maxHandleResults is the largest List Handles page (List Handles,
// https://learn.microsoft.com/en-us/rest/api/storageservices/list-handles,
// maxresults "up to 5,000").
const maxHandleResults = 5000

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
	for id != rootID {
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
	if sc.target.ID == rootID {
		return true, nil
	}
	id, err := handleFileID(h)
	if err != nil {
		return false, err
	}
	for id != rootID {
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
				return badHandleMarker(handle.EncodeMarker(after))
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

func badHandleMarker(m string) error {
	return azerr.Newf(azerr.InvalidQueryParameterValue, "The marker is not valid.").With("QueryParameterName", "marker").With("QueryParameterValue", m)
}

// handleTarget is the item of a List Handles or Force Close Handles
// request: its account, share, snapshot and path, the request's time, and
// x-ms-recursive.
type handleTarget struct {
	c         caller
	recursive bool
}

// parseHandleTarget reads r's item and x-ms-recursive.
func parseHandleTarget(r *req) (*handleTarget, error) {
	recursive, err := flagHeader(r.Header, "x-ms-recursive")
	if err != nil {
		return nil, err
	}
	return &handleTarget{c: caller{acct: r.Account, share: r.share, snap: r.snap, path: r.comps, at: r.Now}, recursive: recursive}, nil
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

func parseHandleMarker(r *req) (handle.Position, error) {
	m := r.q.Get("marker")
	p, err := handle.DecodeMarker(m)
	if err != nil {
		return handle.Position{}, badHandleMarker(m)
	}
	return p, nil
}

// handleXML is a <Handle> of List Handles (azfile generated Handle:
// OpenTime and LastReconnectTime are RFC 1123, Path may be Encoded).
type handleXML struct {
	HandleID          string           `xml:"HandleId"`
	Path              wire.EncodedName `xml:"Path"`
	FileID            string           `xml:"FileId"`
	ParentID          string           `xml:"ParentId"`
	SessionID         string           `xml:"SessionId"`
	ClientIP          string           `xml:"ClientIp"`
	OpenTime          string           `xml:"OpenTime"`
	LastReconnectTime string           `xml:"LastReconnectTime,omitempty"`
	AccessRights      []string         `xml:"AccessRightList>AccessRight"`
}

type handleEntriesXML struct {
	Handles []handleXML `xml:"Handle"`
}

type listHandlesXML struct {
	XMLName    struct{}         `xml:"EnumerationResults"`
	Entries    handleEntriesXML `xml:"Entries"`
	NextMarker string           `xml:"NextMarker"`
}

// render converts a handle, with the item's current path and parent.
func (sc *handleScope) render(h handle.Handle) (handleXML, error) {
	x := handleXML{
		HandleID: h.HandleID, Path: wire.EncodedName(h.Path), FileID: h.FileID, ParentID: h.ParentID,
		SessionID: h.SessionID, ClientIP: h.ClientIP, OpenTime: h.OpenTime.UTC().Format(http.TimeFormat),
		AccessRights: h.Access.Rights(),
	}
	if !h.LastReconnectTime.IsZero() {
		x.LastReconnectTime = h.LastReconnectTime.UTC().Format(http.TimeFormat)
	}
	id, err := handleFileID(h)
	if err != nil {
		return x, err
	}
	p, ok, err := sc.path(id)
	if err != nil {
		return x, err
	}
	if ok {
		x.Path = wire.EncodedName(p)
		if id != rootID {
			e, _ := sc.node(id)
			x.ParentID = FormatID(e.Parent)
		}
	}
	return x, nil
}

// listHandles implements List Handles on a file, a directory or the
// share root (x-ms-recursive: the directory's whole subtree). A share
// snapshot has no open handles: its listing is empty (inferred).
func (s *Service) listHandles(w http.ResponseWriter, r *req) error {
	maxN, err := wire.ParseIntQuery(r.q, "maxresults", 1, math.MaxInt32, maxHandleResults)
	if err != nil {
		return err
	}
	maxN = min(maxN, maxHandleResults)
	after, err := parseHandleMarker(r)
	if err != nil {
		return err
	}
	ht, err := parseHandleTarget(r)
	if err != nil {
		return err
	}
	var out listHandlesXML
	err = s.store.View(r.Context(), func(tx kv.Tx) error {
		out = listHandlesXML{Entries: handleEntriesXML{Handles: []handleXML{}}}
		sc, err := newHandleScope(tx, ht)
		if err != nil || ht.c.snap != "" {
			return err
		}
		// Handle management must work on a delete-pending item (it is
		// how its last handle gets closed), so no handlesAt here (inferred).
		var last handle.Position
		return sc.each(after, func(h handle.Handle) (bool, error) {
			if len(out.Entries.Handles) == maxN {
				out.NextMarker = handle.EncodeMarker(last)
				return false, nil
			}
			x, err := sc.render(h)
			if err != nil {
				return false, err
			}
			out.Entries.Handles = append(out.Entries.Handles, x)
			last = h.Position()
			return true, nil
		})
	})
	if err != nil {
		return err
	}
	return server.WriteXML(w, http.StatusOK, out)
}

// forceCloseHandles implements Force Close Handles: x-ms-handle-id "*" closes
// every handle of the scope, an ID only that handle (none closed if it is not
// open: not an error) (Force Close Handles,
// https://learn.microsoft.com/en-us/rest/api/storageservices/force-close-handles).
// At most forceCloseBatch handles close per request; x-ms-marker then says
// where the next request resumes. A closed delete-on-close handle, or the
// last handle of a delete-pending item, deletes the item in the same
// transaction.
func (s *Service) forceCloseHandles(w http.ResponseWriter, r *req) error {
	hid := r.Header.Get("x-ms-handle-id")
	if hid == "" {
		return azerr.MissingHeader("x-ms-handle-id")
	}
	if _, ok := handle.ParseHandleID(hid); !ok && hid != "*" {
		return azerr.InvalidHeader("x-ms-handle-id", hid)
	}
	after, err := parseHandleMarker(r)
	if err != nil {
		return err
	}
	ht, err := parseHandleTarget(r)
	if err != nil {
		return err
	}
	var closed int
	var next string
	err = s.store.Update(r.Context(), func(tx kv.Tx) error {
		closed, next = 0, ""
		sc, err := newHandleScope(tx, ht)
		if err != nil {
			return err
		}
		var victims []handle.Handle
		err = sc.each(after, func(h handle.Handle) (bool, error) {
			if hid != "*" && h.HandleID != hid {
				return true, nil
			}
			if len(victims) == forceCloseBatch {
				next = handle.EncodeMarker(victims[len(victims)-1].Position())
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
			closed += len(res.Handles)
			for _, f := range res.Delete {
				if err := deleteClosedEntry(tx, f.Account, f.Share, f.FileID, sc.now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("x-ms-number-of-handles-closed", strconv.Itoa(closed))
	h.Set("x-ms-number-of-handles-failed", "0")
	if next != "" {
		h.Set("x-ms-marker", next)
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// deleteClosedEntry deletes the live item a handle close reported (its
// last handle closed while it was delete-pending): a file with its data
// references; a directory only if it is empty (NTFS does not let a
// non-empty directory become delete-pending, so one that is has gained
// children through REST meanwhile and stays) (inferred). A file ID that names
// no item is ignored.
func deleteClosedEntry(tx kv.Tx, acct, sh, fileID string, now time.Time) error {
	id, err := strconv.ParseUint(fileID, 10, 64)
	if err != nil || id == rootID {
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

// handleFileID returns the file ID of an open handle. The file service
// stores handles with FormatID, so one that does not parse is a corrupt
// record: an error, never a handle to skip (which would, for instance, let
// a directory move with an item below it still open).
func handleFileID(h handle.Handle) (uint64, error) {
	id, err := strconv.ParseUint(h.FileID, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("file: handle %s of share %s has a malformed file id %q", h.HandleID, h.Share, h.FileID)
	}
	return id, nil
}

package handle

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Errors. The File REST service maps ErrSharingViolation to 409
// SharingViolation and ErrDeletePending to 409 SMBDeletePending; an SMB
// front end maps them to STATUS_SHARING_VIOLATION and
// STATUS_DELETE_PENDING. Returned errors may wrap them with details: test
// with errors.Is.
var (
	// ErrSharingViolation: an open or REST operation conflicts with the
	// access or share mode of a live handle.
	ErrSharingViolation = errors.New("handle: sharing violation")
	// ErrDeletePending: the file is marked for deletion by an SMB client.
	ErrDeletePending = errors.New("handle: file is delete-pending")
	// ErrNoHandle: no live handle with that id on that file.
	ErrNoHandle = errors.New("handle: no such handle")
	// ErrAccessDenied: the handle lacks the access the operation needs
	// (delete-on-close or set-disposition without Delete access).
	ErrAccessDenied = errors.New("handle: access denied")
	// ErrOwnerNotLive: the owner named in the request has no live
	// heartbeat.
	ErrOwnerNotLive = errors.New("handle: owner is not live")
	// ErrInvalid: a malformed request (empty ids, bits out of range, a
	// malformed or already used handle id).
	ErrInvalid = errors.New("handle: invalid request")
)

// Key prefixes (see the package doc).
const (
	pfxHandle  = "fh"
	pfxFile    = "fhf"
	pfxSession = "fhs"
	pfxOwnerIx = "fhw"
	pfxOwner   = "fho"
	pfxPending = "fhp"
)

// Handle is an open handle as stored and listed.
type Handle struct {
	Account  string
	Share    string
	FileID   string
	HandleID string // decimal uint64, nonzero
	// ParentID is the fileID of the directory holding the file at open.
	ParentID string
	// Path is share-relative ("dir/file.txt"), for List Handles.
	Path      string
	SessionID string
	// ClientIP is the client's address with port ("10.0.0.5:49152").
	ClientIP string
	OpenTime time.Time
	// LastReconnectTime is zero unless the handle was reconnected.
	LastReconnectTime time.Time
	Access            Access
	ShareAccess       ShareAccess
	DeleteOnClose     bool
	// Owner is the front end holding the handle (see Heartbeat).
	Owner string
}

// Position is where a handle sorts in its share: listings resume after a
// Position.
type Position struct {
	FileID   string
	HandleID string
}

// Position returns the listing position of h.
func (h Handle) Position() Position { return Position{h.FileID, h.HandleID} }

// FileRef names a file reported by a close: it is delete-pending and has
// no live handle left, so the caller must delete it in the same
// transaction. Path is the path of one of its handles (informational).
type FileRef struct {
	Account, Share, FileID, Path string
}

// Result reports what a close (Close, ForceClose, CloseSession, Reap)
// did.
type Result struct {
	// Handles are the handles removed, in key order per call.
	Handles []Handle
	// Delete lists the files the caller must delete now.
	Delete []FileRef
	// More: the call stopped at its limit; more handles remain.
	More bool
}

// record is the stored form of a handle (the key holds the ids).
type record struct {
	Path      string     `json:"p,omitempty"`
	Parent    string     `json:"pa,omitempty"`
	Session   string     `json:"s,omitempty"`
	ClientIP  string     `json:"ip,omitempty"`
	Opened    time.Time  `json:"o"`
	Reconnect *time.Time `json:"r,omitempty"`
	Access    Access     `json:"a,omitempty"`
	Share     uint8      `json:"sh,omitempty"`
	DOC       bool       `json:"doc,omitempty"`
	Owner     string     `json:"w"`
	Inc       string     `json:"i"`
}

// stored is a decoded handle with its owner incarnation.
type stored struct {
	Handle
	inc string
}

// fileState is the per-file record.
type fileState struct {
	DeletePending bool `json:"dp,omitempty"`
	// stored is DeletePending as the store holds it (in the state record
	// and the share's pending index): putState and deleteState keep the
	// index in step with the record.
	stored bool
}

func handleKey(acct, share, fileID, handleID string) []byte {
	return kv.Key(pfxHandle, acct, share, fileID, handleID)
}

func filePrefix(acct, share, fileID string) []byte {
	return kv.Key(pfxHandle, acct, share, fileID)
}

func stateKey(acct, share, fileID string) []byte {
	return kv.Key(pfxFile, acct, share, fileID)
}

// pendingKey is the share's index entry of a delete-pending file, so a
// listing finds them with one range read instead of a read per entry.
func pendingKey(acct, share, fileID string) []byte {
	return kv.Key(pfxPending, acct, share, fileID)
}

func sessionKey(s stored) []byte {
	return kv.Key(pfxSession, s.SessionID, s.Account, s.Share, s.FileID, s.HandleID)
}

func ownerIndexKey(s stored) []byte {
	return kv.Key(pfxOwnerIx, s.Owner, s.inc, s.Account, s.Share, s.FileID, s.HandleID)
}

// after returns the smallest key greater than key and than every key
// having key as a prefix that is not a longer tuple: the resume point of
// a scan that delivered key.
func after(key []byte) []byte { return append(key[:len(key):len(key)], 0) }

func encodeRecord(s stored) ([]byte, error) {
	r := record{
		Path: s.Path, Parent: s.ParentID, Session: s.SessionID, ClientIP: s.ClientIP,
		Opened: s.OpenTime.UTC(), Access: s.Access & AllAccess, Share: uint8(s.ShareAccess & ShareAll),
		DOC: s.DeleteOnClose, Owner: s.Owner, Inc: s.inc,
	}
	if !s.LastReconnectTime.IsZero() {
		t := s.LastReconnectTime.UTC()
		r.Reconnect = &t
	}
	return json.Marshal(r)
}

// decodeHandle decodes a handle record stored under key.
func decodeHandle(key, val []byte) (stored, error) {
	parts, ok := kv.Split(key)
	if !ok || len(parts) != 5 || parts[0] != pfxHandle {
		return stored{}, fmt.Errorf("handle: malformed handle key %q", key)
	}
	var r record
	if err := json.Unmarshal(val, &r); err != nil {
		return stored{}, fmt.Errorf("handle: decoding handle %q: %w", key, err)
	}
	s := stored{Handle: Handle{
		Account: parts[1], Share: parts[2], FileID: parts[3], HandleID: parts[4],
		ParentID: r.Parent, Path: r.Path, SessionID: r.Session, ClientIP: r.ClientIP,
		OpenTime: r.Opened, Access: r.Access & AllAccess, ShareAccess: ShareAccess(r.Share) & ShareAll,
		DeleteOnClose: r.DOC, Owner: r.Owner,
	}, inc: r.Inc}
	if r.Reconnect != nil {
		s.LastReconnectTime = *r.Reconnect
	}
	return s, nil
}

func putHandle(tx kv.Tx, s stored) error {
	val, err := encodeRecord(s)
	if err != nil {
		return err
	}
	if err := tx.Put(handleKey(s.Account, s.Share, s.FileID, s.HandleID), val); err != nil {
		return err
	}
	if s.SessionID != "" {
		if err := tx.Put(sessionKey(s), nil); err != nil {
			return err
		}
	}
	return tx.Put(ownerIndexKey(s), nil)
}

// removeHandle deletes a handle record and its index entries.
func removeHandle(tx kv.Tx, s stored) error {
	if err := tx.Delete(handleKey(s.Account, s.Share, s.FileID, s.HandleID)); err != nil {
		return err
	}
	if s.SessionID != "" {
		if err := tx.Delete(sessionKey(s)); err != nil {
			return err
		}
	}
	return tx.Delete(ownerIndexKey(s))
}

func getHandle(tx kv.Tx, acct, share, fileID, handleID string) (stored, bool, error) {
	key := handleKey(acct, share, fileID, handleID)
	val, err := tx.Get(key)
	if errors.Is(err, kv.ErrNotFound) {
		return stored{}, false, nil
	}
	if err != nil {
		return stored{}, false, err
	}
	s, err := decodeHandle(key, val)
	return s, err == nil, err
}

func getState(tx kv.Tx, acct, share, fileID string) (fileState, bool, error) {
	val, err := tx.Get(stateKey(acct, share, fileID))
	if errors.Is(err, kv.ErrNotFound) {
		return fileState{}, false, nil
	}
	if err != nil {
		return fileState{}, false, err
	}
	var st fileState
	if err := json.Unmarshal(val, &st); err != nil {
		return fileState{}, false, fmt.Errorf("handle: decoding file state: %w", err)
	}
	st.stored = st.DeletePending
	return st, true, nil
}

func putState(tx kv.Tx, acct, share, fileID string, st *fileState) error {
	val, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := tx.Put(stateKey(acct, share, fileID), val); err != nil {
		return err
	}
	return syncPending(tx, acct, share, fileID, st, st.DeletePending)
}

// deleteState removes the file's state record (its last handle record
// went) with its pending-index entry.
func deleteState(tx kv.Tx, acct, share, fileID string, st *fileState) error {
	if err := tx.Delete(stateKey(acct, share, fileID)); err != nil {
		return err
	}
	return syncPending(tx, acct, share, fileID, st, false)
}

// syncPending makes the share's pending index hold fileID iff pending,
// writing only when that changes.
func syncPending(tx kv.Tx, acct, share, fileID string, st *fileState, pending bool) error {
	if pending == st.stored {
		return nil
	}
	st.stored = pending
	if pending {
		return tx.Put(pendingKey(acct, share, fileID), nil)
	}
	return tx.Delete(pendingKey(acct, share, fileID))
}

// scanBatch is how many records a scan copies out before they are
// processed, outside the Scan callback (so processing may read and write).
const scanBatch = 256

// scanRange calls fn for each key and value in [start, end), in order, in
// batches read by separate Scans; fn returns false to stop. fn may read
// and write the transaction.
func scanRange(tx kv.Tx, start, end []byte, fn func(key, val []byte) (bool, error)) error {
	type kvp struct{ k, v []byte }
	for {
		batch := make([]kvp, 0, scanBatch)
		err := tx.Scan(start, end, scanBatch, false, func(k, v []byte) bool {
			batch = append(batch, kvp{append([]byte(nil), k...), append([]byte(nil), v...)})
			return true
		})
		if err != nil {
			return err
		}
		for _, p := range batch {
			more, err := fn(p.k, p.v)
			if err != nil || !more {
				return err
			}
		}
		if len(batch) < scanBatch {
			return nil
		}
		start = after(batch[len(batch)-1].k)
	}
}

// fileHandles returns every handle record (live or dead) of a file.
func fileHandles(tx kv.Tx, acct, share, fileID string) ([]stored, error) {
	prefix := filePrefix(acct, share, fileID)
	var out []stored
	err := scanRange(tx, prefix, kv.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		s, err := decodeHandle(k, v)
		if err != nil {
			return false, err
		}
		out = append(out, s)
		return true, nil
	})
	return out, err
}

// liveHandles returns the live handles of a file and whether it has any
// record at all.
func liveHandles(tx kv.Tx, lv *liveness, acct, share, fileID string) (live []stored, all int, err error) {
	hs, err := fileHandles(tx, acct, share, fileID)
	if err != nil {
		return nil, 0, err
	}
	for _, s := range hs {
		ok, err := lv.alive(s)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			live = append(live, s)
		}
	}
	return live, len(hs), nil
}

// ParseHandleID reports whether s is a handle id: a nonzero uint64 in
// canonical decimal (no sign, no leading zeros).
func ParseHandleID(s string) (uint64, bool) {
	if s == "" || s[0] == '0' || s[0] == '+' {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}

// newHandleID returns a random nonzero handle id.
func newHandleID() string {
	for {
		var b [8]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
		if n := binary.BigEndian.Uint64(b[:]); n != 0 {
			return strconv.FormatUint(n, 10)
		}
	}
}

// OpenRequest describes a new open.
type OpenRequest struct {
	Account, Share, FileID string
	ParentID               string
	Path                   string
	// HandleID, when set, is used instead of a random id (it must be a
	// valid id not in use on the file).
	HandleID    string
	SessionID   string
	ClientIP    string
	Access      Access
	ShareAccess ShareAccess
	// DeleteOnClose needs Delete access (else ErrAccessDenied).
	DeleteOnClose bool
	// Owner must be live (see Heartbeat).
	Owner string
	// Leased is set by the caller when the file has an active REST lease
	// (read in the same transaction). "Managing file locks": while a file
	// is leased, SMB opens asking for Write or Delete access fail with a
	// sharing violation; opens for Read or attributes succeed.
	Leased bool
}

func validIDs(acct, share, fileID string) error {
	if acct == "" || share == "" || fileID == "" {
		return fmt.Errorf("%w: account, share and file id are required", ErrInvalid)
	}
	return nil
}

// Open creates a handle after the share-access check of MS-FSA 2.1.5.1.2
// against every live open of the file (see Conflicts). It returns
// ErrDeletePending if the file is delete-pending, ErrSharingViolation on
// a conflict (or a lease conflict, see OpenRequest.Leased),
// ErrAccessDenied for DeleteOnClose without Delete access, ErrOwnerNotLive
// and ErrInvalid.
func Open(tx kv.Tx, now time.Time, req OpenRequest) (Handle, error) {
	if err := validIDs(req.Account, req.Share, req.FileID); err != nil {
		return Handle{}, err
	}
	if req.Owner == "" {
		return Handle{}, fmt.Errorf("%w: owner is required", ErrInvalid)
	}
	if req.Access&^AllAccess != 0 || req.ShareAccess&^ShareAll != 0 {
		return Handle{}, fmt.Errorf("%w: access %#x / share %#x out of range", ErrInvalid, uint8(req.Access), uint8(req.ShareAccess))
	}
	if req.HandleID != "" {
		if _, ok := ParseHandleID(req.HandleID); !ok {
			return Handle{}, fmt.Errorf("%w: malformed handle id %q", ErrInvalid, req.HandleID)
		}
	}
	if req.DeleteOnClose && req.Access&Delete == 0 {
		return Handle{}, fmt.Errorf("%w: delete-on-close without Delete access", ErrAccessDenied)
	}
	lv := newLiveness(tx, now)
	inc, ok, err := lv.incarnation(req.Owner)
	if err != nil {
		return Handle{}, err
	}
	if !ok {
		return Handle{}, fmt.Errorf("%w: %q", ErrOwnerNotLive, req.Owner)
	}
	st, _, err := getState(tx, req.Account, req.Share, req.FileID)
	if err != nil {
		return Handle{}, err
	}
	if st.DeletePending {
		return Handle{}, ErrDeletePending
	}
	if req.Leased && req.Access&(Write|Delete) != 0 {
		return Handle{}, fmt.Errorf("%w: the file is leased", ErrSharingViolation)
	}
	all, err := fileHandles(tx, req.Account, req.Share, req.FileID)
	if err != nil {
		return Handle{}, err
	}
	used := make(map[string]bool, len(all))
	for _, s := range all {
		used[s.HandleID] = true
		live, err := lv.alive(s)
		if err != nil {
			return Handle{}, err
		}
		if live && Conflicts(s.Access, s.ShareAccess, req.Access, req.ShareAccess) {
			return Handle{}, fmt.Errorf("%w: handle %s holds %v sharing %v", ErrSharingViolation, s.HandleID, s.Access, s.ShareAccess)
		}
	}
	id := req.HandleID
	if id != "" && used[id] {
		return Handle{}, fmt.Errorf("%w: handle id %s is in use", ErrInvalid, id)
	}
	for id == "" || used[id] {
		id = newHandleID()
	}
	s := stored{Handle: Handle{
		Account: req.Account, Share: req.Share, FileID: req.FileID, HandleID: id,
		ParentID: req.ParentID, Path: req.Path, SessionID: req.SessionID, ClientIP: req.ClientIP,
		OpenTime: now.UTC(), Access: req.Access, ShareAccess: req.ShareAccess,
		DeleteOnClose: req.DeleteOnClose, Owner: req.Owner,
	}, inc: inc}
	if err := putHandle(tx, s); err != nil {
		return Handle{}, err
	}
	// Always rewrite the per-file state: it is the file's guard key.
	if err := putState(tx, req.Account, req.Share, req.FileID, &st); err != nil {
		return Handle{}, err
	}
	return s.Handle, nil
}

// Get returns a live handle, or ErrNoHandle.
func Get(tx kv.Tx, now time.Time, acct, share, fileID, handleID string) (Handle, error) {
	s, err := getLive(tx, newLiveness(tx, now), acct, share, fileID, handleID)
	return s.Handle, err
}

func getLive(tx kv.Tx, lv *liveness, acct, share, fileID, handleID string) (stored, error) {
	s, ok, err := getHandle(tx, acct, share, fileID, handleID)
	if err != nil {
		return stored{}, err
	}
	if ok {
		ok, err = lv.alive(s)
		if err != nil {
			return stored{}, err
		}
	}
	if !ok {
		return stored{}, fmt.Errorf("%w: %s on file %s", ErrNoHandle, handleID, fileID)
	}
	return s, nil
}

// closer removes handles and then settles the files they were on.
type closer struct {
	tx    kv.Tx
	lv    *liveness
	res   Result
	seen  map[[3]string]bool
	files []FileRef // affected files, in first-touched order
}

func newCloser(tx kv.Tx, lv *liveness) *closer {
	return &closer{tx: tx, lv: lv, seen: map[[3]string]bool{}}
}

// close removes s, applies its delete-on-close and, if report, lists it
// in the result.
func (c *closer) close(s stored, report bool) error {
	if err := removeHandle(c.tx, s); err != nil {
		return err
	}
	if err := dropLocks(c.tx, s); err != nil {
		return err
	}
	if s.DeleteOnClose {
		st, _, err := getState(c.tx, s.Account, s.Share, s.FileID)
		if err != nil {
			return err
		}
		if !st.DeletePending {
			st.DeletePending = true
			if err := putState(c.tx, s.Account, s.Share, s.FileID, &st); err != nil {
				return err
			}
		}
	}
	if report {
		c.res.Handles = append(c.res.Handles, s.Handle)
	}
	k := [3]string{s.Account, s.Share, s.FileID}
	if !c.seen[k] {
		c.seen[k] = true
		c.files = append(c.files, FileRef{s.Account, s.Share, s.FileID, s.Path})
	}
	return nil
}

// finish settles every touched file and returns the result.
func (c *closer) finish() (Result, error) {
	for _, f := range c.files {
		del, err := settle(c.tx, c.lv, f.Account, f.Share, f.FileID)
		if err != nil {
			return Result{}, err
		}
		if del {
			c.res.Delete = append(c.res.Delete, f)
		}
	}
	return c.res, nil
}

// settle finalizes a file after handles went away: delete-pending with no
// live handle → remove its state and remaining (dead) handle records and
// return true; no handle record left → remove its state; else rewrite it.
func settle(tx kv.Tx, lv *liveness, acct, share, fileID string) (bool, error) {
	st, ok, err := getState(tx, acct, share, fileID)
	if err != nil || !ok {
		return false, err
	}
	hs, err := fileHandles(tx, acct, share, fileID)
	if err != nil {
		return false, err
	}
	live := 0
	for _, s := range hs {
		ok, err := lv.alive(s)
		if err != nil {
			return false, err
		}
		if ok {
			live++
		}
	}
	if st.DeletePending && live == 0 {
		for _, s := range hs {
			if err := removeHandle(tx, s); err != nil {
				return false, err
			}
			if err := dropLocks(tx, s); err != nil {
				return false, err
			}
		}
		return true, deleteState(tx, acct, share, fileID, &st)
	}
	if len(hs) == 0 {
		return false, deleteState(tx, acct, share, fileID, &st)
	}
	// Rewrite the guard key, so that concurrent closes of one file
	// conflict even on a snapshot-isolated engine.
	return false, putState(tx, acct, share, fileID, &st)
}

// Close removes a live handle (ErrNoHandle if there is none). A handle
// opened with DeleteOnClose marks its file delete-pending. When the file
// is delete-pending and no live handle is left, Result.Delete names it:
// the caller deletes the file in the same transaction (its per-file
// handle state is already cleared).
func Close(tx kv.Tx, now time.Time, acct, share, fileID, handleID string) (Result, error) {
	lv := newLiveness(tx, now)
	s, err := getLive(tx, lv, acct, share, fileID, handleID)
	if err != nil {
		return Result{}, err
	}
	c := newCloser(tx, lv)
	if err := c.close(s, true); err != nil {
		return Result{}, err
	}
	return c.finish()
}

// SetDeletePending sets or clears the file's delete-pending flag through
// an open handle (SMB2 SET_INFO FileDispositionInformation). The handle
// must be live (ErrNoHandle) and have Delete access (ErrAccessDenied).
// The file is deleted when its last live handle closes.
func SetDeletePending(tx kv.Tx, now time.Time, acct, share, fileID, handleID string, pending bool) error {
	s, err := getLive(tx, newLiveness(tx, now), acct, share, fileID, handleID)
	if err != nil {
		return err
	}
	if s.Access&Delete == 0 {
		return fmt.Errorf("%w: handle %s has no Delete access", ErrAccessDenied, handleID)
	}
	st, _, err := getState(tx, acct, share, fileID)
	if err != nil {
		return err
	}
	st.DeletePending = pending
	return putState(tx, acct, share, fileID, &st)
}

// CloseSession closes every handle of an SMB session (live or dead),
// applying delete-on-close; Result.Delete names the files to delete.
// Session ids must be unique across owners (random 64-bit ids are).
func CloseSession(tx kv.Tx, now time.Time, sessionID string) (Result, error) {
	if sessionID == "" {
		return Result{}, fmt.Errorf("%w: empty session id", ErrInvalid)
	}
	lv := newLiveness(tx, now)
	c := newCloser(tx, lv)
	prefix := kv.Key(pfxSession, sessionID)
	var refs [][]string
	err := scanRange(tx, prefix, kv.PrefixEnd(prefix), func(k, _ []byte) (bool, error) {
		parts, ok := kv.Split(k)
		if ok && len(parts) == 6 {
			refs = append(refs, parts[2:])
		}
		return true, nil
	})
	if err != nil {
		return Result{}, err
	}
	for _, r := range refs {
		s, ok, err := getHandle(tx, r[0], r[1], r[2], r[3])
		if err != nil {
			return Result{}, err
		}
		if !ok || s.SessionID != sessionID {
			// A stale index entry: drop it.
			if err := tx.Delete(kv.Key(pfxSession, sessionID, r[0], r[1], r[2], r[3])); err != nil {
				return Result{}, err
			}
			continue
		}
		if err := c.close(s, true); err != nil {
			return Result{}, err
		}
	}
	return c.finish()
}

// ForceClose closes live handles (the REST Force Close Handles): on one
// file, or on every file of the share when fileID is ""; handleID "*"
// closes all of them, otherwise only the handle with that id (none closed
// if there is no such live handle: not an error). At most limit handles
// are closed (limit <= 0: no limit); Result.More says more remain, and a
// later call continues (closed handles are gone). Delete-on-close and
// delete-pending apply as in Close.
func ForceClose(tx kv.Tx, now time.Time, acct, share, fileID, handleID string, limit int) (Result, error) {
	if acct == "" || share == "" || handleID == "" {
		return Result{}, fmt.Errorf("%w: account, share and handle id are required", ErrInvalid)
	}
	lv := newLiveness(tx, now)
	c := newCloser(tx, lv)
	if fileID != "" && handleID != "*" {
		s, err := getLive(tx, lv, acct, share, fileID, handleID)
		if errors.Is(err, ErrNoHandle) {
			return Result{}, nil
		}
		if err != nil {
			return Result{}, err
		}
		if err := c.close(s, true); err != nil {
			return Result{}, err
		}
		return c.finish()
	}
	prefix := kv.Key(pfxHandle, acct, share)
	if fileID != "" {
		prefix = filePrefix(acct, share, fileID)
	}
	var victims []stored
	more := false
	err := scanRange(tx, prefix, kv.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		s, err := decodeHandle(k, v)
		if err != nil {
			return false, err
		}
		if handleID != "*" && s.HandleID != handleID {
			return true, nil
		}
		ok, err := lv.alive(s)
		if err != nil || !ok {
			return err == nil, err
		}
		if limit > 0 && len(victims) == limit {
			more = true
			return false, nil
		}
		victims = append(victims, s)
		return true, nil
	})
	if err != nil {
		return Result{}, err
	}
	for _, s := range victims {
		if err := c.close(s, true); err != nil {
			return Result{}, err
		}
	}
	res, err := c.finish()
	res.More = more
	return res, err
}

// Settle finalizes one file now instead of waiting for Reap: if it is
// delete-pending and none of its handles is live (their owners died), its
// handle records and state are removed and Settle returns true: the caller
// deletes the file in the same transaction.
func Settle(tx kv.Tx, now time.Time, acct, share, fileID string) (bool, error) {
	return settle(tx, newLiveness(tx, now), acct, share, fileID)
}

// HasOpen reports whether the file has a live handle.
func HasOpen(tx kv.Tx, now time.Time, acct, share, fileID string) (bool, error) {
	if _, ok, err := getState(tx, acct, share, fileID); err != nil || !ok {
		return false, err
	}
	live, _, err := liveHandles(tx, newLiveness(tx, now), acct, share, fileID)
	return len(live) > 0, err
}

// IsDeletePending reports whether the file is delete-pending: it refuses
// opens and REST operations and is left out of List Files. It stays so
// until its last live handle closes (the file is then deleted) or a
// handle clears the flag; when all its handles died, until Reap or Settle
// reports it.
func IsDeletePending(tx kv.Tx, acct, share, fileID string) (bool, error) {
	st, _, err := getState(tx, acct, share, fileID)
	return st.DeletePending, err
}

// DeletePendingIn returns the IDs of the share's delete-pending files (as
// IsDeletePending reports them), read in one range scan of the share's
// pending index: what a listing checks its entries against.
func DeletePendingIn(tx kv.Tx, acct, share string) (map[string]bool, error) {
	prefix := kv.Key(pfxPending, acct, share)
	var ids map[string]bool
	err := scanRange(tx, prefix, kv.PrefixEnd(prefix), func(k, _ []byte) (bool, error) {
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 4 {
			return false, fmt.Errorf("handle: malformed pending key %q", k)
		}
		if ids == nil {
			ids = map[string]bool{}
		}
		ids[parts[3]] = true
		return true, nil
	})
	return ids, err
}

// ReconnectRequest moves a live handle to a new connection (an SMB2
// durable handle reconnect).
type ReconnectRequest struct {
	Owner     string // must be live
	SessionID string
	ClientIP  string
}

// Reconnect moves a live handle to another owner, session and client
// address and sets its LastReconnectTime. Dead handles cannot be
// reconnected (ErrNoHandle): another open may have been granted since.
func Reconnect(tx kv.Tx, now time.Time, acct, share, fileID, handleID string, r ReconnectRequest) (Handle, error) {
	lv := newLiveness(tx, now)
	s, err := getLive(tx, lv, acct, share, fileID, handleID)
	if err != nil {
		return Handle{}, err
	}
	inc, ok, err := lv.incarnation(r.Owner)
	if err != nil {
		return Handle{}, err
	}
	if !ok {
		return Handle{}, fmt.Errorf("%w: %q", ErrOwnerNotLive, r.Owner)
	}
	if err := removeHandle(tx, s); err != nil {
		return Handle{}, err
	}
	s.Owner, s.inc, s.SessionID, s.ClientIP = r.Owner, inc, r.SessionID, r.ClientIP
	s.LastReconnectTime = now.UTC()
	if err := putHandle(tx, s); err != nil {
		return Handle{}, err
	}
	return s.Handle, nil
}

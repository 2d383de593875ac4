package handle

import (
	"errors"
	"fmt"
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

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

// Load returns a live handle, or ErrNoHandle.
func Load(tx kv.Tx, now time.Time, acct, share, fileID, handleID string) (Handle, error) {
	s, err := getLive(tx, newLiveness(tx, now), acct, share, fileID, handleID)
	return s.Handle, err
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

// Reap deletes dead handles, at most limit of them (limit <= 0: no limit;
// Result.More says more remain), applying their delete-on-close, and
// deletes expired owner records. Result.Delete names the files that are
// now delete-pending with no live handle: the caller deletes them in the
// same transaction. It finds dead handles through the owner index, so its
// cost is proportional to the dead handles and the number of owners, not
// to the live handles.
func Reap(tx kv.Tx, now time.Time, limit int) (Result, error) {
	lv := newLiveness(tx, now)
	// Expired owner records go first: deleting one changes no handle's
	// fate (a later Heartbeat starts a new incarnation anyway).
	opfx := kv.Key(pfxOwner)
	var expired [][]byte
	err := scanRange(tx, opfx, kv.PrefixEnd(opfx), func(k, v []byte) (bool, error) {
		// An owner record that does not decode is reaped as expired, not
		// reported: it holds no references, its owner rewrites it on the
		// next heartbeat, and an error here would stop the reaper for good.
		var r ownerRecord
		if err := json.Unmarshal(v, &r); err != nil || !now.Before(r.Until) {
			expired = append(expired, k)
		}
		return true, nil
	})
	if err != nil {
		return Result{}, err
	}
	for _, k := range expired {
		if err := tx.Delete(k); err != nil {
			return Result{}, err
		}
	}

	// Walk the owner index, skipping each (owner, live incarnation) group
	// with one seek.
	var dead [][]string // index key parts
	more := false
	start, end := kv.Key(pfxOwnerIx), kv.PrefixEnd(kv.Key(pfxOwnerIx))
	for start != nil && !more {
		var skipTo []byte
		err := scanRange(tx, start, end, func(k, _ []byte) (bool, error) {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 7 {
				dead = append(dead, []string{string(k)}) // malformed: delete
				return true, nil
			}
			inc, live, err := lv.incarnation(parts[1])
			if err != nil {
				return false, err
			}
			if live && inc == parts[2] {
				skipTo = kv.PrefixEnd(kv.Key(pfxOwnerIx, parts[1], parts[2]))
				return false, nil
			}
			if limit > 0 && len(dead) == limit {
				more = true
				return false, nil
			}
			dead = append(dead, parts)
			return true, nil
		})
		if err != nil {
			return Result{}, err
		}
		start = skipTo
	}

	c := newCloser(tx, lv)
	for _, parts := range dead {
		if len(parts) != 7 {
			if err := tx.Delete([]byte(parts[0])); err != nil {
				return Result{}, err
			}
			continue
		}
		s, ok, err := getHandle(tx, parts[3], parts[4], parts[5], parts[6])
		if err != nil {
			return Result{}, err
		}
		if !ok || s.Owner != parts[1] || s.inc != parts[2] {
			// Stale index entry (the handle was reconnected or is gone).
			if err := tx.Delete(kv.Key(parts...)); err != nil {
				return Result{}, err
			}
			continue
		}
		if err := c.close(s, true); err != nil {
			return Result{}, err
		}
	}
	res, err := c.finish()
	res.More = more
	return res, err
}

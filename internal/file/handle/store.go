// The stored records of handles and of their files' state, their keys and
// their encoding; the operations (handle.go), the owners' liveness
// (owner.go) and the byte-range locks (locks.go) read and write them
// through these.

package handle

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
	json "github.com/goccy/go-json"
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
	Path        string     `json:"p,omitempty"`
	Parent      string     `json:"pa,omitempty"`
	Session     string     `json:"s,omitempty"`
	ClientIP    string     `json:"ip,omitempty"`
	Opened      time.Time  `json:"o"`
	Reconnected *time.Time `json:"r,omitempty"`
	Access      Access     `json:"a,omitempty"`
	Share       uint8      `json:"sh,omitempty"`
	DOC         bool       `json:"doc,omitempty"`
	Owner       string     `json:"w"`
	Inc         string     `json:"i"`
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
		r.Reconnected = &t
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
	if r.Reconnected != nil {
		s.LastReconnectTime = *r.Reconnected
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

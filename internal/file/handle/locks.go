package handle

import (
	"errors"
	"fmt"
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Byte-range locks (MS-FSA 2.1.5.7, 2.1.5.8, 2.1.4.10; MS-SMB2 3.3.5.14).
//
// A lock belongs to one open (handle) and lives in the store next to the
// handle records, so it holds across front ends and processes sharing
// the store:
//
//	("fhl", account, share, fileID, handleID)  the handle's locks, in the
//	                                           order they were taken (JSON)
//
// Locks die with their handle: Close, ForceClose, CloseSession, Reap and
// Settle delete the record with the handle, and until then the locks of a
// dead handle (its owner expired or retired) are ignored by every check,
// exactly like its share mode. Lock and Unlock rewrite the file's guard
// key (see the package doc), so that two racing lock requests on one file
// conflict as write-write even on a snapshot-isolated engine: of two
// exclusive locks racing for one range exactly one commits.
//
// The rules, as Windows and smbd apply them (and as smbtorture smb2.lock
// checks them):
//
//   - Ranges: Length bytes from Offset. A range is invalid when its last
//     byte, Offset+Length-1, overflows 64 bits (Length 0 never does):
//     ErrInvalidLockRange. Two ranges overlap when each starts at or
//     before the other's last byte; a zero-length range at Offset X thus
//     overlaps the ranges that contain both X-1 and X, and the range
//     {0, 0} overlaps nothing (MS-FSA 2.1.4.10).
//   - A shared lock conflicts with an overlapping exclusive lock of
//     another open. An exclusive lock conflicts with every overlapping
//     lock, of any open, including the requester's own (two exclusive
//     locks never stack); a shared lock stacks on the requester's own
//     exclusive or shared locks.
//   - Unlock names a range exactly (offset and length) among the open's
//     own locks; it removes one lock per call, an exclusive one before a
//     shared one, else the oldest: ErrRangeNotLocked if there is none.
//   - Reads conflict with an overlapping exclusive lock of another open;
//     writes with an overlapping lock of another open, and with a shared
//     lock of the same open (smb2.lock.rw-shared): ErrLockConflict.

// Lock errors. An SMB front end maps ErrLockNotGranted to
// STATUS_LOCK_NOT_GRANTED, ErrLockConflict to STATUS_FILE_LOCK_CONFLICT
// (reads and writes), ErrRangeNotLocked to STATUS_RANGE_NOT_LOCKED and
// ErrInvalidLockRange to STATUS_INVALID_LOCK_RANGE; the File REST service
// maps ErrLockConflict to 409 FileLockConflict.
var (
	// ErrLockNotGranted: a requested lock conflicts with a live lock.
	ErrLockNotGranted = errors.New("handle: lock not granted")
	// ErrLockConflict: a read or write overlaps a live lock that forbids
	// it.
	ErrLockConflict = errors.New("handle: range locked")
	// ErrRangeNotLocked: an unlock names no lock of the handle.
	ErrRangeNotLocked = errors.New("handle: range not locked")
	// ErrInvalidLockRange: Offset+Length-1 overflows 64 bits.
	ErrInvalidLockRange = errors.New("handle: invalid lock range")
)

// pfxLock prefixes the lock records (see above).
const pfxLock = "fhl"

// ByteRange is a byte-range lock: Length bytes from Offset, shared or
// exclusive. In an unlock, Exclusive is ignored.
type ByteRange struct {
	Offset    uint64 `json:"o"`
	Length    uint64 `json:"n"`
	Exclusive bool   `json:"x,omitempty"`
}

// Valid reports whether the range's last byte fits in 64 bits.
func (r ByteRange) Valid() bool { return r.Length == 0 || r.Offset+(r.Length-1) >= r.Offset }

// last is the range's last byte (Offset-1 for a zero-length range, as
// MS-FSA 2.1.4.10 computes it); an invalid range ends at the top.
func (r ByteRange) last() uint64 {
	if !r.Valid() {
		return ^uint64(0)
	}
	return r.Offset + r.Length - 1
}

// Overlaps reports whether r and o overlap (MS-FSA 2.1.4.10): the range
// {0, 0} overlaps nothing; otherwise each starts at or before the
// other's last byte.
func (r ByteRange) Overlaps(o ByteRange) bool {
	if r.Offset == 0 && r.Length == 0 || o.Offset == 0 && o.Length == 0 {
		return false
	}
	return r.Offset <= o.last() && o.Offset <= r.last()
}

// conflicts reports whether a new lock req of open reqOpen is refused
// because of an existing lock held of open heldOpen.
func conflicts(held ByteRange, heldOpen string, req ByteRange, reqOpen string) bool {
	if !held.Exclusive && !req.Exclusive {
		return false
	}
	if held.Exclusive && !req.Exclusive && heldOpen == reqOpen {
		return false // a shared lock stacks on the open's own exclusive one
	}
	return held.Overlaps(req)
}

func lockKey(acct, share, fileID, handleID string) []byte {
	return kv.Key(pfxLock, acct, share, fileID, handleID)
}

// lockRecord is the stored form of a handle's locks.
type lockRecord struct {
	Locks []ByteRange `json:"l"`
}

// heldLocks are the locks of one handle of a file.
type heldLocks struct {
	handleID string
	locks    []ByteRange
}

// fileLocks returns every lock record of a file, live or dead, in handle
// id order.
func fileLocks(tx kv.Tx, acct, share, fileID string) ([]heldLocks, error) {
	prefix := kv.Key(pfxLock, acct, share, fileID)
	var out []heldLocks
	err := scanRange(tx, prefix, kv.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 5 {
			return false, fmt.Errorf("handle: malformed lock key %q", k)
		}
		var r lockRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return false, fmt.Errorf("handle: decoding locks %q: %w", k, err)
		}
		out = append(out, heldLocks{handleID: parts[4], locks: r.Locks})
		return true, nil
	})
	return out, err
}

// putLocks stores a handle's locks (none: deletes the record).
func putLocks(tx kv.Tx, acct, share, fileID, handleID string, locks []ByteRange) error {
	key := lockKey(acct, share, fileID, handleID)
	if len(locks) == 0 {
		return tx.Delete(key)
	}
	val, err := json.Marshal(lockRecord{Locks: locks})
	if err != nil {
		return err
	}
	return tx.Put(key, val)
}

// dropLocks deletes the locks of a handle that goes away.
func dropLocks(tx kv.Tx, s stored) error {
	return tx.Delete(lockKey(s.Account, s.Share, s.FileID, s.HandleID))
}

// lockOwners answers "is this handle live" once per handle within one
// call: locks of dead or missing handles are ignored.
type lockOwners struct {
	tx                  kv.Tx
	lv                  *liveness
	acct, share, fileID string
	live                map[string]bool
}

func newLockOwners(tx kv.Tx, lv *liveness, acct, share, fileID string) *lockOwners {
	return &lockOwners{tx: tx, lv: lv, acct: acct, share: share, fileID: fileID, live: map[string]bool{}}
}

func (o *lockOwners) alive(handleID string) (bool, error) {
	if ok, seen := o.live[handleID]; seen {
		return ok, nil
	}
	s, ok, err := getHandle(o.tx, o.acct, o.share, o.fileID, handleID)
	if err == nil && ok {
		ok, err = o.lv.alive(s)
	}
	if err != nil {
		return false, err
	}
	o.live[handleID] = ok
	return ok, nil
}

// guard rewrites the file's per-file state, the guard key of its handle
// records (see the package doc).
func guard(tx kv.Tx, acct, share, fileID string) error {
	st, _, err := getState(tx, acct, share, fileID)
	if err != nil {
		return err
	}
	return putState(tx, acct, share, fileID, &st)
}

// Lock takes every range for the live handle handleID, atomically: all
// of them or none (MS-SMB2 3.3.5.14.2; the ranges are taken in order, so
// a later range is checked against the earlier ones as locks of the same
// open). It returns ErrInvalidLockRange for a range whose last byte
// overflows, ErrLockNotGranted when a range conflicts with a live lock
// (see the rules above), ErrNoHandle when the handle is not live, and
// ErrInvalid for an empty request. Nothing is written on error.
func Lock(tx kv.Tx, now time.Time, acct, share, fileID, handleID string, ranges []ByteRange) error {
	if len(ranges) == 0 {
		return fmt.Errorf("%w: no range to lock", ErrInvalid)
	}
	lv := newLiveness(tx, now)
	if _, err := getLive(tx, lv, acct, share, fileID, handleID); err != nil {
		return err
	}
	all, err := fileLocks(tx, acct, share, fileID)
	if err != nil {
		return err
	}
	owners := newLockOwners(tx, lv, acct, share, fileID)
	var mine []ByteRange
	for _, h := range all {
		if h.handleID == handleID {
			mine = h.locks
		}
	}
	mine = append([]ByteRange(nil), mine...)
	for i, req := range ranges {
		if !req.Valid() {
			return fmt.Errorf("%w: offset %d length %d", ErrInvalidLockRange, req.Offset, req.Length)
		}
		for _, h := range all {
			if h.handleID == handleID {
				continue // checked below, with this request's earlier ranges
			}
			for _, l := range h.locks {
				if !conflicts(l, h.handleID, req, handleID) {
					continue
				}
				ok, err := owners.alive(h.handleID)
				if err != nil {
					return err
				}
				if ok {
					return fmt.Errorf("%w: range %d (%d+%d) conflicts with handle %s", ErrLockNotGranted, i, req.Offset, req.Length, h.handleID)
				}
				break // a dead handle's locks are all ignored
			}
		}
		for _, l := range mine {
			if conflicts(l, handleID, req, handleID) {
				return fmt.Errorf("%w: range %d (%d+%d) conflicts with a lock of the same handle", ErrLockNotGranted, i, req.Offset, req.Length)
			}
		}
		mine = append(mine, req)
	}
	if err := putLocks(tx, acct, share, fileID, handleID, mine); err != nil {
		return err
	}
	return guard(tx, acct, share, fileID)
}

// Unlock removes one lock of the live handle handleID per range, in
// order (MS-FSA 2.1.5.8): a lock with exactly that offset and length, an
// exclusive one before a shared one, else the oldest. At the first range
// that names no lock it stops with ErrRangeNotLocked and reports how many
// ranges it unlocked before: those unlocks are written to tx all the
// same (smbd processes an unlock array this way: smb2.lock.multiple-
// unlock), so the caller commits the transaction and then reports the
// error. ErrNoHandle when the handle is not live (nothing unlocked).
func Unlock(tx kv.Tx, now time.Time, acct, share, fileID, handleID string, ranges []ByteRange) (int, error) {
	if _, err := getLive(tx, newLiveness(tx, now), acct, share, fileID, handleID); err != nil {
		return 0, err
	}
	mine, err := handleLocks(tx, acct, share, fileID, handleID)
	if err != nil {
		return 0, err
	}
	done := 0
	var failed error
	for _, r := range ranges {
		at := -1
		for j, l := range mine {
			if l.Offset != r.Offset || l.Length != r.Length {
				continue
			}
			if at < 0 || l.Exclusive && !mine[at].Exclusive {
				at = j
			}
		}
		if at < 0 {
			failed = fmt.Errorf("%w: offset %d length %d", ErrRangeNotLocked, r.Offset, r.Length)
			break
		}
		mine = append(mine[:at], mine[at+1:]...)
		done++
	}
	if done > 0 {
		if err := putLocks(tx, acct, share, fileID, handleID, mine); err != nil {
			return 0, err
		}
		if err := guard(tx, acct, share, fileID); err != nil {
			return 0, err
		}
	}
	return done, failed
}

// handleLocks returns the stored locks of one handle, live or dead.
func handleLocks(tx kv.Tx, acct, share, fileID, handleID string) ([]ByteRange, error) {
	val, err := tx.Get(lockKey(acct, share, fileID, handleID))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r lockRecord
	if err := json.Unmarshal(val, &r); err != nil {
		return nil, fmt.Errorf("handle: decoding locks of %s: %w", handleID, err)
	}
	return r.Locks, nil
}

// Locks returns the locks the live handle handleID holds, in the order
// they were taken; ErrNoHandle when it is not live.
func Locks(tx kv.Tx, now time.Time, acct, share, fileID, handleID string) ([]ByteRange, error) {
	if _, err := getLive(tx, newLiveness(tx, now), acct, share, fileID, handleID); err != nil {
		return nil, err
	}
	return handleLocks(tx, acct, share, fileID, handleID)
}

// CheckRead decides whether a read of n bytes from off through the
// handle handleID ("" for a File REST operation, which holds no lock)
// may proceed: ErrLockConflict when the range overlaps a live exclusive
// lock of another handle (MS-FSA 2.1.4.10 with IsExclusive false). A
// zero-length read never conflicts. It only reads.
func CheckRead(tx kv.Tx, now time.Time, acct, share, fileID, handleID string, off, n uint64) error {
	return checkIO(tx, now, acct, share, fileID, handleID, off, n, false)
}

// CheckWrite decides whether a write of n bytes from off through the
// handle handleID ("" for a File REST operation) may proceed:
// ErrLockConflict when the range overlaps a live lock of another handle,
// shared or exclusive, or a shared lock of handleID itself (MS-FSA
// 2.1.4.10 with IsExclusive true; smb2.lock.rw-shared). A zero-length
// write never conflicts. It only reads.
func CheckWrite(tx kv.Tx, now time.Time, acct, share, fileID, handleID string, off, n uint64) error {
	return checkIO(tx, now, acct, share, fileID, handleID, off, n, true)
}

func checkIO(tx kv.Tx, now time.Time, acct, share, fileID, handleID string, off, n uint64, write bool) error {
	if n == 0 {
		return nil
	}
	if handleID == "" {
		// A REST operation: a file without handle state has no handle,
		// so no lock (a lock lives only while its handle's record does,
		// and the state record while any handle's does). The state is
		// usually read already (CheckREST), which a backend that caches
		// reads answers without a round trip; the lock scan is saved.
		if _, ok, err := getState(tx, acct, share, fileID); err != nil || !ok {
			return err
		}
	}
	io := ByteRange{Offset: off, Length: n}
	all, err := fileLocks(tx, acct, share, fileID)
	if err != nil || len(all) == 0 {
		return err
	}
	var owners *lockOwners
	for _, h := range all {
		own := handleID != "" && h.handleID == handleID
		for _, l := range h.locks {
			switch {
			case !l.Overlaps(io):
				continue
			case own && (l.Exclusive || !write):
				continue // the owner reads through any lock, writes through its exclusive ones
			case !own && !l.Exclusive && !write:
				continue // a shared lock lets everyone read
			}
			if owners == nil {
				owners = newLockOwners(tx, newLiveness(tx, now), acct, share, fileID)
			}
			ok, err := owners.alive(h.handleID)
			if err != nil {
				return err
			}
			if ok {
				return fmt.Errorf("%w: %d+%d by handle %s", ErrLockConflict, off, n, h.handleID)
			}
			break // a dead handle's locks are all ignored
		}
	}
	return nil
}

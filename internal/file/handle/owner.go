package handle

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// ownerRecord is the liveness record of an owner.
type ownerRecord struct {
	Inc   string    `json:"i"`
	Until time.Time `json:"u"`
}

func ownerKey(owner string) []byte { return kv.Key(pfxOwner, owner) }

func getOwner(tx kv.Tx, owner string) (ownerRecord, bool, error) {
	val, err := tx.Get(ownerKey(owner))
	if errors.Is(err, kv.ErrNotFound) {
		return ownerRecord{}, false, nil
	}
	if err != nil {
		return ownerRecord{}, false, err
	}
	var r ownerRecord
	if err := json.Unmarshal(val, &r); err != nil {
		return ownerRecord{}, false, fmt.Errorf("handle: decoding owner %q: %w", owner, err)
	}
	return r, true, nil
}

func newIncarnation() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Heartbeat records that owner is alive until until. If the owner's
// record is missing or expired at now, a new incarnation starts: handles
// opened under the old one stay dead.
func Heartbeat(tx kv.Tx, now time.Time, owner string, until time.Time) error {
	if owner == "" {
		return fmt.Errorf("%w: empty owner", ErrInvalid)
	}
	r, ok, err := getOwner(tx, owner)
	if err != nil {
		return err
	}
	if !ok || !now.Before(r.Until) {
		r.Inc = newIncarnation()
	}
	r.Until = until.UTC()
	val, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return tx.Put(ownerKey(owner), val)
}

// Retire ends owner at once (a clean shutdown): all its handles are dead
// from now on, for Reap to delete.
func Retire(tx kv.Tx, owner string) error {
	return tx.Delete(ownerKey(owner))
}

// OwnerLive reports whether owner has a live heartbeat at now.
func OwnerLive(tx kv.Tx, now time.Time, owner string) (bool, error) {
	_, ok, err := newLiveness(tx, now).incarnation(owner)
	return ok, err
}

// liveness answers "is this owner alive at now" once per owner within one
// call.
type liveness struct {
	tx     kv.Tx
	now    time.Time
	owners map[string]string // owner → live incarnation, "" if dead
}

func newLiveness(tx kv.Tx, now time.Time) *liveness {
	return &liveness{tx: tx, now: now, owners: map[string]string{}}
}

// incarnation returns the owner's live incarnation.
func (l *liveness) incarnation(owner string) (string, bool, error) {
	if inc, ok := l.owners[owner]; ok {
		return inc, inc != "", nil
	}
	r, ok, err := getOwner(l.tx, owner)
	if err != nil {
		return "", false, err
	}
	inc := ""
	if ok && l.now.Before(r.Until) {
		inc = r.Inc
	}
	l.owners[owner] = inc
	return inc, inc != "", nil
}

// alive reports whether a handle is live.
func (l *liveness) alive(s stored) (bool, error) {
	inc, ok, err := l.incarnation(s.Owner)
	return ok && inc == s.inc, err
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

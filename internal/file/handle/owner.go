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

package file

import (
	"context"
	"errors"
	"fmt"

	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Byte-range locks of the SMB view (SMB2 LOCK; MS-FSA 2.1.5.7, 2.1.5.8).
// The locks live in the store with the handle records (package handle),
// so they hold across front ends: an SMB READ or WRITE, and a REST Get
// File, Put Range or Put Range From URL, over a range another open has
// locked is refused. They die with their handle. Truncation is not
// checked against locks (MS-FSA 2.1.5.14.4 FileEndOfFileInformation has
// no byte-range check, smbd has none and smb2.lock.truncate expects an
// OVERWRITE of a locked file to succeed), and neither is a REST resize.

// LockRange is one lock of an SMB2 LOCK request: Length bytes from
// Offset; Exclusive is ignored by Unlock.
type LockRange struct {
	Offset, Length uint64
	Exclusive      bool
}

// lockable checks that o may lock or unlock: a file (a directory is
// ErrInvalidParameter) opened with FILE_READ_DATA or FILE_WRITE_DATA
// (else ErrAccessDenied; MS-FSA 2.1.5.7).
func lockable(o *Open) error {
	if o.Dir {
		return fmt.Errorf("%w: byte-range lock on a directory", ErrInvalidParameter)
	}
	if !o.has(AccessReadData | AccessWriteData) {
		return fmt.Errorf("%w: a lock needs FILE_READ_DATA or FILE_WRITE_DATA, the open has %#x", ErrAccessDenied, o.GrantedAccess)
	}
	return nil
}

func toByteRanges(rs []LockRange) []handle.ByteRange {
	out := make([]handle.ByteRange, len(rs))
	for i, r := range rs {
		out[i] = handle.ByteRange{Offset: r.Offset, Length: r.Length, Exclusive: r.Exclusive}
	}
	return out
}

// Lock takes the ranges for o, all of them or none (an SMB2 LOCK whose
// elements lock): ErrLockNotGranted when one conflicts with a lock of a
// live open (o's own included, by the rules of package handle),
// ErrInvalidLockRange, ErrInvalidParameter (a directory, no range),
// ErrAccessDenied, ErrFileClosed.
func (v *Opens) Lock(ctx context.Context, o *Open, ranges []LockRange) error {
	if err := lockable(o); err != nil {
		return err
	}
	if len(ranges) == 0 {
		return fmt.Errorf("%w: no range to lock", ErrInvalidParameter)
	}
	br := toByteRanges(ranges)
	return v.s.store.Update(ctx, func(tx kv.Tx) error {
		now := v.s.clock.Now()
		if _, _, err := v.live(tx, now, o); err != nil {
			return err
		}
		return lockErr(handle.Lock(tx, now, o.Account, o.Share, o.fileID(), o.HandleID, br))
	})
}

// Unlock releases one lock of o per range, in order (an SMB2 LOCK whose
// elements unlock): each names a lock of o by its exact offset and
// length. At the first that names none it stops with ErrRangeNotLocked;
// the ranges before it stay unlocked (as smbd does). ErrInvalidParameter
// (a directory), ErrAccessDenied, ErrFileClosed.
func (v *Opens) Unlock(ctx context.Context, o *Open, ranges []LockRange) error {
	if err := lockable(o); err != nil {
		return err
	}
	br := toByteRanges(ranges)
	var failed error
	err := v.s.store.Update(ctx, func(tx kv.Tx) error {
		now := v.s.clock.Now()
		if _, _, err := v.live(tx, now, o); err != nil {
			return err
		}
		_, err := handle.Unlock(tx, now, o.Account, o.Share, o.fileID(), o.HandleID, br)
		if errors.Is(err, handle.ErrRangeNotLocked) {
			// Commit the unlocks before it, report it after.
			failed = err
			return nil
		}
		failed = nil
		return err
	})
	if err != nil {
		return lockErr(err)
	}
	return lockErr(failed)
}

// Locks returns the locks o holds, in the order they were taken.
// ErrFileClosed.
func (v *Opens) Locks(ctx context.Context, o *Open) ([]LockRange, error) {
	var out []LockRange
	err := v.s.store.View(ctx, func(tx kv.Tx) error {
		out = nil
		bs, err := handle.Locks(tx, v.s.clock.Now(), o.Account, o.Share, o.fileID(), o.HandleID)
		for _, b := range bs {
			out = append(out, LockRange{Offset: b.Offset, Length: b.Length, Exclusive: b.Exclusive})
		}
		return err
	})
	return out, lockErr(err)
}

package handle

import (
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// PurgeShare removes the handle records of share, live or dead, with their
// index entries and byte-range locks, the per-file states and the pending index, for Delete Share: at most limit
// records per call (limit <= 0: no limit). It reports whether more remain;
// the caller repeats it in later transactions until none do. Nothing is
// closed in the SMB sense (no delete-on-close): the files go with the
// share.
func PurgeShare(tx kv.Tx, acct, share string, limit int) (more bool, err error) {
	n := 0
	full := func() bool { return limit > 0 && n >= limit }
	prefix := kv.Key(pfxHandle, acct, share)
	err = scanRange(tx, prefix, kv.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		if full() {
			more = true
			return false, nil
		}
		s, err := decodeHandle(k, v)
		if err != nil {
			return false, err
		}
		n++
		return true, removeHandle(tx, s)
	})
	if err != nil || more {
		return more, err
	}
	// Records removed by key alone: locks, per-file states, the pending
	// index.
	for _, pfx := range []string{pfxLock, pfxFile, pfxPending} {
		prefix = kv.Key(pfx, acct, share)
		err = scanRange(tx, prefix, kv.PrefixEnd(prefix), func(k, _ []byte) (bool, error) {
			if full() {
				more = true
				return false, nil
			}
			n++
			return true, tx.Delete(k)
		})
		if err != nil || more {
			return more, err
		}
	}
	return false, nil
}

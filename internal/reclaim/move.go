package reclaim

import (
	"context"
	"fmt"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Moves: the soft deletes of containers and shares keep a deleted thing
// under an alias name no live one can have, so the name is free at once
// and the thing can be restored whole. Its records move from the name's
// key ranges to the alias's in bounded transactions, values unchanged
// (data references move with them), driven by a job record of the
// domain's: the delete and the restore run Inline steps themselves
// (RunJob) and the Reclaimer's sweep the rest, or a move a stopped
// process left. The domain owns what the job and the deleted version
// mean; this is the part both services share.

// FreeVersion returns the version of a thing deleted at tick t (its
// service's time base): t in 16 hex digits, moved forward past each
// version whose key (keyOf) exists in tx, so two deletes of one name at
// the same tick get distinct versions.
func FreeVersion(tx kv.Tx, t uint64, keyOf func(version string) []byte) (string, error) {
	for {
		v := fmt.Sprintf("%016X", t)
		if _, err := tx.Get(keyOf(v)); err == kv.ErrNotFound {
			return v, nil
		} else if err != nil {
			return "", err
		}
		t++
	}
}

// Range is one key range a move carries: the records under From go under
// To, the rest of each key kept. Each, when set, is called with the old
// key and value of every record moved (a secondary index entry that names
// it moves with it).
type Range struct {
	From, To []byte
	Each     func(k, v []byte) error
}

// MoveRecords moves up to limit records of the ranges, in order, within
// tx, and reports whether more remain.
func MoveRecords(tx kv.Tx, ranges []Range, limit int) (more bool, err error) {
	n := 0
	type kvp struct{ k, v []byte }
	for _, r := range ranges {
		var batch []kvp
		err := tx.Scan(r.From, kv.PrefixEnd(r.From), limit-n+1, false, func(k, v []byte) bool {
			if n+len(batch) == limit {
				more = true
				return false
			}
			batch = append(batch, kvp{append([]byte(nil), k...), append([]byte(nil), v...)})
			return true
		})
		if err != nil {
			return false, err
		}
		for _, it := range batch {
			if err := tx.Put(append(append([]byte(nil), r.To...), it.k[len(r.From):]...), it.v); err != nil {
				return false, err
			}
			if err := tx.Delete(it.k); err != nil {
				return false, err
			}
			if r.Each != nil {
				if err := r.Each(it.k, it.v); err != nil {
					return false, err
				}
			}
		}
		n += len(batch)
		if more {
			return true, nil
		}
	}
	return false, nil
}

// Steps runs step, one bounded transaction each call, until it reports
// done or maxTx calls have run (0: until done), and reports whether it
// is done.
func Steps(ctx context.Context, step func(context.Context) (bool, error), maxTx int) (bool, error) {
	for n := 1; ; n++ {
		done, err := step(ctx)
		if err != nil || done || n == maxTx {
			return done && err == nil, err
		}
	}
}

// RunJob runs a job of bounded steps (a move) for the request that made
// it: Inline steps, then a Kick for the background to finish it. With
// no Reclaimer (r nil) it runs all of them. The job goes on when the
// request is cancelled: its first transaction has committed.
func (r *Reclaimer) RunJob(ctx context.Context, step func(context.Context) (bool, error)) error {
	ctx = context.WithoutCancel(ctx)
	if r == nil {
		_, err := Steps(ctx, step, 0)
		return err
	}
	done := false
	var err error
	if r.InlineAllowed() {
		done, err = Steps(ctx, step, Inline)
	}
	if !done {
		r.Kick()
	}
	return err
}

package blob

import (
	"context"
	"errors"
	"time"

	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// errChecked ends a write's transaction, run as a check, after its checks
// and before it writes.
var errChecked = errors.New("blob: write checked")

// checkUpdateFirst runs the checks of l's update transaction (the blob
// or path, the write conditions, the lease, the WORM rule op, then check
// on the record) in a read-only transaction, before the body is read.
func (s *Service) checkUpdateFirst(ctx context.Context, l Layout, ref BlobRef, a Access, op wormOp, c ns.Caller, now time.Time, check func(b *blobRec) error) error {
	err := s.store.View(ctx, func(tx kv.Tx) error {
		_, err := l.updateTx(tx, ref, a, op, c, now, func(_ kv.Tx, b *blobRec) error {
			if err := check(b); err != nil {
				return err
			}
			return errChecked
		})
		return err
	})
	if errors.Is(err, errChecked) {
		return nil
	}
	return err
}

// checkCreateFirst runs create, a write's transaction on a hierarchical
// account (ns.Create with its parents, conditions, lease and ACL checks),
// and rolls it back: namespace writes check as they write, so the check
// is the write undone.
func (s *Service) checkCreateFirst(ctx context.Context, create func(tx kv.Tx) error) error {
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		if err := create(tx); err != nil {
			return err
		}
		return errChecked
	})
	if errors.Is(err, errChecked) {
		return nil
	}
	return err
}

package file

import (
	"context"

	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// reapBatch bounds one reaping transaction.
const reapBatch = 256

// ReapHandles removes the handles of front ends whose liveness lease has
// expired (a crashed SMB server never locks a file for good) and deletes
// the files that were delete-pending on them, in the same transactions.
// It runs in the background; it returns how many handles it removed.
func (s *Service) ReapHandles(ctx context.Context) (int, error) {
	total := 0
	for {
		var res handle.Result
		err := s.store.Update(ctx, func(tx kv.Tx) (err error) {
			now := s.clock.Now()
			if res, err = handle.Reap(tx, now, reapBatch); err != nil {
				return err
			}
			for _, f := range res.Delete {
				if err := deleteClosedEntry(tx, f.Account, f.Share, f.FileID, now); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += len(res.Handles)
		if !res.More {
			return total, nil
		}
	}
}

package chunk

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// SweepBatch is the largest number of ids Sweep passes to one isLive call.
const SweepBatch = 1000

// Sweep deletes the chunks of s whose last write is more than grace before
// now and for which isLive reports false. It returns how many it removed.
//
// isLive receives ids in batches of at most SweepBatch, so the caller can
// check a whole batch in one kv transaction, and returns one bool per id,
// in order. It must report true for every chunk that any committed record
// references (including uncommitted blocks). isLive may keep ids.
//
// A chunk still being written, or written but not yet recorded, is not
// referenced by any record and may be older than grace (a slow upload):
// use SweepWith, whose remove makes the last decision under the caller's
// lock, so that such chunks are kept. Sweep never runs inside a request;
// see RunPeriodically.
func Sweep(ctx context.Context, s Store, grace time.Duration, now time.Time,
	isLive func(ctx context.Context, ids []string) ([]bool, error)) (removed int, err error) {
	return SweepWith(ctx, s, grace, now, isLive, func(ctx context.Context, id string) (bool, error) {
		return true, s.Remove(ctx, id)
	})
}

// SweepWith is Sweep with the removal of each chunk isLive reported dead
// left to remove, which may still keep it (reporting false): the caller
// re-checks, under a lock its writers also take, that no request started
// using the chunk between isLive and the removal. Only the chunks remove
// reports removed are counted.
func SweepWith(ctx context.Context, s Store, grace time.Duration, now time.Time,
	isLive func(ctx context.Context, ids []string) ([]bool, error),
	remove func(ctx context.Context, id string) (bool, error)) (removed int, err error) {
	cutoff := now.Add(-grace)
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		ids := batch
		batch = nil
		live, err := isLive(ctx, ids)
		if err != nil {
			return fmt.Errorf("chunk: sweep: %w", err)
		}
		if len(live) != len(ids) {
			return fmt.Errorf("chunk: sweep: isLive returned %d results for %d ids", len(live), len(ids))
		}
		for i, id := range ids {
			if live[i] {
				continue
			}
			done, err := remove(ctx, id)
			if err != nil {
				return fmt.Errorf("chunk: sweep: %w", err)
			}
			if done {
				removed++
			}
		}
		return nil
	}
	err = s.Walk(ctx, func(id string, modTime time.Time) error {
		if !modTime.Before(cutoff) {
			return nil
		}
		batch = append(batch, id)
		if len(batch) >= SweepBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return removed, err
}

// RunPeriodically calls fn every interval until ctx is done, logging the
// errors fn returns (nil logger: slog.Default()). The first call is one
// interval after the start; calls never overlap. It blocks, so start it
// with `go`. Typical use:
//
//	go chunk.RunPeriodically(ctx, 10*time.Minute, func(ctx context.Context) error {
//		n, err := chunk.Sweep(ctx, store, time.Hour, time.Now(), isLive)
//		...
//	}, logger.With("task", "chunk-gc"))
func RunPeriodically(ctx context.Context, interval time.Duration, fn func(ctx context.Context) error, logger *slog.Logger) {
	if logger == nil {
		logger = slog.Default()
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			logger.ErrorContext(ctx, "periodic task failed", "err", err)
		}
	}
}

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
// grace must exceed the longest time between a chunk's last Write and the
// commit of the kv transaction that references it; an upload still being
// written when its chunk is swept fails at Commit. Sweep never runs inside
// a request; see RunPeriodically.
func Sweep(ctx context.Context, s Store, grace time.Duration, now time.Time,
	isLive func(ctx context.Context, ids []string) ([]bool, error)) (removed int, err error) {
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
			if err := s.Remove(ctx, id); err != nil {
				return fmt.Errorf("chunk: sweep: %w", err)
			}
			removed++
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

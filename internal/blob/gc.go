package blob

import (
	"context"
)

// CollectGarbage first purges soft-deleted blobs and snapshots whose
// retention has ended (releasing their data references), then removes
// data items whose reference count dropped to zero more than
// extent.GCGrace ago. It runs in the background, never inside a request.
// It returns how many data items it freed.
func (s *Service) CollectGarbage(ctx context.Context) (int, error) {
	if _, err := s.purgeExpired(ctx); err != nil {
		return 0, err
	}
	if _, err := s.trimChangeLogs(ctx); err != nil {
		return 0, err
	}
	// Files of hierarchical accounts that are gone give their content
	// back first, so the data collection below frees it in this run.
	if _, err := s.collectNamespace(ctx); err != nil {
		return 0, err
	}
	return s.data.Collect(ctx, s.clock.Now())
}

// SweepOrphans removes chunk files older than extent.OrphanGrace that no
// data item record names and no request (an upload not yet recorded, a
// download) has pinned.
func (s *Service) SweepOrphans(ctx context.Context) (int, error) {
	return s.data.SweepOrphans(ctx, s.clock.Now())
}

// New, on top: the Blob service made over its stores, with the reclaimer
// and the flat layout until internal/app wires the namespace
// (SetNamespace).

package blob

import (
	"log/slog"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// New returns the Blob service over store and chunks.
func New(store kv.Store, chunks chunk.Store, clk clock.Clock, log *slog.Logger) *Service {
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.Default()
	}
	s := &Service{store: store, data: extent.NewClocked(store, chunks, clk), clock: clk, log: log,
		props: svcprops.New(svcprops.Blob, store, servicePropsKey)}
	s.reclaim = s.newReclaimer()
	s.setLayouts(nil, nil)
	return s
}

package table

import (
	"log/slog"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// Service is the Table service of one Cerulean process. It keeps no
// authoritative state in memory: any number of processes may share a
// store.
type Service struct {
	store kv.Store
	clock clock.Clock
	log   *slog.Logger
	// reclaimer, when set (SetReclaimer), purges deleted tables in the
	// background.
	reclaimer *reclaim.Reclaimer
	// props are the Table Service Properties and Stats.
	props *svcprops.Service
}

// New returns the Table service over store.
func New(store kv.Store, clk clock.Clock, log *slog.Logger) *Service {
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.Default()
	}
	return &Service{store: store, clock: clk, log: log,
		props: svcprops.New(svcprops.Table, store, svcPropsKey)}
}

// ServiceProperties returns the Table Service Properties and Stats (Get/Set
// Table Service Properties, Get Table Service Stats, the CORS rules): the
// implementation every service shares, of kind svcprops.Table.
func (s *Service) ServiceProperties() *svcprops.Service { return s.props }

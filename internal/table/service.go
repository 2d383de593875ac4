package table

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
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

// reclaimKindTable is the tombstone kind of a table being deleted:
// parts account, lower-cased name.
const reclaimKindTable = "table"

// SetReclaimer makes Delete Table return once the table is marked
// deleting: r purges its entities in the background, in bounded
// transactions (Delete Table: "the table is later removed from the Table
// service during garbage collection"), and Create Table of the name
// answers 409 TableBeingDeleted until it is done.
func (s *Service) SetReclaimer(r *reclaim.Reclaimer) {
	s.reclaimer = r
	r.Register(reclaimKindTable, func(tx kv.Tx, parts []string, _ []byte, _ time.Time, batch int) (bool, error) {
		if len(parts) != 2 {
			return false, fmt.Errorf("table: malformed tombstone %q", parts)
		}
		return purgeStep(tx, parts[0], parts[1], 0, batch)
	})
}

// markTableDeleting writes the reclaim tombstone of table name.
func markTableDeleting(tx kv.Tx, acct, name string) error {
	return reclaim.Mark(tx, nil, reclaimKindTable, acct, strings.ToLower(name))
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

func errTableNotFound() error { return azerr.New(azerr.TableNotFound) }

// ServiceProperties returns the Table Service Properties and Stats (Get/Set
// Table Service Properties, Get Table Service Stats, the CORS rules): the
// implementation every service shares, of kind svcprops.Table.
func (s *Service) ServiceProperties() *svcprops.Service { return s.props }

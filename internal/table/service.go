// Package table implements the Azure Table service.
package table

import (
	"log/slog"
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// Service is the Table service of one Cerulean process.
type Service struct {
	store kv.Store
	clock clock.Clock
	log   *slog.Logger
}

// New returns the Table service over store.
func New(store kv.Store, clk clock.Clock, log *slog.Logger) *Service {
	return &Service{store: store, clock: clk, log: log}
}

// ServeAzure routes a Table REST request to its operation.
func (s *Service) ServeAzure(w http.ResponseWriter, r *server.Request) error {
	return azerr.New(azerr.UnsupportedHTTPVerb)
}

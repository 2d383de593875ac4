package blob

import (
	"log/slog"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// The parts of the service its front ends use besides its operations.
// Nothing of the REST front end opens a transaction on Store: its tests
// read and damage records through it, as they inspect Data and Clock.

// Store is the kv store the service keeps its records in.
func (s *Service) Store() kv.Store { return s.store }

// Data is the service's extent layer (content bytes and data items).
func (s *Service) Data() *extent.Store { return s.data }

// Clock is the service's injected clock.
func (s *Service) Clock() clock.Clock { return s.clock }

// Log is the service's logger, which the REST front end logs the errors
// of batch sub-requests and interrupted bodies to.
func (s *Service) Log() *slog.Logger { return s.log }

// Props are the Blob Service Properties and Stats, which the REST front
// end serves and whose CORS rules it applies.
func (s *Service) Props() *svcprops.Service { return s.props }

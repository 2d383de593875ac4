package blob

import (
	"log/slog"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// Store is the kv store the service keeps its records in, for the front
// ends that read it directly (SAS stored access policies, the request
// checks made before a body is read).
func (s *Service) Store() kv.Store { return s.store }

// Data is the service's extent layer (content bytes and data items).
func (s *Service) Data() *extent.Store { return s.data }

// Clock is the service's injected clock.
func (s *Service) Clock() clock.Clock { return s.clock }

// Log is the service's logger.
func (s *Service) Log() *slog.Logger { return s.log }

// Props are the Blob Service Properties and Stats.
func (s *Service) Props() *svcprops.Service { return s.props }

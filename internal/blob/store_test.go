package blob

import (
	"context"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/testenv"

	"github.com/cerulean-storage/cerulean/internal/clock"
)

// dtService returns a Service over a real bolt store and chunk store in a
// temporary directory, with a fake clock.
func dtService(t *testing.T) (*Service, *clock.Fake) {
	t.Helper()
	store, chunks, clk := testenv.Stores(t)
	return New(store, chunks, clk, nil), clk
}

// dtItem is the state of one data item record.
type dtItem = extent.Item

// dtItems reads every data item record.
func dtItems(t *testing.T, s *Service) map[string]dtItem {
	t.Helper()
	out, err := s.data.Items(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

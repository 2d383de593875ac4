package queuerest

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/cerulean-storage/cerulean/internal/kv/kvtest"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// replayStore is an in-memory kv.Store for tests that holds the service
// to the kv contract's hardest rule: every Update fn runs twice, on two
// copies of the same state, and both runs must return the same error and
// leave the same state (an Update fn may run more than once and must be
// deterministic). A divergence is recorded in diverged.
type replayStore struct {
	mu       sync.Mutex
	data     map[string][]byte
	diverged []string
	updates  int
}

var _ kv.Store = (*replayStore)(nil)

func newReplayStore() *replayStore { return &replayStore{data: map[string][]byte{}} }

func (s *replayStore) View(ctx context.Context, fn func(kv.Tx) error) error {
	s.mu.Lock()
	snap := maps.Clone(s.data)
	s.mu.Unlock()
	return fn(&kvtest.MapTx{Data: snap})
}

func (s *replayStore) Update(ctx context.Context, fn func(kv.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updates++
	a := &kvtest.MapTx{Data: maps.Clone(s.data), Writable: true}
	errA := fn(a)
	b := &kvtest.MapTx{Data: maps.Clone(s.data), Writable: true}
	errB := fn(b)
	if fmt.Sprint(errA) != fmt.Sprint(errB) {
		s.diverged = append(s.diverged, fmt.Sprintf("errors differ: %v / %v", errA, errB))
	}
	if !maps.EqualFunc(a.Data, b.Data, bytes.Equal) {
		s.diverged = append(s.diverged, "states differ after replay")
	}
	if errA != nil {
		return errA
	}
	s.data = a.Data
	return nil
}

func (s *replayStore) Close() error { return nil }

func (s *replayStore) divergences() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.diverged)
}

package queuerest

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

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
	return fn(&memTx{data: snap})
}

func (s *replayStore) Update(ctx context.Context, fn func(kv.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updates++
	a := &memTx{data: maps.Clone(s.data), writable: true}
	errA := fn(a)
	b := &memTx{data: maps.Clone(s.data), writable: true}
	errB := fn(b)
	if fmt.Sprint(errA) != fmt.Sprint(errB) {
		s.diverged = append(s.diverged, fmt.Sprintf("errors differ: %v / %v", errA, errB))
	}
	if !maps.EqualFunc(a.data, b.data, bytes.Equal) {
		s.diverged = append(s.diverged, "states differ after replay")
	}
	if errA != nil {
		return errA
	}
	s.data = a.data
	return nil
}

func (s *replayStore) Close() error { return nil }

func (s *replayStore) divergences() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.diverged)
}

type memTx struct {
	data     map[string][]byte
	writable bool
}

func (t *memTx) Get(key []byte) ([]byte, error) {
	v, ok := t.data[string(key)]
	if !ok {
		return nil, kv.ErrNotFound
	}
	return v, nil
}

func (t *memTx) Put(key, value []byte) error {
	if !t.writable {
		return kv.ErrReadOnly
	}
	t.data[string(key)] = bytes.Clone(value)
	return nil
}

func (t *memTx) Delete(key []byte) error {
	if !t.writable {
		return kv.ErrReadOnly
	}
	delete(t.data, string(key))
	return nil
}

func (t *memTx) Scan(start, end []byte, limit int, reverse bool, fn func(key, value []byte) bool) error {
	var keys []string
	for k := range t.data {
		if k >= string(start) && (end == nil || k < string(end)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if reverse {
		slices.Reverse(keys)
	}
	for i, k := range keys {
		if limit > 0 && i >= limit {
			break
		}
		v, ok := t.data[k]
		if !ok {
			continue // deleted by fn during the scan
		}
		if !fn([]byte(k), v) {
			break
		}
	}
	return nil
}

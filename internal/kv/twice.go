package kv

import (
	"bytes"
	"context"
	"sort"
)

// Twice wraps a store so that every Update runs its function twice: first
// against a scratch transaction whose writes are thrown away, then against
// the real one. The Store contract lets a backend re-run fn (PostgreSQL
// does on serialization failures), but the embedded and in-memory stores
// run it exactly once, so code that changes state outside the transaction
// (a record modified in place, a counter bumped, a channel sent to) passes
// every test on them. Under Twice such code sees the effects of the first
// run leak into the second and the tests that cover it fail. It is a test
// mode (CERULEAN_TEST_UPDATE_TWICE): it costs a second run of every write.
func Twice(s Store) Store { return twice{s} }

// UpdateTwiceEnv names the environment variable that puts the stores of
// in-process servers (app.Start) and of the domain packages' unit tests
// (testenv.Stores) under Twice when it is "1".
const UpdateTwiceEnv = "CERULEAN_TEST_UPDATE_TWICE"

type twice struct{ Store }

func (t twice) Update(ctx context.Context, fn func(tx Tx) error) error {
	return t.Store.Update(ctx, func(tx Tx) error {
		scratch := &scratchTx{under: tx, w: map[string]*[]byte{}}
		_ = fn(scratch) // its outcome and writes are discarded, as a re-run's first attempt
		return fn(tx)
	})
}

// scratchTx reads through to a transaction and keeps its own writes in
// memory (read-your-writes), never passing them on.
type scratchTx struct {
	under Tx
	w     map[string]*[]byte // nil value: deleted
}

func (s *scratchTx) Get(key []byte) ([]byte, error) {
	if v, ok := s.w[string(key)]; ok {
		if v == nil {
			return nil, ErrNotFound
		}
		return *v, nil
	}
	return s.under.Get(key)
}

func (s *scratchTx) Put(key, value []byte) error {
	v := bytes.Clone(value)
	if v == nil {
		v = []byte{}
	}
	s.w[string(key)] = &v
	return nil
}

func (s *scratchTx) Delete(key []byte) error {
	s.w[string(key)] = nil
	return nil
}

// Scan merges the underlying range with the scratch writes in it. It
// reads the whole underlying range first (limit applied after the merge):
// a test mode can afford it.
func (s *scratchTx) Scan(start, end []byte, limit int, reverse bool, fn func(key, value []byte) bool) error {
	type kvp struct{ k, v []byte }
	var base []kvp
	if err := s.under.Scan(start, end, 0, false, func(k, v []byte) bool {
		if _, shadowed := s.w[string(k)]; !shadowed {
			base = append(base, kvp{bytes.Clone(k), bytes.Clone(v)})
		}
		return true
	}); err != nil {
		return err
	}
	for k, v := range s.w {
		kb := []byte(k)
		if v == nil || bytes.Compare(kb, start) < 0 || (end != nil && bytes.Compare(kb, end) >= 0) {
			continue
		}
		base = append(base, kvp{kb, *v})
	}
	sort.Slice(base, func(i, j int) bool {
		c := bytes.Compare(base[i].k, base[j].k)
		if reverse {
			return c > 0
		}
		return c < 0
	})
	for i, e := range base {
		if limit > 0 && i >= limit {
			break
		}
		if !fn(e.k, e.v) {
			break
		}
	}
	return nil
}

package kvtest

import (
	"bytes"
	"slices"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// MapTx is a kv.Tx over a plain map, for tests that drive code inside a
// transaction without a store (index scans), or build a store of their
// own around it (a store that replays each Update twice and compares).
// Data holds the keys as strings; Writable false makes Put and Delete
// fail with kv.ErrReadOnly, as in a View. A Scan sees the keys present
// when it starts, skipping those fn deletes meanwhile.
type MapTx struct {
	Data     map[string][]byte
	Writable bool
}

// Get returns the value of key, or kv.ErrNotFound.
func (t *MapTx) Get(key []byte) ([]byte, error) {
	v, ok := t.Data[string(key)]
	if !ok {
		return nil, kv.ErrNotFound
	}
	return v, nil
}

// Put stores a copy of value under key.
func (t *MapTx) Put(key, value []byte) error {
	if !t.Writable {
		return kv.ErrReadOnly
	}
	t.Data[string(key)] = bytes.Clone(value)
	return nil
}

// Delete removes key.
func (t *MapTx) Delete(key []byte) error {
	if !t.Writable {
		return kv.ErrReadOnly
	}
	delete(t.Data, string(key))
	return nil
}

// Scan calls fn for the keys in [start, end) (end nil: no bound) in
// order, or in reverse, at most limit of them (0: no limit), until fn
// returns false.
func (t *MapTx) Scan(start, end []byte, limit int, reverse bool, fn func(key, value []byte) bool) error {
	var keys []string
	for k := range t.Data {
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
		v, ok := t.Data[k]
		if !ok {
			continue // deleted by fn during the scan
		}
		if !fn([]byte(k), v) {
			break
		}
	}
	return nil
}

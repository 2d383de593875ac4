package queue

import (
	"bytes"
	"slices"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// memTx is an in-memory kv.Tx for the index-scan tests (the same as the
// one under queuerest's replayStore, whose tests drive the service
// through REST).
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

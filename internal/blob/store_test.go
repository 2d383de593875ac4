package blob

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
)

// dtService returns a Service over a real bolt store and chunk store in a
// temporary directory, with a fake clock.
func dtService(t *testing.T) (*Service, *clock.Fake) {
	t.Helper()
	dir := t.TempDir()
	store, err := bolt.Open(filepath.Join(dir, "meta.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	chunks, err := chunk.NewFS(filepath.Join(dir, "chunks"))
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	return New(store, chunks, clk, nil), clk
}

// dtItem is the state of one data item record (see internal/extent).
type dtItem struct {
	refs uint32
	data string
}

// dtItems reads every data item record.
func dtItems(t *testing.T, s *Service) map[string]dtItem {
	t.Helper()
	out := map[string]dtItem{}
	err := s.store.View(context.Background(), func(tx kv.Tx) error {
		pre := kv.Key("x")
		return tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, v []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 2 {
				t.Errorf("bad data key %q", k)
				return true
			}
			out[parts[1]] = dtItem{refs: binary.BigEndian.Uint32(v), data: string(v[4:])}
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dtQueue reads the collector queue as "id@due" strings, sorted.
func dtQueue(t *testing.T, s *Service) []string {
	t.Helper()
	var out []string
	err := s.store.View(context.Background(), func(tx kv.Tx) error {
		pre := kv.Key("g")
		return tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, v []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 3 {
				t.Errorf("bad queue key %q", k)
				return true
			}
			out = append(out, parts[2]+"@"+parts[1])
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

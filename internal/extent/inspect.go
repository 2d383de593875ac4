package extent

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Item is the stored state of one data item: its reference count and,
// for an inline item, its bytes. Items and Queue expose the byte layer's
// bookkeeping to the tests of the services built on it (and to
// diagnostics): a leaked or double-counted reference shows up there.
type Item struct {
	Refs uint32
	Data string
}

// Items reads every data item record, by id.
func (s *Store) Items(ctx context.Context) (map[string]Item, error) {
	out := map[string]Item{}
	err := s.store.View(ctx, func(tx kv.Tx) error {
		var bad error
		pre := kv.Key("x")
		err := tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, v []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 2 || len(v) < 4 {
				bad = fmt.Errorf("malformed data item record %q", k)
				return false
			}
			out[parts[1]] = Item{Refs: binary.BigEndian.Uint32(v), Data: string(v[4:])}
			return true
		})
		if err == nil {
			err = bad
		}
		return err
	})
	return out, err
}

// Queue reads the collector's queue of unreferenced items as sorted
// "id@due" strings (due in Unix nanoseconds, zero-padded).
func (s *Store) Queue(ctx context.Context) ([]string, error) {
	var out []string
	err := s.store.View(ctx, func(tx kv.Tx) error {
		var bad error
		pre := kv.Key("g")
		err := tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, _ []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 3 {
				bad = fmt.Errorf("malformed collector queue key %q", k)
				return false
			}
			out = append(out, parts[2]+"@"+parts[1])
			return true
		})
		if err == nil {
			err = bad
		}
		return err
	})
	sort.Strings(out)
	return out, err
}

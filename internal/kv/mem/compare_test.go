package mem

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
)

// The benchmarks below run the same workloads on this store and on the
// embedded store without fsync (bolt.Options{NoSync: true}), the store
// --in-memory must be at least as fast as:
//
//	go test -run X -bench . -cpu 2 ./internal/kv/mem/

func stores(b *testing.B) map[string]kv.Store {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "kv.db"), bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	m := New()
	b.Cleanup(func() { db.Close(); m.Close() })
	return map[string]kv.Store{"mem": m, "bolt-nosync": db}
}

func benchKey(i uint64) []byte {
	return binary.BigEndian.AppendUint64(kv.Key("bench", "table"), i*0x9e3779b97f4a7c15)
}

func preload(b *testing.B, s kv.Store, n int) {
	val := make([]byte, 300)
	for i := 0; i < n; i += 500 {
		if err := s.Update(context.Background(), func(tx kv.Tx) error {
			for j := i; j < i+500 && j < n; j++ {
				if err := tx.Put(benchKey(uint64(j)), val); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompareUpdate: parallel read-modify-write transactions of one
// row each (Get, then Put), as an entity insert or a blob write does, on
// 100,000 rows.
func BenchmarkCompareUpdate(b *testing.B) {
	for name, s := range stores(b) {
		b.Run(name, func(b *testing.B) {
			preload(b, s, 100_000)
			var n atomic.Uint64
			val := make([]byte, 300)
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					k := benchKey(n.Add(1) % 200_000)
					if err := s.Update(context.Background(), func(tx kv.Tx) error {
						if _, err := tx.Get(k); err != nil && err != kv.ErrNotFound {
							return err
						}
						return tx.Put(k, val)
					}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkCompareView: parallel point reads plus a 20-row scan.
func BenchmarkCompareView(b *testing.B) {
	for name, s := range stores(b) {
		b.Run(name, func(b *testing.B) {
			preload(b, s, 100_000)
			var n atomic.Uint64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					k := benchKey(n.Add(1) % 100_000)
					if err := s.View(context.Background(), func(tx kv.Tx) error {
						if _, err := tx.Get(k); err != nil {
							return err
						}
						return tx.Scan(k, nil, 20, false, func(_, _ []byte) bool { return true })
					}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

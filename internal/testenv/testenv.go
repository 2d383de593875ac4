// Package testenv builds the stores the domain packages' unit tests run
// on: the embedded kv store and a chunk directory in a temporary
// directory (fsync off), and a fake clock, so tests of blob, file, extent
// and the SMB server share one setup instead of each writing its own.
// With CERULEAN_TEST_BACKEND=memory they run on the in-memory stores of
// --in-memory instead, as the end-to-end tests do.
package testenv

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/chunk/memchunk"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// Epoch is the fake clock's start: a fixed instant, so tests are
// reproducible.
var Epoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// BackendEnv names the environment variable that selects the in-memory
// stores: CERULEAN_TEST_BACKEND=memory.
const BackendEnv = "CERULEAN_TEST_BACKEND"

// InMemory reports whether CERULEAN_TEST_BACKEND=memory.
func InMemory() bool { return os.Getenv(BackendEnv) == "memory" }

// Stores opens a bolt store and a chunk store under t.TempDir() (or the
// in-memory stores, see InMemory), closed when the test ends, and a fake
// clock at Epoch.
func Stores(t testing.TB) (kv.Store, chunk.Store, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(Epoch)
	twice := func(s kv.Store) kv.Store {
		if os.Getenv(kv.UpdateTwiceEnv) == "1" {
			return kv.Twice(s)
		}
		return s
	}
	if InMemory() {
		store := mem.New()
		t.Cleanup(func() { store.Close() })
		// Modification times from the real clock, as the FS store's file
		// times are: tests written against it sweep on the same terms.
		return twice(store), memchunk.New(memchunk.Options{}), clk
	}
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
	return twice(store), chunks, clk
}

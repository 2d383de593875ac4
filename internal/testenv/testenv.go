// Package testenv builds the stores the domain packages' unit tests run
// on: the embedded kv store and a chunk directory in a temporary
// directory (fsync off), and a fake clock, so tests of blob, file, extent
// and the SMB server share one setup instead of each writing its own.
package testenv

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
)

// Epoch is the fake clock's start: a fixed instant, so tests are
// reproducible.
var Epoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// Stores opens a bolt store and a chunk store under t.TempDir(), closed
// when the test ends, and a fake clock at Epoch.
func Stores(t testing.TB) (*bolt.DB, *chunk.FS, *clock.Fake) {
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
	return store, chunks, clock.NewFake(Epoch)
}

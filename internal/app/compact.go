package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
)

// metaPath is the embedded store's database file in a data directory.
func metaPath(dataDir string) string { return filepath.Join(dataDir, "meta.db") }

// Compact gives back the disk space of deleted records in the embedded
// store of dataDir (`cerulean compact`): see bolt.Compact. Chunk files
// need nothing of the kind: the collector deletes them. It fails when a
// server has the store open, after waiting lockTimeout for it to stop.
func Compact(dataDir string, lockTimeout time.Duration) (bolt.CompactStats, error) {
	p := metaPath(dataDir)
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return bolt.CompactStats{}, fmt.Errorf("%s holds no embedded store (no meta.db)", dataDir)
		}
		return bolt.CompactStats{}, err
	}
	st, err := bolt.Compact(p, bolt.Options{LockTimeout: lockTimeout})
	if err != nil && errors.Is(err, bolt.ErrLocked) {
		return st, fmt.Errorf("%s is in use: stop the server using it first", dataDir)
	}
	return st, err
}

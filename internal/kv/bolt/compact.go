package bolt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// compactTxSize bounds the bytes bbolt.Compact copies per transaction of
// the new file, so compaction's memory stays bounded whatever the size of
// the database.
const compactTxSize = 64 << 20

// CompactStats reports what Compact did.
type CompactStats struct {
	Before, After int64         // the database file's size
	Took          time.Duration // the whole compaction
}

// Compact gives the disk space of deleted records back: bbolt reuses the
// pages it freed but never shrinks its file, so after a large delete the
// file keeps its largest size. Compact first opens the store and closes it
// again, which replays the log and checkpoints it into the file, so the
// file holds every acknowledged write and the log nothing beyond it; then
// copies every bucket into a new file (path+".compact", in bounded
// transactions), syncs it and renames it over path, and syncs the
// directory. A crash before the rename leaves the old file in place (the
// next Compact removes the partial copy); after it, the new one, which
// holds the same records and the same log id and checkpoint sequence, so
// the log is still recognised as its own.
//
// The store must not be open: like Open, Compact waits for the file lock
// (opts.LockTimeout) and fails when a running server holds it. Its cost is
// one sequential read and one sequential write of the live data, and
// memory for one transaction's copy (compactTxSize).
func Compact(path string, opts Options) (CompactStats, error) {
	start := time.Now()
	var st CompactStats
	if opts.FS != nil {
		return st, errors.New("kv/bolt: compact: only on the operating system's filesystem")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return st, fmt.Errorf("kv/bolt: compact: %w", err)
	}
	st.Before = fi.Size()
	db, err := Open(path, opts)
	if err != nil {
		return st, err
	}
	if err := db.Close(); err != nil {
		return st, fmt.Errorf("kv/bolt: compact: checkpoint: %w", err)
	}
	timeout := opts.LockTimeout
	switch {
	case timeout == 0:
		timeout = DefaultLockTimeout
	case timeout < 0:
		timeout = 0
	}
	// The source is opened read-write, not read-only: that takes the
	// exclusive lock, so no server can open the store while it is copied.
	src, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: timeout, NoFreelistSync: true, FreelistType: bbolt.FreelistMapType})
	if err != nil {
		return st, fmt.Errorf("kv/bolt: compact: open %s: %w", path, lockErr(err))
	}
	defer src.Close()
	tmp := path + ".compact"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return st, fmt.Errorf("kv/bolt: compact: %w", err)
	}
	dst, err := bbolt.Open(tmp, 0o600, &bbolt.Options{Timeout: timeout, NoFreelistSync: true, FreelistType: bbolt.FreelistMapType})
	if err != nil {
		return st, fmt.Errorf("kv/bolt: compact: create %s: %w", tmp, err)
	}
	if err := bbolt.Compact(dst, src, compactTxSize); err != nil {
		dst.Close()
		os.Remove(tmp)
		return st, fmt.Errorf("kv/bolt: compact: copy: %w", err)
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		os.Remove(tmp)
		return st, fmt.Errorf("kv/bolt: compact: sync: %w", err)
	}
	if err := dst.Close(); err != nil {
		os.Remove(tmp)
		return st, fmt.Errorf("kv/bolt: compact: %w", err)
	}
	// The copy is whole, synced and closed before the rename, so whoever
	// opens path after it finds the complete new file.
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return st, fmt.Errorf("kv/bolt: compact: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return st, fmt.Errorf("kv/bolt: compact: sync directory: %w", err)
		}
	}
	if fi, err := os.Stat(path); err == nil {
		st.After = fi.Size()
	}
	st.Took = time.Since(start)
	return st, nil
}

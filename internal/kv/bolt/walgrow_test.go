package bolt

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestEmptyStoreLogIsSmall: a new durable store does not pre-allocate a
// 64 MiB log (an empty data directory took 80 MiB); its log starts at
// walInitialSize, and stays so across a reopen with a few writes.
func TestEmptyStoreLogIsSmall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	putKeys(t, db, 1, 5)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if n := fileSize(t, path+".wal"); n > walInitialSize {
		t.Fatalf("log of an almost empty store is %d bytes, want at most %d", n, walInitialSize)
	}
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := keysIn(t, db); len(got) != 5 {
		t.Fatalf("keys after reopen: %v", got)
	}
}

// TestLogGrowsAndReplays: a busy store's log doubles at the checkpoints
// it forces, up to LogSize and no further; records written past the
// initial size are replayed after a crash (the files copied as a crash
// would leave them: the records synced, bbolt not written since the last
// checkpoint).
func TestLogGrowsAndReplays(t *testing.T) {
	keepLog(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "meta.db")
	const max = 8 << 20
	db, err := Open(path, Options{LogSize: max})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	val := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 100<<10) }
	put := func(i int) {
		t.Helper()
		k := fmt.Appendf(nil, "big%04d", i)
		if err := db.Update(bg, func(tx kv.Tx) error { return tx.Put(k, val(i)) }); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	for ; fileSize(t, path+".wal") < max; i++ {
		if i > 1000 {
			t.Fatalf("log still %d bytes after %d writes of 100 KiB", fileSize(t, path+".wal"), i)
		}
		put(i)
	}
	// Enough to fill the grown log past its first megabyte, not to
	// force another checkpoint (half of it).
	for end := i + 30; i < end; i++ {
		put(i)
	}
	if n := fileSize(t, path+".wal"); n != max {
		t.Fatalf("log is %d bytes, want it to stop at LogSize %d", n, max)
	}
	crashed := t.TempDir()
	for _, name := range []string{"meta.db", "meta.db.wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(crashed, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	re, err := Open(filepath.Join(crashed, "meta.db"), Options{LogSize: max})
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	err = re.View(bg, func(tx kv.Tx) error {
		for j := 0; j < i; j++ {
			v, err := tx.Get(fmt.Appendf(nil, "big%04d", j))
			if err != nil {
				return fmt.Errorf("key %d after the crash: %w", j, err)
			}
			if !bytes.Equal(v, val(j)) {
				return fmt.Errorf("key %d after the crash: wrong value", j)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

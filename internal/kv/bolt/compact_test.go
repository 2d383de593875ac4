package bolt

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestCompactGivesSpaceBack: after most records are deleted the file
// keeps its size; Compact shrinks it, keeps every remaining record and
// the log's identity (writes after it survive a reopen, including writes
// still only in the log), and removes a partial copy left by a crash.
func TestCompactGivesSpaceBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	opts := Options{LockTimeout: 200 * time.Millisecond}
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	val := bytes.Repeat([]byte("v"), 1024)
	key := func(i int) []byte { return kv.Key("k", fmt.Sprintf("%06d", i)) }
	const n = 20000
	for b := 0; b < n; b += 500 {
		if err := db.Update(bg, func(tx kv.Tx) error {
			for i := b; i < b+500; i++ {
				if err := tx.Put(key(i), val); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for b := 0; b < n; b += 500 {
		if err := db.Update(bg, func(tx kv.Tx) error {
			for i := b; i < b+500; i++ {
				if i%100 != 0 {
					if err := tx.Delete(key(i)); err != nil {
						return err
					}
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	// The last deletes stay in the log only: Compact must fold them in.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".compact", []byte("left by a crash"), 0o600); err != nil {
		t.Fatal(err)
	}

	st, err := Compact(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d → %d bytes in %v", st.Before, st.After, st.Took)
	if st.Before < 20<<20 || st.After > st.Before/4 {
		t.Fatalf("file %d → %d bytes: not given back", st.Before, st.After)
	}
	if _, err := os.Stat(path + ".compact"); !os.IsNotExist(err) {
		t.Fatalf("partial copy still there: %v", err)
	}

	db, err = Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	if err := db.View(bg, func(tx kv.Tx) error {
		return tx.Scan(kv.Key("k"), kv.PrefixEnd(kv.Key("k")), 0, false, func(k, v []byte) bool {
			count++
			if !bytes.Equal(v, val) {
				t.Errorf("%q: value changed", k)
			}
			return true
		})
	}); err != nil {
		t.Fatal(err)
	}
	if count != n/100 {
		t.Fatalf("%d records after compaction, want %d", count, n/100)
	}
	// A write after compaction goes through the same log and survives a
	// crash-free reopen.
	if err := db.Update(bg, func(tx kv.Tx) error { return tx.Put(kv.Key("after"), []byte("x")) }); err != nil {
		t.Fatal(err)
	}
	db = reopenTest(t, db, opts)
	if _, err := getValue(db, kv.Key("after")); err != nil {
		t.Fatalf("write after compaction: %v", err)
	}
}

// TestCompactRefusesAnOpenStore: a running server holds the file lock,
// and Compact waits for it no longer than the lock timeout.
func TestCompactRefusesAnOpenStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	opts := Options{LockTimeout: 100 * time.Millisecond}
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := Compact(path, opts); !errors.Is(err, ErrLocked) {
		t.Fatalf("Compact of an open store: %v, want ErrLocked", err)
	}
	if err := db.Update(bg, func(tx kv.Tx) error { return tx.Put(kv.Key("still"), []byte("works")) }); err != nil {
		t.Fatalf("the open store after a refused Compact: %v", err)
	}
}

func getValue(db *DB, key []byte) ([]byte, error) {
	var out []byte
	err := db.View(bg, func(tx kv.Tx) error {
		v, err := tx.Get(key)
		out = append(out, v...)
		return err
	})
	return out, err
}

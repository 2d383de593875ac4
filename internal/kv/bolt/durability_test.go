package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/vfs"
)

// TestWALTornTailVersusDamage: where the replay stops, a record that a
// later intact record says was synced is damage (replay fails with
// ErrLogDamaged and the offset); anything else is a torn tail, including
// a torn record followed by an intact one of the same unsynced batch.
func TestWALTornTailVersusDamage(t *testing.T) {
	rec := func(seq uint64) []byte {
		k := strconv.FormatUint(seq, 10)
		return encodeRecord(seq, []entry{{key: []byte(k), val: []byte("v" + k)}})
	}
	// Three batches of two records, each batch written after the one
	// before it was synced.
	build := func(t *testing.T) (*wal, []int64) {
		w, err := openWAL(vfs.Default, filepath.Join(t.TempDir(), "x.wal"), 4096, false, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.close() })
		var offs []int64
		for seq := uint64(1); seq <= 6; seq++ {
			if seq%2 == 1 {
				w.synced = seq - 1 // the previous batch was synced
			}
			offs = append(offs, w.off)
			if ok, err := w.append(rec(seq)); !ok || err != nil {
				t.Fatal(ok, err)
			}
		}
		return w, offs
	}
	for _, tc := range []struct {
		name    string
		seq     int // record to damage (1-based; 0: none)
		at      int // byte of it to flip
		want    uint64
		damaged bool
	}{
		{"intact", 0, 0, 6, false},
		{"torn last record", 6, walHeader + 2, 5, false},
		{"torn record, later one of its batch intact", 5, walHeader + 2, 4, false},
		{"synced record damaged", 3, walHeader + 2, 2, true},
		{"last record of a synced batch damaged", 4, walHeader + 2, 3, true},
		{"length of a synced record damaged", 2, 1, 1, true},
		{"sequence number of a synced record damaged", 1, 9, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, offs := build(t)
			if tc.seq > 0 {
				at := offs[tc.seq-1] + int64(tc.at)
				b := make([]byte, 1)
				if _, err := w.f.ReadAt(b, at); err != nil {
					t.Fatal(err)
				}
				b[0] ^= 0x5a
				if _, err := w.f.WriteAt(b, at); err != nil {
					t.Fatal(err)
				}
			}
			var got []uint64
			last, err := w.replay(0, func(seq uint64, _ []entry) error {
				got = append(got, seq)
				return nil
			})
			if tc.damaged {
				want := fmt.Sprintf("damaged at offset %d: record %d cannot be read", offs[tc.want], tc.want+1)
				if !errors.Is(err, ErrLogDamaged) || !bytes.Contains([]byte(err.Error()), []byte(want)) {
					t.Fatalf("replay error %v, want ErrLogDamaged with %q", err, want)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if last != tc.want || len(got) != int(tc.want) {
				t.Fatalf("replayed %v up to %d, want 1..%d", got, last, tc.want)
			}
		})
	}
}

// keepLog makes the store keep its records in the log (no idle
// checkpoint) for the rest of the test.
func keepLog(t *testing.T) {
	old := checkpointIdle
	checkpointIdle = time.Hour
	t.Cleanup(func() { checkpointIdle = old })
}

func putKeys(t *testing.T, db *DB, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		k := fmt.Sprintf("k%02d", i)
		if err := db.Update(bg, func(tx kv.Tx) error { return tx.Put([]byte(k), []byte("v"+k)) }); err != nil {
			t.Fatal(err)
		}
	}
}

func keysIn(t *testing.T, db *DB) []string {
	t.Helper()
	var keys []string
	err := db.View(bg, func(tx kv.Tx) error {
		return tx.Scan(nil, nil, 0, false, func(k, v []byte) bool {
			keys = append(keys, string(k))
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func wantKeys(from, to int) []string {
	var ks []string
	for i := from; i <= to; i++ {
		ks = append(ks, fmt.Sprintf("k%02d", i))
	}
	return ks
}

// TestOpenRefusesDamagedLog: a store whose log lost an acknowledged
// record in the middle does not open, says where, and leaves the log
// as it was; a torn last record opens with the records before it.
func TestOpenRefusesDamagedLog(t *testing.T) {
	keepLog(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "meta.db")
	db, err := Open(path, Options{LogSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	putKeys(t, db, 1, 8) // one synced record each
	// A copy of the files as a crash now would leave them (the records
	// are synced; bbolt is not written between checkpoints).
	snap := map[string][]byte{}
	for _, name := range []string{"meta.db", "meta.db.wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		snap[name] = b
	}
	db.Close()
	recLen := len(encodeRecord(1, []entry{{key: []byte("k01"), val: []byte("vk01")}}))
	restore := func(t *testing.T, damageRecord int) (string, []byte) {
		d := t.TempDir()
		for name, b := range snap {
			b = bytes.Clone(b)
			if name == "meta.db.wal" && damageRecord > 0 {
				b[(damageRecord-1)*recLen+walHeader+2] ^= 0xff // a byte of the key
			}
			if err := os.WriteFile(filepath.Join(d, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return filepath.Join(d, "meta.db"), snap["meta.db.wal"]
	}

	t.Run("damaged in the middle", func(t *testing.T) {
		p, _ := restore(t, 4)
		before, err := os.ReadFile(p + ".wal")
		if err != nil {
			t.Fatal(err)
		}
		db, err := Open(p, Options{})
		if err == nil {
			got := keysIn(t, db)
			db.Close()
			t.Fatalf("opened a store with a damaged log; it holds %v", got)
		}
		want := fmt.Sprintf("damaged at offset %d", 3*recLen)
		if !errors.Is(err, ErrLogDamaged) || !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Fatalf("Open: %v, want ErrLogDamaged %q", err, want)
		}
		after, rerr := os.ReadFile(p + ".wal")
		if rerr != nil || !bytes.Equal(before, after) {
			t.Fatalf("the damaged log was changed by the failed Open (%v)", rerr)
		}
		// Refusing is stable: the second attempt says the same.
		if db2, err2 := Open(p, Options{}); err2 == nil || err2.Error() != err.Error() {
			if err2 == nil {
				got := keysIn(t, db2)
				db2.Close()
				t.Fatalf("second Open succeeded; the store holds %v", got)
			}
			t.Fatalf("second Open: %v", err2)
		}
	})
	t.Run("torn last record", func(t *testing.T) {
		p, _ := restore(t, 8)
		db, err := Open(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if got := keysIn(t, db); !slices.Equal(got, wantKeys(1, 7)) {
			t.Fatalf("keys %v", got)
		}
	})
	t.Run("intact", func(t *testing.T) {
		p, _ := restore(t, 0)
		db, err := Open(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if got := keysIn(t, db); !slices.Equal(got, wantKeys(1, 8)) {
			t.Fatalf("keys %v", got)
		}
	})
}

// TestViewDoesNotSpin: when the read state and bbolt disagree and no
// checkpoint comes to settle them (a commit that became visible but
// failed), View returns when its context is done, or reports the store
// unavailable after snapshotWait, instead of looping on Begin.
func TestViewDoesNotSpin(t *testing.T) {
	keepLog(t) // no checkpoint comes by itself
	db, err := Open(filepath.Join(t.TempDir(), "v.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	putKeys(t, db, 1, 1)
	good := db.rs.Load()
	db.rs.Store(&readState{txid: good.txid - 1}) // a snapshot bbolt no longer has
	view := func(ctx context.Context) error {
		done := make(chan error, 1)
		go func() { done <- db.View(ctx, func(kv.Tx) error { return nil }) }()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("View is still looping")
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	if err := view(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("View with a deadline: %v", err)
	}
	old := snapshotWait
	snapshotWait = 50 * time.Millisecond
	defer func() { snapshotWait = old }()
	if err := view(bg); !errors.Is(err, kv.ErrUnavailable) {
		t.Fatalf("View without a deadline: %v, want kv.ErrUnavailable", err)
	}
	// A checkpoint settles it, and waiting readers go on.
	snapshotWait = 10 * time.Second
	res := make(chan error, 1)
	go func() { res <- db.View(bg, func(kv.Tx) error { return nil }) }()
	db.storeCheckpoint(good) // before or after the reader starts waiting: both must work
	select {
	case err := <-res:
		if err != nil {
			t.Fatalf("View after the checkpoint: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("View did not return after the checkpoint")
	}
}

// TestOldLogFormatReplays: a log written before the synced field (its
// database has no format key) is replayed with the 16-byte header, and
// the store goes on in the current format.
func TestOldLogFormatReplays(t *testing.T) {
	keepLog(t)
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	putKeys(t, db, 1, 2)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Make it look like an old store that crashed with records 3 and 4
	// of keys k03 and k04 in its log.
	bdb, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	var id []byte
	var applied uint64
	err = bdb.Update(func(btx *bbolt.Tx) error {
		wb := btx.Bucket(walBucket)
		id = bytes.Clone(wb.Get(logIDKey))
		applied = binary.BigEndian.Uint64(wb.Get(appliedKey))
		return wb.Delete(formatKey)
	})
	bdb.Close()
	if err != nil {
		t.Fatal(err)
	}
	w := &wal{id: id}
	var log []byte
	for i, k := range []string{"k03", "k04"} {
		body := binary.LittleEndian.AppendUint64(nil, applied+1+uint64(i))
		body = append(body, opPut, byte(len(k)))
		body = append(body, k...)
		body = append(body, byte(len(k)+1), 'v')
		body = append(body, k...)
		log = binary.LittleEndian.AppendUint32(log, uint32(len(body)))
		log = binary.LittleEndian.AppendUint32(log, w.checksum(body))
		log = append(log, body...)
	}
	f, err := os.OpenFile(path+".wal", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(log, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()

	db, err = Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysIn(t, db); !slices.Equal(got, wantKeys(1, 4)) {
		t.Fatalf("keys after replaying the old log: %v", got)
	}
	putKeys(t, db, 5, 6) // new-format records over the old ones
	db.Close()
	db, err = Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := keysIn(t, db); !slices.Equal(got, wantKeys(1, 6)) {
		t.Fatalf("keys after more writes: %v", got)
	}
}

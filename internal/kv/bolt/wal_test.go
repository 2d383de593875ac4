package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/vfs"
)

// append reserves room for rec and writes it, as the writer and the
// syncer do between them.
func (w *wal) append(rec []byte) (ok bool, err error) {
	off, ok := w.reserve(len(rec))
	if !ok {
		return false, nil
	}
	return true, w.write(rec, off)
}

// TestWALReplayStops: replay applies consecutive whole records after the
// checkpoint and stops at zeros, at a torn record, at a stale record left
// from before the last checkpoint and at a gap in the sequence.
func TestWALReplayStops(t *testing.T) {
	rec := func(seq uint64, k string) []byte {
		return encodeRecord(seq, []entry{{key: []byte(k), val: []byte("v" + k)}, {key: []byte(k + "-gone"), del: true}})
	}
	for _, tc := range []struct {
		name    string
		records [][]byte
		tear    int // byte to flip in the last record (-1: none)
		applied uint64
		want    []string
	}{
		{"empty log", nil, -1, 0, nil},
		{"two records", [][]byte{rec(1, "a"), rec(2, "b")}, -1, 0, []string{"a", "b"}},
		{"after a checkpoint", [][]byte{rec(6, "f"), rec(7, "g")}, -1, 5, []string{"f", "g"}},
		{"stale records from an earlier round", [][]byte{rec(3, "c"), rec(4, "d")}, -1, 5, nil},
		{"new round over a stale tail", [][]byte{rec(6, "f"), rec(2, "old"), rec(3, "old2")}, -1, 5, []string{"f"}},
		{"gap", [][]byte{rec(1, "a"), rec(3, "c")}, -1, 0, []string{"a"}},
		{"torn last record", [][]byte{rec(1, "a"), rec(2, "b")}, 20, 0, []string{"a"}},
		{"torn length", [][]byte{rec(1, "a"), rec(2, "b")}, 1, 0, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := openWAL(vfs.Default, filepath.Join(t.TempDir(), "x.wal"), 4096, false, false)
			if err != nil {
				t.Fatal(err)
			}
			defer w.close()
			for i, r := range tc.records {
				at := w.off
				if ok, err := w.append(r); !ok || err != nil {
					t.Fatal(ok, err)
				}
				if i == len(tc.records)-1 && tc.tear >= 0 {
					// Damage the record on disk, as a crash mid-write would.
					b := []byte{r[tc.tear] ^ 0x5a}
					if _, err := w.f.WriteAt(b, at+int64(tc.tear)); err != nil {
						t.Fatal(err)
					}
				}
			}
			var got []string
			last, err := w.replay(tc.applied, func(seq uint64, es []entry) error {
				if len(es) != 2 || !es[1].del || string(es[0].val) != "v"+string(es[0].key) {
					return fmt.Errorf("record %d decoded as %+v", seq, es)
				}
				got = append(got, string(es[0].key))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) || last != tc.applied+uint64(len(tc.want)) {
				t.Fatalf("replayed %v up to %d, want %v", got, last, tc.want)
			}
		})
	}
	// Records of another database's log (another log id) are not replayed.
	other, err := openWAL(vfs.Default, filepath.Join(t.TempDir(), "z.wal"), 4096, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer other.close()
	other.id = []byte("database one")
	if ok, err := other.append(rec(1, "a")); !ok || err != nil {
		t.Fatal(ok, err)
	}
	other.id = []byte("database two")
	if last, err := other.replay(0, func(uint64, []entry) error { return errors.New("replayed") }); err != nil || last != 0 {
		t.Fatalf("foreign log replayed: %d %v", last, err)
	}
	// A record that does not fit is refused, not written.
	w, err := openWAL(vfs.Default, filepath.Join(t.TempDir(), "y.wal"), 64, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if ok, err := w.append(encodeRecord(1, []entry{{key: []byte("k"), val: make([]byte, 100)}})); ok || err != nil || w.off != 0 {
		t.Fatalf("oversized record: ok=%v err=%v off=%d", ok, err, w.off)
	}
}

func FuzzDecodeEntries(f *testing.F) {
	f.Add(encodeRecord(1, []entry{{key: []byte("a"), val: []byte("b")}, {key: []byte("c"), del: true}})[walHeader:])
	f.Add([]byte{opPut, 0x80})
	f.Add([]byte{9})
	f.Fuzz(func(t *testing.T, p []byte) {
		es, err := decodeEntries(p)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same bytes.
		if again := encodeRecord(1, es)[walHeader:]; !bytes.Equal(again, p) && len(es) > 0 {
			// Non-minimal varints decode but re-encode shorter: accept
			// only that difference.
			es2, err := decodeEntries(again)
			if err != nil || len(es2) != len(es) {
				t.Fatalf("re-encoding %x gave %x (%v)", p, again, err)
			}
		}
	})
}

// TestOverlayMatchesModel drives the store with random transactions and
// compares every read (point reads, scans in both directions with bounds
// and limits) with an in-memory model, while checkpoints fold the layers
// into bbolt often, the log is small enough to fill, and the store is
// closed and reopened.
func TestOverlayMatchesModel(t *testing.T) {
	defer func(n int) { checkpointEntries = n }(checkpointEntries)
	checkpointEntries = 97
	dir := t.TempDir()
	path := filepath.Join(dir, "m.db")
	open := func() *DB {
		db, err := Open(path, Options{NoSync: true, LogSize: 32 << 10})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	defer func() { db.Close() }()
	model := map[string][]byte{}
	rng := rand.New(rand.NewSource(1))
	key := func() string { return fmt.Sprintf("k%03d", rng.Intn(300)) }
	errDomain := errors.New("domain")
	for i := 0; i < 3000; i++ {
		switch r := rng.Intn(100); {
		case r < 45:
			type op struct {
				k   string
				v   []byte
				del bool
			}
			var ops []op
			for n := 1 + rng.Intn(6); n > 0; n-- {
				o := op{k: key()}
				switch x := rng.Intn(10); {
				case x < 3:
					o.del = true
				case x == 3:
					o.v = make([]byte, rng.Intn(9000)) // some do not fit the log
				default:
					o.v = []byte(fmt.Sprintf("v%d-%d", i, n))
				}
				ops = append(ops, o)
			}
			fail := rng.Intn(8) == 0
			err := db.Update(bg, func(tx kv.Tx) error {
				for _, o := range ops {
					var err error
					if o.del {
						err = tx.Delete([]byte(o.k))
					} else {
						err = tx.Put([]byte(o.k), o.v)
					}
					if err != nil {
						return err
					}
				}
				if fail {
					return errDomain
				}
				return nil
			})
			if fail != (err != nil) {
				t.Fatalf("step %d: Update: %v", i, err)
			}
			if !fail {
				for _, o := range ops {
					if o.del {
						delete(model, o.k)
					} else {
						model[o.k] = o.v
					}
				}
			}
		case r < 96:
			checkReads(t, db, model, rng, i)
		case r < 99:
			time.Sleep(time.Duration(rng.Intn(3)) * checkpointIdle)
		default:
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = open()
		}
	}
	checkReads(t, db, model, rng, -1)
}

func checkReads(t *testing.T, db *DB, model map[string][]byte, rng *rand.Rand, step int) {
	t.Helper()
	keys := make([]string, 0, len(model))
	for k := range model {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bound := func() []byte {
		if rng.Intn(4) == 0 {
			return nil
		}
		return []byte(fmt.Sprintf("k%03d", rng.Intn(310)))
	}
	err := db.View(bg, func(tx kv.Tx) error {
		for n := 0; n < 5; n++ {
			k := fmt.Sprintf("k%03d", rng.Intn(300))
			v, err := tx.Get([]byte(k))
			want, ok := model[k]
			if ok != (err == nil) || (ok && !bytes.Equal(v, want)) {
				return fmt.Errorf("Get %s = %q, %v; want %q, %v", k, v, err, want, ok)
			}
		}
		start, end := bound(), bound()
		limit := rng.Intn(12)
		reverse := rng.Intn(2) == 0
		var want []string
		for _, k := range keys {
			if (start == nil || k >= string(start)) && (end == nil || k < string(end)) {
				want = append(want, k)
			}
		}
		if reverse {
			slices.Reverse(want)
		}
		if limit > 0 && len(want) > limit {
			want = want[:limit]
		}
		var got []string
		err := tx.Scan(start, end, limit, reverse, func(k, v []byte) bool {
			if !bytes.Equal(v, model[string(k)]) {
				t.Errorf("step %d: Scan value of %s differs", step, k)
			}
			got = append(got, string(k))
			return true
		})
		if err != nil {
			return err
		}
		if (end == nil || start == nil || string(start) < string(end)) && !slices.Equal(got, want) {
			return fmt.Errorf("Scan(%s, %s, %d, reverse %v) = %v, want %v", start, end, limit, reverse, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
}

// TestCheckpointFailure: a failed checkpoint loses nothing acknowledged.
// The published groups stay readable, the transaction is rebuilt from
// them, a later checkpoint commits them, and they survive a reopen.
func TestCheckpointFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var fail atomic.Bool
	var failed atomic.Int32
	db.commitHook = func() error {
		if fail.Load() {
			failed.Add(1)
			return errors.New("disk on fire")
		}
		return nil
	}
	put := func(k string) {
		t.Helper()
		if err := db.Update(bg, func(tx kv.Tx) error { return tx.Put([]byte(k), []byte("v"+k)) }); err != nil {
			t.Fatalf("put %s: %v", k, err)
		}
	}
	put("a")
	put("b")
	// Fail only checkpoints: the idle checkpoint runs after checkpointIdle
	// with no group in flight, so no log sync sees the hook.
	fail.Store(true)
	deadline := time.Now().Add(10 * time.Second)
	for failed.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint was attempted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	fail.Store(false)
	check := func(db *DB, keys ...string) {
		t.Helper()
		err := db.View(bg, func(tx kv.Tx) error {
			for _, k := range keys {
				if v, err := tx.Get([]byte(k)); err != nil || string(v) != "v"+k {
					return fmt.Errorf("%s = %q, %v", k, v, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check(db, "a", "b")
	put("c") // rebuilds the transaction from the published groups first
	check(db, "a", "b", "c")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check(db, "a", "b", "c")
}

// FuzzWALReplay: replay over arbitrary log bytes never panics, applies
// consecutive records only, and fails only with ErrLogDamaged or a
// malformed record.
func FuzzWALReplay(f *testing.F) {
	w0 := &wal{id: []byte("fuzz"), hdr: walHeader}
	var seed []byte
	for seq := uint64(1); seq <= 3; seq++ {
		r := encodeRecord(seq, []entry{{key: []byte("k"), val: []byte("v")}, {key: []byte("d"), del: true}})
		w0.synced = seq - 1
		binary.LittleEndian.PutUint64(r[16:], w0.synced)
		binary.LittleEndian.PutUint32(r[4:], w0.checksum(r[8:]))
		seed = append(seed, r...)
	}
	f.Add(seed, uint64(0))
	damaged := bytes.Clone(seed)
	damaged[walHeader+1] ^= 1
	f.Add(damaged, uint64(0))
	f.Add(seed, uint64(2))
	f.Add(make([]byte, 64), uint64(0))
	f.Fuzz(func(t *testing.T, log []byte, applied uint64) {
		if len(log) > 1<<16 {
			return
		}
		path := filepath.Join(t.TempDir(), "f.wal")
		w, err := openWAL(vfs.Default, path, int64(max(len(log), 1)), false, false)
		if err != nil {
			t.Fatal(err)
		}
		defer w.close()
		if _, err := w.f.WriteAt(log, 0); err != nil {
			t.Fatal(err)
		}
		w.id = []byte("fuzz")
		next := applied + 1
		last, err := w.replay(applied, func(seq uint64, es []entry) error {
			if seq != next {
				return fmt.Errorf("record %d replayed, want %d", seq, next)
			}
			next++
			return nil
		})
		if last != next-1 {
			t.Fatalf("replay returned %d after applying up to %d", last, next-1)
		}
		if err != nil && !errors.Is(err, ErrLogDamaged) && !errors.Is(err, errBadRecord) {
			t.Fatalf("replay: %v", err)
		}
	})
}

// A new log zero-filled in the background: record writes racing the
// filler keep their bytes (the filler never writes zeros over a record),
// everything else reads as zeros, and close waits for the filler.
func TestWALBackgroundZeroFill(t *testing.T) {
	for round := 0; round < 20; round++ {
		path := filepath.Join(t.TempDir(), "bg.wal")
		const size = 8 << 20
		w, err := openWAL(vfs.Default, path, size, false, true)
		if err != nil {
			t.Fatal(err)
		}
		if !w.zeroing.Load() && round == 0 {
			t.Log("filler finished before the first write")
		}
		// Records written sequentially from the start, as the log does,
		// while the filler runs.
		var want []byte
		off := int64(0)
		for i := 0; i < 64; i++ {
			rec := bytes.Repeat([]byte{byte(i + 1)}, 4096+i*37)
			binary.LittleEndian.PutUint32(rec[0:], uint32(len(rec)-8)) // a record-shaped length
			buf := append([]byte(nil), rec...)
			if err := w.write(buf, off); err != nil {
				t.Fatal(err)
			}
			want = append(want, buf...)
			off += int64(len(buf))
		}
		if err := w.close(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != size {
			t.Fatalf("log size %d, want %d", len(got), size)
		}
		if !bytes.Equal(got[:len(want)], want) {
			t.Fatalf("round %d: record bytes overwritten by the filler", round)
		}
		if !bytes.Equal(got[len(want):], make([]byte, size-len(want))) {
			t.Fatalf("round %d: the rest of the log is not zeros", round)
		}
	}
}

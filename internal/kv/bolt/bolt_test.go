package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/kvtest"
)

var bg = context.Background()

func openTest(t testing.TB, opts Options) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "kv.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() }) // may already be closed
	return db
}

func reopenTest(t testing.TB, s kv.Store, opts Options) *DB {
	t.Helper()
	old := s.(*DB)
	path := old.bdb.Path()
	if err := old.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	for _, opts := range []Options{
		{},                             // durable, the default
		{NoSync: true, MaxBatchOps: 3}, // small groups: more boundaries
	} {
		t.Run(fmt.Sprintf("NoSync=%v,MaxBatchOps=%d", opts.NoSync, opts.MaxBatchOps), func(t *testing.T) {
			kvtest.Run(t,
				func(t *testing.T) kv.Store { return openTest(t, opts) },
				func(t *testing.T, s kv.Store) kv.Store { return reopenTest(t, s, opts) })
		})
	}
}

// blockWriter makes the writer run a fn that waits until the returned
// release func is called, so that later Updates queue up into one group.
func blockWriter(t *testing.T, db *DB) (release func(), done <-chan error) {
	t.Helper()
	started := make(chan struct{})
	rel := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- db.Update(bg, func(tx kv.Tx) error {
			close(started)
			<-rel
			return tx.Put([]byte("blocker"), []byte("x"))
		})
	}()
	<-started
	var once sync.Once
	return func() { once.Do(func() { close(rel) }) }, errc
}

// waitQueued waits until n requests are queued behind the writer.
func waitQueued(t *testing.T, db *DB, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		db.qmu.Lock()
		q := len(db.queue)
		db.qmu.Unlock()
		if q >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d requests queued", q, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestGroupCommitMixedOutcomes(t *testing.T) {
	db := openTest(t, Options{})
	release, blocked := blockWriter(t, db)
	const n = 100
	errs := make([]error, n)
	var lastOK atomic.Int64 // fns run one at a time on the writer
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Update(bg, func(tx kv.Tx) error {
				k := kv.Key("g", fmt.Sprintf("%03d", i))
				if err := tx.Put(k, []byte("v")); err != nil {
					return err
				}
				if err := tx.Put(kv.Key("shared"), []byte(fmt.Sprint(i))); err != nil {
					return err
				}
				switch i % 4 {
				case 1:
					return fmt.Errorf("domain %d", i)
				case 2:
					panic(fmt.Sprintf("boom %d", i))
				}
				lastOK.Store(int64(i))
				return nil
			})
		}()
	}
	waitQueued(t, db, n)
	before := db.commits.Load()
	release()
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	// The blocker's group plus one group for the 100 queued Updates.
	if c := db.commits.Load() - before; c > 2 {
		t.Errorf("%d commits for %d queued Updates, want group commit", c, n)
	}
	for i, err := range errs {
		switch i % 4 {
		case 1:
			if err == nil || err.Error() != fmt.Sprintf("domain %d", i) {
				t.Errorf("Update %d: %v", i, err)
			}
		case 2:
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("panic in Update fn: boom %d", i)) {
				t.Errorf("Update %d: %v", i, err)
			}
		default:
			if err != nil {
				t.Errorf("Update %d: %v", i, err)
			}
		}
	}
	err := db.View(bg, func(tx kv.Tx) error {
		for i := 0; i < n; i++ {
			_, err := tx.Get(kv.Key("g", fmt.Sprintf("%03d", i)))
			ok := i%4 == 0 || i%4 == 3
			if ok != (err == nil) {
				return fmt.Errorf("key %d: present=%v, want %v", i, err == nil, ok)
			}
		}
		// The last successful fn's write wins over the undone writes of the
		// failed ones after it.
		v, err := tx.Get(kv.Key("shared"))
		if err != nil || string(v) != fmt.Sprint(lastOK.Load()) {
			return fmt.Errorf("shared = %q, %v; want %d", v, err, lastOK.Load())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMaxBatchOps(t *testing.T) {
	db := openTest(t, Options{NoSync: true, MaxBatchOps: 10})
	release, blocked := blockWriter(t, db)
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := db.Update(bg, func(tx kv.Tx) error { return tx.Put(kv.Key("m", fmt.Sprint(i)), nil) }); err != nil {
				t.Error(err)
			}
		}()
	}
	waitQueued(t, db, 50)
	before := db.commits.Load()
	release()
	<-blocked
	wg.Wait()
	if c := db.commits.Load() - before; c < 5 {
		t.Errorf("%d commits for 50 Updates with MaxBatchOps 10", c)
	}
}

func TestCommitFailure(t *testing.T) {
	db := openTest(t, Options{NoSync: true})
	release, blocked := blockWriter(t, db)
	errDisk := errors.New("disk on fire")
	var fail atomic.Bool
	fail.Store(true)
	db.commitHook = func() error {
		if fail.Load() {
			return errDisk
		}
		return nil
	}
	const n = 10
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Update(bg, func(tx kv.Tx) error {
				if err := tx.Put(kv.Key("cf", fmt.Sprint(i)), []byte("v")); err != nil {
					return err
				}
				if i == 0 {
					return errors.New("domain")
				}
				return nil
			})
		}()
	}
	waitQueued(t, db, n)
	release()
	if err := <-blocked; !errors.Is(err, kv.ErrUnavailable) || !errors.Is(err, errDisk) {
		t.Errorf("blocker: %v", err)
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, kv.ErrUnavailable) || !errors.Is(err, errDisk) {
			t.Errorf("Update %d: %v, want ErrUnavailable wrapping the commit error", i, err)
		}
	}
	fail.Store(false)
	err := db.View(bg, func(tx kv.Tx) error {
		return tx.Scan(nil, nil, 0, false, func(k, v []byte) bool {
			t.Errorf("key %q survived a failed commit", k)
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(bg, func(tx kv.Tx) error { return tx.Put([]byte("after"), nil) }); err != nil {
		t.Fatalf("Update after a failed commit: %v", err)
	}
}

func TestPanicAndGoexitDoNotKillWriter(t *testing.T) {
	db := openTest(t, Options{NoSync: true})
	err := db.Update(bg, func(tx kv.Tx) error {
		_ = tx.Put([]byte("p"), []byte("x"))
		panic("oops")
	})
	if err == nil || !strings.Contains(err.Error(), "panic in Update fn: oops") {
		t.Fatalf("panicking fn: %v", err)
	}
	err = db.Update(bg, func(tx kv.Tx) error {
		_ = tx.Put([]byte("g"), []byte("x"))
		runtime.Goexit()
		return nil
	})
	if !errors.Is(err, kv.ErrUnavailable) || !errors.Is(err, errGoexit) {
		t.Fatalf("Goexit fn: %v", err)
	}
	if err := db.Update(bg, func(tx kv.Tx) error { return tx.Put([]byte("ok"), []byte("1")) }); err != nil {
		t.Fatalf("Update after panic: %v", err)
	}
	err = db.View(bg, func(tx kv.Tx) error {
		for _, k := range []string{"p", "g"} {
			if _, err := tx.Get([]byte(k)); !errors.Is(err, kv.ErrNotFound) {
				return fmt.Errorf("%s: %v", k, err)
			}
		}
		_, err := tx.Get([]byte("ok"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCancelWhileQueued(t *testing.T) {
	db := openTest(t, Options{NoSync: true})
	release, blocked := blockWriter(t, db)
	defer release()
	ctx, cancel := context.WithCancel(bg)
	var ran atomic.Bool
	errc := make(chan error, 1)
	go func() {
		errc <- db.Update(ctx, func(tx kv.Tx) error { ran.Store(true); return tx.Put([]byte("c"), nil) })
	}()
	waitQueued(t, db, 1)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Update: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled Update did not return while the writer was busy")
	}
	release()
	<-blocked
	if err := db.Update(bg, func(tx kv.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if ran.Load() {
		t.Fatal("fn of a cancelled Update ran")
	}
}

func TestCloseDrainsQueue(t *testing.T) {
	db := openTest(t, Options{})
	path := db.bdb.Path()
	release, blocked := blockWriter(t, db)
	const n = 20
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			errs <- db.Update(bg, func(tx kv.Tx) error { return tx.Put(kv.Key("d", fmt.Sprint(i)), nil) })
		}()
	}
	waitQueued(t, db, n)
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	// Close stops new calls at once but waits for the queued ones.
	deadline := time.Now().Add(10 * time.Second)
	for !db.gate.Closed() {
		if time.Now().After(deadline) {
			t.Fatal("Close did not start")
		}
		time.Sleep(time.Millisecond)
	}
	if err := db.Update(bg, func(tx kv.Tx) error { return nil }); !errors.Is(err, kv.ErrClosed) {
		t.Fatalf("Update during Close: %v", err)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned %v before queued Updates ran", err)
	case <-time.After(20 * time.Millisecond):
	}
	release()
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("queued Update: %v", err)
		}
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := db.Close(); !errors.Is(err, kv.ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
	db2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	count := 0
	err = db2.View(bg, func(tx kv.Tx) error {
		return tx.Scan(kv.Key("d"), kv.PrefixEnd(kv.Key("d")), 0, false, func(k, v []byte) bool { count++; return true })
	})
	if err != nil || count != n {
		t.Fatalf("after reopen: %d keys, %v; want %d", count, err, n)
	}
}

func TestTxUnusableAfterFn(t *testing.T) {
	db := openTest(t, Options{NoSync: true})
	var leaked kv.Tx
	if err := db.Update(bg, func(tx kv.Tx) error { leaked = tx; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := leaked.Put([]byte("k"), nil); !errors.Is(err, errTxDone) {
		t.Errorf("Put on a finished tx: %v", err)
	}
	if err := db.View(bg, func(tx kv.Tx) error { leaked = tx; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := leaked.Get([]byte("k")); !errors.Is(err, errTxDone) {
		t.Errorf("Get on a finished tx: %v", err)
	}
}

func TestEmptyKeyRejected(t *testing.T) {
	db := openTest(t, Options{NoSync: true})
	err := db.Update(bg, func(tx kv.Tx) error { return tx.Put(nil, []byte("x")) })
	if !errors.Is(err, errEmptyKey) {
		t.Fatalf("Put(empty key): %v", err)
	}
	err = db.View(bg, func(tx kv.Tx) error {
		_, err := tx.Get(nil)
		return err
	})
	if !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("Get(empty key): %v", err)
	}
}

// BenchmarkUpdateParallel: durable Puts of 1 KiB values from many goroutines,
// sharing fsyncs through group commit.
func BenchmarkUpdateParallel(b *testing.B) {
	db := openTest(b, Options{})
	val := bytes.Repeat([]byte("v"), 1024)
	var seq atomic.Uint64
	before := db.commits.Load()
	b.SetParallelism(64) // 64 × GOMAXPROCS concurrent writers
	b.SetBytes(int64(len(val)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k := kv.Key("bench", fmt.Sprintf("%012d", seq.Add(1)))
			if err := db.Update(bg, func(tx kv.Tx) error { return tx.Put(k, val) }); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	if c := db.commits.Load() - before; c > 0 {
		b.ReportMetric(float64(b.N)/float64(c), "ops/commit")
	}
}

// BenchmarkUpdateSerial is the no-sharing baseline: one writer, one fsync
// per Update.
func BenchmarkUpdateSerial(b *testing.B) {
	db := openTest(b, Options{})
	val := bytes.Repeat([]byte("v"), 1024)
	b.SetBytes(int64(len(val)))
	for i := 0; b.Loop(); i++ {
		k := kv.Key("bench", fmt.Sprintf("%012d", i))
		if err := db.Update(bg, func(tx kv.Tx) error { return tx.Put(k, val) }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkView: point reads of 1 KiB values from 100k keys, in parallel.
func BenchmarkView(b *testing.B) {
	db := openTest(b, Options{NoSync: true})
	const keys = 100_000
	val := bytes.Repeat([]byte("v"), 1024)
	for i := 0; i < keys; i += 1000 {
		err := db.Update(bg, func(tx kv.Tx) error {
			for j := i; j < i+1000; j++ {
				if err := tx.Put(kv.Key("bench", fmt.Sprintf("%012d", j)), val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	var seq atomic.Uint64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k := kv.Key("bench", fmt.Sprintf("%012d", seq.Add(7919)%keys))
			err := db.View(bg, func(tx kv.Tx) error {
				v, err := tx.Get(k)
				if err == nil && len(v) != len(val) {
					err = errors.New("short value")
				}
				return err
			})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkBigDelete: 10⁴, 10⁵ and 10⁶ adjacent keys deleted in
// transactions of 1000 (kvtest.BenchmarkBigDelete); ns/key stays flat
// when the write path is linear.
func BenchmarkBigDelete(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			kvtest.BenchmarkBigDelete(b, func(b *testing.B) kv.Store { return openTest(b, Options{}) }, n, 1000)
		})
	}
}

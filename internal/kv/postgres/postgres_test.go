package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/kvtest"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
)

var bg = context.Background()

func openDSN(t testing.TB, dsn string, opts Options) *DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, 30*time.Second)
	defer cancel()
	db, err := Open(ctx, dsn, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() }) // may already be closed
	return db
}

// openTest opens a store in a fresh schema.
func openTest(t testing.TB, opts Options) (*DB, string) {
	t.Helper()
	dsn, schema := pgtest.Schema(t)
	return openDSN(t, dsn, opts), schema
}

type store struct {
	*DB
	dsn  string
	opts Options
}

func TestConformance(t *testing.T) {
	pgtest.BaseDSN(t) // skip once, not per subtest, without a database
	for _, opts := range []Options{
		{},
		{MaxConns: 3}, // fewer connections than concurrent callers
	} {
		t.Run(fmt.Sprintf("MaxConns=%d", opts.MaxConns), func(t *testing.T) {
			kvtest.Run(t,
				func(t *testing.T) kv.Store {
					dsn, _ := pgtest.Schema(t)
					return &store{openDSN(t, dsn, opts), dsn, opts}
				},
				func(t *testing.T, s kv.Store) kv.Store {
					old := s.(*store)
					if err := old.Close(); err != nil {
						t.Fatalf("Close: %v", err)
					}
					return &store{openDSN(t, old.dsn, old.opts), old.dsn, old.opts}
				})
		})
	}
}

func get(t testing.TB, db kv.Store, key string) (string, error) {
	t.Helper()
	var v []byte
	err := db.View(bg, func(tx kv.Tx) error {
		b, err := tx.Get([]byte(key))
		v = bytes.Clone(b)
		return err
	})
	return string(v), err
}

func put(t testing.TB, db kv.Store, key, val string) error {
	t.Helper()
	return db.Update(bg, func(tx kv.Tx) error { return tx.Put([]byte(key), []byte(val)) })
}

// TestTerminatedBackends kills the server side of every pooled connection
// (as a server restart or a failover does). Operations either succeed
// (stale connections are replaced transparently) or fail with
// kv.ErrUnavailable; the ones after succeed.
func TestTerminatedBackends(t *testing.T) {
	db, schema := openTest(t, Options{MaxConns: 8})
	// Fill the pool with several connections.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if err := put(t, db, "k"+strconv.Itoa(i), "v"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for round := range 3 {
		if n := pgtest.Terminate(t, schema); n == 0 {
			t.Fatalf("round %d: no backend to terminate", round)
		}
		time.Sleep(50 * time.Millisecond) // let the FATAL messages arrive
		var failed atomic.Int64
		for i := range 8 {
			wg.Go(func() {
				var err error
				switch i % 3 {
				case 0:
					_, err = get(t, db, "k"+strconv.Itoa(i))
				case 1:
					err = put(t, db, "k"+strconv.Itoa(i), "w")
				default:
					err = db.Update(bg, func(tx kv.Tx) error {
						k := []byte("k" + strconv.Itoa(i))
						v, err := tx.Get(k)
						if err != nil {
							return err
						}
						return tx.Put(k, append(bytes.Clone(v), 'x'))
					})
				}
				if err != nil {
					failed.Add(1)
					if !errors.Is(err, kv.ErrUnavailable) {
						t.Errorf("round %d op %d: %v, want nil or kv.ErrUnavailable", round, i, err)
					}
				}
			})
		}
		wg.Wait()
		t.Logf("round %d: %d of 8 operations failed with kv.ErrUnavailable", round, failed.Load())
		for i := range 8 {
			if _, err := get(t, db, "k"+strconv.Itoa(i)); err != nil {
				t.Fatalf("round %d: Get after the failures: %v", round, err)
			}
			if err := put(t, db, "k"+strconv.Itoa(i), "again"); err != nil {
				t.Fatalf("round %d: Put after the failures: %v", round, err)
			}
		}
	}
}

// proxy forwards TCP connections to the database, and can refuse them
// (server down) or cut them (network failure).
type proxy struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	p := &proxy{t: t, target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[s] = true, true
			p.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				io.Copy(dst, src)
				dst.Close()
				src.Close()
			}
			p.wg.Go(func() { pipe(c, s) })
			p.wg.Go(func() { pipe(s, c) })
		}
	})
}

// cut closes every forwarded connection; new ones are still accepted.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// stop refuses new connections and cuts the existing ones: the server is
// down.
func (p *proxy) stop() {
	p.mu.Lock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	p.mu.Unlock()
	p.cut()
	p.wg.Wait()
}

// restart listens again on the same address: the server is back.
func (p *proxy) restart() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.serve(ln)
}

// proxiedDSN returns a DSN for a fresh schema that goes through a proxy.
func proxiedDSN(t *testing.T) (string, *proxy) {
	dsn, _ := pgtest.Schema(t)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	dsn, err = pgtest.WithParams(dsn, map[string]string{"host": p.addr})
	if err != nil {
		t.Fatal(err)
	}
	return dsn, p
}

// TestServerDownAndBack: while the server is unreachable operations fail
// fast with kv.ErrUnavailable; once it is back the pool reconnects by
// itself.
func TestServerDownAndBack(t *testing.T) {
	dsn, p := proxiedDSN(t)
	db := openDSN(t, dsn, Options{})
	if err := put(t, db, "a", "1"); err != nil {
		t.Fatal(err)
	}
	p.stop()
	for i := range 3 {
		start := time.Now()
		_, err := get(t, db, "a")
		if !errors.Is(err, kv.ErrUnavailable) {
			t.Fatalf("View %d while down: %v, want kv.ErrUnavailable", i, err)
		}
		err = put(t, db, "a", "2")
		if !errors.Is(err, kv.ErrUnavailable) {
			t.Fatalf("Update %d while down: %v, want kv.ErrUnavailable", i, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("failing took %v", d)
		}
	}
	p.restart()
	if v, err := get(t, db, "a"); err != nil || v != "1" {
		t.Fatalf("View after restart: %q, %v", v, err)
	}
	if err := put(t, db, "a", "3"); err != nil {
		t.Fatalf("Update after restart: %v", err)
	}
	if v, err := get(t, db, "a"); err != nil || v != "3" {
		t.Fatalf("View after restart: %q, %v", v, err)
	}
}

// TestConnectionLostMidTransaction: the connection breaks between two
// reads of an Update; nothing was committed, so fn runs again and the
// Update succeeds.
func TestConnectionLostMidTransaction(t *testing.T) {
	dsn, p := proxiedDSN(t)
	db := openDSN(t, dsn, Options{})
	if err := put(t, db, "n", "1"); err != nil {
		t.Fatal(err)
	}
	runs := 0
	err := db.Update(bg, func(tx kv.Tx) error {
		runs++
		v, err := tx.Get([]byte("n"))
		if err != nil {
			return err
		}
		if runs == 1 {
			p.cut()
		}
		n, _ := strconv.Atoi(string(v))
		if _, err := tx.Get([]byte("other")); err != nil && !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		return tx.Put([]byte("n"), []byte(strconv.Itoa(n+1)))
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if runs != 2 {
		t.Errorf("fn ran %d times, want 2", runs)
	}
	if v, err := get(t, db, "n"); err != nil || v != "2" {
		t.Fatalf("n = %q, %v; want 2", v, err)
	}

	// In a View the failure is reported, not retried.
	err = db.View(bg, func(tx kv.Tx) error {
		if _, err := tx.Get([]byte("n")); err != nil {
			return err
		}
		p.cut()
		// A key not read yet: the transaction answers a repeated Get
		// from what it read, without a statement.
		_, err := tx.Get([]byte("m"))
		return err
	})
	if !errors.Is(err, kv.ErrUnavailable) {
		t.Fatalf("View with a cut connection: %v, want kv.ErrUnavailable", err)
	}
	if v, err := get(t, db, "n"); err != nil || v != "2" {
		t.Fatalf("after the cut View: n = %q, %v", v, err)
	}
}

// TestRetriesExhausted: with MaxAttempts 1 a serialization failure is not
// retried and surfaces as kv.ErrUnavailable.
func TestRetriesExhausted(t *testing.T) {
	db, _ := openTest(t, Options{MaxAttempts: 1})
	if err := put(t, db, "x", "1"); err != nil {
		t.Fatal(err)
	}
	if err := put(t, db, "y", "1"); err != nil {
		t.Fatal(err)
	}
	// Two transactions read both keys, then each writes one: write skew,
	// which SERIALIZABLE must refuse to one of them.
	var read sync.WaitGroup
	read.Add(2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, self := range []string{"x", "y"} {
		wg.Go(func() {
			errs[i] = db.Update(bg, func(tx kv.Tx) error {
				for _, k := range []string{"x", "y"} {
					if _, err := tx.Get([]byte(k)); err != nil {
						return err
					}
				}
				read.Done()
				read.Wait()
				return tx.Put([]byte(self), []byte("0"))
			})
		})
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err == nil {
			continue
		}
		failed++
		if !errors.Is(err, kv.ErrUnavailable) || !strings.Contains(err.Error(), "40001") {
			t.Errorf("Update: %v, want kv.ErrUnavailable from a serialization failure", err)
		}
	}
	if failed != 1 {
		t.Fatalf("%d of 2 write-skewed Updates failed, want 1 (errors %v)", failed, errs)
	}
}

// TestFnPanics: a panicking fn leaves no transaction open and no
// connection taken.
func TestFnPanics(t *testing.T) {
	db, _ := openTest(t, Options{MaxConns: 1})
	if err := put(t, db, "p", "1"); err != nil {
		t.Fatal(err)
	}
	for _, update := range []bool{false, true} {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			fn := func(tx kv.Tx) error {
				if _, err := tx.Get([]byte("p")); err != nil {
					return err
				}
				if update {
					tx.Put([]byte("p"), []byte("panicked"))
				}
				panic("boom")
			}
			if update {
				db.Update(bg, fn)
			} else {
				db.View(bg, fn)
			}
		}()
	}
	ctx, cancel := context.WithTimeout(bg, 5*time.Second)
	defer cancel()
	if err := db.Update(ctx, func(tx kv.Tx) error { return tx.Put([]byte("q"), nil) }); err != nil {
		t.Fatalf("Update after panics: %v", err)
	}
	if v, err := get(t, db, "p"); err != nil || v != "1" {
		t.Fatalf("p = %q, %v; want 1", v, err)
	}
}

// TestConcurrentOpen: processes starting at once migrate the schema once.
func TestConcurrentOpen(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			db, err := Open(bg, dsn, Options{MaxConns: 2})
			if err != nil {
				t.Error(err)
				return
			}
			if err := put(t, db, "k", "v"); err != nil {
				t.Error(err)
			}
			db.Close()
		})
	}
	wg.Wait()
	db := openDSN(t, dsn, Options{})
	var version int64
	err := db.Do(bg, func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, "SELECT version FROM schema_version WHERE component = 'kv'").Scan(&version)
	})
	if err != nil || version != 1 {
		t.Fatalf("schema_version = %d, %v", version, err)
	}

	// A schema from the future is refused.
	err = db.Do(bg, func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "UPDATE schema_version SET version = 99 WHERE component = 'kv'")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bg, dsn, Options{}); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Open of a newer schema: %v", err)
	}
}

type countTracer struct{ trips atomic.Int64 }

func (c *countTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.trips.Add(1)
	return ctx
}
func (c *countTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *countTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.trips.Add(1)
	return ctx
}
func (c *countTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *countTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// TestRoundTrips: a write-only Update is one round trip (BEGIN, writes
// and COMMIT pipelined), a read-modify-write two (also when it reads
// several keys named to kv.Prefetch first), a point View one (its
// ROLLBACK travels with the connection's next statement).
func TestRoundTrips(t *testing.T) {
	db, _ := openTest(t, Options{MaxConns: 1})
	tr := &countTracer{}
	db.pool.cfg.Tracer = tr
	db.pool.close() // drop the connection dialed without the tracer
	db.pool.closed = false
	rmw := func(tx kv.Tx) error {
		if _, err := tx.Get([]byte("a")); err != nil {
			return err
		}
		return tx.Put([]byte("a"), []byte("2"))
	}
	cases := []struct {
		name  string
		trips int64
		run   func() error
	}{
		{"write-only Update", 1, func() error {
			return db.Update(bg, func(tx kv.Tx) error {
				tx.Put([]byte("a"), []byte("1"))
				tx.Put([]byte("b"), []byte("1"))
				return tx.Delete([]byte("c"))
			})
		}},
		{"read-modify-write Update", 2, func() error { return db.Update(bg, rmw) }},
		{"prefetched read-modify-write Update", 2, func() error {
			return db.Update(bg, func(tx kv.Tx) error {
				if err := kv.Prefetch(tx, []byte("a"), []byte("b"), []byte("missing")); err != nil {
					return err
				}
				for _, k := range []string{"a", "b", "missing", "a"} {
					if _, err := tx.Get([]byte(k)); err != nil && !errors.Is(err, kv.ErrNotFound) {
						return err
					}
				}
				return tx.Put([]byte("b"), []byte("2"))
			})
		}},
		{"repeated Gets", 3, func() error {
			// Each key's first Get is a round trip; the second answers from
			// the transaction's reads (missing keys too).
			return db.Update(bg, func(tx kv.Tx) error {
				for _, k := range []string{"a", "missing", "a", "missing"} {
					if _, err := tx.Get([]byte(k)); err != nil && !errors.Is(err, kv.ErrNotFound) {
						return err
					}
				}
				return tx.Put([]byte("b"), []byte("3"))
			})
		}},
		{"range-prefetched Scans", 1, func() error {
			// Sixteen ranges' heads in one round trip (with BEGIN); their
			// Scans need none.
			return db.View(bg, func(tx kv.Tx) error {
				var rs []kv.Range
				for i := range 16 {
					p := kv.Key("rt", strconv.Itoa(i))
					rs = append(rs, kv.Range{Start: p, End: kv.PrefixEnd(p)})
				}
				if err := kv.PrefetchRanges(tx, 1, rs...); err != nil {
					return err
				}
				for _, r := range rs {
					if err := tx.Scan(r.Start, r.End, 1, false, func(k, v []byte) bool { return true }); err != nil {
						return err
					}
				}
				return nil
			})
		}},
		{"prefetched keys and ranges, then read-modify-write", 2, func() error {
			// Prefetch and PrefetchRanges are read together by the first
			// Get (of a key not named, here), one round trip with BEGIN.
			return db.Update(bg, func(tx kv.Tx) error {
				p := kv.Key("rt", "0")
				if err := kv.Prefetch(tx, []byte("a"), []byte("missing")); err != nil {
					return err
				}
				if err := kv.PrefetchRanges(tx, 0, kv.Range{Start: p, End: kv.PrefixEnd(p)}); err != nil {
					return err
				}
				for _, k := range []string{"b", "a", "missing"} {
					if _, err := tx.Get([]byte(k)); err != nil && !errors.Is(err, kv.ErrNotFound) {
						return err
					}
				}
				if err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, v []byte) bool { return true }); err != nil {
					return err
				}
				return tx.Put([]byte("b"), []byte("4"))
			})
		}},
		{"read-only Update", 2, func() error {
			return db.Update(bg, func(tx kv.Tx) error { _, err := tx.Get([]byte("a")); return err })
		}},
		{"point View", 1, func() error { _, err := get(t, db, "a"); return err }},
		{"scan View", 1, func() error {
			return db.View(bg, func(tx kv.Tx) error {
				return tx.Scan(nil, nil, 0, false, func(k, v []byte) bool { return true })
			})
		}},
		{"empty Update", 0, func() error { return db.Update(bg, func(tx kv.Tx) error { return nil }) }},
		{"failed blind Update", 0, func() error {
			err := db.Update(bg, func(tx kv.Tx) error { tx.Put([]byte("x"), nil); return io.EOF })
			if err != io.EOF {
				return fmt.Errorf("got %v", err)
			}
			return nil
		}},
	}
	for _, c := range cases {
		if err := c.run(); err != nil { // prepares the statements
			t.Fatalf("%s: %v", c.name, err)
		}
		before := tr.trips.Load()
		if err := c.run(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := tr.trips.Load() - before; got != c.trips {
			t.Errorf("%s: %d round trips, want %d", c.name, got, c.trips)
		}
	}
}

// TestSnapshotLeftOpen: the snapshot a View leaves open on its connection
// never leaks into the connection's next user, and is rolled back soon
// when nobody uses the connection.
func TestSnapshotLeftOpen(t *testing.T) {
	db, schema := openTest(t, Options{MaxConns: 1})
	admin := pgtest.Admin(t)
	external := func(v string) { // a write by another process
		t.Helper()
		if _, err := admin.Exec(bg, "UPDATE "+schema+".kv SET value = $1", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := put(t, db, "k", "1"); err != nil {
		t.Fatal(err)
	}
	if v, err := get(t, db, "k"); err != nil || v != "1" {
		t.Fatalf("k = %q, %v", v, err)
	}
	external("2")
	if v, err := get(t, db, "k"); err != nil || v != "2" {
		t.Fatalf("View after an external write: k = %q, %v; want 2", v, err)
	}
	external("3")
	err := db.Update(bg, func(tx kv.Tx) error {
		v, err := tx.Get([]byte("k"))
		if err == nil && string(v) != "3" {
			err = fmt.Errorf("Update sees k = %q, want 3", v)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	get(t, db, "k")
	external("4")
	var v []byte
	err = db.Do(bg, func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, "SELECT value FROM kv").Scan(&v)
	})
	if err != nil || string(v) != "4" {
		t.Fatalf("Do after a View: k = %q, %v; want 4", v, err)
	}
	get(t, db, "k")
	external("5")
	put(t, db, "other", "x") // a write-only Update after a View
	if v, err := get(t, db, "k"); err != nil || v != "5" {
		t.Fatalf("k = %q, %v; want 5", v, err)
	}
	// Nobody uses the connection: the sweeper ends the transaction.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var open int
		err := admin.QueryRow(bg, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state LIKE 'idle in transaction%'", schema).Scan(&open)
		if err != nil {
			t.Fatal(err)
		}
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a View's snapshot is still open after 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDoErrors(t *testing.T) {
	db, _ := openTest(t, Options{})
	mine := errors.New("mine")
	if err := db.Do(bg, func(ctx context.Context, c *pgx.Conn) error { return mine }); err != mine {
		t.Fatalf("Do returned %v, want fn's error unchanged", err)
	}
	err := db.Do(bg, func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "SELECT * FROM no_such_table")
		return err
	})
	if err == nil || errors.Is(err, kv.ErrUnavailable) {
		t.Fatalf("Do with a bad statement: %v", err)
	}
	db.Close()
	if err := db.Do(bg, func(ctx context.Context, c *pgx.Conn) error { return nil }); !errors.Is(err, kv.ErrClosed) {
		t.Fatalf("Do after Close: %v", err)
	}
}

func BenchmarkUpdateParallel(b *testing.B) {
	db, _ := openTest(b, Options{})
	val := bytes.Repeat([]byte("v"), 1024)
	var seq atomic.Uint64
	b.SetParallelism(64) // 64 × GOMAXPROCS concurrent writers
	b.SetBytes(int64(len(val)))
	attempts := db.attempts.Load()
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
	b.ReportMetric(float64(db.attempts.Load()-attempts)/float64(b.N), "attempts/op")
}

// BenchmarkUpdateParallelRMW: read-modify-write of random keys out of 10k
// (two round trips, SERIALIZABLE conflicts possible).
func BenchmarkUpdateParallelRMW(b *testing.B) {
	db, _ := openTest(b, Options{})
	val := bytes.Repeat([]byte("v"), 1024)
	const keys = 10_000
	var seq atomic.Uint64
	b.SetParallelism(64)
	b.SetBytes(int64(len(val)))
	attempts := db.attempts.Load()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k := kv.Key("bench", fmt.Sprintf("%012d", seq.Add(7919)%keys))
			err := db.Update(bg, func(tx kv.Tx) error {
				if _, err := tx.Get(k); err != nil && !errors.Is(err, kv.ErrNotFound) {
					return err
				}
				return tx.Put(k, val)
			})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(db.attempts.Load()-attempts)/float64(b.N), "attempts/op")
}

// BenchmarkView: point reads of 1 KiB values from 100k keys, in parallel.
func BenchmarkView(b *testing.B) {
	db, _ := openTest(b, Options{})
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
	b.SetParallelism(16)
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
// transactions of 1000 (kvtest.BenchmarkBigDelete).
func BenchmarkBigDelete(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			kvtest.BenchmarkBigDelete(b, func(b *testing.B) kv.Store { db, _ := openTest(b, Options{}); return db }, n, 1000)
		})
	}
}

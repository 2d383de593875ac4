// Package postgres is the PostgreSQL kv.Store backend: one table
// kv(key bytea primary key, value bytea not null) in a database shared by
// any number of Cerulean processes. Nothing authoritative is cached in the
// process, so every acknowledged write is seen by every later transaction
// of every process.
//
// Portability: the package uses only SQL that CockroachDB and YugabyteDB
// accept as well: bytea/bigint/text/boolean/timestamptz columns, INSERT ...
// ON CONFLICT, SELECT ... FOR UPDATE, BEGIN ISOLATION LEVEL ..., the
// extended protocol with pipelining. No LISTEN/NOTIFY, no advisory locks,
// no PostgreSQL-only types or storage options. It is tested on PostgreSQL
// 15 only.
//
// Transactions:
//
//   - Update runs fn in a SERIALIZABLE READ WRITE transaction. Writes are
//     buffered in the process (reads see them) and sent, in key order, in
//     one pipelined round trip together with COMMIT; the BEGIN travels with
//     the first read. A write-only Update is one round trip; a
//     read-modify-write is two. A serialization failure or deadlock
//     (SQLSTATE 40001, 40P01), or a connection lost before COMMIT was sent,
//     rolls back and runs fn again from scratch after a jittered
//     exponential backoff, at most Options.MaxAttempts times; then Update
//     returns an error wrapping kv.ErrUnavailable. When fn returns an error
//     its reads are still committed (nothing else was sent), so the outcome
//     was decided on serializable data, and the error is returned
//     unchanged. PostgreSQL gives no priority to transactions that failed
//     before, so an Update that lost 4 conflicts in a row runs its next
//     attempts alone (among this process's Updates): a hot key cannot
//     starve it.
//   - View runs fn once in a REPEATABLE READ READ ONLY transaction: in
//     PostgreSQL a snapshot taken at its first statement, which never
//     blocks, never waits for writers and never fails with a serialization
//     error, which is the snapshot isolation the kv contract promises for
//     View (the bolt backend gives the same). SERIALIZABLE READ ONLY
//     DEFERRABLE would exclude the read-only anomaly of snapshot isolation,
//     but can wait for a "safe" snapshot for an unbounded time under write
//     load, which every GET would pay; decisions that must be serializable
//     are taken in Update, whose reads are serializable. On CockroachDB,
//     where REPEATABLE READ may be upgraded to SERIALIZABLE, a View may
//     rarely fail with a retryable error; it is returned wrapping
//     kv.ErrUnavailable (503, which clients retry), as View never runs fn
//     twice. View does not wait for its ROLLBACK: the connection returns to
//     the pool with the read-only snapshot open, and its next user sends
//     the ROLLBACK pipelined with its own first statement (or a sweeper
//     does after 10 ms idle), so a point read is one round trip.
//   - A lost connection fails the operation with an error wrapping
//     kv.ErrUnavailable, unless it can be retried safely: the first
//     statement of a transaction on a connection that died while idle in
//     the pool is re-sent on a fresh one, and Update retries fn when the
//     loss happened before COMMIT was sent. A COMMIT whose answer was lost
//     is never retried: its outcome is unknown. Dead connections are
//     dropped, so the pool recovers by itself once the server is back.
//   - Scan fetches the range in pages (up to 1024 rows, fewer when values
//     are large) before calling fn for them, and merges the transaction's
//     buffered writes, so fn may Put and Delete (keys inserted ahead of the
//     cursor are visited, keys deleted ahead of it are not, as in bolt).
//   - Fewer round trips: a transaction remembers what it read (one
//     snapshot for all its statements, so a key read twice is read once).
//     Prefetch (kv.Prefetcher) and PrefetchRanges (kv.RangePrefetcher)
//     only note keys and ranges; the next Get of a key not yet read, or
//     the next Scan, reads every note in one UNION ALL query. A Scan of a
//     noted range starts from its first page, and a Get inside that page
//     is answered from it.
//
// Limits and caveats:
//   - Keys must fit a btree index entry: PostgreSQL allows about 2.7 KB.
//   - Update and View fns run on the caller's goroutine and must not call
//     View or Update of the same DB: the inner call may wait for a
//     connection the outer transaction holds.
//   - Each DB holds up to Options.MaxConns connections (default 16 or 4
//     per CPU); size the server's max_connections for all processes.
//   - The pool is this package's own (pgxpool needs a module the build
//     does not have); it pings connections idle for over a second, drops
//     dead ones and recycles connections after an hour.
//
// The schema is created and migrated by Open itself (see Migrate): safe
// when several processes start at once.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

var _ kv.Store = (*DB)(nil)

// Defaults for Options fields left zero.
const (
	DefaultMaxAttempts = 30
	// DefaultConnectTimeout applies when the DSN sets no connect_timeout.
	DefaultConnectTimeout = 10 * time.Second
)

// DefaultMaxConns returns the pool size used when Options.MaxConns is 0:
// 4 per CPU, at least 16 and at most 64. Commits wait for WAL flushes, and
// PostgreSQL flushes concurrent commits together, so more connections than
// CPUs pay off (on a 2-CPU host, 16 connections committed 1.5x as many
// small Updates per second as 8, at a 15% cost for point Views).
func DefaultMaxConns() int {
	return min(max(16, 4*runtime.GOMAXPROCS(0)), 64)
}

const (
	retryBase = time.Millisecond
	retryMax  = 100 * time.Millisecond
	// exclusiveAfter: an Update that lost this many conflicts in a row runs
	// its next attempts alone (in this process), so a hot key cannot starve
	// it.
	exclusiveAfter = 4
	// connRetries bounds how often Update runs fn again after losing its
	// connection (the server may be down: answer 503 soon).
	connRetries = 2
	// firstStatementTries bounds re-sending a transaction's first
	// statement after the pooled connection it went to turned out dead.
	firstStatementTries = 3
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options configures Open. The zero value is a good default.
type Options struct {
	// MaxConns caps the connections to the database (0: the DSN's
	// pool_max_conns parameter if present, else DefaultMaxConns()).
	MaxConns int
	// MaxAttempts bounds how many times Update runs fn when transactions
	// conflict (0: DefaultMaxAttempts).
	MaxAttempts int
}

// DB is a kv.Store over a PostgreSQL database. It is safe for concurrent
// use.
type DB struct {
	pool        *pool
	gate        *kv.Gate
	maxAttempts int
	// Every Update attempt holds starved shared, except those of a starving
	// Update, which hold it exclusively.
	starved sync.RWMutex

	// Counters for tests and benchmarks.
	attempts  atomic.Int64  // fn runs in Update
	conflicts atomic.Int64  // attempts that ended in 40001/40P01
	writes    atomic.Uint64 // Update calls (Writes)
}

// Writes implements kv.Counted: the Update calls this process made.
func (db *DB) Writes() uint64 { return db.writes.Load() }

// Close stops accepting transactions, waits for those in flight and closes
// the connections. Later calls to View, Update, Do and Close return
// kv.ErrClosed.
func (db *DB) Close() error {
	if !db.gate.Close() {
		return kv.ErrClosed
	}
	<-db.gate.Drained()
	db.pool.close()
	return nil
}

// backoff returns a random delay with full jitter: up to
// retryBase·2^(attempt-1), capped at retryMax.
func backoff(attempt int) time.Duration {
	d := retryMax
	if attempt < 20 {
		d = min(retryBase<<(attempt-1), retryMax)
	}
	return rand.N(d) + 1
}

func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Do runs fn with a connection of the pool, outside any transaction: each
// statement fn sends commits on its own unless fn begins a transaction,
// which it must end. It is how companion stores in the same database (the
// SQL chunk store) share the pool.
//
// fn must be idempotent: after a serialization failure, a deadlock or a
// lost connection (even one whose last statement's outcome is unknown) it
// runs again on another connection, with jittered backoff, at most
// MaxAttempts times (lost connections: 3 times). Errors of the database or
// the network, and exhausted retries, wrap kv.ErrUnavailable; other SQL
// errors are annotated; a done ctx gives an error wrapping ctx.Err();
// after Close, kv.ErrClosed; fn's own errors are returned unchanged.
func (db *DB) Do(ctx context.Context, fn func(ctx context.Context, conn *pgx.Conn) error) error {
	if err := db.gate.Admit(ctx); err != nil {
		return err
	}
	defer db.gate.Leave()
	lost := 0
	for attempt := 1; ; attempt++ {
		c, err := db.pool.acquire(ctx, true)
		if err != nil {
			return wrap(ctx, err, classUnavailable)
		}
		err = db.runDo(ctx, c, fn)
		if err == nil {
			return nil
		}
		class := classify(err, c.IsClosed())
		switch class {
		case classOther:
			var pgErr interface{ SQLState() string }
			if errors.As(err, &pgErr) {
				return wrap(ctx, err, class)
			}
			if ctx.Err() != nil {
				return wrap(ctx, err, class)
			}
			return err // fn's own error
		case classUnavailable:
			return wrap(ctx, err, class)
		case classConn:
			lost++
		}
		if ctx.Err() != nil {
			return wrap(ctx, err, class)
		}
		if attempt >= db.maxAttempts || lost > connRetries {
			return fmt.Errorf("%w: postgres: failed %d times, last: %w", kv.ErrUnavailable, attempt, err)
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return err
		}
	}
}

func (db *DB) runDo(ctx context.Context, c *conn, fn func(context.Context, *pgx.Conn) error) error {
	defer func() {
		if !c.IsClosed() && c.PgConn().TxStatus() != 'I' && !c.PgConn().IsBusy() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
			_, _ = c.Exec(rctx, "ROLLBACK")
			cancel()
		}
		db.pool.release(c)
	}()
	return fn(ctx, c.Conn)
}

package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

const (
	beginUpdate = "BEGIN ISOLATION LEVEL SERIALIZABLE, READ WRITE"
	beginView   = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"

	sqlGet    = "SELECT value FROM kv WHERE key = $1"
	sqlPut    = "INSERT INTO kv (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
	sqlDelete = "DELETE FROM kv WHERE key = $1"

	// Scan pages: ascending from start (>=) or after a key (>), descending
	// below end or below a key; with or without an upper bound.
	sqlScanAscFrom        = "SELECT key, value FROM kv WHERE key >= $1 AND key < $2 ORDER BY key LIMIT $3"
	sqlScanAscFromOpen    = "SELECT key, value FROM kv WHERE key >= $1 ORDER BY key LIMIT $2"
	sqlScanAscAfter       = "SELECT key, value FROM kv WHERE key > $1 AND key < $2 ORDER BY key LIMIT $3"
	sqlScanAscAfterOpen   = "SELECT key, value FROM kv WHERE key > $1 ORDER BY key LIMIT $2"
	sqlScanDescBelow      = "SELECT key, value FROM kv WHERE key >= $1 AND key < $2 ORDER BY key DESC LIMIT $3"
	sqlScanDescBelowOpen  = "SELECT key, value FROM kv WHERE key >= $1 ORDER BY key DESC LIMIT $2"
	scanPageMin           = 16
	keyArmsMax            = 16 // prefetched keys read by one UNION ALL arm each
	scanPageMax           = 1024
	scanPageDefault       = 256
	scanPageBytes         = 4 << 20 // shrink pages holding more than this
	scanPageBytesTooLarge = 16 << 20
)

var (
	errTxDone = errors.New("kv/postgres: transaction used after its fn returned")
	emptyKey  = []byte{}
)

// write is a buffered Put (del false) or Delete.
type write struct {
	key []byte
	val []byte
	del bool
}

// tx implements kv.Tx. The server-side transaction begins lazily with the
// first read (BEGIN is pipelined with it); writes stay in writes, sorted by
// key, until commit.
type tx struct {
	db       *DB
	ctx      context.Context
	writable bool
	done     bool // fn returned: methods fail

	conn    *conn
	started bool     // BEGIN succeeded on conn
	err     error    // sticky failure, already wrapped for the caller
	class   errClass // class of err
	writes  []write
	// read holds the values Prefetch and Get read (nil: absent), by key;
	// Get answers from it after the buffered writes.
	read map[string][]byte
	// ranges holds the first pages PrefetchRanges read, by rangeID.
	ranges map[string]prefetchedRange
	// pendKeys and pendRanges are noted by Prefetch and PrefetchRanges
	// and read together by flush.
	pendKeys   [][]byte
	pendRanges []pendingRange
}

func (t *tx) check(write bool) error {
	if t.done {
		return errTxDone
	}
	if write && !t.writable {
		return kv.ErrReadOnly
	}
	return t.err
}

func (t *tx) begin() string {
	if t.writable {
		return beginUpdate
	}
	return beginView
}

// find returns the position of key in writes, or where it would be.
func (t *tx) find(key []byte) (int, bool) {
	return slices.BinarySearchFunc(t.writes, key, func(w write, k []byte) int { return bytes.Compare(w.key, k) })
}

// Get implements kv.Tx.
func (t *tx) Get(key []byte) ([]byte, error) {
	if err := t.check(false); err != nil {
		return nil, err
	}
	if i, ok := t.find(key); ok {
		if t.writes[i].del {
			return nil, kv.ErrNotFound
		}
		return t.writes[i].val, nil
	}
	if v, ok := t.read[string(key)]; ok {
		if v == nil {
			return nil, kv.ErrNotFound
		}
		return v, nil
	}
	if v, ok := t.fromRanges(key); ok {
		if v == nil {
			return nil, kv.ErrNotFound
		}
		return v, nil
	}
	if len(t.pendKeys) > 0 || len(t.pendRanges) > 0 {
		// Read the key with the noted ones, in one query.
		t.pendKeys = append(t.pendKeys, slices.Clone(nonNil(key)))
		if err := t.flush(); err != nil {
			return nil, err
		}
		return t.Get(key)
	}
	var val []byte
	found := false
	err := t.query(sqlGet, []any{nonNil(key)}, func(rows pgx.Rows) error {
		found = true
		return rows.Scan(&val)
	})
	if err != nil {
		return nil, err
	}
	// Remember the answer, as Prefetch does: the snapshot is the same for
	// every statement of the transaction, so a second Get of the key (a
	// check that reads what an earlier one read) needs no round trip.
	if t.read == nil {
		t.read = make(map[string][]byte)
	}
	if !found {
		t.read[string(key)] = nil
		return nil, kv.ErrNotFound
	}
	val = nonNil(val)
	t.read[string(key)] = val
	return val, nil
}

// Prefetch implements kv.Prefetcher. The keys not already buffered or
// read are noted, and read together with every other noted key and range
// (PrefetchRanges) in one query when the transaction next needs the
// database: a Get of a key not yet read, or a Scan. Their values (or
// absence) are then answered from memory. The transaction's snapshot is
// the same for every statement (REPEATABLE READ and SERIALIZABLE), and the
// query reads the rows as the Gets would, so the serializability checks
// see the same reads.
func (t *tx) Prefetch(keys ...[]byte) error {
	if err := t.check(false); err != nil {
		return err
	}
	for _, k := range keys {
		if t.known(k) || slices.ContainsFunc(t.pendKeys, func(p []byte) bool { return bytes.Equal(p, k) }) {
			continue
		}
		t.pendKeys = append(t.pendKeys, slices.Clone(nonNil(k)))
	}
	return nil
}

// known reports whether a Get of key is answered without the database.
func (t *tx) known(key []byte) bool {
	if _, ok := t.find(key); ok {
		return true
	}
	_, ok := t.read[string(key)]
	return ok
}

// flush reads the noted keys and ranges (see Prefetch and PrefetchRanges)
// in one query and forgets the notes.
func (t *tx) flush() error {
	keys, ranges := t.pendKeys, t.pendRanges
	t.pendKeys, t.pendRanges = nil, nil
	if len(keys) == 0 && len(ranges) == 0 {
		return nil
	}
	var (
		sql  strings.Builder
		args []any
	)
	switch {
	case len(keys) > keyArmsMax:
		sql.WriteString("SELECT -1 AS r, key, value FROM kv WHERE key = ANY($1)")
		args = append(args, keys)
	default:
		// One arm per key: each is planned as a unique index lookup,
		// where key = ANY($1) gets a bitmap scan on a small table.
		for i, k := range keys {
			if i > 0 {
				sql.WriteString(" UNION ALL ")
			}
			fmt.Fprintf(&sql, "SELECT -1 AS r, key, value FROM kv WHERE key = $%d", i+1)
			args = append(args, k)
		}
	}
	for i, r := range ranges {
		if sql.Len() > 0 {
			sql.WriteString(" UNION ALL ")
		}
		n := len(args)
		fmt.Fprintf(&sql, "(SELECT %d AS r, key, value FROM kv WHERE key >= $%d AND key < $%d ORDER BY key LIMIT $%d)", i, n+1, n+2, n+3)
		args = append(args, r.start, r.end, int64(r.page))
	}
	got := make(map[string][]byte, len(keys))
	pages := make([]prefetchedRange, len(ranges))
	err := t.query(sql.String(), args, func(rows pgx.Rows) error {
		var (
			i    int64
			k, v []byte
		)
		if err := rows.Scan(&i, &k, &v); err != nil {
			return err
		}
		switch {
		case i == -1:
			got[string(k)] = nonNil(v)
		case i >= 0 && int(i) < len(pages):
			pages[i].rows = append(pages[i].rows, row{k, nonNil(v)})
		default:
			return fmt.Errorf("kv/postgres: prefetch returned range %d of %d", i, len(pages))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if t.read == nil {
		t.read = make(map[string][]byte, len(keys))
	}
	for _, k := range keys {
		t.read[string(k)] = got[string(k)] // nil when absent
	}
	if len(ranges) > 0 && t.ranges == nil {
		t.ranges = make(map[string]prefetchedRange, len(ranges))
	}
	for i, r := range ranges {
		pages[i].start, pages[i].end = r.start, r.end
		pages[i].complete = len(pages[i].rows) < r.page
		t.ranges[rangeID(r.start, r.end)] = pages[i]
	}
	return nil
}

// firstPage is the number of rows the first query of a Scan with limit
// (<= 0: none) asks for.
func firstPage(limit int) int {
	if limit <= 0 {
		return scanPageDefault
	}
	return min(max(limit, scanPageMin), scanPageMax)
}

// prefetchedRange is the first page of a range that PrefetchRanges read.
type prefetchedRange struct {
	start, end []byte
	rows       []row
	complete   bool // the range holds no other row
}

// fromRanges answers a Get of key from a prefetched range page that
// covers it: the whole range when the page is complete, else up to its
// last row. ok is false when none does; v is nil when key is absent.
func (t *tx) fromRanges(key []byte) (v []byte, ok bool) {
	for _, pr := range t.ranges {
		if bytes.Compare(key, pr.start) < 0 || bytes.Compare(key, pr.end) >= 0 {
			continue
		}
		if !pr.complete && (len(pr.rows) == 0 || bytes.Compare(key, pr.rows[len(pr.rows)-1].key) > 0) {
			continue
		}
		i, found := slices.BinarySearchFunc(pr.rows, key, func(r row, k []byte) int { return bytes.Compare(r.key, k) })
		if found {
			return pr.rows[i].val, true
		}
		return nil, true
	}
	return nil, false
}

// prefetchedPage returns the first page (up to page rows) of an ascending
// Scan of [start, end) when PrefetchRanges read enough of it. Checked
// before any lookup: a Scan without prefetched ranges pays nothing.
func (t *tx) prefetchedPage(start, end []byte, page int, notFirst bool) ([]row, bool) {
	if notFirst || end == nil || len(t.ranges) == 0 {
		return nil, false
	}
	c, ok := t.ranges[rangeID(start, end)]
	if !ok || (!c.complete && len(c.rows) < page) {
		return nil, false
	}
	return c.rows[:min(page, len(c.rows))], true
}

func rangeID(start, end []byte) string {
	return strconv.Itoa(len(start)) + ":" + string(start) + string(end)
}

// PrefetchRanges implements kv.RangePrefetcher: the first page of each
// range, as the first query of Scan(r.Start, r.End, limit, false, ...)
// would read it, is noted and read with the other notes (see Prefetch);
// such a Scan then starts from it, merged with buffered writes as always.
func (t *tx) PrefetchRanges(limit int, ranges ...kv.Range) error {
	if err := t.check(false); err != nil {
		return err
	}
	page := firstPage(limit)
	for _, r := range ranges {
		start := nonNil(r.Start)
		if r.End == nil || bytes.Compare(start, r.End) >= 0 {
			continue
		}
		id := rangeID(start, r.End)
		if _, ok := t.ranges[id]; ok || slices.ContainsFunc(t.pendRanges, func(p pendingRange) bool { return rangeID(p.start, p.end) == id }) {
			continue
		}
		t.pendRanges = append(t.pendRanges, pendingRange{slices.Clone(start), slices.Clone(r.End), page})
	}
	return nil
}

// pendingRange is a range noted by PrefetchRanges, not read yet.
type pendingRange struct {
	start, end []byte
	page       int
}

// Put implements kv.Tx. Key and value are copied.
func (t *tx) Put(key, value []byte) error {
	if err := t.check(true); err != nil {
		return err
	}
	t.buffer(write{key: key, val: bytes.Clone(nonNil(value))})
	return nil
}

// Delete implements kv.Tx.
func (t *tx) Delete(key []byte) error {
	if err := t.check(true); err != nil {
		return err
	}
	t.buffer(write{key: key, del: true})
	return nil
}

func (t *tx) buffer(w write) {
	i, ok := t.find(w.key)
	if ok {
		t.writes[i].val, t.writes[i].del = w.val, w.del
		return
	}
	w.key = bytes.Clone(nonNil(w.key))
	t.writes = slices.Insert(t.writes, i, w)
}

func nonNil(b []byte) []byte {
	if b == nil {
		return emptyKey // pgx sends nil as NULL
	}
	return b
}

type row struct{ key, val []byte }

// Scan implements kv.Tx. fn may call Put and Delete (see the package doc).
func (t *tx) Scan(start, end []byte, limit int, reverse bool, fn func(key, value []byte) bool) error {
	if err := t.check(false); err != nil {
		return err
	}
	if err := t.flush(); err != nil {
		return err
	}
	start = nonNil(start)
	if end != nil && bytes.Compare(start, end) >= 0 {
		return nil
	}
	// cmp orders keys in the scan's direction.
	cmp := bytes.Compare
	if reverse {
		cmp = func(a, b []byte) int { return bytes.Compare(b, a) }
	}
	var (
		cur     []byte // last key visited or skipped
		haveCur bool
		after   []byte // the last row of the previous page
		paged   bool
		n       int
		page    = firstPage(limit)
		rows    []row
	)
	for {
		// Fetch the next page of rows from the database.
		var sql string
		var args []any
		switch {
		case !reverse && !paged:
			sql, args = sqlScanAscFromOpen, []any{start}
			if end != nil {
				sql, args = sqlScanAscFrom, []any{start, end}
			}
		case !reverse:
			sql, args = sqlScanAscAfterOpen, []any{after}
			if end != nil {
				sql, args = sqlScanAscAfter, []any{after, end}
			}
		case !paged && end == nil:
			sql, args = sqlScanDescBelowOpen, []any{start}
		case !paged:
			sql, args = sqlScanDescBelow, []any{start, end}
		default:
			sql, args = sqlScanDescBelow, []any{start, after}
		}
		args = append(args, int64(page))
		rows = rows[:0]
		size := 0
		if c, ok := t.prefetchedPage(start, end, page, reverse || paged); ok {
			rows = append(rows, c...)
		} else {
			err := t.query(sql, args, func(r pgx.Rows) error {
				var k, v []byte
				if err := r.Scan(&k, &v); err != nil {
					return err
				}
				size += len(k) + len(v)
				rows = append(rows, row{k, nonNil(v)})
				return nil
			})
			if err != nil {
				return err
			}
		}
		full := len(rows) == page
		var bound []byte // with a full page, the buffer is merged up to here
		if full {
			bound = rows[len(rows)-1].key
		}

		// nextWrite returns the index of the next buffered write to merge,
		// or -1. It looks at t.writes afresh each time, as fn may write.
		nextWrite := func() int {
			var i int
			switch {
			case !reverse && !haveCur:
				i, _ = t.find(start)
			case !reverse:
				var ok bool
				if i, ok = t.find(cur); ok {
					i++
				}
			case !haveCur && end == nil:
				i = len(t.writes) - 1
			case !haveCur:
				i, _ = t.find(end)
				i--
			default:
				i, _ = t.find(cur)
				i--
			}
			if i < 0 || i >= len(t.writes) {
				return -1
			}
			k := t.writes[i].key
			if bytes.Compare(k, start) < 0 || (end != nil && bytes.Compare(k, end) >= 0) {
				return -1
			}
			if full && cmp(k, bound) > 0 {
				return -1
			}
			return i
		}

		for j := 0; ; {
			for j < len(rows) && haveCur && cmp(rows[j].key, cur) <= 0 {
				j++
			}
			wi := nextWrite()
			if wi < 0 && j >= len(rows) {
				break
			}
			var key, val []byte
			var del bool
			if wi >= 0 && (j >= len(rows) || cmp(t.writes[wi].key, rows[j].key) <= 0) {
				w := t.writes[wi]
				key, val, del = w.key, w.val, w.del
				if j < len(rows) && bytes.Equal(w.key, rows[j].key) {
					j++
				}
			} else {
				key, val = rows[j].key, rows[j].val
				j++
			}
			cur, haveCur = key, true
			if del {
				continue
			}
			if !fn(key, val) {
				return nil
			}
			if n++; limit > 0 && n >= limit {
				return nil
			}
			if t.err != nil {
				return t.err // fn's write... cannot fail; a read in fn did
			}
		}
		if !full {
			return nil
		}
		after, paged = bound, true
		switch {
		case size > scanPageBytesTooLarge:
			page = max(page/4, scanPageMin)
		case size > scanPageBytes:
			page = max(page/2, scanPageMin)
		default:
			page = min(page*4, scanPageMax)
		}
	}
}

// query runs one statement in the transaction, calling each for every
// row. The first statement acquires a connection and carries the BEGIN;
// if that connection turns out to have died while idle in the pool, the
// statement is sent again on another one (nothing was observed yet).
func (t *tx) query(sql string, args []any, each func(pgx.Rows) error) error {
	for try := 1; ; try++ {
		if t.conn == nil {
			c, err := t.db.pool.acquire(t.ctx, false)
			if err != nil {
				return t.fail(err, classUnavailable)
			}
			t.conn = c
		}
		fresh := !t.started
		endTx := t.conn.endTx
		b := &pgx.Batch{}
		if endTx {
			b.Queue("ROLLBACK")
		}
		if fresh {
			b.Queue(t.begin())
		}
		b.Queue(sql, args...)
		br := t.conn.SendBatch(t.ctx, b)
		var err error
		if endTx {
			if _, err = br.Exec(); err == nil {
				t.conn.endTx = false
			}
		}
		if fresh && err == nil {
			_, err = br.Exec()
		}
		if err == nil {
			var rows pgx.Rows
			rows, err = br.Query()
			if err == nil {
				for rows.Next() {
					if err = each(rows); err != nil {
						break
					}
				}
				rows.Close()
				if err == nil {
					err = rows.Err()
				}
			}
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			t.started = true
			return nil
		}
		dead := t.conn.IsClosed()
		class := classify(err, dead)
		if fresh && dead && t.conn.reused && try < firstStatementTries && t.ctx.Err() == nil {
			// A stale pooled connection: nothing happened in this
			// transaction yet, try again on another connection.
			t.release()
			continue
		}
		return t.fail(err, class) // release rolls back whatever began
	}
}

// fail records err as the transaction's failure: every later call returns
// it, and the transaction will be rolled back.
func (t *tx) fail(err error, class errClass) error {
	t.err = wrap(t.ctx, err, class)
	t.class = class
	if t.ctx.Err() != nil {
		t.class = classOther // do not retry
	}
	return t.err
}

// release ends the use of the connection: rolls back whatever is open and
// returns the connection to the pool (or closes it).
func (t *tx) release() {
	c := t.conn
	if c == nil {
		return
	}
	t.conn, t.started = nil, false
	if !c.IsClosed() && !c.PgConn().IsBusy() && c.PgConn().TxStatus() != 'I' {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), closeTimeout)
		_, err := c.Exec(ctx, "ROLLBACK")
		cancel()
		if err != nil {
			t.db.pool.closeConn(c)
		}
	}
	t.db.pool.release(c)
}

// abandon cleans up after a fn that did not return (panic, Goexit).
func (t *tx) abandon() {
	t.done = true
	t.release()
}

// finishView ends a View. A snapshot that served its reads is left open
// for the connection's next user to roll back (see pool.releaseOpen): a
// point read is then one round trip.
func (t *tx) finishView(ferr error) error {
	if c := t.conn; c != nil && t.started && t.err == nil {
		t.conn, t.started = nil, false
		t.db.pool.releaseOpen(c)
	}
	t.release()
	if t.err != nil {
		return t.failure(ferr)
	}
	return ferr
}

// failure returns what to report when a statement failed: fn's error if it
// passed the failure on (wrapped or not), else the failure itself, as fn's
// result rests on a failed read.
func (t *tx) failure(ferr error) error {
	if ferr != nil && errors.Is(ferr, t.err) {
		return ferr
	}
	return t.err
}

// finishUpdate commits or rolls back an Update attempt; see attempt.
func (t *tx) finishUpdate(ferr error) (errClass, error) {
	if t.err != nil {
		// A statement failed: fn's result rests on a failed read.
		t.release()
		return t.class, t.failure(ferr)
	}
	if ferr != nil || len(t.writes) == 0 {
		if !t.started {
			t.release()
			return classOther, ferr
		}
		// Commit the reads (nothing else was sent): under SERIALIZABLE,
		// this is what makes sure fn decided on serializable data.
		_, err := t.conn.Exec(t.ctx, "COMMIT")
		if err != nil {
			dead := t.conn.IsClosed()
			t.release()
			class := classify(err, dead)
			if t.ctx.Err() != nil {
				class = classOther
			}
			// Nothing was written: a lost COMMIT of reads can be retried.
			return class, wrap(t.ctx, err, class)
		}
		t.started = false
		t.release()
		return classOther, ferr
	}
	return t.commit()
}

// commit sends the buffered writes and COMMIT in one pipeline (with the
// BEGIN too if fn read nothing).
func (t *tx) commit() (errClass, error) {
	for try := 1; ; try++ {
		if t.conn == nil {
			c, err := t.db.pool.acquire(t.ctx, false)
			if err != nil {
				return classOther, wrap(t.ctx, err, classUnavailable)
			}
			t.conn = c
		}
		fresh := !t.started
		b := &pgx.Batch{}
		if t.conn.endTx {
			b.Queue("ROLLBACK") // of the previous user's snapshot
		}
		if fresh {
			b.Queue(beginUpdate)
		}
		for _, w := range t.writes {
			if w.del {
				b.Queue(sqlDelete, w.key)
			} else {
				b.Queue(sqlPut, w.key, w.val)
			}
		}
		b.Queue("COMMIT")
		br := t.conn.SendBatch(t.ctx, b)
		var err error
		failedAt := -1
		for i := range b.Len() {
			if _, err = br.Exec(); err != nil {
				failedAt = i
				break
			}
			if i == 0 {
				t.conn.endTx = false // the ROLLBACK, if any, went through
			}
		}
		cerr := br.Close()
		if err == nil {
			// COMMIT succeeded; a failure reading the final Sync does not
			// change that (release drops a broken connection).
			_ = cerr
			t.started = false
			t.release()
			return classOther, nil
		}
		dead := t.conn.IsClosed()
		class := classify(err, dead)
		commitIdx := b.Len() - 1
		// Was the transaction surely not committed? Yes if the server
		// reported an error for a statement before COMMIT (the rest of the
		// pipeline was skipped), or a serialization failure for COMMIT
		// itself, or nothing was sent at all.
		notCommitted := (isPgError(err) && failedAt < commitIdx) ||
			(isPgError(err) && class == classConflict) ||
			pgconn.SafeToRetry(err)
		if fresh && dead && t.conn.reused && notCommitted && try < firstStatementTries && t.ctx.Err() == nil {
			t.release() // a stale pooled connection
			continue
		}
		t.release()
		if t.ctx.Err() != nil {
			return classOther, wrap(t.ctx, err, class)
		}
		if !notCommitted {
			// The COMMIT may or may not have happened: do not run fn again.
			return classOther, fmt.Errorf("%w: postgres: commit outcome unknown: %w", kv.ErrUnavailable, err)
		}
		if class == classConflict || class == classConn {
			return class, wrap(t.ctx, err, class)
		}
		return classOther, wrap(t.ctx, err, class)
	}
}

// View implements kv.Store. fn runs exactly once (unless ctx is already
// done: then it does not run and View returns ctx.Err()).
func (db *DB) View(ctx context.Context, fn func(kv.Tx) error) error {
	if err := db.gate.Admit(ctx); err != nil {
		return err
	}
	defer db.gate.Leave()
	t := &tx{db: db, ctx: ctx}
	defer t.abandon() // fn panicked or called runtime.Goexit
	ferr := fn(t)
	t.done = true
	return t.finishView(ferr)
}

// Update implements kv.Store. See the package documentation for retries.
func (db *DB) Update(ctx context.Context, fn func(kv.Tx) error) error {
	if err := db.gate.Admit(ctx); err != nil {
		return err
	}
	defer db.gate.Leave()
	db.writes.Add(1)
	lost, conflicts := 0, 0
	for attempt := 1; ; attempt++ {
		class, err := db.attempt(ctx, fn, conflicts >= exclusiveAfter)
		switch class {
		case classConflict:
			db.conflicts.Add(1)
			conflicts++
		case classConn:
			lost++
		default:
			return err
		}
		if attempt >= db.maxAttempts || lost > connRetries {
			return fmt.Errorf("%w: transaction failed %d times, last: %w", kv.ErrUnavailable, attempt, err)
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return err
		}
	}
}

// attempt runs fn once in a new transaction and commits it. class tells
// whether it may be run again: classConflict or classConn when nothing was
// committed and running fn again is safe, classOther otherwise.
//
// Attempts run concurrently unless exclusive: then the attempt waits for
// those in flight and runs alone. Under heavy contention on one key,
// PostgreSQL lets one of the concurrent read-modify-writes commit and
// fails the others, with no priority for the ones that failed before; this
// bounds the starvation in one process (processes do not coordinate).
func (db *DB) attempt(ctx context.Context, fn func(kv.Tx) error, exclusive bool) (errClass, error) {
	if exclusive {
		db.starved.Lock()
		defer db.starved.Unlock()
	} else {
		db.starved.RLock()
		defer db.starved.RUnlock()
	}
	db.attempts.Add(1)
	t := &tx{db: db, ctx: ctx, writable: true}
	defer t.abandon()
	ferr := fn(t)
	t.done = true
	return t.finishUpdate(ferr)
}

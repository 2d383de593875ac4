package postgres

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// The pool is deliberately small: pgxpool needs github.com/jackc/puddle/v2,
// which is not among the module's dependencies, and a kv transaction only
// needs "a connection that is idle and alive". Broken connections are
// closed on release instead of being returned, so the pool heals itself
// when the server comes back: the next acquire dials.

const (
	// pingIdle: a connection idle for longer is pinged before reuse, as
	// pgxpool does, so a server restart in between costs one ping instead
	// of a failed statement.
	pingIdle = time.Second
	// maxConnIdle closes connections nobody used for this long.
	maxConnIdle = 30 * time.Minute
	// maxConnLifetime recycles connections, so that after a failover or
	// with several nodes behind a load balancer (CockroachDB, YugabyteDB)
	// connections spread again.
	maxConnLifetime = time.Hour
	// closeTimeout bounds the polite goodbye to the server.
	closeTimeout = time.Second
	// endTxDelay: a connection released with its read-only snapshot still
	// open (see releaseOpen) gets its ROLLBACK from a sweeper if nobody
	// used it for this long.
	endTxDelay = 10 * time.Millisecond
)

var errPoolClosed = errors.New("kv/postgres: pool closed")

type pool struct {
	cfg *pgx.ConnConfig
	sem chan struct{} // one token per connection in use or being dialed

	mu     sync.Mutex
	idle   []*conn // most recently used last
	closed bool
	// Idle connections last used before suspect are pinged before reuse:
	// when one connection turns out dead, its siblings probably are too.
	suspect  time.Time
	sweeping bool // a sweep of endTx connections is scheduled

	dials atomic.Int64 // connections opened, for tests
}

type conn struct {
	*pgx.Conn
	created  time.Time
	lastUsed time.Time
	reused   bool // taken from the idle list (it may have died meanwhile)
	// endTx: a read-only snapshot transaction is still open on the
	// connection. Its next user must send ROLLBACK first (pipelined with
	// its own first statement).
	endTx bool
}

func newPool(cfg *pgx.ConnConfig, maxConns int) *pool {
	return &pool{cfg: cfg, sem: make(chan struct{}, maxConns)}
}

// acquire returns an idle connection or dials a new one. The caller must
// release it. With clean, the connection has no transaction open; without,
// it may have endTx set.
func (p *pool) acquire(ctx context.Context, clean bool) (*conn, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for {
		c, err := p.popIdle()
		if err != nil {
			<-p.sem
			return nil, err
		}
		if c == nil {
			break
		}
		now := time.Now()
		if now.Sub(c.created) > maxConnLifetime || now.Sub(c.lastUsed) > maxConnIdle {
			p.closeConn(c)
			continue
		}
		if now.Sub(c.lastUsed) > pingIdle || !c.lastUsed.After(p.suspectSince()) {
			if err := c.Ping(ctx); err != nil {
				p.closeConn(c)
				if ctx.Err() != nil {
					<-p.sem
					return nil, ctx.Err()
				}
				continue
			}
		}
		if c.PgConn().TxStatus() != 'I' && !c.endTx {
			p.closeConn(c) // cannot happen; never reuse a transaction
			continue
		}
		if clean && c.endTx {
			if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
				p.closeConn(c)
				if ctx.Err() != nil {
					<-p.sem
					return nil, ctx.Err()
				}
				continue
			}
			c.endTx = false
		}
		c.reused = true
		return c, nil
	}
	pc, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		<-p.sem
		return nil, err
	}
	p.dials.Add(1)
	now := time.Now()
	return &conn{Conn: pc, created: now, lastUsed: now}, nil
}

func (p *pool) popIdle() (*conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errPoolClosed
	}
	n := len(p.idle)
	if n == 0 {
		return nil, nil
	}
	c := p.idle[n-1]
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	return c, nil
}

func (p *pool) suspectSince() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.suspect
}

// release returns c to the pool if it is alive and idle (no transaction
// open, no query in flight), and closes it otherwise.
func (p *pool) release(c *conn) {
	defer func() { <-p.sem }()
	if c.IsClosed() {
		// It died: its idle siblings may have died with it.
		p.mu.Lock()
		p.suspect = time.Now()
		p.mu.Unlock()
		return
	}
	switch st := c.PgConn().TxStatus(); {
	case c.PgConn().IsBusy():
		p.closeConn(c)
		return
	case st == 'I':
		c.endTx = false
	default: // a transaction is open: never hand it to someone else
		p.closeConn(c)
		return
	}
	p.putIdle(c)
}

// releaseOpen releases c with a read-only snapshot transaction still
// open, saving the round trip of its ROLLBACK: the next user of c sends it
// pipelined with its own first statement, or a sweep does after
// endTxDelay. Only for transactions that hold no locks that matter
// (REPEATABLE READ READ ONLY: a snapshot and AccessShare locks).
func (p *pool) releaseOpen(c *conn) {
	if c.IsClosed() || c.PgConn().IsBusy() || c.PgConn().TxStatus() != 'T' {
		p.release(c)
		return
	}
	defer func() { <-p.sem }()
	c.endTx = true
	p.putIdle(c)
}

func (p *pool) putIdle(c *conn) {
	c.lastUsed = time.Now()
	p.mu.Lock()
	if !p.closed {
		p.idle = append(p.idle, c)
		if c.endTx && !p.sweeping {
			p.sweeping = true
			time.AfterFunc(endTxDelay, p.sweep)
		}
		c = nil
	}
	p.mu.Unlock()
	if c != nil {
		p.closeConn(c)
	}
}

// sweep rolls back the snapshots left open on idle connections for
// endTxDelay, so that they do not hold back vacuum.
func (p *pool) sweep() {
	now := time.Now()
	var todo []*conn
	p.mu.Lock()
	p.sweeping = false
	pending := false
	idle := p.idle[:0]
	for _, c := range p.idle {
		if c.endTx && now.Sub(c.lastUsed) >= endTxDelay {
			select {
			case p.sem <- struct{}{}: // in use now: MaxConns still holds
				todo = append(todo, c)
				continue
			default:
			}
		}
		pending = pending || c.endTx
		idle = append(idle, c)
	}
	clear(p.idle[len(idle):])
	p.idle = idle
	if pending && !p.closed {
		p.sweeping = true
		time.AfterFunc(endTxDelay, p.sweep)
	}
	p.mu.Unlock()
	for _, c := range todo {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		_, err := c.Exec(ctx, "ROLLBACK")
		cancel()
		if err != nil {
			p.closeConn(c)
		}
		p.release(c)
	}
}

func (p *pool) closeConn(c *conn) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	_ = c.Close(ctx)
}

// close closes the idle connections; connections in use are closed when
// released.
func (p *pool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.closed = true
	p.mu.Unlock()
	for _, c := range idle {
		p.closeConn(c)
	}
}

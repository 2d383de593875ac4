// Package clockctl is --clock-control: the server's clock becomes the
// wall clock plus an offset that an admin endpoint advances, so that tests
// can skip a lease period, a visibility timeout, a message TTL, a SAS
// window or a soft-delete retention instead of waiting for it.
//
// The offset is a record of the kv store, ("clock", "offset") -> int64
// nanoseconds (big endian), so that it survives a restart of the embedded
// store (time never runs backwards for the data already stored) and, on
// PostgreSQL, is shared by every front end of the database. It only grows:
// an advance by a duration that is not positive is refused, so timestamps
// (Last-Modified, message insertion times, ETags derived from them) stay
// monotonic.
//
// Sharing (PostgreSQL): a front end reads the record again when its copy
// is older than Fresh, at the start of a request (Sync, called by the HTTP
// front end outside any transaction) and in the background (Run, for SMB
// and background work); an advance commits the record, then waits Fresh
// before it answers. A request that any front end begins after the
// advance answered therefore finds that front end's copy either read
// after the commit or older than Fresh, which it reads again: every later
// request on every front end sees the new time.
package clockctl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Fresh is how long a front end sharing the store trusts its copy of the
// offset; an advance on a shared store waits this long (and a little
// more) before it answers.
const Fresh = 200 * time.Millisecond

// freshMargin is added to Fresh in an advance's wait: the front ends
// measure Fresh with their own monotonic clocks.
const freshMargin = 20 * time.Millisecond

// MaxOffset bounds the offset (a hundred years): the server's time stays
// far from the end of time.Time's formats and of int64 nanoseconds.
const MaxOffset = 100 * 365 * 24 * time.Hour

// ErrNotForward refuses an advance by zero or a negative duration: the
// server's clock never moves backwards.
var ErrNotForward = errors.New("clock control: the clock only moves forwards; want a positive duration")

// ErrTooFar refuses an advance that would take the offset past MaxOffset.
var ErrTooFar = fmt.Errorf("clock control: the offset may not exceed %s", MaxOffset)

// key is the offset's record.
var key = kv.Key("clock", "offset")

// Control is the server's clock under --clock-control (a clock.Clock) and
// the state its admin endpoint changes. It is safe for concurrent use.
type Control struct {
	clk    *clock.Offset
	store  kv.Store
	shared bool
	log    *slog.Logger
	fresh  time.Duration

	// shifts run in every advance's transaction (OnAdvance).
	shifts []Shift

	mu sync.Mutex
	// readAt is when the last read of the record that succeeded began
	// (monotonic wall time, shared stores only).
	readAt time.Time
}

// Open loads the stored offset and returns the clock base+offset. shared
// is true when other processes use the same store (PostgreSQL): the
// offset is then read again as Sync and Run say.
func Open(ctx context.Context, store kv.Store, base clock.Clock, shared bool, log *slog.Logger) (*Control, error) {
	if base == nil {
		base = clock.Real{}
	}
	if log == nil {
		log = slog.Default()
	}
	start := time.Now() // monotonic: when this read began, see readAt
	off, err := Stored(ctx, store)
	if err != nil {
		return nil, err
	}
	c := &Control{clk: clock.NewOffset(base, off), store: store, shared: shared, log: log, fresh: Fresh, readAt: start}
	return c, nil
}

// Stored returns the offset recorded in store (0 when none is).
func Stored(ctx context.Context, store kv.Store) (time.Duration, error) {
	var off time.Duration
	err := store.View(ctx, func(tx kv.Tx) error {
		var err error
		off, err = get(tx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("clock control: reading the offset: %w", err)
	}
	return off, nil
}

func get(tx kv.Tx) (time.Duration, error) {
	v, err := tx.Get(key)
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("clock control: offset record of %d bytes, want 8", len(v))
	}
	return time.Duration(binary.BigEndian.Uint64(v)), nil
}

// Shift moves forward by by, in tx, deadlines that are kept in the
// server's time but stand for real durations (the heartbeat leases of SMB
// front ends, the collector's grace), so that advancing the clock does
// not cut them short. now is the server's time before the advance.
type Shift func(tx kv.Tx, now time.Time, by time.Duration) error

// OnAdvance adds f to the shifts of every advance. Call it before the
// server serves requests.
func (c *Control) OnAdvance(f Shift) { c.shifts = append(c.shifts, f) }

// Now is the wall clock plus the offset.
func (c *Control) Now() time.Time { return c.clk.Now() }

// Wall is the clock without the offset (clock.Wall).
func (c *Control) Wall() clock.Clock { return c.clk.Wall() }

// Offset is the offset in force in this process.
func (c *Control) Offset() time.Duration { return c.clk.Offset() }

// Shared reports whether the offset is shared with other processes
// through the store.
func (c *Control) Shared() bool { return c.shared }

// Sync reads the offset again when this process's copy is older than
// Fresh (shared stores only; otherwise the process holds the only copy).
// It must be called outside any transaction of the store.
func (c *Control) Sync(ctx context.Context) error {
	if !c.shared {
		return nil
	}
	c.mu.Lock()
	fresh := time.Since(c.readAt) < c.fresh
	c.mu.Unlock()
	if fresh {
		return nil
	}
	return c.reload(ctx)
}

// reload reads the record and raises the offset to it.
func (c *Control) reload(ctx context.Context) error {
	// Elapsed wall time (monotonic), never the server's time: readAt
	// measures the age of this copy.
	start := time.Now()
	off, err := Stored(ctx, c.store)
	if err != nil {
		return err
	}
	c.clk.Raise(off)
	c.mu.Lock()
	if start.After(c.readAt) {
		c.readAt = start
	}
	c.mu.Unlock()
	return nil
}

// Run keeps a shared offset fresh for the work that does not come through
// Sync (SMB, the background collectors) until ctx ends. On a store of its
// own it returns at once.
func (c *Control) Run(ctx context.Context) {
	if !c.shared {
		return
	}
	t := time.NewTicker(c.fresh / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := c.Sync(ctx); err != nil && ctx.Err() == nil {
			c.log.Debug("clock control: reading the shared offset", "err", err)
		}
	}
}

// Advance moves the clock forward by by and returns the offset in force
// after it, logging the change at warn with from (who asked, e.g. the
// client's address). On a shared store it answers once every front end's
// next request sees the new time (see the package comment).
func (c *Control) Advance(ctx context.Context, by time.Duration, from string) (time.Duration, error) {
	if by <= 0 {
		return c.clk.Offset(), ErrNotForward
	}
	local := c.clk.Offset()
	wall := c.clk.Wall().Now()
	var next time.Duration
	err := c.store.Update(ctx, func(tx kv.Tx) error {
		cur, err := get(tx)
		if err != nil {
			return err
		}
		cur = max(cur, local)
		if by > MaxOffset-cur {
			return ErrTooFar
		}
		next = cur + by
		for _, f := range c.shifts {
			if err := f(tx, wall.Add(cur), by); err != nil {
				return err
			}
		}
		return tx.Put(key, binary.BigEndian.AppendUint64(nil, uint64(next)))
	})
	if err != nil {
		return c.clk.Offset(), err
	}
	now := c.clk.Raise(next)
	c.log.Warn("clock control: the server's clock was advanced", "by", by.String(), "offset", now.String(), "now", c.clk.Now().Format(time.RFC3339Nano), "from", from)
	if c.shared {
		t := time.NewTimer(c.fresh + freshMargin)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return now, ctx.Err()
		}
	}
	return now, nil
}

// State is the answer of both endpoints: the server's time, the wall
// clock's, and the offset between them.
type State struct {
	// Now is the server's time: what leases, visibility timeouts, TTLs,
	// SAS windows and retentions are decided with.
	Now time.Time `json:"now"`
	// Wall is the real time of the server's machine.
	Wall time.Time `json:"wall"`
	// Offset is Now - Wall as a Go duration ("1h0m1s"); OffsetNanos the
	// same in nanoseconds.
	Offset      string `json:"offset"`
	OffsetNanos int64  `json:"offsetNanos"`
	// Shared is true when the offset is shared with the other front ends
	// of the store (PostgreSQL).
	Shared bool `json:"shared"`
}

// State returns the clock's state.
func (c *Control) State() State {
	off := c.clk.Offset()
	wall := c.clk.Wall().Now()
	return State{Now: wall.Add(off), Wall: wall, Offset: off.String(), OffsetNanos: int64(off), Shared: c.shared}
}

// StoreDown reports whether err is the store not answering (the admin
// endpoint answers 503 for it, 500 for any other failure).
func StoreDown(err error) bool {
	return errors.Is(err, kv.ErrUnavailable) || errors.Is(err, kv.ErrClosed)
}

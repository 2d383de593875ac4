// Package clock provides the injectable time source used for every expiry
// decision in Cerulean (leases, visibility timeouts, TTLs, SAS windows).
package clock

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Clock tells the current time.
type Clock interface {
	Now() time.Time
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now in UTC.
func (Real) Now() time.Time { return time.Now().UTC() }

// Fake is a manually advanced clock for tests. It is safe for concurrent use.
type Fake struct {
	mu sync.Mutex
	t  time.Time
}

// NewFake returns a fake clock set to t.
func NewFake(t time.Time) *Fake { return &Fake{t: t.UTC()} }

// Now returns the fake's current time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

// Advance moves the fake clock forward by d.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

// Set moves the fake clock to t.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.t = t.UTC()
	f.mu.Unlock()
}

// Offset is the clock of --clock-control: a base clock (the wall clock)
// plus an offset that only grows, so that tests can skip a lease period,
// a visibility timeout or a retention without waiting, and every time the
// server reads stays monotonic. It is safe for concurrent use.
type Offset struct {
	base Clock
	off  atomic.Int64 // nanoseconds, never decreasing
}

// NewOffset returns base shifted by off (negative offsets count as 0).
func NewOffset(base Clock, off time.Duration) *Offset {
	o := &Offset{base: base}
	o.Raise(off)
	return o
}

// Now returns the base clock's time plus the offset.
func (o *Offset) Now() time.Time { return o.base.Now().Add(o.Offset()) }

// Offset returns the current offset.
func (o *Offset) Offset() time.Duration { return time.Duration(o.off.Load()) }

// Raise makes the offset at least off; it never lowers it. It returns the
// offset in force afterwards.
func (o *Offset) Raise(off time.Duration) time.Duration {
	for {
		cur := o.off.Load()
		if int64(off) <= cur {
			return time.Duration(cur)
		}
		if o.off.CompareAndSwap(cur, int64(off)) {
			return off
		}
	}
}

// Wall returns the base clock.
func (o *Offset) Wall() Clock { return o.base }

// Wall returns the clock of the real world behind c: the base of an
// offset clock (anything with a Wall method), c itself otherwise (the
// wall clock, a test's fake). Freshness rules about the outside world use
// it rather than the server's clock: the skew allowed between a request's
// signed date and the server (clients sign with their own, real, time),
// and the NTLM challenge timestamp.
func Wall(c Clock) Clock {
	if w, ok := c.(Waller); ok {
		return w.Wall()
	}
	return c
}

// Waller is a clock running apart from the real world's (an offset
// clock): Wall returns the real one behind it.
type Waller interface {
	Clock
	Wall() Clock
}

// Syncer is a clock whose time depends on state shared with other
// processes (the offset of --clock-control on a shared store): Sync
// brings it up to date, outside any store transaction, before a request
// reads the time.
type Syncer interface {
	Sync(ctx context.Context) error
}

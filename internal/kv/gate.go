package kv

import (
	"context"
	"sync/atomic"
)

// Gate lets a store refuse calls after Close while waiting for the calls
// already in flight: Enter before a call (false: closed), Leave after it,
// Close once, then wait on Drained. Backends share it so Close behaves
// the same everywhere.
type Gate struct {
	n    atomic.Int64  // closedBit | number of calls in flight
	zero chan struct{} // closed once closed and nothing is in flight
}

const closedBit = 1 << 62

// NewGate returns an open gate.
func NewGate() *Gate { return &Gate{zero: make(chan struct{})} }

// Enter admits a call; false once the gate is closed.
func (g *Gate) Enter() bool {
	for {
		s := g.n.Load()
		if s&closedBit != 0 {
			return false
		}
		if g.n.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

// Admit is Enter for a store call with a context: ctx's error when it
// is already done, ErrClosed when the gate is closed (in both cases the
// call is not admitted), else nil and the caller must Leave.
func (g *Gate) Admit(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !g.Enter() {
		return ErrClosed
	}
	return nil
}

// Leave ends a call admitted by Enter or Admit.
func (g *Gate) Leave() {
	if g.n.Add(-1) == closedBit {
		close(g.zero)
	}
}

// Close shuts the gate; false if it was already closed.
func (g *Gate) Close() bool {
	old := g.n.Or(closedBit)
	if old&closedBit != 0 {
		return false
	}
	if old == 0 {
		close(g.zero)
	}
	return true
}

// Drained is closed once the gate is closed and no call is in flight.
func (g *Gate) Drained() <-chan struct{} { return g.zero }

// Closed reports whether Close was called.
func (g *Gate) Closed() bool { return g.n.Load()&closedBit != 0 }

package kv

import (
	"context"
	"errors"
	"testing"
)

// TestGateAdmit: a done context and a closed gate both refuse the call
// without admitting it, so Close still drains; an admitted call holds
// Drained open until it leaves.
func TestGateAdmit(t *testing.T) {
	g := NewGate()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Admit(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Admit(done ctx) = %v, want context.Canceled", err)
	}
	if err := g.Admit(context.Background()); err != nil {
		t.Fatalf("Admit = %v", err)
	}
	if !g.Close() {
		t.Fatal("Close of an open gate returned false")
	}
	select {
	case <-g.Drained():
		t.Fatal("drained with a call in flight")
	default:
	}
	if err := g.Admit(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Admit after Close = %v, want ErrClosed", err)
	}
	g.Leave()
	select {
	case <-g.Drained():
	default:
		t.Fatal("not drained after the one admitted call left (a refused Admit counted as a call)")
	}
}

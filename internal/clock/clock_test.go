package clock

import (
	"testing"
	"time"
)

// TestOffset: an offset clock runs at its base's time plus an offset that
// Raise only ever increases; Wall returns the base.
func TestOffset(t *testing.T) {
	base := NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	o := NewOffset(base, -time.Hour) // negative counts as 0
	if o.Offset() != 0 || !o.Now().Equal(base.Now()) {
		t.Fatalf("negative offset: %v %v", o.Offset(), o.Now())
	}
	if got := o.Raise(time.Minute); got != time.Minute || !o.Now().Equal(base.Now().Add(time.Minute)) {
		t.Fatalf("raise to 1m: %v %v", got, o.Now())
	}
	if got := o.Raise(time.Second); got != time.Minute || o.Offset() != time.Minute {
		t.Fatalf("a lower raise moved the offset: %v %v", got, o.Offset())
	}
	base.Advance(time.Second)
	if !o.Now().Equal(base.Now().Add(time.Minute)) {
		t.Fatal("the offset clock does not follow its base")
	}
	if Wall(o) != Clock(base) || Wall(base) != Clock(base) {
		t.Fatal("Wall: want the base of an offset clock, a plain clock itself")
	}
}

package queue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// TestInspectMessages: the inspection lists invisible messages beside
// visible ones, in the order put, with their next visible time, dequeue
// count and whether a dequeue's receipt is outstanding; expired messages
// are left out, and nothing changes (a peek afterwards sees the same).
func TestInspectMessages(t *testing.T) {
	h := newHarness(t, mem.New())
	h.create("q")
	h.put("q", "first", 0)
	h.put("q", "second", 0)
	h.put("q", "short", time.Minute)
	got := h.get("q", 1, 30) // "first" becomes invisible for 30 s
	if len(got) != 1 {
		t.Fatalf("dequeued %d", len(got))
	}
	h.clk.Advance(2 * time.Minute) // "short" expires; "first" visible again
	h.get("q", 1, 30)              // "second", visible longest
	h.put("q", "third", 0)
	ms, err := h.s.InspectMessages(context.Background(), h.id("q"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || ms[0].Text != "first" || ms[1].Text != "second" || ms[2].Text != "third" {
		t.Fatalf("messages %+v", ms)
	}
	now := h.clk.Now()
	if m := ms[0]; !m.Visible || m.DequeueCount != 1 || !m.ReceiptOutstanding {
		t.Errorf("message visible again: %+v (now %s)", m, now)
	}
	if m := ms[1]; m.Visible || m.DequeueCount != 1 || !m.ReceiptOutstanding || !m.NextVisible.Equal(now.Add(30*time.Second)) {
		t.Errorf("invisible message: %+v (now %s)", m, now)
	}
	if m := ms[2]; !m.Visible || m.DequeueCount != 0 || m.ReceiptOutstanding {
		t.Errorf("untouched message: %+v", m)
	}
	if again, _ := h.s.InspectMessages(context.Background(), h.id("q"), 1); len(again) != 1 || again[0].Text != "first" || again[0].DequeueCount != 1 {
		t.Errorf("limit 1 / unchanged: %+v", again)
	}
	_, err = h.s.InspectMessages(context.Background(), h.id("nosuch"), 0)
	if ae := (*azerr.Error)(nil); !errors.As(err, &ae) || ae.Code != azerr.QueueNotFound {
		t.Errorf("missing queue: %v", err)
	}
}

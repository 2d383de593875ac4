package e2e

// Visibility timeouts and TTLs against the fake clock. Each test moves the
// clock by a few minutes at most: the SDK signs with the real time and
// the server refuses more than 15 minutes of skew.

import (
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
)

func TestQueueVisibilityTimeout(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	quEnqueue(t, e.ctx, q, "job", nil)
	t0 := e.clock.Now()
	first := quDequeue(t, e.ctx, q, 1, 30)[0]
	if !first.TimeNextVisible.Equal(t0.Add(30 * time.Second).Truncate(time.Second)) {
		t.Errorf("TimeNextVisible %v, want %v", first.TimeNextVisible, t0.Add(30*time.Second))
	}
	// Invisible to everyone for 30 s, but still counted.
	for _, step := range []time.Duration{0, 10 * time.Second, 19*time.Second + 999*time.Millisecond} {
		e.clock.Advance(step)
		if got := quDequeue(t, e.ctx, q, 32, 30); len(got) != 0 {
			t.Fatalf("visible %v after the dequeue", e.clock.Now().Sub(t0))
		}
		if p := quPeekTexts(t, e.ctx, q); len(p) != 0 {
			t.Fatalf("peek sees an invisible message: %v", p)
		}
		if n := quCount(t, e.ctx, q); n != 1 {
			t.Fatalf("count %d", n)
		}
	}
	e.clock.Set(t0.Add(30 * time.Second))
	if p := quPeekTexts(t, e.ctx, q); len(p) != 1 {
		t.Fatalf("not visible again at the end of the timeout")
	}
	second := quDequeue(t, e.ctx, q, 1, 60)[0]
	if *second.MessageID != *first.MessageID || *second.DequeueCount != 2 || *second.PopReceipt == *first.PopReceipt {
		t.Fatalf("second dequeue: id %s count %d", *second.MessageID, *second.DequeueCount)
	}
	// The first consumer's receipt died with the second dequeue.
	_, err := q.DeleteMessage(e.ctx, *first.MessageID, *first.PopReceipt, nil)
	quWant(t, err, http.StatusNotFound, queueerror.MessageNotFound)
	_, err = q.UpdateMessage(e.ctx, *first.MessageID, *first.PopReceipt, "x", nil)
	quWant(t, err, http.StatusNotFound, queueerror.MessageNotFound)
	_, err = q.DeleteMessage(e.ctx, *second.MessageID, *second.PopReceipt, nil)
	quMust(t, err)
}

// TestQueueReceiptOutlivesTimeout: a receipt stays valid after the
// visibility timeout passed as long as nobody dequeued the message again
// (Azure/azure-storage-net#285, scenario 2).
func TestQueueReceiptOutlivesTimeout(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	quEnqueue(t, e.ctx, q, "slow", nil)
	m := quDequeue(t, e.ctx, q, 1, 10)[0]
	e.clock.Advance(40 * time.Second)
	if p := quPeekTexts(t, e.ctx, q); len(p) != 1 {
		t.Fatal("message not visible after its timeout")
	}
	_, err := q.DeleteMessage(e.ctx, *m.MessageID, *m.PopReceipt, nil)
	quMust(t, err)
	if n := quCount(t, e.ctx, q); n != 0 {
		t.Errorf("count %d", n)
	}
}

func TestQueuePutVisibilityDelay(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	t0 := e.clock.Now()
	m := quEnqueue(t, e.ctx, q, "later", &azqueue.EnqueueMessageOptions{VisibilityTimeout: to.Ptr(int32(90))})
	quEnqueue(t, e.ctx, q, "now", nil)
	if !m.TimeNextVisible.Equal(t0.Add(90 * time.Second).Truncate(time.Second)) {
		t.Errorf("TimeNextVisible %v", m.TimeNextVisible)
	}
	if p := quPeekTexts(t, e.ctx, q); !quEqual(p, []string{"now"}) {
		t.Fatalf("peek before the delay: %v", p)
	}
	if n := quCount(t, e.ctx, q); n != 2 {
		t.Errorf("count %d", n)
	}
	e.clock.Advance(89 * time.Second)
	if p := quPeekTexts(t, e.ctx, q); !quEqual(p, []string{"now"}) {
		t.Fatalf("peek 1 s before: %v", p)
	}
	e.clock.Advance(time.Second)
	if p := quPeekTexts(t, e.ctx, q); len(p) != 2 {
		t.Fatalf("peek at the end of the delay: %v", p)
	}
	// The put receipt works on a delayed message too.
	_, err := q.DeleteMessage(e.ctx, *m.MessageID, *m.PopReceipt, nil)
	quMust(t, err)
}

func TestQueueMessageTTL(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	t0 := e.clock.Now()
	short := quEnqueue(t, e.ctx, q, "short", &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr(int32(60))})
	forever := quEnqueue(t, e.ctx, q, "forever", &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr(int32(-1))})
	long := quEnqueue(t, e.ctx, q, "two weeks", &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr(int32(14 * 24 * 3600))})
	if !short.ExpirationTime.Equal(t0.Add(time.Minute).Truncate(time.Second)) {
		t.Errorf("short expires %v", short.ExpirationTime)
	}
	if want := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC); !forever.ExpirationTime.Equal(want) {
		t.Errorf("TTL -1 expires %v, want %v", forever.ExpirationTime, want)
	}
	if !long.ExpirationTime.Equal(t0.Add(14 * 24 * time.Hour).Truncate(time.Second)) {
		t.Errorf("two weeks expires %v", long.ExpirationTime)
	}
	// An invisible message expires too.
	inv := quDequeue(t, e.ctx, q, 1, 30)[0]
	if *inv.MessageText != "short" {
		t.Fatalf("dequeued %s", *inv.MessageText)
	}
	e.clock.Advance(59 * time.Second)
	if n := quCount(t, e.ctx, q); n != 3 {
		t.Fatalf("count before expiry %d", n)
	}
	e.clock.Advance(time.Second)
	if n := quCount(t, e.ctx, q); n != 2 {
		t.Fatalf("count at expiry %d", n)
	}
	if p := quPeekTexts(t, e.ctx, q); !quEqual(p, []string{"forever", "two weeks"}) {
		t.Fatalf("peek after expiry: %v", p)
	}
	_, err := q.DeleteMessage(e.ctx, *inv.MessageID, *inv.PopReceipt, nil)
	quWant(t, err, http.StatusNotFound, queueerror.MessageNotFound)
	_, err = q.UpdateMessage(e.ctx, *inv.MessageID, *inv.PopReceipt, "revive", nil)
	quWant(t, err, http.StatusNotFound, queueerror.MessageNotFound)
	got := quDequeue(t, e.ctx, q, 32, 30)
	if !quEqual(quTexts(got), []string{"forever", "two weeks"}) {
		t.Fatalf("dequeue after expiry: %v", quTexts(got))
	}
	if want := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC); !got[0].ExpirationTime.Equal(want) {
		t.Errorf("dequeued TTL -1 expires %v", got[0].ExpirationTime)
	}

	// An expired message that was never dequeued is gone as well.
	quEnqueue(t, e.ctx, q, "brief", &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr(int32(1))})
	e.clock.Advance(time.Second)
	if got := quDequeue(t, e.ctx, q, 32, 30); len(got) != 0 {
		t.Fatalf("expired message dequeued: %v", quTexts(got))
	}
}

func TestQueueUpdateVisibility(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	quEnqueue(t, e.ctx, q, "work", &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr(int32(300))})
	m := quDequeue(t, e.ctx, q, 1, 30)[0]
	t0 := e.clock.Now()

	// Extend the lease on the message to two minutes from now.
	e.clock.Advance(20 * time.Second)
	up, err := q.UpdateMessage(e.ctx, *m.MessageID, *m.PopReceipt, "work, half done", &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(int32(120))})
	quMust(t, err)
	if !up.TimeNextVisible.Equal(t0.Add(140 * time.Second).Truncate(time.Second)) {
		t.Errorf("TimeNextVisible %v", up.TimeNextVisible)
	}
	e.clock.Set(t0.Add(139 * time.Second))
	if p := quPeekTexts(t, e.ctx, q); len(p) != 0 {
		t.Fatalf("visible before the updated timeout")
	}
	// Past the message's expiry (300 s after the put) is refused.
	_, err = q.UpdateMessage(e.ctx, *m.MessageID, *up.PopReceipt, "x", &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(int32(200))})
	quWant(t, err, http.StatusBadRequest, queueerror.InvalidQueryParameterValue)
	e.clock.Set(t0.Add(140 * time.Second))
	got := quDequeue(t, e.ctx, q, 1, 30)
	if len(got) != 1 || *got[0].MessageText != "work, half done" || *got[0].DequeueCount != 2 {
		t.Fatalf("after the updated timeout: %v", quTexts(got))
	}
	// The refused update did not consume the receipt, but the dequeue did.
	_, err = q.DeleteMessage(e.ctx, *m.MessageID, *up.PopReceipt, nil)
	quWant(t, err, http.StatusNotFound, queueerror.MessageNotFound)
	_, err = q.DeleteMessage(e.ctx, *m.MessageID, *got[0].PopReceipt, nil)
	quMust(t, err)
}

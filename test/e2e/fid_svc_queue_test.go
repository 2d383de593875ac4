package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
)

// Put Message takes any positive messagettl, and -1 (Put Message:
// "The maximum time-to-live can be any positive number, as well as -1
// indicating that the message does not expire"). The Go SDK's
// TimeToLive is an int32; longer TTLs are sent by hand.
func TestFidSvcQueueMessageTTL(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	farFuture := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	for _, tc := range []struct {
		ttl  string
		want func(inserted time.Time) time.Time
	}{
		{"1", func(i time.Time) time.Time { return i.Add(time.Second) }},
		{"2147483647", func(i time.Time) time.Time { return i.Add(2147483647 * time.Second) }},
		{"2147483648", func(i time.Time) time.Time { return i.Add(2147483648 * time.Second) }},
		{"3153600000", func(i time.Time) time.Time { return i.Add(3153600000 * time.Second) }}, // 100 years
		{"-1", func(time.Time) time.Time { return farFuture }},
		// Too long to date: it never expires.
		{"99999999999999999999", func(time.Time) time.Time { return farFuture }},
	} {
		m := quEnqueue(t, quWithQuery(e.ctx, "messagettl", tc.ttl), q, "ttl "+tc.ttl, nil)
		if want := tc.want(m.InsertionTime.UTC()); !m.ExpirationTime.UTC().Equal(want) {
			t.Fatalf("messagettl=%s: expires %v, want %v", tc.ttl, m.ExpirationTime, want)
		}
	}
	m := quEnqueue(t, e.ctx, q, "sdk max", &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr(int32(2147483647))})
	if !m.ExpirationTime.Equal(m.InsertionTime.Add(2147483647 * time.Second)) {
		t.Fatalf("SDK TimeToLive max: %v → %v", m.InsertionTime, m.ExpirationTime)
	}
	// Past the one-second message, the others are all still there.
	e.clock.Advance(2 * time.Second)
	peek, err := q.PeekMessages(e.ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	quMust(t, err)
	if len(peek.Messages) != 6 {
		t.Fatalf("%d messages left, want 6", len(peek.Messages))
	}
	for _, bad := range []string{"0", "-2", "-99999999999999999999"} {
		_, err := q.EnqueueMessage(quWithQuery(e.ctx, "messagettl", bad), "bad", nil)
		quWant(t, err, http.StatusBadRequest, queueerror.OutOfRangeQueryParameterValue)
	}
}

// A message over 64 KiB (counted in UTF-8 bytes) is refused as Azure
// refuses it: 413 RequestBodyTooLarge, "The request body is too large
// and exceeds the maximum permissible limit." (azure-sdk-for-js
// storage-queue test/node/messageid.spec.ts, "update message negative
// with 65537B (64KB+1B) characters including special char", recorded
// against the service); exactly 64 KiB is accepted.
func TestFidSvcQueueMessageTooLarge(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	special := "!@#$%^&*()_+`-=[]|};'\":,./?><`~漢字㒈保ᨍ揫^p[뷁)"
	exact := special + strings.Repeat("a", 64*1024-len(special))
	m := quEnqueue(t, e.ctx, q, exact, nil)
	up, err := q.UpdateMessage(e.ctx, *m.MessageID, *m.PopReceipt, exact, nil)
	quMust(t, err)
	over := exact + "a"
	_, err = q.EnqueueMessage(e.ctx, over, nil)
	quWant(t, err, http.StatusRequestEntityTooLarge, queueerror.RequestBodyTooLarge)
	if !strings.Contains(err.Error(), "The request body is too large and exceeds the maximum permissible limit.") {
		t.Fatalf("message: %v", err)
	}
	_, err = q.UpdateMessage(e.ctx, *m.MessageID, *up.PopReceipt, over, nil)
	quWant(t, err, http.StatusRequestEntityTooLarge, queueerror.RequestBodyTooLarge)
	peek, err := q.PeekMessages(e.ctx, nil)
	quMust(t, err)
	// Nothing changed: the one message, with its 64 KiB text.
	if len(peek.Messages) != 1 || *peek.Messages[0].MessageText != exact {
		t.Fatalf("queue after refusals: %d messages", len(peek.Messages))
	}
}

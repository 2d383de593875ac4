package queue

import (
	"context"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// TestDomainAPIWithoutHTTP drives a message's life through the typed
// domain methods alone, with time from the injected fake clock: what SMB
// or any other front end would call.
func TestDomainAPIWithoutHTTP(t *testing.T) {
	h := newHarness(t, boltStore(t))
	ctx := context.Background()
	id := QueueID{Account: "acct", Name: "domainq"}
	if out, err := h.s.CreateQueue(ctx, CreateQueueInput{QueueID: id, Metadata: map[string]string{"k": "v"}}); err != nil || !out.Created {
		t.Fatalf("CreateQueue = %v, %v; want created", out.Created, err)
	}
	if out, err := h.s.CreateQueue(ctx, CreateQueueInput{QueueID: id, Metadata: map[string]string{"k": "v"}}); err != nil || out.Created {
		t.Fatalf("second CreateQueue = %v, %v; want existing", out.Created, err)
	}
	if _, err := h.s.CreateQueue(ctx, CreateQueueInput{QueueID: id}); !azerr.Has(err, azerr.QueueAlreadyExists) {
		t.Fatalf("CreateQueue with other metadata: %v, want QueueAlreadyExists", err)
	}

	start := h.clk.Now()
	put, err := h.s.PutMessage(ctx, PutMessageInput{QueueID: id, Text: "hello", Visibility: 10 * time.Second, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !put.InsertionTime.Equal(start) || !put.TimeNextVisible.Equal(start.Add(10*time.Second)) || !put.ExpirationTime.Equal(start.Add(time.Minute)) {
		t.Fatalf("put times %v %v %v, clock at %v", put.InsertionTime, put.TimeNextVisible, put.ExpirationTime, start)
	}
	if got, err := h.s.GetMessages(ctx, GetMessagesInput{QueueID: id, Count: 1, Visibility: 30 * time.Second}); err != nil || len(got.Messages) != 0 {
		t.Fatalf("GetMessages before visible = %v, %v", got, err)
	}
	h.clk.Advance(10 * time.Second)
	got, err := h.s.GetMessages(ctx, GetMessagesInput{QueueID: id, Count: 5, Visibility: 30 * time.Second})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("GetMessages = %v, %v", got, err)
	}
	m := got.Messages[0]
	if m.ID != put.ID || m.Text != "hello" || m.DequeueCount != 1 || !m.TimeNextVisible.Equal(h.clk.Now().Add(30*time.Second)) {
		t.Fatalf("dequeued %+v", m)
	}
	if p, err := h.s.GetQueueProperties(ctx, GetQueuePropertiesInput{QueueID: id}); err != nil || p.ApproximateMessageCount != 1 || p.Metadata["k"] != "v" {
		t.Fatalf("GetQueueProperties = %+v, %v", p, err)
	}

	// The put receipt is stale after the dequeue.
	if _, err := h.s.DeleteMessage(ctx, DeleteMessageInput{MessageRef{QueueID: id, MessageID: m.ID, PopReceipt: put.PopReceipt}}); !azerr.Has(err, azerr.MessageNotFound) {
		t.Fatalf("DeleteMessage with the put receipt: %v, want MessageNotFound", err)
	}
	// Past the expiry: 400, and nothing changes.
	_, err = h.s.UpdateMessage(ctx, UpdateMessageInput{MessageRef: MessageRef{QueueID: id, MessageID: m.ID, PopReceipt: m.PopReceipt}, Visibility: time.Hour})
	if !azerr.Has(err, azerr.InvalidQueryParameterValue) {
		t.Fatalf("UpdateMessage past expiry: %v", err)
	}
	text := "bye"
	upd, err := h.s.UpdateMessage(ctx, UpdateMessageInput{MessageRef: MessageRef{QueueID: id, MessageID: m.ID, PopReceipt: m.PopReceipt}, Text: &text})
	if err != nil {
		t.Fatal(err)
	}
	if upd.PopReceipt == m.PopReceipt || !upd.TimeNextVisible.Equal(h.clk.Now()) {
		t.Fatalf("updated %+v", upd)
	}
	peeked, err := h.s.PeekMessages(ctx, PeekMessagesInput{QueueID: id, Count: 32})
	if err != nil || len(peeked.Messages) != 1 || peeked.Messages[0].Text != "bye" || peeked.Messages[0].DequeueCount != 1 {
		t.Fatalf("PeekMessages = %+v, %v", peeked, err)
	}
	if _, err := h.s.DeleteMessage(ctx, DeleteMessageInput{MessageRef{QueueID: id, MessageID: m.ID, PopReceipt: upd.PopReceipt}}); err != nil {
		t.Fatal(err)
	}
	if p, err := h.s.GetQueueProperties(ctx, GetQueuePropertiesInput{QueueID: id}); err != nil || p.ApproximateMessageCount != 0 {
		t.Fatalf("after delete: %+v, %v", p, err)
	}

	list, err := h.s.ListQueues(ctx, ListQueuesInput{Account: "acct", MaxResults: 10, WithMetadata: true})
	if err != nil || len(list.Queues) != 1 || list.Queues[0].Name != "domainq" || list.Queues[0].Metadata["k"] != "v" || list.NextMarker != "" {
		t.Fatalf("ListQueues = %+v, %v", list, err)
	}
	if _, err := h.s.DeleteQueue(ctx, DeleteQueueInput{QueueID: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.PutMessage(ctx, PutMessageInput{QueueID: id, Text: "x"}); !azerr.Has(err, azerr.QueueNotFound) {
		t.Fatalf("PutMessage after DeleteQueue: %v", err)
	}
}

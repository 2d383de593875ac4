package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
)

// TestQueueBeingDeleted: through azqueue, Delete Queue and Clear
// Messages answer at once and the messages are purged in the background
// (held here before the purge's first step): meanwhile a create of the
// deleted queue's name is 409 QueueBeingDeleted, the deleted queue is
// 404, the cleared one shows no message and takes new ones; released,
// the name can be created again, empty. It fails before the change: the
// purge ran in the request, and the create succeeded at once.
func TestQueueBeingDeleted(t *testing.T) {
	e := quStart(t)
	held, release := holdReclaim(t, e.app.Blob.Reclaimer())
	doomed, cleared := e.svc.NewQueueClient("doomed"), e.svc.NewQueueClient("cleared")
	for _, q := range []*azqueue.QueueClient{doomed, cleared} {
		_, err := q.Create(e.ctx, nil)
		must(t, err)
		for i := 0; i < 30; i++ {
			_, err := q.EnqueueMessage(e.ctx, fmt.Sprint(i), nil)
			must(t, err)
		}
	}
	_, err := doomed.Delete(e.ctx, nil)
	must(t, err)
	_, err = cleared.ClearMessages(e.ctx, nil)
	must(t, err)
	held()
	_, err = doomed.Create(e.ctx, nil)
	quWant(t, err, http.StatusConflict, queueerror.QueueBeingDeleted)
	_, err = doomed.GetProperties(e.ctx, nil)
	quWant(t, err, http.StatusNotFound, queueerror.QueueNotFound)
	peek, err := cleared.PeekMessages(e.ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to32(32)})
	must(t, err)
	if len(peek.Messages) != 0 {
		t.Fatalf("cleared queue shows %d messages", len(peek.Messages))
	}
	_, err = cleared.EnqueueMessage(e.ctx, "after", nil)
	must(t, err)
	release()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := doomed.Create(e.ctx, nil)
		if err == nil {
			break
		}
		quWant(t, err, http.StatusConflict, queueerror.QueueBeingDeleted)
		if time.Now().After(deadline) {
			t.Fatal("queue still being deleted after 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	peek, err = doomed.PeekMessages(e.ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to32(32)})
	must(t, err)
	if len(peek.Messages) != 0 {
		t.Fatalf("recreated queue shows %d messages", len(peek.Messages))
	}
}

func to32(n int32) *int32 { return &n }

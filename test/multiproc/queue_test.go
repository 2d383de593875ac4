package multiproc

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
)

// TestQueueCompetingConsumers: producers on every process enqueue
// messages while consumers on every process dequeue them with a
// visibility timeout longer than the test and delete each through another
// process (pop receipts are valid everywhere). Every message is delivered
// exactly once (never twice inside its visibility window, none lost), with
// DequeueCount 1, except every 20th, which its first consumer abandons by
// shortening its visibility timeout to a second: that one comes back once,
// not earlier, with DequeueCount 2, and the receipt the update replaced no
// longer deletes it. At the end the queue is empty as seen from every
// process.
func TestQueueCompetingConsumers(t *testing.T) {
	c := newCluster(t, queueSvc)
	ctx := ctxFor(t, 2*time.Minute)
	const (
		total            = 1200
		producersPerNode = 2
		consumersPerNode = 3
		visibility       = 300 // seconds: no visibility window ends during the test
		abandonAfter     = time.Second
		maxRun           = 90 * time.Second
	)
	const name = "work"
	_, err := c.Queue(0).CreateQueue(ctx, name, nil)
	must(t, "create queue", err)

	start := time.Now()
	deadline := start.Add(maxRun)
	var pwg sync.WaitGroup
	producers := nodes * producersPerNode
	for p := range producers {
		q := c.Queue(p % nodes).NewQueueClient(name)
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			for i := p; i < total; i += producers {
				if _, err := q.EnqueueMessage(ctx, fmt.Sprint(i), nil); err != nil {
					t.Errorf("enqueue %d through node %d: %v", i, p%nodes, err)
					return
				}
			}
		}()
	}

	// Every 20th message is abandoned on its first delivery: its consumer
	// makes it visible again after abandonAfter (Update Message through
	// another process), and it must then come back exactly once, with
	// DequeueCount 2, not before that time.
	abandoned := func(text string) bool {
		var i int
		_, _ = fmt.Sscan(text, &i)
		return i%20 == 0
	}
	type delivery struct {
		consumer    int
		count       int
		hiddenUntil time.Time // a delivery before this breaks the visibility timeout
	}
	var mu sync.Mutex
	deliveries := map[string]*delivery{}
	var deleted, dequeues, redelivered atomic.Int64
	perNode := make([]atomic.Int64, nodes)
	var cwg sync.WaitGroup
	for k := range nodes * consumersPerNode {
		node := k % nodes
		q := c.Queue(node).NewQueueClient(name)
		other := c.Queue((node + 1) % nodes).NewQueueClient(name)
		third := c.Queue((node + 2) % nodes).NewQueueClient(name)
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			for deleted.Load() < total && time.Now().Before(deadline) && !t.Failed() {
				call := time.Now()
				resp, err := q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(16)), VisibilityTimeout: to.Ptr(int32(visibility))})
				if err != nil {
					t.Errorf("consumer %d: dequeue through node %d: %v", k, node, err)
					return
				}
				ret := time.Now()
				dequeues.Add(1)
				if len(resp.Messages) == 0 {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				for _, m := range resp.Messages {
					text := *m.MessageText
					mu.Lock()
					d := deliveries[text]
					if d == nil {
						d = &delivery{}
						deliveries[text] = d
					}
					prev, early := *d, ret.Before(d.hiddenUntil)
					d.consumer, d.count, d.hiddenUntil = k, d.count+1, call.Add(visibility*time.Second)
					n := d.count
					first := n == 1
					if first && abandoned(text) {
						// Set before the update is sent: the message may
						// reappear as soon as the server has applied it.
						d.hiddenUntil = time.Now().Add(abandonAfter)
					}
					mu.Unlock()
					if early || prev.count > 1 || (prev.count == 1 && !abandoned(text)) {
						t.Errorf("message %s delivered to consumer %d (node %d) after delivery %d to consumer %d (node %d), %v before its visibility timeout ended", text, k, node, prev.count, prev.consumer, prev.consumer%nodes, prev.hiddenUntil.Sub(ret).Round(time.Millisecond))
						continue
					}
					if *m.DequeueCount != int64(n) {
						t.Errorf("message %s: DequeueCount %d on delivery %d", text, *m.DequeueCount, n)
					}
					if first && abandoned(text) {
						if _, err := other.UpdateMessage(ctx, *m.MessageID, *m.PopReceipt, text, &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(int32(abandonAfter / time.Second))}); err != nil {
							t.Errorf("update of message %s through node %d with the pop receipt of node %d: %v", text, (node+1)%nodes, node, err)
						}
						_, err := third.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil)
						wantCode(t, fmt.Sprintf("delete of message %s through node %d with the receipt the update replaced", text, (node+2)%nodes), err, 404, string(queueerror.MessageNotFound))
						continue
					}
					if !first {
						redelivered.Add(1)
					}
					perNode[node].Add(1)
					if _, err := other.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
						t.Errorf("delete of message %s through node %d with the pop receipt of node %d: %v", text, (node+1)%nodes, node, err)
					}
					deleted.Add(1)
				}
			}
		}()
	}
	pwg.Wait()
	cwg.Wait()
	if n := deleted.Load(); n != total {
		t.Fatalf("%d of %d messages consumed in %v: %d lost", n, total, maxRun, total-n)
	}
	if want := int64(total / 20); redelivered.Load() != want {
		t.Errorf("%d abandoned messages came back, want %d", redelivered.Load(), want)
	}
	for i := range nodes {
		p, err := c.Queue(i).NewQueueClient(name).GetProperties(ctx, nil)
		must(t, "queue properties", err)
		if p.ApproximateMessagesCount == nil || *p.ApproximateMessagesCount != 0 {
			t.Errorf("node %d: %v messages left after every message was deleted", i, deref(p.ApproximateMessagesCount))
		}
	}
	counts := make([]int64, nodes)
	for i := range counts {
		counts[i] = perNode[i].Load()
	}
	t.Logf("%d messages from %d producers, consumed by %d consumers on %d processes in %v (per process %v, %d dequeue calls); %d abandoned and redelivered once after their visibility timeout; no other message delivered twice, none lost",
		total, producers, nodes*consumersPerNode, nodes, time.Since(start).Round(time.Millisecond), counts, dequeues.Load(), redelivered.Load())
}

package e2e

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// quConsumers returns n clients with their own connection pools, as
// separate worker processes would have.
func (e *quEnv) quConsumers(n int, name string) []*azqueue.QueueClient {
	out := make([]*azqueue.QueueClient, n)
	for i := range out {
		out[i] = quClient(e.t, e.app.QueueURL, app.DevKey).NewQueueClient(name)
	}
	return out
}

// TestQueueCompetingConsumers: producers and consumers race on one queue
// while the clock stands still, so no visibility window ever ends: every
// message must be delivered exactly once, with DequeueCount 1, and none
// may be lost.
func TestQueueCompetingConsumers(t *testing.T) {
	e := quStart(t)
	name := quName()
	_, err := e.svc.CreateQueue(e.ctx, name, nil)
	quMust(t, err)
	const total, producers, consumers = 3000, 8, 24
	prod := e.quConsumers(producers, name)
	cons := e.quConsumers(consumers, name)

	var pwg sync.WaitGroup
	for p := range producers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			for i := p; i < total; i += producers {
				if _, err := prod[p].EnqueueMessage(e.ctx, fmt.Sprint(i), nil); err != nil {
					t.Errorf("enqueue %d: %v", i, err)
					return
				}
			}
		}()
	}
	var mu sync.Mutex
	delivered := map[string]int{}
	done := make(chan struct{})
	var cwg sync.WaitGroup
	for c := range consumers {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			for {
				// Stop only on an empty answer to a request sent after the
				// last put was acknowledged: one sent before may read a
				// snapshot without it.
				finished := false
				select {
				case <-done:
					finished = true
				default:
				}
				n := int32(1 + rand.IntN(32))
				resp, err := cons[c].DequeueMessages(e.ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: &n, VisibilityTimeout: to.Ptr(int32(300))})
				if err != nil {
					t.Errorf("dequeue: %v", err)
					return
				}
				if len(resp.Messages) == 0 {
					if finished {
						return
					}
					continue
				}
				for _, m := range resp.Messages {
					mu.Lock()
					delivered[*m.MessageText]++
					mu.Unlock()
					if *m.DequeueCount != 1 {
						t.Errorf("message %s has DequeueCount %d", *m.MessageText, *m.DequeueCount)
					}
					if _, err := cons[c].DeleteMessage(e.ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
						t.Errorf("delete %s: %v", *m.MessageText, err)
					}
				}
			}
		}()
	}
	pwg.Wait()
	close(done)
	cwg.Wait()
	if len(delivered) != total {
		t.Errorf("%d distinct messages delivered, want %d", len(delivered), total)
	}
	for text, n := range delivered {
		if n != 1 {
			t.Errorf("message %s delivered %d times inside its visibility window", text, n)
		}
	}
	if n := quCount(t, e.ctx, e.svc.NewQueueClient(name)); n != 0 {
		t.Errorf("%d messages left", n)
	}
}

// TestQueueRedelivery: consumers that die without deleting lose their
// messages to others only once the visibility timeout has passed. Phase
// 1: everything is dequeued concurrently, and a third is abandoned.
// Phase 2, after the timeout: exactly the abandoned messages come back,
// each once, with DequeueCount 2, and the dead consumers' receipts no
// longer delete them.
func TestQueueRedelivery(t *testing.T) {
	e := quStart(t)
	name := quName()
	_, err := e.svc.CreateQueue(e.ctx, name, nil)
	quMust(t, err)
	const total, consumers = 1200, 16
	q := e.svc.NewQueueClient(name)
	var pwg sync.WaitGroup
	for p := range 4 {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			for i := p; i < total; i += 4 {
				if _, err := q.EnqueueMessage(e.ctx, fmt.Sprint(i), nil); err != nil {
					t.Errorf("enqueue: %v", err)
					return
				}
			}
		}()
	}
	pwg.Wait()
	cons := e.quConsumers(consumers, name)

	type abandoned struct{ id, receipt string }
	// drain runs the consumers until the queue looks empty and returns
	// what each message's deliveries were.
	drain := func(abandon func(text string) bool) (map[string]int, map[string]abandoned, map[string]int64) {
		var mu sync.Mutex
		seen := map[string]int{}
		counts := map[string]int64{}
		left := map[string]abandoned{}
		var wg sync.WaitGroup
		for c := range consumers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for empty := 0; empty < 3; {
					resp, err := cons[c].DequeueMessages(e.ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(8)), VisibilityTimeout: to.Ptr(int32(120))})
					if err != nil {
						t.Errorf("dequeue: %v", err)
						return
					}
					if len(resp.Messages) == 0 {
						empty++
						continue
					}
					for _, m := range resp.Messages {
						mu.Lock()
						seen[*m.MessageText]++
						counts[*m.MessageText] = *m.DequeueCount
						mu.Unlock()
						if abandon(*m.MessageText) {
							mu.Lock()
							left[*m.MessageText] = abandoned{*m.MessageID, *m.PopReceipt}
							mu.Unlock()
							continue
						}
						if _, err := cons[c].DeleteMessage(e.ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
							t.Errorf("delete: %v", err)
						}
					}
				}
			}()
		}
		wg.Wait()
		return seen, left, counts
	}

	seen, left, _ := drain(func(text string) bool {
		var i int
		_, _ = fmt.Sscan(text, &i)
		return i%3 == 0
	})
	if len(seen) != total || len(left) != total/3 {
		t.Fatalf("phase 1: %d delivered, %d abandoned", len(seen), len(left))
	}
	for text, n := range seen {
		if n != 1 {
			t.Fatalf("phase 1: %s delivered %d times", text, n)
		}
	}
	if n := quCount(t, e.ctx, q); n != int32(total/3) {
		t.Fatalf("count with abandoned messages invisible: %d", n)
	}

	e.clock.Advance(2 * time.Minute)
	seen2, _, counts := drain(func(string) bool { return false })
	if len(seen2) != len(left) {
		t.Errorf("phase 2: %d redelivered, want %d", len(seen2), len(left))
	}
	for text, n := range seen2 {
		if _, ok := left[text]; !ok || n != 1 || counts[text] != 2 {
			t.Errorf("phase 2: %s delivered %d times, DequeueCount %d (abandoned: %v)", text, n, counts[text], ok)
		}
	}
	// The dead consumers' receipts were superseded.
	for text, a := range left {
		_, err := q.DeleteMessage(e.ctx, a.id, a.receipt, nil)
		if quStatus(err) != http.StatusNotFound {
			t.Errorf("stale receipt of %s: %v", text, err)
		}
		break
	}
	if n := quCount(t, e.ctx, q); n != 0 {
		t.Errorf("%d messages left", n)
	}
}

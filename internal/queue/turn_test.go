package queue

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// overlapStore is a store that does not say it runs writes one after the
// other (as PostgreSQL's), counting the write transactions in flight.
type overlapStore struct {
	kv.Store
	in, most atomic.Int32
}

func (s *overlapStore) Update(ctx context.Context, fn func(kv.Tx) error) error {
	n := s.in.Add(1)
	defer s.in.Add(-1)
	for {
		m := s.most.Load()
		if n <= m || s.most.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(time.Millisecond) // let concurrent calls overlap if they may
	return s.Store.Update(ctx, fn)
}

// TestGetMessagesTakeTurns: on a store that checks serializability,
// concurrent Get Messages calls on one queue run their transactions one
// at a time in a process (they would conflict and run again), and still
// hand out every message once; calls on different queues overlap.
func TestGetMessagesTakeTurns(t *testing.T) {
	st := &overlapStore{Store: mem.New()}
	if kv.SingleWriter(st) {
		t.Fatal("the test store must not be a single writer")
	}
	s := New(st, nil, nil)
	ctx := context.Background()
	a, b := QueueID{Account: "acct", Name: "a"}, QueueID{Account: "acct", Name: "b"}
	for _, id := range []QueueID{a, b} {
		if _, err := s.CreateQueue(ctx, CreateQueueInput{QueueID: id}); err != nil {
			t.Fatal(err)
		}
	}
	const n = 24
	for range n {
		if _, err := s.PutMessage(ctx, PutMessageInput{QueueID: a, Text: "m", TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	run := func(ids ...QueueID) map[string]int {
		st.most.Store(0)
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range n / 8 {
					out, err := s.GetMessages(ctx, GetMessagesInput{QueueID: ids[i%len(ids)], Count: 1, Visibility: time.Hour})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, m := range out.Messages {
						seen[m.ID]++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return seen
	}
	seen := run(a)
	if len(seen) != n {
		t.Fatalf("%d messages handed out, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Fatalf("message %s handed out %d times", id, c)
		}
	}
	if m := st.most.Load(); m != 1 {
		t.Fatalf("%d Get Messages transactions of one queue at once, want 1", m)
	}
	run(a, b)
	if m := st.most.Load(); m < 2 {
		t.Fatalf("Get Messages of two queues never overlapped (%d at most)", m)
	}
}

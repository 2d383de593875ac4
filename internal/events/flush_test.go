package events

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// posWrites is a store that notes when each committed transaction wrote
// a key.
type posWrites struct {
	kv.Store
	key []byte

	mu sync.Mutex
	at []time.Time
}

type notingTx struct {
	kv.Tx
	key     []byte
	written *time.Time
}

func (t notingTx) Put(k, v []byte) error {
	if bytes.Equal(k, t.key) {
		*t.written = time.Now()
	}
	return t.Tx.Put(k, v)
}

func (s *posWrites) Update(ctx context.Context, fn func(kv.Tx) error) error {
	var written time.Time
	err := s.Store.Update(ctx, func(tx kv.Tx) error {
		written = time.Time{}
		return fn(notingTx{tx, s.key, &written})
	})
	if err == nil && !written.IsZero() {
		s.mu.Lock()
		s.at = append(s.at, written)
		s.mu.Unlock()
	}
	return err
}

func (s *posWrites) times() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.at...)
}

// TestPositionWritesBounded: under a stream of writes, each waking the
// deliverer, the position is written at most every flushEvery however
// many rounds deliver them; it reaches the last record once the
// subscription is idle; every event is delivered once; and a stop right
// after a delivery writes its position.
func TestPositionWritesBounded(t *testing.T) {
	sub := testSub("bounded")
	st := &posWrites{Store: mem.New(), key: posKey(&sub)}
	f := &fakeSender{}
	d := New(Config{Store: st, Clock: clock.Real{}, Subs: []Subscription{sub}, Senders: map[string]Sender{"fake": f},
		Poll: time.Hour, Retry: []time.Duration{time.Millisecond}, LeaseTTL: time.Minute})
	stop := runD(t, d)

	const n = 200
	var last uint64
	for i := 0; i < n; i++ {
		recs := appendN(t, st, 1, changelog.BlobCreated)
		last = recs[0].Seq
		d.Notify("acct")
		time.Sleep(time.Millisecond)
	}
	sentAll := func(k int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			if s, _ := f.snapshot(); len(s) >= k {
				return
			}
			if time.Now().After(deadline) {
				s, _ := f.snapshot()
				t.Fatalf("%d of %d events delivered", len(s), k)
			}
			time.Sleep(time.Millisecond)
		}
	}
	sentAll(n)
	deadline := time.Now().Add(5 * time.Second)
	for {
		var pos uint64
		_ = st.View(context.Background(), func(tx kv.Tx) (err error) {
			pos, _, err = readPosition(tx, &sub)
			return err
		})
		if pos == last {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("idle, the position is %d, want %d", pos, last)
		}
		time.Sleep(5 * time.Millisecond)
	}
	writes := st.times()
	// The first is Init's (the log's end at start).
	for i := 2; i < len(writes); i++ {
		if gap := writes[i].Sub(writes[i-1]); gap < flushEvery {
			t.Fatalf("position written %v after the one before (write %d of %d), want at least %v", gap, i, len(writes), flushEvery)
		}
	}
	t.Logf("%d events, %d position writes", n, len(writes))

	// Two deliveries in quick succession, then a stop: the second's
	// position is written by the stop if not before.
	for i := 0; i < 2; i++ {
		last = appendN(t, st, 1, changelog.BlobCreated)[0].Seq
		d.Notify("acct")
		sentAll(n + 1 + i)
	}
	stop()
	var pos uint64
	if err := st.View(context.Background(), func(tx kv.Tx) (err error) {
		pos, _, err = readPosition(tx, &sub)
		return err
	}); err != nil || pos != last {
		t.Fatalf("after the stop the position is %d (%v), want %d", pos, err, last)
	}
	sent, _ := f.snapshot()
	seen := map[string]bool{}
	for _, id := range sent {
		if seen[id] {
			t.Fatalf("event %s delivered twice", id)
		}
		seen[id] = true
	}
}

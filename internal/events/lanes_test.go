package events

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// slowSender takes a while over each request and counts how many are in
// flight at once; block, if set, holds the events it selects until the
// request's context ends.
type slowSender struct {
	fakeSender
	delay    time.Duration
	block    func(Event) bool
	mu       sync.Mutex
	inflight int
	most     int
	bySubj   map[string][]uint64 // sequence numbers delivered, per subject
	subjOf   map[uint64]string
}

func (f *slowSender) Send(ctx context.Context, s *Subscription, evs []Event, attempt int) error {
	f.mu.Lock()
	f.inflight++
	f.most = max(f.most, f.inflight)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inflight--
		f.mu.Unlock()
	}()
	if f.block != nil && f.block(evs[0]) {
		<-ctx.Done()
		return ctx.Err()
	}
	time.Sleep(f.delay)
	if err := f.fakeSender.Send(ctx, s, evs, attempt); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ev := range evs {
		subj := f.subjOf[ev.Seq]
		f.bySubj[subj] = append(f.bySubj[subj], ev.Seq)
	}
	return nil
}

// behind sets up a one-event-a-request webhook subscription named name
// whose position is the log's start and n records over 10 blobs after
// it, and a deliverer (not running) sending to a slowSender.
func behind(t *testing.T, name string, n int) (kv.Store, Subscription, []changelog.Record, *slowSender, *Deliverer) {
	t.Helper()
	st := mem.New()
	sub := testSub(name)
	sub.Endpoint.Type = destWebhook
	recs := appendEach(t, st, n, changelog.BlobCreated, func(i int) string { return fmt.Sprintf("b%d", i%10) })
	// The subscription starts before the records, so its first round
	// finds them all waiting.
	if err := st.Update(context.Background(), func(tx kv.Tx) error { return tx.Put(posKey(&sub), []byte("0")) }); err != nil {
		t.Fatal(err)
	}
	f := &slowSender{delay: 2 * time.Millisecond, bySubj: map[string][]uint64{}, subjOf: map[uint64]string{}}
	for _, r := range recs {
		f.subjOf[r.Seq] = r.Subject
	}
	d := New(Config{Store: st, Clock: clock.Real{}, Subs: []Subscription{sub}, Senders: map[string]Sender{destWebhook: f},
		Poll: 5 * time.Millisecond, Retry: []time.Duration{time.Millisecond}, LeaseTTL: time.Minute})
	return st, sub, recs, f, d
}

// TestLanesWhenBehind: a one-event-a-request webhook subscription that
// is 200 events behind has several requests in flight, delivers each
// event once, and each blob's events in commit order.
func TestLanesWhenBehind(t *testing.T) {
	_, _, recs, f, d := behind(t, "behind", 200)
	began := time.Now()
	runD(t, d)
	waitPos(t, d, recs[len(recs)-1].Seq)
	el := time.Since(began)
	sent, tries := f.snapshot()
	if len(sent) != len(recs) {
		t.Fatalf("%d events delivered, want %d", len(sent), len(recs))
	}
	for id, n := range tries {
		if n != 1 {
			t.Fatalf("event %s sent %d times", id, n)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for subj, seqs := range f.bySubj {
		for i := 1; i < len(seqs); i++ {
			if seqs[i] < seqs[i-1] {
				t.Fatalf("%s: events %v, not in commit order", subj, seqs)
			}
		}
	}
	if f.most < 2 {
		t.Fatalf("at most %d request in flight: no lanes", f.most)
	}
	t.Logf("200 events in %v, up to %d requests at once", el, f.most)
}

// TestLanesStopMidRound: when a lane cannot finish (its endpoint hangs
// until the process stops), the position written at the stop is before
// that lane's first undelivered event, and every event before the
// position was delivered.
func TestLanesStopMidRound(t *testing.T) {
	st, sub, recs, f, d := behind(t, "stop", 100)
	hung := recs[40] // b0's fifth event
	f.block = func(ev Event) bool { return ev.Seq == hung.Seq }
	stop := runD(t, d)
	// Wait until every lane but the hung one is done, and that one up
	// to the hung event.
	want := 0
	for _, r := range recs {
		if laneOf(r.Subject) != laneOf(hung.Subject) || r.Seq < hung.Seq {
			want++
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		sent, _ := f.snapshot()
		if len(sent) == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events delivered, want %d", len(sent), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	var pos uint64
	if err := st.View(context.Background(), func(tx kv.Tx) error {
		p, _, err := readPosition(tx, &sub)
		pos = p
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if pos >= hung.Seq {
		t.Fatalf("position %d, at or past the undelivered event %d", pos, hung.Seq)
	}
	sent, _ := f.snapshot()
	got := map[string]bool{}
	for _, id := range sent {
		got[id] = true
	}
	for _, r := range recs {
		if r.Seq <= pos && !got[r.ID] {
			t.Fatalf("event %d is before the position %d but was not delivered", r.Seq, pos)
		}
	}
	if pos != hung.Seq-1 {
		t.Fatalf("position %d, want %d (just before the undelivered event)", pos, hung.Seq-1)
	}
}

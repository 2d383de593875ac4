package events

import (
	"context"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// TestNotifyWakes: with a poll of an hour, an appended record is
// delivered only because Notify wakes the subscription: at once when
// the record is committed, or after a few short looks when Notify came
// from inside the transaction, a moment before the commit; a record
// appended without Notify waits for the poll.
func TestNotifyWakes(t *testing.T) {
	st := mem.New()
	f := &fakeSender{}
	sub := testSub("wake")
	d := New(Config{Store: st, Clock: clock.Real{}, Subs: []Subscription{sub}, Senders: map[string]Sender{"fake": f},
		Poll: time.Hour, Retry: []time.Duration{time.Millisecond}, LeaseTTL: time.Minute})
	runD(t, d)
	sent := func(n int, within time.Duration) bool {
		deadline := time.Now().Add(within)
		for time.Now().Before(deadline) {
			if s, _ := f.snapshot(); len(s) >= n {
				return true
			}
			time.Sleep(time.Millisecond)
		}
		return false
	}
	// Let the first round find the log empty and go to sleep.
	time.Sleep(50 * time.Millisecond)
	appendN(t, st, 1, changelog.BlobCreated)
	if sent(1, 300*time.Millisecond) {
		t.Fatal("delivered without a wake-up: the test cannot tell")
	}
	d.Notify("other-account")
	if sent(1, 100*time.Millisecond) {
		t.Fatal("another account's notification woke the subscription")
	}
	d.Notify("acct")
	if !sent(1, 2*time.Second) {
		t.Fatal("not delivered after Notify")
	}
	// Notify from inside the appending transaction, which commits 5 ms
	// later.
	time.Sleep(50 * time.Millisecond)
	if err := st.Update(context.Background(), func(tx kv.Tx) error {
		if _, err := changelog.Append(tx, "acct", changelog.Record{EventType: changelog.BlobCreated, Subject: changelog.Subject("c", "b"), EventTime: time.Now()}); err != nil {
			return err
		}
		d.Notify("acct")
		time.Sleep(5 * time.Millisecond)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !sent(2, 2*time.Second) {
		t.Fatal("a record notified before its commit was not delivered")
	}
}

package queue

import (
	"context"
	"fmt"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
)

// queueKeys counts the message and index keys of every incarnation and
// the graveyard entries.
func queueKeys(t *testing.T, store kv.Store) (msgs, graves int) {
	t.Helper()
	err := store.View(context.Background(), func(tx kv.Tx) error {
		msgs, graves = 0, 0
		for _, p := range [][]byte{kv.Key("qm"), kv.Key("qv")} {
			if err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(_, _ []byte) bool { msgs++; return true }); err != nil {
				return err
			}
		}
		p := graveyardPrefix()
		return tx.Scan(p, kv.PrefixEnd(p), 0, false, func(_, _ []byte) bool { graves++; return true })
	})
	if err != nil {
		t.Fatal(err)
	}
	return msgs, graves
}

// TestClearAndDeleteReturnAtOnce: with the background reclaimer, Clear
// Messages and Delete Queue of a large queue purge only reclaim.Inline
// bounded transactions themselves and leave the rest to it (before, they
// purged every message before answering): the messages are gone for
// every read at once, the other keys stay until the reclaimer runs, and
// it removes them in bounded transactions, graveyard entries included.
func TestClearAndDeleteReturnAtOnce(t *testing.T) {
	store := boltStore(t)
	h := newHarness(t, store)
	r := reclaim.New(store, h.clk, nil, 0)
	h.s.SetReclaimer(r)
	ctx := context.Background()
	for _, name := range []string{"cleared", "deleted"} {
		id := QueueID{Account: "acct", Name: name}
		if _, err := h.s.CreateQueue(ctx, CreateQueueInput{QueueID: id}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 1500; i++ {
			if _, err := h.s.PutMessage(ctx, PutMessageInput{QueueID: id, Text: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	before, _ := queueKeys(t, store)
	if _, err := h.s.ClearMessages(ctx, ClearMessagesInput{QueueID{Account: "acct", Name: "cleared"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.DeleteQueue(ctx, DeleteQueueInput{QueueID{Account: "acct", Name: "deleted"}}); err != nil {
		t.Fatal(err)
	}
	if got, err := h.s.PeekMessages(ctx, PeekMessagesInput{QueueID{Account: "acct", Name: "cleared"}, 32}); err != nil || len(got.Messages) != 0 {
		t.Fatalf("Peek after Clear Messages: %d messages, %v", len(got.Messages), err)
	}
	// The deleted queue's name is being reclaimed.
	if _, err := h.s.CreateQueue(ctx, CreateQueueInput{QueueID: QueueID{Account: "acct", Name: "deleted"}}); !azerr.Has(err, azerr.QueueBeingDeleted) {
		t.Fatalf("Create Queue of the deleted name: %v, want 409 QueueBeingDeleted", err)
	}
	// Each request purged reclaim.Inline bounded transactions itself
	// and left the rest, with its graveyard entry, to the reclaimer.
	msgs, graves := queueKeys(t, store)
	if want := before - 2*reclaim.Inline*purgeBatch; msgs != want || graves != 2 {
		t.Fatalf("after the requests: %d of %d message keys, %d graveyard entries; want %d kept for the reclaimer and 2", msgs, before, graves, want)
	}
	steps, err := r.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := before / purgeBatch; steps < want {
		t.Fatalf("purge in %d transactions, want at least %d (bounded)", steps, want)
	}
	if msgs, graves := queueKeys(t, store); msgs != 0 || graves != 0 {
		t.Fatalf("after the reclaim: %d message keys, %d graveyard entries", msgs, graves)
	}
	if _, err := h.s.CreateQueue(ctx, CreateQueueInput{QueueID: QueueID{Account: "acct", Name: "deleted"}}); err != nil {
		t.Fatalf("Create Queue after the reclaim: %v", err)
	}
	// The cleared queue works on.
	if _, err := h.s.PutMessage(ctx, PutMessageInput{QueueID: QueueID{Account: "acct", Name: "cleared"}, Text: "again"}); err != nil {
		t.Fatal(err)
	}
}

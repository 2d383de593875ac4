package queuerest

import (
	"context"
	"net/http"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestMalformedIndexEntryFails: a visibility-index entry that does not
// decode makes Get Messages and Get Queue Metadata fail (500) instead of
// skipping it, which would leave its message undeliverable and uncounted
// without a trace.
func TestMalformedIndexEntryFails(t *testing.T) {
	store := boltStore(t)
	h := newHarness(t, store)
	h.must(h.do(http.MethodPut, "/qq1", ""), http.StatusCreated)
	h.put("qq1", "hello", "")
	if n := h.count("qq1"); n != 1 {
		t.Fatalf("count %d, want 1", n)
	}
	err := store.Update(context.Background(), func(tx kv.Tx) error {
		p := kv.Key("qv")
		var entries [][]byte
		if err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, _ []byte) bool {
			entries = append(entries, append([]byte(nil), k...))
			return true
		}); err != nil {
			return err
		}
		if len(entries) != 1 {
			t.Fatalf("%d index entries, want 1", len(entries))
		}
		return tx.Put(entries[0], []byte{1, 2, 3})
	})
	if err != nil {
		t.Fatal(err)
	}
	h.want(h.do(http.MethodGet, "/qq1/messages?numofmessages=1", ""), http.StatusInternalServerError, "InternalError")
	h.want(h.do(http.MethodGet, "/qq1?comp=metadata", ""), http.StatusInternalServerError, "InternalError")
	if n := keys(t, store, "qm"); n != 1 {
		t.Fatalf("%d message records after the failed reads, want 1", n)
	}
}

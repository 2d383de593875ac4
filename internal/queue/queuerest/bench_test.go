package queuerest

import (
	"net/http"
	"testing"
)

// BenchmarkPutGetDelete measures the service's own cost of one message's
// life (Put, Get, Delete) on the embedded backend without fsync, HTTP or
// authentication: the handlers, the XML and the transactions.
func BenchmarkPutGetDelete(b *testing.B) {
	h := newHarness(b, boltStore(b))
	h.must(h.do(http.MethodPut, "/bench", ""), http.StatusCreated)
	body := string(buildMessageXML("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r := h.do(http.MethodPost, "/bench/messages", body); r.status != http.StatusCreated {
				b.Fatalf("put: %d %s", r.status, r.code)
			}
			var ms []gotMessage
			for len(ms) == 0 {
				r := h.do(http.MethodGet, "/bench/messages?visibilitytimeout=30", "")
				if r.status != http.StatusOK {
					b.Fatalf("get: %d %s", r.status, r.code)
				}
				ms = messages(b, r)
			}
			if r := h.do(http.MethodDelete, "/bench/messages/"+ms[0].ID+"?popreceipt="+ms[0].Receipt, ""); r.status != http.StatusNoContent {
				b.Fatalf("delete: %d %s", r.status, r.code)
			}
		}
	})
}

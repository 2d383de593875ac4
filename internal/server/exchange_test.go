package server

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

// TestRequestsHook: Config.Requests gets one Exchange per answered
// request, without an Observer, with its operation, status, error code,
// request id and account; a SAS signature is hidden in its URL.
func TestRequestsHook(t *testing.T) {
	var mu sync.Mutex
	var got []Exchange
	s := New(Config{
		Clock:    clock.NewFake(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)),
		Accounts: testAccounts,
		Requests: func(e Exchange) { mu.Lock(); got = append(got, e); mu.Unlock() },
	})
	h := s.Wrap(Service{Name: "blob", Kind: auth.Blob, Handler: handlerFunc(func(w http.ResponseWriter, r *Request) error {
		r.Op = "GetBlob"
		return azerr.New(azerr.BlobNotFound)
	})})
	do(h, http.MethodGet, "/devstoreaccount1/c/b", nil)
	do(h, http.MethodGet, "/devstoreaccount1/c/b?sv=2021-12-02&sr=b&sp=r&sig=c2VjcmV0c2lnbmF0dXJl", nil)
	if len(got) != 2 {
		t.Fatalf("%d exchanges: %+v", len(got), got)
	}
	e := got[0]
	if e.Service != "blob" || e.Method != "GET" || e.URL != "/devstoreaccount1/c/b" || e.Account != "devstoreaccount1" || e.Op != "GetBlob" ||
		e.Status != 404 || e.ErrorCode != "BlobNotFound" || e.RequestID == "" || e.Client == "" || e.Start.IsZero() {
		t.Errorf("first exchange: %+v", e)
	}
	if e := got[1]; e.Status != 403 || e.Account != "devstoreaccount1" || e.URL != "/devstoreaccount1/c/b?sig=REDACTED&sp=r&sr=b&sv=2021-12-02" {
		t.Errorf("SAS exchange: %+v", e)
	}
}

package server

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

type observed struct {
	service, op string
	code        int
}

type fakeObserver struct {
	mu       sync.Mutex
	inFlight int
	ended    []observed
}

func (o *fakeObserver) Begin(service string) {
	o.mu.Lock()
	o.inFlight++
	o.mu.Unlock()
}

func (o *fakeObserver) End(service, op string, code int, d time.Duration) {
	o.mu.Lock()
	o.inFlight--
	o.ended = append(o.ended, observed{service, op, code})
	o.mu.Unlock()
}

// TestObserver: the observer sees each request once, with the operation
// the handler routed it to and the status it got, however written; a
// batch's sub-requests are not requests of their own.
func TestObserver(t *testing.T) {
	obs := &fakeObserver{}
	s := New(Config{
		Clock:    clock.NewFake(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)),
		Accounts: testAccounts,
		Observer: obs,
	})
	h := s.Wrap(Service{Name: "blob", Kind: auth.Blob, Handler: handlerFunc(func(w http.ResponseWriter, r *Request) error {
		r.Op = strings.TrimPrefix(r.URL.Path, "/devstoreaccount1/")
		switch r.Op {
		case "created":
			w.WriteHeader(http.StatusCreated)
		case "written":
			_, _ = w.Write([]byte("body"))
		case "copied":
			_, _ = w.(io.ReaderFrom).ReadFrom(strings.NewReader("body"))
		case "missing":
			return azerr.New(azerr.BlobNotFound)
		case "batch":
			sub := httptest.NewRequest(http.MethodGet, "/devstoreaccount1/created", nil).WithContext(r.Context())
			if got := r.ServeSub(sub); got.Status != http.StatusCreated {
				t.Errorf("sub-request: %d", got.Status)
			}
			w.WriteHeader(http.StatusAccepted)
		}
		return nil
	})})
	for _, path := range []string{"created", "written", "copied", "missing", "batch", "nothing"} {
		do(h, http.MethodGet, "/devstoreaccount1/"+path, nil)
	}
	// Refused before routing: a malformed version.
	do(h, http.MethodGet, "/devstoreaccount1/created", map[string]string{"x-ms-version": "2026-1-1"})

	want := []observed{
		{"blob", "created", 201}, {"blob", "written", 200}, {"blob", "copied", 200},
		{"blob", "missing", 404}, {"blob", "batch", 202}, {"blob", "nothing", 200}, {"blob", "", 400},
	}
	if obs.inFlight != 0 || len(obs.ended) != len(want) {
		t.Fatalf("in flight %d, ended %+v", obs.inFlight, obs.ended)
	}
	for i, w := range want {
		if obs.ended[i] != w {
			t.Errorf("request %d: observed %+v, want %+v", i, obs.ended[i], w)
		}
	}
}

// TestRequestLog: at debug level every request is one log line with its
// operation, status and error code; a SAS signature never reaches the
// log.
func TestRequestLog(t *testing.T) {
	var buf syncBuffer
	s := New(Config{
		Clock:    clock.NewFake(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)),
		Accounts: testAccounts,
		Logger:   slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	h := s.Wrap(Service{Name: "blob", Kind: auth.Blob, Handler: handlerFunc(func(w http.ResponseWriter, r *Request) error {
		r.Op = "getBlob"
		return azerr.New(azerr.BlobNotFound)
	})})
	do(h, http.MethodGet, "/devstoreaccount1/c/b?timeout=30", nil)
	// A SAS request (this one refused before routing).
	do(h, http.MethodGet, "/devstoreaccount1/c/b?sv=2021-12-02&sr=b&sp=r&sig=c2VjcmV0c2lnbmF0dXJl", nil)
	out := buf.String()
	if n := strings.Count(out, "msg=request "); n != 2 {
		t.Errorf("%d request lines:\n%s", n, out)
	}
	for _, want := range []string{"service=blob", "method=GET", "url=\"/devstoreaccount1/c/b?timeout=30\"", "operation=getBlob", "status=404", "error=BlobNotFound",
		"request_id=", "status=403", "sig=REDACTED"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "c2VjcmV0c2lnbmF0dXJl") {
		t.Errorf("SAS signature logged:\n%s", out)
	}

	// Not at info level.
	buf.Reset()
	s = New(Config{Accounts: testAccounts, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	h = s.Wrap(Service{Name: "blob", Kind: auth.Blob, Handler: handlerFunc(func(w http.ResponseWriter, r *Request) error { return nil })})
	do(h, http.MethodGet, "/devstoreaccount1/c/b", nil)
	if buf.String() != "" {
		t.Errorf("logged at info level: %s", buf.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}

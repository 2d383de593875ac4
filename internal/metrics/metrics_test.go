package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

// TestInstrument: each request counts once under the status it got,
// however the handler wrote it.
func TestInstrument(t *testing.T) {
	m := New(nil)
	handlers := map[string]http.HandlerFunc{
		"/none":  func(w http.ResponseWriter, r *http.Request) {},
		"/write": func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("x")) },
		"/404":   func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404); w.WriteHeader(500) },
		"/readfrom": func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.(io.ReaderFrom).ReadFrom(strings.NewReader("body"))
		},
		"/continue": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(100); w.WriteHeader(201) },
	}
	for path, h := range handlers {
		ih := m.Instrument("blob", h)
		for range 2 {
			rec := httptest.NewRecorder()
			ih.ServeHTTP(rec, httptest.NewRequest(http.MethodPut, path, nil))
		}
	}
	ih := m.Instrument("table", handlers["/none"])
	ih.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("PROPFIND", "/", nil))

	_, body := get(t, m.Handler(), "/metrics")
	for _, want := range []string{
		`cerulean_requests_total{code="200",method="PUT",service="blob"} 6`,
		`cerulean_requests_total{code="404",method="PUT",service="blob"} 2`,
		`cerulean_requests_total{code="201",method="PUT",service="blob"} 2`,
		`cerulean_requests_total{code="200",method="other",service="table"} 1`,
		`cerulean_request_duration_seconds_count{code="404",method="PUT",service="blob"} 2`,
		`cerulean_requests_in_flight{service="blob"} 0`,
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}

// TestInFlight: a request being answered shows in the gauge.
func TestInFlight(t *testing.T) {
	m := New(nil)
	inside := make(chan struct{})
	release := make(chan struct{})
	ih := m.Instrument("queue", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(inside)
		<-release
	}))
	done := make(chan struct{})
	go func() {
		ih.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		close(done)
	}()
	<-inside
	if _, body := get(t, m.Handler(), "/metrics"); !strings.Contains(body, `cerulean_requests_in_flight{service="queue"} 1`) {
		t.Error("in-flight request not counted")
	}
	close(release)
	<-done
}

// TestHealth: liveness always; readiness follows the store and shutdown.
func TestHealth(t *testing.T) {
	var storeErr error
	m := New(func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("readiness check without a deadline")
		}
		return storeErr
	})
	h := m.Handler()
	if code, body := get(t, h, "/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("healthz: %d %q", code, body)
	}
	if code, _ := get(t, h, "/readyz"); code != 200 {
		t.Fatalf("readyz with a working store: %d", code)
	}
	storeErr = errors.New("connection refused")
	if code, body := get(t, h, "/readyz"); code != 503 || !strings.Contains(body, "connection refused") {
		t.Fatalf("readyz with the store down: %d %q", code, body)
	}
	storeErr = nil
	m.Drain()
	if code, body := get(t, h, "/readyz"); code != 503 || !strings.Contains(body, "shutting down") {
		t.Fatalf("readyz while draining: %d %q", code, body)
	}
	if code, _ := get(t, h, "/healthz"); code != 200 {
		t.Fatalf("healthz while draining: %d", code)
	}
	if code, _ := get(t, h, "/nothing"); code != 404 {
		t.Fatalf("unknown path: %d", code)
	}
}

// BenchmarkInstrument is what metrics add to a request.
func BenchmarkInstrument(b *testing.B) {
	m := New(nil)
	h := m.Instrument("blob", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(201) }))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := httptest.NewRequest(http.MethodPut, "/", nil)
		w := httptest.NewRecorder()
		for pb.Next() {
			h.ServeHTTP(w, r)
		}
	})
}

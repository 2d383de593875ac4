package metrics

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

// TestObserver: requests count under their service, operation and
// status; in-flight requests show until they end.
func TestObserver(t *testing.T) {
	m := New(nil)
	for range 3 {
		m.Begin("blob")
		m.End("blob", "putBlob", 201, 2*time.Millisecond)
	}
	m.Begin("blob")
	m.End("blob", "putBlob", 412, time.Millisecond)
	m.Begin("queue")
	m.End("queue", "", 403, time.Millisecond)
	m.Begin("table") // still in flight
	m.SMB("CREATE", "STATUS_SUCCESS", time.Millisecond)
	m.SMB("CREATE", "STATUS_SUCCESS", time.Millisecond)
	m.SMB("CREATE", "STATUS_SHARING_VIOLATION", time.Millisecond)

	_, body := get(t, m.Handler(), "/metrics")
	for _, want := range []string{
		`cerulean_requests_total{code="201",operation="putBlob",service="blob"} 3`,
		`cerulean_requests_total{code="412",operation="putBlob",service="blob"} 1`,
		`cerulean_requests_total{code="403",operation="unknown",service="queue"} 1`,
		`cerulean_request_duration_seconds_bucket{code="201",operation="putBlob",service="blob",le="0.001"} 0`,
		`cerulean_request_duration_seconds_bucket{code="201",operation="putBlob",service="blob",le="0.0025"} 3`,
		`cerulean_requests_in_flight{service="blob"} 0`,
		`cerulean_requests_in_flight{service="table"} 1`,
		`cerulean_smb_requests_total{command="CREATE",status="STATUS_SUCCESS"} 2`,
		`cerulean_smb_requests_total{command="CREATE",status="STATUS_SHARING_VIOLATION"} 1`,
		`cerulean_smb_request_duration_seconds_count{command="CREATE",status="STATUS_SUCCESS"} 2`,
		"go_goroutines ",
		"process_cpu_seconds_total ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}

// TestOperations: the declared operations are listed before any request.
func TestOperations(t *testing.T) {
	m := New(nil)
	m.Operations("queue", []string{"putMessage", "clearMessages"})
	_, body := get(t, m.Handler(), "/metrics")
	for _, want := range []string{
		`cerulean_operation_info{operation="putMessage",service="queue"} 1`,
		`cerulean_operation_info{operation="clearMessages",service="queue"} 1`,
		`cerulean_requests_in_flight{service="queue"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(body, `operation="getMessages"`) {
		t.Error("an undeclared operation is listed")
	}
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

// BenchmarkObserve is what metrics add to a request.
func BenchmarkObserve(b *testing.B) {
	m := New(nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Begin("blob")
			m.End("blob", "putBlob", 201, time.Millisecond)
		}
	})
}

// TestRequestCounts: the counters of answered requests summed over
// status codes, by service and operation.
func TestRequestCounts(t *testing.T) {
	m := New(nil)
	m.End("blob", "getBlob", 200, time.Millisecond)
	m.End("blob", "getBlob", 404, time.Millisecond)
	m.End("queue", "putMessage", 201, time.Millisecond)
	got := m.RequestCounts()
	if got["blob getBlob"] != 2 || got["queue putMessage"] != 1 || len(got) != 2 {
		t.Fatalf("counts %v", got)
	}
}

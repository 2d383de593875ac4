// Package metrics is what an operator watches: Prometheus metrics of the
// requests each service answers, and the health endpoints a load
// balancer in front of several front ends polls. It is served on a port
// of its own (cerulean serve --metrics-port), apart from the storage
// endpoints, whose paths all belong to Azure's URL space.
//
//	GET /metrics  Prometheus text format: cerulean_requests_total,
//	              cerulean_request_duration_seconds,
//	              cerulean_requests_in_flight, Go runtime and process
//	GET /healthz  200 while the process serves (liveness)
//	GET /readyz   200 when the store answers a read within 2 s, 503 with
//	              the reason otherwise, and 503 once shutdown has begun
//	              (readiness: a balancer stops sending requests first)
package metrics

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// readyTimeout bounds the store read behind /readyz.
const readyTimeout = 2 * time.Second

// Metrics collects request metrics and serves them with the health
// endpoints. Its methods are safe for concurrent use.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inflight *prometheus.GaugeVec
	ready    func(context.Context) error
	draining atomic.Bool
	// series caches the children of requests and duration per label
	// set: WithLabelValues hashes its labels on every call.
	series sync.Map // seriesKey -> *series
}

type seriesKey struct {
	service, method string
	code            int
}

type series struct {
	count prometheus.Counter
	dur   prometheus.Observer
}

// New returns Metrics whose /readyz calls ready (nil: always ready).
func New(ready func(context.Context) error) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cerulean_requests_total",
			Help: "Requests answered, by service, HTTP method and status code.",
		}, []string{"service", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cerulean_request_duration_seconds",
			Help:    "Time from a request's headers to the end of its response, by service, HTTP method and status code.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"service", "method", "code"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cerulean_requests_in_flight",
			Help: "Requests being answered, by service.",
		}, []string{"service"}),
		ready: ready,
	}
	m.reg.MustRegister(m.requests, m.duration, m.inflight,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is where the metrics are registered; other packages may add
// theirs.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Drain makes /readyz answer 503 from now on: the server is shutting
// down.
func (m *Metrics) Drain() { m.draining.Store(true) }

// methods bounds the method label: anything else counts as "other".
var methods = map[string]string{
	http.MethodGet: http.MethodGet, http.MethodHead: http.MethodHead, http.MethodPut: http.MethodPut,
	http.MethodPost: http.MethodPost, http.MethodDelete: http.MethodDelete, http.MethodOptions: http.MethodOptions,
	http.MethodPatch: http.MethodPatch, "MERGE": "MERGE",
}

func (m *Metrics) seriesFor(service, method string, code int) *series {
	k := seriesKey{service, method, code}
	if s, ok := m.series.Load(k); ok {
		return s.(*series)
	}
	c := strconv.Itoa(code)
	s, _ := m.series.LoadOrStore(k, &series{
		count: m.requests.WithLabelValues(service, method, c),
		dur:   m.duration.WithLabelValues(service, method, c),
	})
	return s.(*series)
}

// Instrument counts and times the requests h answers for service.
func (m *Metrics) Instrument(service string, h http.Handler) http.Handler {
	inflight := m.inflight.WithLabelValues(service)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		inflight.Inc()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			inflight.Dec()
			code := sw.code
			if code == 0 {
				code = http.StatusOK // nothing written: net/http sends 200
			}
			method, ok := methods[r.Method]
			if !ok {
				method = "other"
			}
			s := m.seriesFor(service, method, code)
			s.count.Inc()
			s.dur.Observe(time.Since(start).Seconds())
		}()
		h.ServeHTTP(sw, r)
	})
}

// Handler serves /metrics, /healthz and /readyz.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if m.draining.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "shutting down\n")
			return
		}
		if m.ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
			defer cancel()
			if err := m.ready(ctx); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, "store: "+err.Error()+"\n")
				return
			}
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	return mux
}

// statusWriter records the status code a handler sends. It passes
// ReadFrom through (downloads keep net/http's copy path) and unwraps for
// http.ResponseController.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(w.ResponseWriter, r)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Package metrics is what an operator watches: Prometheus metrics of the
// requests each service answers, and the health endpoints a load
// balancer in front of several front ends polls. It is served on a port
// of its own (cerulean serve --metrics-port), apart from the storage
// endpoints, whose paths all belong to Azure's URL space.
//
//	GET /metrics  Prometheus text format: cerulean_requests_total and
//	              cerulean_request_duration_seconds by service,
//	              operation and status code, cerulean_requests_in_flight,
//	              cerulean_operation_info (1 for every operation a
//	              service routes, from its route table),
//	              cerulean_smb_requests_total and
//	              cerulean_smb_request_duration_seconds by command and
//	              NTSTATUS, Go runtime and process
//	GET /healthz  200 while the process serves (liveness)
//	GET /readyz   200 when the store answers a read within 2 s and the
//	              SMB listener accepts, 503 with the reason otherwise,
//	              and 503 once shutdown has begun
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
	opInfo   *prometheus.GaugeVec
	smbReqs  *prometheus.CounterVec
	smbDur   *prometheus.HistogramVec
	ready    func(context.Context) error
	draining atomic.Bool
	// series caches the children of requests and duration per label
	// set: WithLabelValues hashes its labels on every call.
	series sync.Map // seriesKey -> *series
	gauges sync.Map // service -> prometheus.Gauge
	smb    sync.Map // [2]string{command, status} -> *series
}

type seriesKey struct {
	service, op string
	code        int
}

type series struct {
	count prometheus.Counter
	dur   prometheus.Observer
}

// New returns Metrics whose /readyz calls ready (nil: always ready); its
// error is the body of the 503.
func New(ready func(context.Context) error) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cerulean_requests_total",
			Help: "Requests answered, by service, operation (as the services name them: putBlob, getMessages, ...; unknown when refused before routing) and status code.",
		}, []string{"service", "operation", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cerulean_request_duration_seconds",
			Help:    "Time from a request's headers to the end of its handler, by service, operation and status code.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"service", "operation", "code"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cerulean_requests_in_flight",
			Help: "Requests being answered, by service.",
		}, []string{"service"}),
		opInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cerulean_operation_info",
			Help: "1 for every operation a service routes (the operation label of cerulean_requests_total), whether or not it has been requested yet.",
		}, []string{"service", "operation"}),
		smbReqs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cerulean_smb_requests_total",
			Help: "SMB2 requests answered, by command and NTSTATUS of the reply (STATUS_PENDING for an asynchronous operation's interim reply).",
		}, []string{"command", "status"}),
		smbDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cerulean_smb_request_duration_seconds",
			Help:    "Time to answer an SMB2 request, by command and NTSTATUS.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"command", "status"}),
		ready: ready,
	}
	m.reg.MustRegister(m.requests, m.duration, m.inflight, m.opInfo, m.smbReqs, m.smbDur,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Operations declares the operations service routes (the names of its
// route table): each is listed in cerulean_operation_info from the
// start, so a dashboard sees every operation before its first request,
// and the service's in-flight gauge exists.
func (m *Metrics) Operations(service string, ops []string) {
	m.inflightOf(service)
	for _, op := range ops {
		m.opInfo.WithLabelValues(service, op).Set(1)
	}
}

// Drain makes /readyz answer 503 from now on: the server is shutting
// down.
func (m *Metrics) Drain() { m.draining.Store(true) }

// cached returns the series of key in c, made from labels the first time:
// WithLabelValues hashes its labels on every call.
func cached(c *sync.Map, key any, count *prometheus.CounterVec, dur *prometheus.HistogramVec, labels ...string) *series {
	if s, ok := c.Load(key); ok {
		return s.(*series)
	}
	s, _ := c.LoadOrStore(key, &series{count: count.WithLabelValues(labels...), dur: dur.WithLabelValues(labels...)})
	return s.(*series)
}

// Begin implements server.Observer: a request of service has started.
func (m *Metrics) Begin(service string) { m.inflightOf(service).Inc() }

// End implements server.Observer: a request of service, routed to op
// ("" if it failed before routing), was answered with code after d.
func (m *Metrics) End(service, op string, code int, d time.Duration) {
	m.inflightOf(service).Dec()
	if op == "" {
		op = "unknown"
	}
	s := cached(&m.series, seriesKey{service, op, code}, m.requests, m.duration, service, op, strconv.Itoa(code))
	s.count.Inc()
	s.dur.Observe(d.Seconds())
}

// SMB implements smb.Observer: an SMB2 request with command was answered
// with status after d.
func (m *Metrics) SMB(command, status string, d time.Duration) {
	s := cached(&m.smb, [2]string{command, status}, m.smbReqs, m.smbDur, command, status)
	s.count.Inc()
	s.dur.Observe(d.Seconds())
}

func (m *Metrics) inflightOf(service string) prometheus.Gauge {
	if g, ok := m.gauges.Load(service); ok {
		return g.(prometheus.Gauge)
	}
	g, _ := m.gauges.LoadOrStore(service, m.inflight.WithLabelValues(service))
	return g.(prometheus.Gauge)
}

// RequestCounts returns the requests answered so far by service and
// operation ("blob putBlob"), summed over status codes: the
// cerulean_requests_total counters, which the web console turns into
// rates.
func (m *Metrics) RequestCounts() map[string]float64 {
	out := map[string]float64{}
	mfs, err := m.reg.Gather()
	if err != nil {
		return out
	}
	for _, mf := range mfs {
		if mf.GetName() != "cerulean_requests_total" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			var svc, op string
			for _, l := range mt.GetLabel() {
				switch l.GetName() {
				case "service":
					svc = l.GetValue()
				case "operation":
					op = l.GetValue()
				}
			}
			out[svc+" "+op] += mt.GetCounter().GetValue()
		}
	}
	return out
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
				_, _ = io.WriteString(w, err.Error()+"\n")
				return
			}
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	return mux
}

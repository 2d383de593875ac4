package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// WebhookReceiver is an Event Grid webhook endpoint for benchmarks of
// blob events: it answers both validation handshakes ("Webhook event
// delivery", https://learn.microsoft.com/en-us/azure/event-grid/webhook-event-delivery:
// the CloudEvents OPTIONS request with WebHook-Allowed-Origin, the Event
// Grid SubscriptionValidationEvent with its validationCode) and 200 to
// every notification, and keeps each event's delivery latency: receipt
// time minus its eventTime (the server's clock on the same machine).
type WebhookReceiver struct {
	mu        sync.Mutex
	latencies []time.Duration
	requests  int
}

// Events and latencies since the last Take, and the notification
// requests they came in.
func (r *WebhookReceiver) Take() (lat []time.Duration, requests int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lat, requests = r.latencies, r.requests
	r.latencies, r.requests = nil, 0
	return lat, requests
}

func (r *WebhookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	if req.Method == http.MethodOptions {
		w.Header().Set("WebHook-Allowed-Origin", req.Header.Get("WebHook-Request-Origin"))
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var evs []struct {
		EventType string    `json:"eventType"`
		Type      string    `json:"type"`
		EventTime time.Time `json:"eventTime"`
		Time      time.Time `json:"time"`
		Data      struct {
			ValidationCode string `json:"validationCode"`
		} `json:"data"`
	}
	if len(body) > 0 && body[0] == '{' {
		body = append(append([]byte{'['}, body...), ']') // one CloudEvent
	}
	if err := json.Unmarshal(body, &evs); err != nil {
		http.Error(w, "not a JSON array of events", http.StatusBadRequest)
		return
	}
	if req.Header.Get("aeg-event-type") == "SubscriptionValidation" && len(evs) == 1 {
		_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": evs[0].Data.ValidationCode})
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	for _, ev := range evs {
		t := ev.EventTime
		if t.IsZero() {
			t = ev.Time
		}
		r.latencies = append(r.latencies, now.Sub(t))
	}
}

// Report prints, every period until stop is closed, the events received
// in it with their delivery latency's p50 and p99.
func (r *WebhookReceiver) Report(out io.Writer, period time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		lat, reqs := r.Take()
		if len(lat) == 0 {
			continue
		}
		slices.Sort(lat)
		q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
		fmt.Fprintf(out, "webhook: %d events in %d requests, delivery latency p50 %v p99 %v max %v\n",
			len(lat), reqs, q(0.50).Round(time.Millisecond), q(0.99).Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
	}
}

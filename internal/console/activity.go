package console

import (
	"sync"
	"time"

	"github.com/cerulean-storage/cerulean/internal/server"
)

// Activity keeps the last requests the service listeners answered, in a
// ring of fixed size (server.Config.Requests feeds Add). Adding costs a
// lock and a copy; nothing grows.
type Activity struct {
	mu    sync.Mutex
	ring  []server.Exchange
	next  int
	full  bool
	total uint64
}

// NewActivity returns a ring of the last n requests (n < 1: 500).
func NewActivity(n int) *Activity {
	if n < 1 {
		n = 500
	}
	return &Activity{ring: make([]server.Exchange, n)}
}

// Add records one answered request.
func (a *Activity) Add(e server.Exchange) {
	a.mu.Lock()
	a.ring[a.next] = e
	a.next++
	a.total++
	if a.next == len(a.ring) {
		a.next, a.full = 0, true
	}
	a.mu.Unlock()
}

// Last returns up to n of the kept requests for account ("" for all),
// newest first.
func (a *Activity) Last(account string, n int) []server.Exchange {
	a.mu.Lock()
	defer a.mu.Unlock()
	size := a.next
	if a.full {
		size = len(a.ring)
	}
	out := []server.Exchange{}
	for i := 0; i < size && len(out) < n; i++ {
		e := a.ring[(a.next-1-i+len(a.ring))%len(a.ring)]
		if account == "" || e.Account == account {
			out = append(out, e)
		}
	}
	return out
}

func entryOf(e server.Exchange) activityEntry {
	return activityEntry{Time: e.Start.UTC(), Service: e.Service, Method: e.Method, URL: e.URL, Operation: e.Op, Status: e.Status,
		ErrorCode: e.ErrorCode, RequestID: e.RequestID, Client: e.Client, DurationMS: float64(e.Duration.Microseconds()) / 1000}
}

// activityEntry is one request of the activity list.
type activityEntry struct {
	Time       time.Time `json:"time"`
	Service    string    `json:"service"`
	Method     string    `json:"method"`
	URL        string    `json:"url"`
	Operation  string    `json:"operation"`
	Status     int       `json:"status"`
	ErrorCode  string    `json:"errorCode,omitempty"`
	RequestID  string    `json:"requestId"`
	Client     string    `json:"client"`
	DurationMS float64   `json:"durationMs"`
}

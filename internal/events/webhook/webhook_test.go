package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/events"
)

func sub(url, schema string) *events.Subscription {
	return &events.Subscription{Name: "my-sub", Account: "acct", Endpoint: events.Endpoint{Type: "webhook", URL: url}, Schema: schema}
}

// TestSendStatuses: 200-204 deliver; 400, 401, 403 and 413 are
// permanent (not retried, as Event Grid's table of webhook errors); other
// codes are retried; each attempt carries the aeg-* headers and the
// schema's body and content type.
func TestSendStatuses(t *testing.T) {
	var code int
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, body = r, nil
		body, _ = io.ReadAll(r.Body)
		w.WriteHeader(code)
	}))
	defer srv.Close()
	s := Sender{Clock: clock.Real{}}
	ev := events.Event{ID: "e1", JSON: []byte(`{"id":"e1"}`)}
	for c, want := range map[int]string{200: "ok", 202: "ok", 204: "ok", 400: "permanent", 401: "permanent", 403: "permanent", 413: "permanent", 404: "retry", 429: "retry", 500: "retry", 503: "retry"} {
		code = c
		err := s.Send(context.Background(), sub(srv.URL, events.EventGridSchema), []events.Event{ev}, 2)
		var perm *events.PermanentError
		var se *events.StatusError
		switch {
		case want == "ok" && err != nil,
			want == "permanent" && !errors.As(err, &perm),
			want == "retry" && (err == nil || errors.As(err, &perm)),
			want != "ok" && (!errors.As(err, &se) || se.Code != c):
			t.Errorf("%d: %v, want %s", c, err, want)
		}
	}
	code = 200
	if err := s.Send(context.Background(), sub(srv.URL, events.EventGridSchema), []events.Event{ev}, 2); err != nil {
		t.Fatal(err)
	}
	if got.Header.Get("aeg-event-type") != "Notification" || got.Header.Get("aeg-delivery-count") != "2" || got.Header.Get("aeg-subscription-name") != "MY-SUB" ||
		got.Header.Get("Content-Type") != "application/json" || string(body) != `[{"id":"e1"}]` {
		t.Errorf("Event Grid schema: headers %v, body %s", got.Header, body)
	}
	if err := s.Send(context.Background(), sub(srv.URL, events.CloudEventSchema), []events.Event{ev}, 0); err != nil {
		t.Fatal(err)
	}
	if got.Header.Get("Content-Type") != "application/cloudevents+json; charset=utf-8" || string(body) != `{"id":"e1"}` {
		t.Errorf("CloudEvents: headers %v, body %s", got.Header, body)
	}
}

// TestSendTimeout: an endpoint that does not answer in time is a
// retried failure, not a hang.
func TestSendTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	s := Sender{Clock: clock.Real{}, Client: &http.Client{Timeout: 100 * time.Millisecond}}
	err := s.Send(context.Background(), sub(srv.URL, events.EventGridSchema), []events.Event{{JSON: []byte(`{}`)}}, 0)
	var perm *events.PermanentError
	if err == nil || errors.As(err, &perm) {
		t.Fatalf("no answer: %v, want a retried failure", err)
	}
}

// TestValidate: the Event Grid handshake passes only when the code is
// echoed; the CloudEvents one only with WebHook-Allowed-Origin.
func TestValidate(t *testing.T) {
	echo := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			if echo {
				w.Header().Set("WebHook-Allowed-Origin", r.Header.Get("WebHook-Request-Origin"))
			}
			return
		}
		var evs []struct {
			EventType string `json:"eventType"`
			Data      struct {
				ValidationCode string `json:"validationCode"`
			} `json:"data"`
		}
		if r.Header.Get("aeg-event-type") != "SubscriptionValidation" || json.NewDecoder(r.Body).Decode(&evs) != nil || len(evs) != 1 ||
			evs[0].EventType != "Microsoft.EventGrid.SubscriptionValidationEvent" || evs[0].Data.ValidationCode == "" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		code := evs[0].Data.ValidationCode
		if !echo {
			code += "x"
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": code})
	}))
	defer srv.Close()
	s := Sender{Clock: clock.Real{}}
	for _, schema := range []string{events.EventGridSchema, events.CloudEventSchema} {
		echo = true
		if err := s.Validate(context.Background(), sub(srv.URL, schema)); err != nil {
			t.Errorf("%s, answered right: %v", schema, err)
		}
		echo = false
		if err := s.Validate(context.Background(), sub(srv.URL, schema)); err == nil {
			t.Errorf("%s, answered wrong: validated", schema)
		}
	}
}

// TestSendBatch: a batching subscription's request is a JSON array of
// its events in either schema, CloudEvents as
// application/cloudevents-batch+json.
func TestSendBatch(t *testing.T) {
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		body, _ = io.ReadAll(r.Body)
	}))
	defer srv.Close()
	s := Sender{Clock: clock.Real{}}
	evs := []events.Event{{ID: "e1", JSON: []byte(`{"id":"e1"}`)}, {ID: "e2", JSON: []byte(`{"id":"e2"}`)}}
	for _, schema := range []string{events.EventGridSchema, events.CloudEventSchema} {
		sb := sub(srv.URL, schema)
		sb.Endpoint.MaxEventsPerBatch = 10
		if err := s.Send(context.Background(), sb, evs, 0); err != nil {
			t.Fatal(err)
		}
		want := "application/json"
		if schema == events.CloudEventSchema {
			want = "application/cloudevents-batch+json; charset=utf-8"
		}
		if got.Header.Get("Content-Type") != want || string(body) != `[{"id":"e1"},{"id":"e2"}]` {
			t.Errorf("%s: content type %q, body %s", schema, got.Header.Get("Content-Type"), body)
		}
		// A batch of one is still an array.
		if err := s.Send(context.Background(), sb, evs[:1], 0); err != nil || string(body) != `[{"id":"e1"}]` {
			t.Errorf("%s: one event in batch mode: %v %s", schema, err, body)
		}
	}
}

// Package webhook is the HTTP side of blob events (internal/events): the
// Sender that POSTs events to webhooks as Event Grid does ("Webhook event
// delivery", "Event Grid message delivery and retry"), and the admin
// endpoint listing the subscriptions and their delivery state.
package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/events"
)

// Timeout is how long a webhook has to answer, as Event Grid waits 30
// seconds before it counts an attempt failed.
const Timeout = 30 * time.Second

// Sender delivers to webhooks.
type Sender struct {
	Client *http.Client // nil: one with Timeout
	Clock  clock.Clock
}

func (s Sender) client() *http.Client {
	if s.Client != nil {
		return s.Client
	}
	return defaultClient
}

// defaultClient keeps two subscriptions' lanes of idle connections a
// host (net/http's default is 2): a subscription that is behind has
// events.Lanes requests in flight, which would otherwise open and close
// a connection for most of them.
var defaultClient = &http.Client{Timeout: Timeout, Transport: func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 2 * events.Lanes
	return t
}()}

// validationOrigin is the origin Event Grid names in the CloudEvents
// abuse-protection handshake.
const validationOrigin = "eventgrid.azure.net"

// Validate runs the endpoint validation of the subscription's schema.
// Event Grid schema: a POST of a Microsoft.EventGrid.SubscriptionValidationEvent
// (aeg-event-type: SubscriptionValidation) that the endpoint answers with
// 200 and {"validationResponse": <the validationCode>}. CloudEvents: the
// CloudEvents webhook abuse protection, an OPTIONS request with
// WebHook-Request-Origin that the endpoint answers with 200 and
// WebHook-Allowed-Origin naming that origin (or *).
func (s Sender) Validate(ctx context.Context, sub *events.Subscription) error {
	if sub.Schema == events.CloudEventSchema {
		return s.validateCloudEvents(ctx, sub)
	}
	code := randomID()
	body, err := json.Marshal([]map[string]any{{
		"id":              randomID(),
		"topic":           events.TopicPrefix + sub.Account,
		"subject":         "",
		"data":            map[string]string{"validationCode": code},
		"eventType":       "Microsoft.EventGrid.SubscriptionValidationEvent",
		"eventTime":       s.Clock.Now().UTC().Format(time.RFC3339Nano),
		"metadataVersion": "1",
		"dataVersion":     "2",
	}})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.Endpoint.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("aeg-event-type", "SubscriptionValidation")
	req.Header.Set("aeg-subscription-name", strings.ToUpper(sub.Name))
	req.Header.Set("aeg-metadata-version", "1")
	req.Header.Set("aeg-data-version", "2")
	resp, err := s.client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the webhook answered the validation event with %d", resp.StatusCode)
	}
	var answer struct {
		ValidationResponse string `json:"validationResponse"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil || answer.ValidationResponse != code {
		return fmt.Errorf("the webhook did not echo the validationCode (want {\"validationResponse\":%q}, got %.200q)", code, raw)
	}
	return nil
}

func (s Sender) validateCloudEvents(ctx context.Context, sub *events.Subscription) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, sub.Endpoint.URL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("WebHook-Request-Origin", validationOrigin)
	resp, err := s.client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the webhook answered the CloudEvents validation (OPTIONS) with %d", resp.StatusCode)
	}
	if got := resp.Header.Get("WebHook-Allowed-Origin"); got != validationOrigin && got != "*" {
		return fmt.Errorf("the webhook's WebHook-Allowed-Origin is %q, not %q or *", got, validationOrigin)
	}
	return nil
}

// Send POSTs evs: in the Event Grid schema an array of the events
// (application/json; one unless the subscription batches), in
// CloudEvents one event (application/cloudevents+json) or, for a
// batching subscription, an array (application/cloudevents-batch+json,
// the CloudEvents HTTP binding's batched mode), with Event Grid's aeg-*
// headers. 200 to 204 is success; 400, 401, 403 and 413 are not retried
// (Event Grid's table of webhook errors it does not retry); anything
// else, and no answer within Timeout, is retried.
func (s Sender) Send(ctx context.Context, sub *events.Subscription, evs []events.Event, attempt int) error {
	if len(evs) == 0 {
		return nil
	}
	body, ctype := evs[0].JSON, "application/cloudevents+json; charset=utf-8"
	if sub.Schema != events.CloudEventSchema || sub.Batched() {
		body = []byte{'['}
		for i, ev := range evs {
			if i > 0 {
				body = append(body, ',')
			}
			body = append(body, ev.JSON...)
		}
		body = append(body, ']')
		ctype = "application/json"
		if sub.Schema == events.CloudEventSchema {
			ctype = "application/cloudevents-batch+json; charset=utf-8"
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.Endpoint.URL, bytes.NewReader(body))
	if err != nil {
		return &events.PermanentError{Err: err}
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("aeg-event-type", "Notification")
	req.Header.Set("aeg-subscription-name", strings.ToUpper(sub.Name))
	req.Header.Set("aeg-delivery-count", strconv.Itoa(attempt))
	req.Header.Set("aeg-metadata-version", "1")
	req.Header.Set("aeg-data-version", "")
	resp, err := s.client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch c := resp.StatusCode; {
	case c >= 200 && c <= 204:
		return nil
	case c == 400 || c == 401 || c == 403 || c == 413:
		return &events.PermanentError{Err: &events.StatusError{Code: c}}
	default:
		return &events.StatusError{Code: c}
	}
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	s := hex.EncodeToString(b)
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// Handler is the admin endpoint of event subscriptions, relative to
// where it is mounted (under server.ReservedPrefix):
//
//	GET /events   200, {"subscriptions": [events.Status, ...]}
//
// With d nil (no subscriptions configured) it answers 404.
func Handler(d *events.Deliverer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/events" {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "no such endpoint: want GET /events"})
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			w.WriteHeader(http.StatusMethodNotAllowed)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "use GET"})
			return
		}
		if d == nil {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "no event subscriptions: start the server with --event-subscriptions or --event-webhook"})
			return
		}
		st, err := d.Status(r.Context())
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		for i := range st {
			// A webhook URL's query often carries a key (an Azure
			// Function's code=): not shown.
			if u := st[i].Endpoint.URL; strings.Contains(u, "?") {
				st[i].Endpoint.URL = u[:strings.Index(u, "?")] + "?(redacted)"
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"subscriptions": st})
	})
}

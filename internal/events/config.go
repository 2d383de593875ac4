// Package events delivers blob events, as Azure Event Grid delivers
// them for a storage account ("Azure Blob Storage as an Event Grid
// source"), from the account's change log (internal/changelog): the one
// durable, ordered record of its committed changes.
//
// Subscriptions are configured at start (ParseSubscriptions, the
// --event-subscriptions file). Each has a Deliverer loop (deliver.go)
// that reads the log after its durable position, formats the records it
// selects as Event Grid or CloudEvents 1.0 events (event.go) and hands
// them to a Sender: a webhook (internal/events/webhook, which does the
// HTTP) or a storage queue of a served account (QueueSender here, through
// the Queue domain). The position advances, in a kv transaction, only
// after a delivery succeeded: delivery is at least once and in log order
// per subscription.
//
// This package is below the HTTP line: it does not import net/http.
package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Schemas a subscription may deliver in ("eventDeliverySchema").
const (
	EventGridSchema   = "EventGridSchema"
	CloudEventSchema  = "CloudEventSchemaV1_0"
	eventTypePrefix   = "Microsoft.Storage."
	destWebhook       = "webhook"
	destStorageQueue  = "storagequeue"
	maxSubscriptions  = 100
	defaultMaxAttempt = 30
	defaultTTLMinutes = 1440
	defaultBatchKB    = 64
	maxBatchEvents    = 5000
	maxBatchKB        = 1024
)

// Event types a subscription may include: the Blob Storage events of
// Event Grid that the change log records (the last four on hierarchical
// accounts only).
var knownTypes = map[string]bool{
	eventTypePrefix + "BlobCreated":      true,
	eventTypePrefix + "BlobDeleted":      true,
	eventTypePrefix + "BlobTierChanged":  true,
	eventTypePrefix + "BlobRenamed":      true,
	eventTypePrefix + "DirectoryCreated": true,
	eventTypePrefix + "DirectoryRenamed": true,
	eventTypePrefix + "DirectoryDeleted": true,
}

// Subscription is one event subscription: which account's events, which
// of them, where to and in which schema.
type Subscription struct {
	// Name identifies the subscription (3-64 letters, digits and
	// hyphens, as Event Grid's event subscription names); its delivery
	// position is stored under it.
	Name    string `json:"name"`
	Account string `json:"account"`
	// Endpoint is where events go.
	Endpoint Endpoint `json:"endpoint"`
	Filter   Filter   `json:"filter"`
	// Schema is EventGridSchema (default) or CloudEventSchemaV1_0.
	Schema string `json:"eventDeliverySchema,omitempty"`
	// RetryPolicy bounds the attempts at one event; past either bound
	// the event is dropped (no dead-letter destination yet), as Event
	// Grid drops without one.
	RetryPolicy RetryPolicy `json:"retryPolicy"`
	// DeadLetter, when set, keeps the events given up on as blobs in a
	// container of the subscription's account (nil: they are dropped).
	DeadLetter *DeadLetter `json:"deadLetterDestination,omitempty"`
}

// DeadLetter is a subscription's dead-letter destination.
type DeadLetter struct {
	// Container is a container of the subscription's account; it must
	// exist when an event is dead-lettered, or the event is dropped.
	Container string `json:"container"`
}

// Endpoint is a subscription's destination.
type Endpoint struct {
	// Type is "webhook" or "storagequeue".
	Type string `json:"type"`
	// URL is the webhook's URL.
	URL string `json:"url,omitempty"`
	// Queue is the storage queue's name, in the subscription's account.
	Queue string `json:"queueName,omitempty"`
	// MaxEventsPerBatch and PreferredBatchSizeInKilobytes are a webhook's
	// batching ("Event Grid message delivery and retry", "Batched event
	// delivery"): up to MaxEventsPerBatch events (1-5000, default 1) of
	// up to about PreferredBatchSizeInKilobytes KiB together (1-1024,
	// default 64) in one request; an event larger than that goes alone.
	MaxEventsPerBatch             int `json:"maxEventsPerBatch,omitempty"`
	PreferredBatchSizeInKilobytes int `json:"preferredBatchSizeInKilobytes,omitempty"`
}

// Batched reports whether the subscription delivers in batches (more
// than one event per request allowed): its webhook requests then carry
// arrays in either schema.
func (s *Subscription) Batched() bool { return s.Endpoint.MaxEventsPerBatch > 1 }

// batchLimits are the subscription's batch bounds: events and bytes.
func (s *Subscription) batchLimits() (int, int) {
	n, kb := s.Endpoint.MaxEventsPerBatch, s.Endpoint.PreferredBatchSizeInKilobytes
	if n < 1 {
		n = 1
	}
	if kb < 1 {
		kb = defaultBatchKB
	}
	return n, kb << 10
}

// RetryPolicy is Event Grid's retry policy of a subscription.
type RetryPolicy struct {
	MaxDeliveryAttempts      int `json:"maxDeliveryAttempts,omitempty"`
	EventTimeToLiveInMinutes int `json:"eventTimeToLiveInMinutes,omitempty"`
}

var (
	nameRE      = regexp.MustCompile(`^[A-Za-z0-9-]{3,64}$`)
	containerRE = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9]|-[a-z0-9]){2,62}$`)
)

// ParseSubscriptions reads a subscriptions file: a JSON object
// {"subscriptions": [...]} or an array of subscriptions. accountExists
// tells the served accounts. Unknown fields, unknown event types,
// invalid advanced filters and duplicate names are errors, so that a
// typo does not silently deliver something else.
func ParseSubscriptions(data []byte, accountExists func(string) bool) ([]Subscription, error) {
	data = bytes.TrimSpace(data)
	var subs []Subscription
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if len(data) > 0 && data[0] == '[' {
		if err := dec.Decode(&subs); err != nil {
			return nil, fmt.Errorf("event subscriptions: %v", err)
		}
	} else {
		var doc struct {
			Subscriptions []Subscription `json:"subscriptions"`
		}
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("event subscriptions: %v", err)
		}
		subs = doc.Subscriptions
	}
	if len(subs) > maxSubscriptions {
		return nil, fmt.Errorf("event subscriptions: %d subscriptions, at most %d", len(subs), maxSubscriptions)
	}
	seen := map[string]bool{}
	for i := range subs {
		s := &subs[i]
		if err := s.normalize(accountExists); err != nil {
			return nil, fmt.Errorf("event subscription %d (%q): %v", i, s.Name, err)
		}
		if seen[strings.ToLower(s.Name)] {
			return nil, fmt.Errorf("event subscription %q: the name is used twice", s.Name)
		}
		seen[strings.ToLower(s.Name)] = true
	}
	return subs, nil
}

// Webhook is the subscription of --event-webhook url: every blob event
// of account, Event Grid schema.
func Webhook(account, url string, i int) (Subscription, error) {
	s := Subscription{Name: fmt.Sprintf("webhook-%d-%s", i, account), Account: account, Endpoint: Endpoint{Type: destWebhook, URL: url}}
	if len(s.Name) > 64 {
		s.Name = s.Name[:64]
	}
	return s, s.normalize(func(string) bool { return true })
}

func (s *Subscription) normalize(accountExists func(string) bool) error {
	if !nameRE.MatchString(s.Name) {
		return errors.New("name must be 3-64 letters, digits and hyphens")
	}
	if s.Account == "" || (accountExists != nil && !accountExists(s.Account)) {
		return fmt.Errorf("account %q is not served", s.Account)
	}
	switch strings.ToLower(s.Endpoint.Type) {
	case destWebhook:
		s.Endpoint.Type = destWebhook
		u := s.Endpoint.URL
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return fmt.Errorf("webhook url %q must be http:// or https://", u)
		}
		if n := s.Endpoint.MaxEventsPerBatch; n == 0 {
			s.Endpoint.MaxEventsPerBatch = 1
		} else if n < 1 || n > maxBatchEvents {
			return fmt.Errorf("maxEventsPerBatch %d: want 1-%d", n, maxBatchEvents)
		}
		if kb := s.Endpoint.PreferredBatchSizeInKilobytes; kb == 0 {
			s.Endpoint.PreferredBatchSizeInKilobytes = defaultBatchKB
		} else if kb < 1 || kb > maxBatchKB {
			return fmt.Errorf("preferredBatchSizeInKilobytes %d: want 1-%d", kb, maxBatchKB)
		}
	case destStorageQueue:
		s.Endpoint.Type = destStorageQueue
		if s.Endpoint.Queue == "" {
			return errors.New("a storagequeue endpoint needs queueName")
		}
		if s.Endpoint.MaxEventsPerBatch != 0 || s.Endpoint.PreferredBatchSizeInKilobytes != 0 {
			// Event Grid's batching is a webhook setting; a queue takes
			// one message per event.
			return errors.New("maxEventsPerBatch and preferredBatchSizeInKilobytes apply to webhook endpoints only")
		}
	default:
		return fmt.Errorf("endpoint type %q: want webhook or storagequeue", s.Endpoint.Type)
	}
	switch s.Schema {
	case "", EventGridSchema:
		s.Schema = EventGridSchema
	case CloudEventSchema:
	default:
		return fmt.Errorf("eventDeliverySchema %q: want %s or %s", s.Schema, EventGridSchema, CloudEventSchema)
	}
	if s.DeadLetter != nil && !containerRE.MatchString(s.DeadLetter.Container) {
		return fmt.Errorf("deadLetterDestination container %q is not a container name", s.DeadLetter.Container)
	}
	for _, t := range s.Filter.IncludedEventTypes {
		if !knownTypes[t] {
			return fmt.Errorf("event type %q is not a blob event this server delivers (Microsoft.Storage.BlobCreated, BlobDeleted, BlobTierChanged, BlobRenamed, DirectoryCreated, DirectoryRenamed, DirectoryDeleted)", t)
		}
	}
	if err := parseAdvanced(s.Filter.AdvancedFilters); err != nil {
		return err
	}
	if p := s.RetryPolicy.MaxDeliveryAttempts; p == 0 {
		s.RetryPolicy.MaxDeliveryAttempts = defaultMaxAttempt
	} else if p < 1 || p > 30 {
		return fmt.Errorf("maxDeliveryAttempts %d: want 1-30", p)
	}
	if m := s.RetryPolicy.EventTimeToLiveInMinutes; m == 0 {
		s.RetryPolicy.EventTimeToLiveInMinutes = defaultTTLMinutes
	} else if m < 1 || m > 1440 {
		return fmt.Errorf("eventTimeToLiveInMinutes %d: want 1-1440", m)
	}
	return nil
}

// Matches reports whether the subscription selects an event of type
// typ (full name) on subject.
func (s *Subscription) Matches(typ, subject string) bool {
	if !knownTypes[typ] {
		return false
	}
	if len(s.Filter.IncludedEventTypes) > 0 {
		ok := false
		for _, t := range s.Filter.IncludedEventTypes {
			ok = ok || t == typ
		}
		if !ok {
			return false
		}
	}
	subj, begins, ends := subject, s.Filter.SubjectBeginsWith, s.Filter.SubjectEndsWith
	if !s.Filter.IsSubjectCaseSensitive {
		subj, begins, ends = strings.ToLower(subj), strings.ToLower(begins), strings.ToLower(ends)
	}
	return strings.HasPrefix(subj, begins) && strings.HasSuffix(subj, ends)
}

// ParseFilters checks the subscription's advanced filters and readies
// them; ParseSubscriptions does it for the subscriptions of a file,
// callers building a Subscription otherwise must.
func (s *Subscription) ParseFilters() error { return parseAdvanced(s.Filter.AdvancedFilters) }

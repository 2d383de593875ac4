package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/events"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// egEvent is a delivered Event Grid event, with the fields of Event
// Grid's Blob Storage event schema.
type egEvent struct {
	Topic           string `json:"topic"`
	Subject         string `json:"subject"`
	EventType       string `json:"eventType"`
	EventTime       string `json:"eventTime"`
	ID              string `json:"id"`
	DataVersion     string `json:"dataVersion"`
	MetadataVersion string `json:"metadataVersion"`
	// CloudEvents fields.
	Source      string `json:"source"`
	Type        string `json:"type"`
	SpecVersion string `json:"specversion"`
	Data        struct {
		API                string            `json:"api"`
		ClientRequestID    string            `json:"clientRequestId"`
		RequestID          string            `json:"requestId"`
		ETag               string            `json:"eTag"`
		ContentType        string            `json:"contentType"`
		ContentLength      *int64            `json:"contentLength"`
		BlobType           string            `json:"blobType"`
		URL                string            `json:"url"`
		Sequencer          string            `json:"sequencer"`
		StorageDiagnostics map[string]string `json:"storageDiagnostics"`
	} `json:"data"`
	// deliveryCount is the request's aeg-delivery-count.
	deliveryCount string
}

// receiver is a webhook on 127.0.0.1 that answers Event Grid's
// validation handshake and records what it is sent.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	// validations counts validation requests; echo: answer them right.
	validations int
	echo        bool
	// fail: the next fail notifications are answered 503.
	fail int
	// failed are the notifications answered 503, got those answered 200;
	// raw are got as sent, one JSON object each.
	failed, got []egEvent
	raw         []json.RawMessage
	// firstKind is the aeg-event-type of the first request.
	firstKind string
	// cloud: expect the CloudEvents schema.
	cloud bool
	// status, if set, answers an event with a status other than 200.
	status func(ev egEvent) int
	// batch: accept requests of several events (a batching
	// subscription); sizes are the requests answered 200, by their
	// number of events.
	batch bool
	sizes []int
	// hold, while open, keeps notifications waiting; delay holds each
	// one this long before it is answered; inflight and most count the
	// requests in progress (and the most at once).
	hold           chan struct{}
	delay          time.Duration
	inflight, most atomic.Int32
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{echo: true}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	n := r.inflight.Add(1)
	defer r.inflight.Add(-1)
	for m := r.most.Load(); n > m && !r.most.CompareAndSwap(m, n); m = r.most.Load() {
	}
	if req.Header.Get("aeg-event-type") == "Notification" {
		if r.hold != nil {
			<-r.hold
		}
		time.Sleep(r.delay)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	kind := req.Header.Get("aeg-event-type")
	if r.firstKind == "" {
		r.firstKind = kind + req.Method
	}
	if req.Method == http.MethodOptions {
		r.validations++
		if r.echo {
			w.Header().Set("WebHook-Allowed-Origin", req.Header.Get("WebHook-Request-Origin"))
		}
		return
	}
	body, _ := io.ReadAll(req.Body)
	if kind == "SubscriptionValidation" {
		r.validations++
		var evs []struct {
			EventType string `json:"eventType"`
			Data      struct {
				ValidationCode string `json:"validationCode"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &evs); err != nil || len(evs) != 1 || evs[0].EventType != "Microsoft.EventGrid.SubscriptionValidationEvent" {
			http.Error(w, "bad validation event", http.StatusBadRequest)
			return
		}
		code := evs[0].Data.ValidationCode
		if !r.echo {
			code = "wrong"
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": code})
		return
	}
	var evs []egEvent
	var raws []json.RawMessage
	switch {
	case r.cloud && r.batch:
		if req.Header.Get("Content-Type") != "application/cloudevents-batch+json; charset=utf-8" || json.Unmarshal(body, &evs) != nil || json.Unmarshal(body, &raws) != nil || len(evs) == 0 {
			http.Error(w, "not a batch of CloudEvents", http.StatusBadRequest)
			return
		}
	case r.cloud:
		var ev egEvent
		if req.Header.Get("Content-Type") != "application/cloudevents+json; charset=utf-8" || json.Unmarshal(body, &ev) != nil {
			http.Error(w, "not a CloudEvent", http.StatusBadRequest)
			return
		}
		evs, raws = []egEvent{ev}, []json.RawMessage{body}
	case kind != "Notification" || json.Unmarshal(body, &evs) != nil || json.Unmarshal(body, &raws) != nil || len(evs) == 0 || (len(evs) != 1 && !r.batch):
		http.Error(w, "not a notification of one event", http.StatusBadRequest)
		return
	}
	evs[0].deliveryCount = req.Header.Get("aeg-delivery-count")
	if r.status != nil {
		if code := r.status(evs[0]); code != http.StatusOK {
			r.failed = append(r.failed, evs[0])
			http.Error(w, "refused", code)
			return
		}
	}
	if r.fail > 0 {
		r.fail--
		r.failed = append(r.failed, evs[0])
		http.Error(w, "induced failure", http.StatusServiceUnavailable)
		return
	}
	r.got = append(r.got, evs...)
	r.raw = append(r.raw, raws...)
	r.sizes = append(r.sizes, len(evs))
}

// events returns what was delivered once n events were, failing after
// a while.
func (r *receiver) wait(t *testing.T, n int) []egEvent {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		got := append([]egEvent(nil), r.got...)
		r.mu.Unlock()
		if len(got) >= n {
			// Anything more would show within a few polls.
			time.Sleep(300 * time.Millisecond)
			r.mu.Lock()
			got = append([]egEvent(nil), r.got...)
			r.mu.Unlock()
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook got %d events, want %d: %+v", len(got), n, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// evStart starts a server with subs on cfg (backendConfig's store when
// nil), quick polls and a short retry schedule.
func evStart(t *testing.T, cfg *app.Config, subs ...events.Subscription) (*app.App, *azblob.Client) {
	t.Helper()
	if cfg == nil {
		c := backendConfig(t)
		cfg = &c
	}
	c := *cfg
	c.BlobPort, c.QueuePort, c.TablePort, c.FilePort = 0, 0, -1, -1
	c.Clock, c.GCEvery = clock.NewFake(time.Now()), time.Hour
	c.Events = app.EventsConfig{Subscriptions: subs, Poll: 20 * time.Millisecond, Retry: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond}, LeaseTTL: 2 * time.Second}
	a, err := app.Start(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, done := evClosed.Load(a); done {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	return a, client(t, a.BlobURL, app.DevKey)
}

func webhookSub(name, url string) events.Subscription {
	return events.Subscription{Name: name, Account: app.DevAccount, Endpoint: events.Endpoint{Type: "webhook", URL: url}, Schema: events.EventGridSchema,
		RetryPolicy: events.RetryPolicy{MaxDeliveryAttempts: 30, EventTimeToLiveInMinutes: 1440}}
}

// write is one committed write and what its event must say.
type write struct {
	typ, blob, api, etag, requestID string
	length                          int64
}

// evWorkload makes creates, an overwrite and deletes in container ctr
// and returns them in commit order.
func evWorkload(t *testing.T, c *azblob.Client, ctr string, names ...string) []write {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CreateContainer(ctx, ctr, nil); err != nil && !strings.Contains(err.Error(), "ContainerAlreadyExists") {
		t.Fatal(err)
	}
	var out []write
	for i, n := range names {
		body := bytes.Repeat([]byte{'x'}, 10+i)
		r, err := c.UploadBuffer(ctx, ctr, n, body, nil)
		must(t, err)
		out = append(out, write{"Microsoft.Storage.BlobCreated", n, "PutBlob", strings.Trim(string(*r.ETag), `"`), *r.RequestID, int64(len(body))})
	}
	// Overwrite the first, delete the last.
	r, err := c.UploadBuffer(ctx, ctr, names[0], []byte("again"), nil)
	must(t, err)
	out = append(out, write{"Microsoft.Storage.BlobCreated", names[0], "PutBlob", strings.Trim(string(*r.ETag), `"`), *r.RequestID, 5})
	d, err := c.DeleteBlob(ctx, ctr, names[len(names)-1], nil)
	must(t, err)
	out = append(out, write{typ: "Microsoft.Storage.BlobDeleted", blob: names[len(names)-1], api: "DeleteBlob", requestID: *d.RequestID})
	return out
}

// checkEvents checks that got are exactly the events of want, in order,
// as Event Grid's Blob Storage schema describes them.
func checkEvents(t *testing.T, a *app.App, ctr string, got []egEvent, want []write, cloud bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d: %+v", len(got), len(want), got)
	}
	prevSeq := ""
	for i, w := range want {
		g := got[i]
		typ, topic := g.EventType, g.Topic
		if cloud {
			typ, topic = g.Type, g.Source
			if g.SpecVersion != "1.0" {
				t.Errorf("event %d: specversion %q", i, g.SpecVersion)
			}
		} else if g.MetadataVersion != "1" {
			t.Errorf("event %d: metadataVersion %q", i, g.MetadataVersion)
		}
		if typ != w.typ || g.Subject != "/blobServices/default/containers/"+ctr+"/blobs/"+w.blob || g.Data.API != w.api || g.Data.RequestID != w.requestID {
			t.Errorf("event %d: %s %s api %s request %s, want %s %s %s %s", i, typ, g.Subject, g.Data.API, g.Data.RequestID, w.typ, w.blob, w.api, w.requestID)
		}
		if topic != events.TopicPrefix+app.DevAccount || !strings.HasSuffix(topic, "/providers/Microsoft.Storage/storageAccounts/"+app.DevAccount) {
			t.Errorf("event %d: topic %q", i, topic)
		}
		if g.Data.URL != a.BlobURL+"/"+ctr+"/"+w.blob || g.Data.BlobType != "BlockBlob" || g.Data.StorageDiagnostics["batchId"] == "" || g.ID == "" {
			t.Errorf("event %d: url %q blobType %q diagnostics %v id %q", i, g.Data.URL, g.Data.BlobType, g.Data.StorageDiagnostics, g.ID)
		}
		if w.typ == "Microsoft.Storage.BlobCreated" && (g.Data.ETag != w.etag || g.Data.ContentLength == nil || *g.Data.ContentLength != w.length) {
			t.Errorf("event %d: eTag %q contentLength %v, want %q %d", i, g.Data.ETag, g.Data.ContentLength, w.etag, w.length)
		}
		if g.Data.Sequencer <= prevSeq {
			t.Errorf("event %d: sequencer %q does not follow %q", i, g.Data.Sequencer, prevSeq)
		}
		prevSeq = g.Data.Sequencer
	}
}

// TestEventsWebhook: a webhook subscription is validated by the
// handshake before any event, then gets every committed write once, in
// commit order, in Event Grid's Blob Storage schema; a delivery answered
// 503 is retried (aeg-delivery-count 1) before the next event, and
// nothing is delivered twice once accepted. The admin endpoint shows the
// position at the log's end.
func TestEventsWebhook(t *testing.T) {
	r := newReceiver(t)
	r.fail = 1
	a, c := evStart(t, nil, webhookSub("all-blobs", r.srv.URL))
	want := evWorkload(t, c, "evc", "a.txt", "b.txt", "c.bin")
	got := r.wait(t, len(want))
	checkEvents(t, a, "evc", got, want, false)
	r.mu.Lock()
	if r.firstKind != "SubscriptionValidationPOST" || r.validations != 1 {
		t.Errorf("first request %q, %d validations: want one SubscriptionValidation POST first", r.firstKind, r.validations)
	}
	if len(r.failed) != 1 || r.failed[0].ID != got[0].ID || r.failed[0].deliveryCount != "0" || got[0].deliveryCount != "1" || got[1].deliveryCount != "0" {
		t.Errorf("the failed delivery %+v; first delivered count %q: want event 0 failed at count 0 and delivered at 1", r.failed, got[0].deliveryCount)
	}
	r.mu.Unlock()
	ids := map[string]bool{}
	for _, g := range got {
		if ids[g.ID] {
			t.Errorf("event %s delivered twice", g.ID)
		}
		ids[g.ID] = true
	}
	st := evStatus(t, a)
	if len(st) != 1 || st[0].Position != st[0].LogLast || st[0].LogLast < uint64(len(want)) || !st[0].Validated || st[0].Process.Delivered != uint64(len(want)) || st[0].Process.Failures != 1 {
		t.Errorf("status %+v: want position at the log's end, validated, %d delivered, 1 failure", st, len(want))
	}
}

// evStatus reads GET /.cerulean/events.
func evStatus(t *testing.T, a *app.App) []events.Status {
	t.Helper()
	base := a.BlobURL[:strings.LastIndexByte(a.BlobURL, '/')]
	resp, err := http.Get(base + server.ReservedPrefix + "/events")
	must(t, err)
	defer resp.Body.Close()
	var doc struct {
		Subscriptions []events.Status `json:"subscriptions"`
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /.cerulean/events: %d", resp.StatusCode)
	}
	must(t, json.NewDecoder(resp.Body).Decode(&doc))
	return doc.Subscriptions
}

// TestEventsFilters: event type and subject filters select the events a
// subscription gets (subjects case-insensitively by default), and the
// CloudEvents schema is delivered after its OPTIONS handshake.
func TestEventsFilters(t *testing.T) {
	deletes, logs, cloud := newReceiver(t), newReceiver(t), newReceiver(t)
	cloud.cloud = true
	del := webhookSub("deletes", deletes.srv.URL)
	del.Filter.IncludedEventTypes = []string{"Microsoft.Storage.BlobDeleted"}
	lg := webhookSub("logs", logs.srv.URL)
	lg.Filter = events.Filter{SubjectBeginsWith: "/blobServices/default/containers/evf/blobs/LOGS/", SubjectEndsWith: ".txt"}
	ce := webhookSub("cloud", cloud.srv.URL)
	ce.Schema = events.CloudEventSchema
	a, c := evStart(t, nil, del, lg, ce)
	want := evWorkload(t, c, "evf", "logs/a.txt", "logs/b.bin", "other/c.txt", "logs/d.txt")
	// all: 4 creates, the overwrite of logs/a.txt, the delete of logs/d.txt.
	checkEvents(t, a, "evf", cloud.wait(t, len(want)), want, true)
	checkEvents(t, a, "evf", deletes.wait(t, 1), want[5:], false)
	checkEvents(t, a, "evf", logs.wait(t, 4), []write{want[0], want[3], want[4], want[5]}, false)
	cloud.mu.Lock()
	defer cloud.mu.Unlock()
	if cloud.firstKind != "OPTIONS" || cloud.validations != 1 {
		t.Errorf("CloudEvents handshake: first request %q, %d validations", cloud.firstKind, cloud.validations)
	}
}

// TestEventsValidationRefused: a webhook that does not echo the
// validation code gets no event, and the admin endpoint says why; once
// it answers right, the events committed meanwhile arrive.
func TestEventsValidationRefused(t *testing.T) {
	r := newReceiver(t)
	r.echo = false
	a, c := evStart(t, nil, webhookSub("refused", r.srv.URL))
	want := evWorkload(t, c, "evv", "a", "b")
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := evStatus(t, a)
		if len(st) == 1 && st[0].Process.LastError != "" {
			if st[0].Validated || !strings.Contains(st[0].Process.LastError, "validationCode") {
				t.Fatalf("status %+v", st[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no validation error reported: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.mu.Lock()
	if len(r.got)+len(r.failed) != 0 {
		t.Fatalf("events delivered before validation: %+v", r.got)
	}
	r.echo = true
	r.mu.Unlock()
	checkEvents(t, a, "evv", r.wait(t, len(want)), want, false)
}

// TestEventsStorageQueue: a storagequeue subscription puts each event
// into a queue of the account, one base64-encoded Event Grid event a
// message, readable with azqueue.
func TestEventsStorageQueue(t *testing.T) {
	sub := events.Subscription{Name: "to-queue", Account: app.DevAccount, Endpoint: events.Endpoint{Type: "storagequeue", Queue: "blobevents"},
		Schema: events.EventGridSchema, RetryPolicy: events.RetryPolicy{MaxDeliveryAttempts: 30, EventTimeToLiveInMinutes: 1440}}
	a, c := evStart(t, nil, sub)
	q := quClient(t, a.QueueURL, app.DevKey).NewQueueClient("blobevents")
	ctx := context.Background()
	_, err := q.Create(ctx, nil)
	must(t, err)
	want := evWorkload(t, c, "evq", "x", "y")
	var got []egEvent
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < len(want) {
		if time.Now().After(deadline) {
			t.Fatalf("the queue holds %d events, want %d", len(got), len(want))
		}
		resp, err := q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
		must(t, err)
		for _, m := range resp.Messages {
			raw, err := base64.StdEncoding.DecodeString(*m.MessageText)
			must(t, err)
			var ev egEvent
			must(t, json.Unmarshal(raw, &ev))
			got = append(got, ev)
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkEvents(t, a, "evq", got, want, false)
}

// TestEventsResumeAfterRestart: events committed while the webhook is
// down are delivered after the server restarts on the same data, from
// the durable position: the ones delivered before the stop are not
// delivered again.
func TestEventsResumeAfterRestart(t *testing.T) {
	cfg := backendConfig(t)
	if cfg.InMemory {
		t.Skip("the in-memory store does not survive a restart")
	}
	r := newReceiver(t)
	a, c := evStart(t, &cfg, webhookSub("durable", r.srv.URL))
	first := evWorkload(t, c, "evr", "a", "b")
	checkEvents(t, a, "evr", r.wait(t, len(first)), first, false)
	r.mu.Lock()
	r.fail = 1 << 30 // down
	r.mu.Unlock()
	second := evWorkload(t, c, "evr", "c", "d")
	// At least one attempt failed: the events are committed, not delivered.
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		n := len(r.failed)
		r.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no delivery attempted while down")
		}
		time.Sleep(20 * time.Millisecond)
	}
	evClose(t, a)
	r.mu.Lock()
	r.fail = 0
	r.mu.Unlock()
	b, _ := evStart(t, &cfg, webhookSub("durable", r.srv.URL))
	got := r.wait(t, len(first)+len(second))
	checkEvents(t, b, "evr", got[len(first):], second, false)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.validations != 1 {
		t.Errorf("%d validations: the validated endpoint is remembered across the restart", r.validations)
	}
}

// TestEventsTwoFrontEnds: two front ends on one PostgreSQL schema with
// the same subscription, both taking writes: each event is delivered
// once, in commit order (one of them holds the delivery lease); when the
// holder stops, the other delivers what follows.
func TestEventsTwoFrontEnds(t *testing.T) {
	if os.Getenv(pgtest.EnvVar) == "" {
		t.Skipf("%s is not set (bash scripts/with-postgres.sh)", pgtest.EnvVar)
	}
	cfg := backendConfig(t)
	r := newReceiver(t)
	a, ca := evStart(t, &cfg, webhookSub("shared", r.srv.URL))
	b, cb := evStart(t, &cfg, webhookSub("shared", r.srv.URL))
	var want []write
	for i := 0; i < 3; i++ {
		want = append(want, evWorkload(t, ca, "ev2", fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i))...)
		want = append(want, evWorkload(t, cb, "ev2", fmt.Sprintf("c%d", i), fmt.Sprintf("d%d", i))...)
	}
	// Either front end may hold the lease (a loaded machine can make A
	// miss a renewal): the URLs name the Blob endpoint of whichever
	// delivered, and are compared as A's.
	first := r.wait(t, len(want))
	for i := range first {
		first[i].Data.URL = strings.Replace(first[i].Data.URL, b.BlobURL, a.BlobURL, 1)
	}
	checkEvents(t, a, "ev2", first, want, false)
	sa, sb := evStatus(t, a), evStatus(t, b)
	if sa[0].Mine == sb[0].Mine || sa[0].LeaseHolder != sb[0].LeaseHolder {
		t.Fatalf("lease: A %+v, B %+v: want exactly one holder", sa[0], sb[0])
	}
	holder, other, oc := a, b, cb
	if sb[0].Mine {
		holder, other, oc = b, a, ca
	}
	evClose(t, holder)
	more := evWorkload(t, oc, "ev2", "e", "f")
	got := r.wait(t, len(want)+len(more))
	checkEvents(t, other, "ev2", got[len(want):], more, false)
}

// TestEventsConfigFile: the --event-subscriptions file's format, and the
// mistakes it refuses.
func TestEventsConfigFile(t *testing.T) {
	served := func(a string) bool { return a == app.DevAccount }
	subs, err := events.ParseSubscriptions([]byte(`{"subscriptions":[
	  {"name":"created","account":"devstoreaccount1","endpoint":{"type":"webhook","url":"http://127.0.0.1:9/hook"},
	   "filter":{"includedEventTypes":["Microsoft.Storage.BlobCreated"],"subjectBeginsWith":"/blobServices/default/containers/images/"}},
	  {"name":"to-q","account":"devstoreaccount1","endpoint":{"type":"storagequeue","queueName":"ev"},"eventDeliverySchema":"CloudEventSchemaV1_0"}]}`), served)
	must(t, err)
	if len(subs) != 2 || subs[0].Schema != events.EventGridSchema || subs[0].RetryPolicy.MaxDeliveryAttempts != 30 || subs[1].Schema != events.CloudEventSchema {
		t.Fatalf("%+v", subs)
	}
	for _, bad := range []string{
		`[{"name":"x1","account":"nosuch","endpoint":{"type":"webhook","url":"http://127.0.0.1/"}}]`,
		`[{"name":"x2","account":"devstoreaccount1","endpoint":{"type":"webhook","url":"ftp://h/"}}]`,
		`[{"name":"x3","account":"devstoreaccount1","endpoint":{"type":"storagequeue"}}]`,
		`[{"name":"x4","account":"devstoreaccount1","endpoint":{"type":"webhook","url":"http://h/"},"filter":{"includedEventTypes":["BlobCreated"]}}]`,
		`[{"name":"x5","account":"devstoreaccount1","endpoint":{"type":"webhook","url":"http://h/"},"filter":{"advancedFilters":[]}}]`,
		`[{"name":"x6","account":"devstoreaccount1","endpoint":{"type":"webhook","url":"http://h/"},"eventDeliverySchema":"Custom"}]`,
		`[{"name":"dup","account":"devstoreaccount1","endpoint":{"type":"webhook","url":"http://h/"}},{"name":"DUP","account":"devstoreaccount1","endpoint":{"type":"webhook","url":"http://h/"}}]`,
		`[{"name":"a b","account":"devstoreaccount1","endpoint":{"type":"webhook","url":"http://h/"}}]`,
	} {
		if _, err := events.ParseSubscriptions([]byte(bad), served); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// evClosed are the apps a test closed itself.
var evClosed sync.Map

// evClose closes a, as a crash-free stop of the process would.
func evClose(t *testing.T, a *app.App) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evClosed.Store(a, true)
	must(t, a.Close(ctx))
}

// TestEventsWebhookFlag: --event-webhook (Config.Events.Webhooks)
// subscribes every account, and turns its change log on without serving
// $blobchangefeed; a bad subscriptions file stops the start.
func TestEventsWebhookFlag(t *testing.T) {
	r := newReceiver(t)
	cfg := backendConfig(t)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort = 0, -1, -1, -1
	cfg.Clock, cfg.GCEvery = clock.NewFake(time.Now()), time.Hour
	cfg.Events = app.EventsConfig{Webhooks: []string{r.srv.URL}, Poll: 20 * time.Millisecond}
	bad := cfg
	bad.Events.SubscriptionsFile = []byte(`[{"name":"x1","account":"nosuch","endpoint":{"type":"webhook","url":"http://127.0.0.1/"}}]`)
	if a, err := app.Start(bad); err == nil {
		_ = a.Close(context.Background())
		t.Fatal("a subscription of an account not served: started")
	}
	a, err := app.Start(cfg)
	must(t, err)
	defer evClose(t, a)
	c := client(t, a.BlobURL, app.DevKey)
	want := evWorkload(t, c, "evw", "one", "two")
	checkEvents(t, a, "evw", r.wait(t, len(want)), want, false)
	if _, err := c.ServiceClient().NewContainerClient("$blobchangefeed").GetProperties(context.Background(), nil); err == nil {
		t.Fatal("$blobchangefeed is served without --blob-change-feed")
	}
}

// TestEventsConcurrentWriters: writers on several front ends (three on
// PostgreSQL, sharing one schema; one otherwise) write concurrently;
// every acknowledged write's event reaches the webhook once, the
// sequencers increase, and each blob's events come in the order its
// writes were acknowledged.
func TestEventsConcurrentWriters(t *testing.T) {
	cfg := backendConfig(t)
	r := newReceiver(t)
	fronts := 1
	if cfg.Postgres != "" {
		fronts = 3
	}
	var clients []*azblob.Client
	for i := 0; i < fronts; i++ {
		_, c := evStart(t, &cfg, webhookSub("counted", r.srv.URL))
		clients = append(clients, c)
	}
	ctx := context.Background()
	_, err := clients[0].CreateContainer(ctx, "evn", nil)
	must(t, err)
	const writers, each = 6, 5
	acked := make([][]string, writers) // request ids per blob, in ack order
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[w%fronts]
			name := fmt.Sprintf("w%d", w)
			for i := 0; i < each; i++ {
				resp, err := c.UploadBuffer(ctx, "evn", name, []byte(fmt.Sprint(i)), nil)
				if err != nil {
					errs <- err
					return
				}
				acked[w] = append(acked[w], *resp.RequestID)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := r.wait(t, writers*each)
	if len(got) != writers*each {
		t.Fatalf("%d events, want %d", len(got), writers*each)
	}
	perBlob := map[string][]string{}
	seen := map[string]bool{}
	prev := ""
	for _, g := range got {
		if seen[g.ID] {
			t.Fatalf("event %s twice", g.ID)
		}
		seen[g.ID] = true
		if g.Data.Sequencer <= prev {
			t.Fatalf("sequencer %s after %s", g.Data.Sequencer, prev)
		}
		prev = g.Data.Sequencer
		perBlob[g.Subject] = append(perBlob[g.Subject], g.Data.RequestID)
	}
	for w := 0; w < writers; w++ {
		subj := fmt.Sprintf("/blobServices/default/containers/evn/blobs/w%d", w)
		if strings.Join(perBlob[subj], ",") != strings.Join(acked[w], ",") {
			t.Errorf("%s: events %v, writes acknowledged %v", subj, perBlob[subj], acked[w])
		}
	}
}

// TestEventsBehindInLanes: a one-event-a-request webhook subscription
// that falls 64 or more events behind (its endpoint stalled while 80
// writes to 8 blobs commit) catches up with several requests in flight,
// and still delivers every acknowledged write's event once, each blob's
// in the order its writes were acknowledged.
func TestEventsBehindInLanes(t *testing.T) {
	r := newReceiver(t)
	r.delay = 5 * time.Millisecond
	// The first event's request waits (well within the webhook's 30 s)
	// while the rest commit.
	r.hold = make(chan struct{})
	_, c := evStart(t, nil, webhookSub("lanes", r.srv.URL))
	ctx := context.Background()
	_, err := c.CreateContainer(ctx, "evl", nil)
	must(t, err)
	const blobs, n = 8, 80
	acked := map[string][]string{} // subject -> request ids in ack order
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("b%d", i%blobs)
		resp, err := c.UploadBuffer(ctx, "evl", name, []byte{byte(i)}, nil)
		must(t, err)
		subj := "/blobServices/default/containers/evl/blobs/" + name
		acked[subj] = append(acked[subj], *resp.RequestID)
	}
	close(r.hold)
	got := r.wait(t, n)
	if len(got) != n {
		t.Fatalf("%d events, want %d", len(got), n)
	}
	seen := map[string]bool{}
	perBlob := map[string][]string{}
	for _, g := range got {
		if seen[g.ID] {
			t.Fatalf("event %s twice", g.ID)
		}
		seen[g.ID] = true
		perBlob[g.Subject] = append(perBlob[g.Subject], g.Data.RequestID)
	}
	for subj, want := range acked {
		if strings.Join(perBlob[subj], ",") != strings.Join(want, ",") {
			t.Errorf("%s: events %v, writes acknowledged %v", subj, perBlob[subj], want)
		}
	}
	if m := r.most.Load(); m < 2 {
		t.Fatalf("at most %d request in flight: the subscription caught up one request at a time", m)
	}
}

// TestEventsDeadLetter: an event the webhook refuses with 400 is
// dead-lettered at once, one that keeps failing with 503 after
// maxDeliveryAttempts; each becomes a blob in the dead-letter container
// holding the event with Event Grid's dead-letter fields, and the events
// after them are delivered in order.
func TestEventsDeadLetter(t *testing.T) {
	r := newReceiver(t)
	r.status = func(ev egEvent) int {
		switch {
		case strings.HasSuffix(ev.Subject, "/poison"):
			return http.StatusBadRequest
		case strings.HasSuffix(ev.Subject, "/flaky"):
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}
	sub := webhookSub("with-dlq", r.srv.URL)
	sub.RetryPolicy.MaxDeliveryAttempts = 3
	sub.DeadLetter = &events.DeadLetter{Container: "deadletters"}
	// The dead-letter blobs make events too: not this subscription's.
	sub.Filter.SubjectBeginsWith = "/blobServices/default/containers/evd/"
	a, c := evStart(t, nil, sub)
	ctx := context.Background()
	_, err := c.CreateContainer(ctx, "deadletters", nil)
	must(t, err)
	all := evWorkload(t, c, "evd", "ok1", "poison", "flaky", "ok2")
	// Delivered: all but the creates of poison and flaky.
	var want []write
	for _, w := range all {
		if w.typ == "Microsoft.Storage.BlobCreated" && (w.blob == "poison" || w.blob == "flaky") {
			continue
		}
		want = append(want, w)
	}
	checkEvents(t, a, "evd", r.wait(t, len(want)), want, false)
	type dead struct {
		Subject             string `json:"subject"`
		DeadLetterReason    string `json:"deadLetterReason"`
		DeliveryAttempts    int    `json:"deliveryAttempts"`
		LastDeliveryOutcome string `json:"lastDeliveryOutcome"`
		LastHTTPStatusCode  int    `json:"lastHttpStatusCode"`
		PublishTime         string `json:"publishTime"`
	}
	got := map[string]dead{}
	pager := c.NewListBlobsFlatPager("deadletters", nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		must(t, err)
		for _, b := range page.Segment.BlobItems {
			name := *b.Name
			if !strings.HasPrefix(name, strings.ToUpper(app.DevAccount)+"/WITH-DLQ/") || !strings.HasSuffix(name, ".json") {
				t.Errorf("dead-letter blob %q", name)
			}
			resp, err := c.DownloadStream(ctx, "deadletters", name, nil)
			must(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var ds []dead
			must(t, json.Unmarshal(body, &ds))
			if len(ds) != 1 {
				t.Fatalf("%s: %s", name, body)
			}
			got[ds[0].Subject[strings.LastIndexByte(ds[0].Subject, '/')+1:]] = ds[0]
		}
	}
	p, f := got["poison"], got["flaky"]
	if len(got) != 2 || p.DeadLetterReason != "UndeliverableDueToHttpBadRequest" || p.DeliveryAttempts != 1 || p.LastDeliveryOutcome != "BadRequest" || p.LastHTTPStatusCode != 400 || p.PublishTime == "" {
		t.Errorf("dead letters %+v: want poison after 1 attempt (400)", got)
	}
	if f.DeadLetterReason != "MaxDeliveryAttemptsExceeded" || f.DeliveryAttempts != 3 || f.LastHTTPStatusCode != 503 {
		t.Errorf("dead letters %+v: want flaky after 3 attempts (503)", got)
	}
	if st := evStatus(t, a); st[0].Process.DeadLettered != 2 || st[0].Process.Dropped != 2 {
		t.Errorf("status %+v", st[0].Process)
	}
}

// TestEventsBatched: a subscription with maxEventsPerBatch delivers the
// events waiting as batches of up to that many, in commit order, in
// either schema (CloudEvents as application/cloudevents-batch+json).
// The endpoints refuse the validation handshake until every write is
// committed, so the events are all waiting when delivery starts and the
// batches' sizes are known.
func TestEventsBatched(t *testing.T) {
	eg, ce := newReceiver(t), newReceiver(t)
	ce.cloud = true
	for _, r := range []*receiver{eg, ce} {
		r.batch, r.echo = true, false
	}
	s1, s2 := webhookSub("batched-eg", eg.srv.URL), webhookSub("batched-ce", ce.srv.URL)
	s1.Endpoint.MaxEventsPerBatch, s1.Endpoint.PreferredBatchSizeInKilobytes = 4, 64
	s2.Endpoint.MaxEventsPerBatch, s2.Endpoint.PreferredBatchSizeInKilobytes = 3, 64
	s2.Schema = events.CloudEventSchema
	a, c := evStart(t, nil, s1, s2)
	want := evWorkload(t, c, "evb", "a", "b", "c", "d", "e", "f", "g", "h")
	if len(want) != 10 {
		t.Fatalf("%d writes", len(want))
	}
	for _, r := range []*receiver{eg, ce} {
		r.mu.Lock()
		r.echo = true
		r.mu.Unlock()
	}
	checkEvents(t, a, "evb", eg.wait(t, len(want)), want, false)
	checkEvents(t, a, "evb", ce.wait(t, len(want)), want, true)
	for _, x := range []struct {
		r    *receiver
		want string
	}{{eg, "[4 4 2]"}, {ce, "[3 3 3 1]"}} {
		x.r.mu.Lock()
		got := fmt.Sprint(x.r.sizes)
		x.r.mu.Unlock()
		if got != x.want {
			t.Errorf("requests of %s events, want %s", got, x.want)
		}
	}
}

// TestEventsAdvancedFilters: a subscriptions file's advanced filters
// select the events delivered (here Put Blob creates longer than 10
// bytes: StringIn on data.api ANDed with NumberGreaterThan on
// data.contentLength), and an invalid one stops the start with a
// message naming it.
func TestEventsAdvancedFilters(t *testing.T) {
	r := newReceiver(t)
	cfg := backendConfig(t)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort = 0, -1, -1, -1
	cfg.Clock, cfg.GCEvery = clock.NewFake(time.Now()), time.Hour
	file := func(filters string) []byte {
		return []byte(`{"subscriptions":[{"name":"adv","account":"` + app.DevAccount + `","endpoint":{"type":"webhook","url":"` + r.srv.URL + `"},
			"filter":{"advancedFilters":` + filters + `}}]}`)
	}
	bad := cfg
	bad.Events = app.EventsConfig{SubscriptionsFile: file(`[{"operatorType":"NumberGreaterThan","key":"data.contentLength","values":[10]}]`)}
	if a, err := app.Start(bad); err == nil || !strings.Contains(err.Error(), `advancedFilters[0] (NumberGreaterThan on "data.contentLength")`) {
		if a != nil {
			_ = a.Close(context.Background())
		}
		t.Fatalf("an invalid advanced filter: %v, want the start refused naming it", err)
	}
	cfg.Events = app.EventsConfig{Poll: 20 * time.Millisecond, SubscriptionsFile: file(`[
		{"operatorType":"StringIn","key":"data.api","values":["putblob"]},
		{"operatorType":"NumberGreaterThan","key":"data.contentLength","value":10}]`)}
	a, err := app.Start(cfg)
	must(t, err)
	defer evClose(t, a)
	c := client(t, a.BlobURL, app.DevKey)
	all := evWorkload(t, c, "eva", "ten", "eleven", "twelve")
	var want []write
	for _, w := range all {
		if w.api == "PutBlob" && w.length > 10 {
			want = append(want, w)
		}
	}
	if len(want) != 2 {
		t.Fatalf("the workload has %d matching writes", len(want))
	}
	checkEvents(t, a, "eva", r.wait(t, len(want)), want, false)
}

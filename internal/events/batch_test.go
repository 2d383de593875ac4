package events

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// runAfter starts a deliverer of sub whose position is set before recs
// are appended by add, so that its first round sees them all.
func runAfter(t *testing.T, f *fakeSender, sub Subscription, dead func(ctx context.Context, account, container, name string, body []byte) error, add func(st kv.Store) []changelog.Record) (*Deliverer, []changelog.Record) {
	t.Helper()
	st := mem.New()
	d := New(Config{Store: st, Clock: clock.Real{}, Subs: []Subscription{sub}, Senders: map[string]Sender{"fake": f},
		Poll: 5 * time.Millisecond, Retry: []time.Duration{time.Millisecond}, LeaseTTL: time.Minute, DeadLetter: dead})
	if err := d.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs := add(st)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	waitPos(t, d, recs[len(recs)-1].Seq)
	return d, recs
}

func ids(recs []changelog.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return out
}

// TestDeliverBatchesByCount: maxEventsPerBatch 3 sends 7 waiting events
// as 3, 3 and 1, in log order.
func TestDeliverBatchesByCount(t *testing.T) {
	f := &fakeSender{}
	sub := testSub("count")
	sub.Endpoint.MaxEventsPerBatch = 3
	_, recs := runAfter(t, f, sub, nil, func(st kv.Store) []changelog.Record { return appendN(t, st, 7, changelog.BlobCreated) })
	all := ids(recs)
	want := [][]string{all[0:3], all[3:6], all[6:7]}
	if got := f.batches; len(got) != 3 || strings.Join(got[0], ",") != strings.Join(want[0], ",") || strings.Join(got[1], ",") != strings.Join(want[1], ",") || strings.Join(got[2], ",") != strings.Join(want[2], ",") {
		t.Fatalf("batches %v, want %v", got, want)
	}
}

// TestDeliverBatchesBySize: with preferredBatchSizeInKilobytes 2 a batch
// stays within 2 KiB as a JSON array unless it is one event larger than
// that, which goes alone; a batch ends only when the next event would
// not fit; order is kept.
func TestDeliverBatchesBySize(t *testing.T) {
	f := &fakeSender{}
	sub := testSub("size")
	sub.Endpoint.MaxEventsPerBatch, sub.Endpoint.PreferredBatchSizeInKilobytes = 100, 2
	const limit = 2 << 10
	add := func(st kv.Store) []changelog.Record {
		var out []changelog.Record
		for _, name := range []string{"a", "b", strings.Repeat("x", 2500), "c", "d", "e", "f"} {
			if err := st.Update(context.Background(), func(tx kv.Tx) error {
				r, err := changelog.Append(tx, "acct", changelog.Record{EventType: changelog.BlobCreated, Subject: changelog.Subject("c", name), EventTime: time.Now(),
					Data: changelog.Data{API: "PutBlob", BlobType: "BlockBlob"}})
				out = append(out, r)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	_, recs := runAfter(t, f, sub, nil, add)
	size := map[string]int{}
	for _, r := range recs {
		ev, _ := sub.Format(r, URLs{})
		size[r.ID] = len(ev.JSON)
	}
	var flat []string
	arr := func(b []string) int {
		n := 1
		for _, id := range b {
			n += 1 + size[id]
		}
		return n
	}
	for i, b := range f.batches {
		flat = append(flat, b...)
		if len(b) > 1 && arr(b) > limit {
			t.Errorf("batch %d: %d events, %d bytes: over 2 KiB", i, len(b), arr(b))
		}
		if i+1 < len(f.batches) && arr(b)+1+size[f.batches[i+1][0]] <= limit {
			t.Errorf("batch %d ended though the next event fitted", i)
		}
		for _, id := range b {
			if id == recs[2].ID && len(b) != 1 {
				t.Errorf("the event larger than 2 KiB shares batch %d: %v", i, b)
			}
		}
	}
	if strings.Join(flat, ",") != strings.Join(ids(recs), ",") {
		t.Fatalf("delivered %v, want %v", flat, ids(recs))
	}
	if len(f.batches) < 3 || len(f.batches) == len(recs) {
		t.Fatalf("batches %v: the test cannot tell without several multi-event batches", f.batches)
	}
}

// TestDeliverBatchAllOrNone: a failed batch is retried whole, with the
// same events; a batch given up on is dead-lettered event by event.
func TestDeliverBatchAllOrNone(t *testing.T) {
	f := &fakeSender{}
	sub := testSub("retry")
	sub.Endpoint.MaxEventsPerBatch = 2
	var failOnce sync.Once
	f.fail = func(ev Event, attempt int) error {
		err := error(nil)
		if ev.Seq == 3 {
			failOnce.Do(func() { err = errors.New("503") })
		}
		return err
	}
	_, recs := runAfter(t, f, sub, nil, func(st kv.Store) []changelog.Record { return appendN(t, st, 4, changelog.BlobCreated) })
	_, tries := f.snapshot()
	if len(f.batches) != 2 || tries[recs[2].ID] != 2 || tries[recs[3].ID] != 2 || tries[recs[0].ID] != 1 || strings.Join(f.batches[1], ",") != recs[2].ID+","+recs[3].ID {
		t.Fatalf("batches %v tries %v: want the second batch tried twice, whole", f.batches, tries)
	}

	g := &fakeSender{fail: func(ev Event, _ int) error {
		if ev.Seq <= 2 {
			return &PermanentError{Err: &StatusError{Code: 400}}
		}
		return nil
	}}
	sub = testSub("dead")
	sub.Endpoint.MaxEventsPerBatch = 2
	sub.DeadLetter = &DeadLetter{Container: "dl"}
	var mu sync.Mutex
	var dead []string
	d, recs := runAfter(t, g, sub, func(_ context.Context, _, _, name string, _ []byte) error {
		mu.Lock()
		defer mu.Unlock()
		dead = append(dead, name)
		return nil
	}, func(st kv.Store) []changelog.Record { return appendN(t, st, 3, changelog.BlobCreated) })
	st, _ := d.Status(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if len(dead) != 2 || !strings.HasSuffix(dead[0], recs[0].ID+".json") || !strings.HasSuffix(dead[1], recs[1].ID+".json") ||
		st[0].Process.Dropped != 2 || st[0].Process.DeadLettered != 2 || st[0].Process.Delivered != 1 {
		t.Fatalf("dead letters %v, status %+v: want both events of the refused batch dead-lettered, the third delivered", dead, st[0].Process)
	}
}

// TestBatchSettings: the subscription file's batching fields take
// Event Grid's defaults and ranges, on webhooks only.
func TestBatchSettings(t *testing.T) {
	parse := func(endpoint string) ([]Subscription, error) {
		return ParseSubscriptions([]byte(`[{"name":"bat","account":"acct","endpoint":`+endpoint+`}]`), nil)
	}
	subs, err := parse(`{"type":"webhook","url":"http://127.0.0.1:1/"}`)
	if err != nil || subs[0].Endpoint.MaxEventsPerBatch != 1 || subs[0].Endpoint.PreferredBatchSizeInKilobytes != 64 || subs[0].Batched() {
		t.Fatalf("defaults: %+v %v", subs, err)
	}
	subs, err = parse(`{"type":"webhook","url":"http://127.0.0.1:1/","maxEventsPerBatch":5000,"preferredBatchSizeInKilobytes":1024}`)
	if err != nil || !subs[0].Batched() {
		t.Fatalf("the maxima: %+v %v", subs, err)
	}
	for _, bad := range []string{
		`{"type":"webhook","url":"http://127.0.0.1:1/","maxEventsPerBatch":5001}`,
		`{"type":"webhook","url":"http://127.0.0.1:1/","maxEventsPerBatch":-1}`,
		`{"type":"webhook","url":"http://127.0.0.1:1/","preferredBatchSizeInKilobytes":1025}`,
		`{"type":"webhook","url":"http://127.0.0.1:1/","preferredBatchSizeInKilobytes":-3}`,
		`{"type":"storagequeue","queueName":"q","maxEventsPerBatch":2}`,
	} {
		if _, err := parse(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// TestBatchesFillUnderLoad: a batching subscription under a steady
// stream of writes (one every millisecond, each waking the deliverer)
// lingers between rounds, so its batches fill: at most a request per
// linger instead of one per write or two, every event once and in
// order; a lone event is sent at once.
func TestBatchesFillUnderLoad(t *testing.T) {
	f := &fakeSender{}
	sub := testSub("steady")
	sub.Endpoint.MaxEventsPerBatch = 100
	st := mem.New()
	d := New(Config{Store: st, Clock: clock.Real{}, Subs: []Subscription{sub}, Senders: map[string]Sender{"fake": f},
		Poll: time.Second, Retry: []time.Duration{time.Millisecond}, LeaseTTL: time.Minute})
	runD(t, d)
	// A lone event goes at once, not after a linger or a poll.
	lone := appendN(t, st, 1, changelog.BlobCreated)
	began := time.Now()
	d.Notify("acct")
	waitPos(t, d, lone[0].Seq)
	if el := time.Since(began); el > 500*time.Millisecond {
		t.Fatalf("a lone event took %v", el)
	}
	const n = 300
	var recs []changelog.Record
	streamed := time.Now()
	for i := 0; i < n; i++ {
		recs = append(recs, appendN(t, st, 1, changelog.BlobCreated)...)
		d.Notify("acct")
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(streamed)
	waitPos(t, d, recs[n-1].Seq)
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.Join(f.sent, ",") != strings.Join(append(ids(lone), ids(recs)...), ",") {
		t.Fatalf("delivered %d events, want the %d written once each, in order", len(f.sent), n+1)
	}
	// At most one request per linger while the stream lasted, and some
	// rounds that do not linger (the first after an idle round: after
	// the lone event's, or a writer stalled by a loaded machine).
	// Without the linger each write's wake-up sends a request: about one
	// per write on an idle machine (235 of 300), one per round of a
	// slowed deliverer on a loaded one, either way many more.
	if limit := int(elapsed/linger) + n/5; len(f.batches) > limit {
		t.Fatalf("%d requests for %d events over %v under steady load, want at most %d: the batches did not fill", len(f.batches), n, elapsed, limit)
	}
	t.Logf("%d events in %d requests over %v", n+1, len(f.batches), elapsed)
}

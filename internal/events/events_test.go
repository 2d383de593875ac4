package events

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// fakeSender records deliveries; fail decides an attempt's error.
type fakeSender struct {
	mu    sync.Mutex
	sent  []string // event ids delivered
	tries map[string]int
	fail  func(ev Event, attempt int) error
	// batches are the requests delivered, by their events' ids.
	batches [][]string
}

func (f *fakeSender) Validate(context.Context, *Subscription) error { return nil }

func (f *fakeSender) Send(_ context.Context, _ *Subscription, evs []Event, attempt int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tries == nil {
		f.tries = map[string]int{}
	}
	for _, ev := range evs {
		f.tries[ev.ID]++
	}
	if f.fail != nil {
		for _, ev := range evs {
			if err := f.fail(ev, attempt); err != nil {
				return err
			}
		}
	}
	var ids []string
	for _, ev := range evs {
		f.sent = append(f.sent, ev.ID)
		ids = append(ids, ev.ID)
	}
	f.batches = append(f.batches, ids)
	return nil
}

func (f *fakeSender) snapshot() ([]string, map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := map[string]int{}
	for k, v := range f.tries {
		t[k] = v
	}
	return append([]string(nil), f.sent...), t
}

func appendN(t *testing.T, st kv.Store, n int, typ string) []changelog.Record {
	t.Helper()
	return appendEach(t, st, n, typ, func(int) string { return "b" })
}

// appendEach appends n records of typ, record i about blob name(i) of
// container c.
func appendEach(t *testing.T, st kv.Store, n int, typ string, name func(i int) string) []changelog.Record {
	t.Helper()
	var out []changelog.Record
	for i := 0; i < n; i++ {
		err := st.Update(context.Background(), func(tx kv.Tx) error {
			r, err := changelog.Append(tx, "acct", changelog.Record{EventType: typ, Subject: changelog.Subject("c", name(i)), EventTime: time.Now(),
				Data: changelog.Data{API: "PutBlob", BlobType: "BlockBlob", ETag: "0x1", ContentLength: 3}})
			out = append(out, r)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func testSub(name string) Subscription {
	s := Subscription{Name: name, Account: "acct", Endpoint: Endpoint{Type: "fake"}}
	s.Schema, s.RetryPolicy = EventGridSchema, RetryPolicy{MaxDeliveryAttempts: 30, EventTimeToLiveInMinutes: 1440}
	return s
}

func startD(t *testing.T, st kv.Store, f *fakeSender, subs ...Subscription) (*Deliverer, context.CancelFunc) {
	t.Helper()
	d := New(Config{Store: st, Clock: clock.Real{}, Subs: subs, Senders: map[string]Sender{"fake": f},
		Poll: 5 * time.Millisecond, Retry: []time.Duration{time.Millisecond}, LeaseTTL: time.Minute})
	return d, runD(t, d)
}

// runD initialises d and runs it until the returned stop is called or
// the test ends.
func runD(t *testing.T, d *Deliverer) (stop func()) {
	t.Helper()
	if err := d.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func waitPos(t *testing.T, d *Deliverer, want uint64) Status {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := d.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st[0].Position >= want {
			time.Sleep(20 * time.Millisecond)
			st, _ = d.Status(context.Background())
			return st[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("position %d, want %d: %+v", st[0].Position, want, st[0])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestDeliverDrops: an event the endpoint refuses (a PermanentError) is
// dropped at its first attempt, one that keeps failing after
// maxDeliveryAttempts; the events after them are delivered, in order.
func TestDeliverDrops(t *testing.T) {
	st := mem.New()
	f := &fakeSender{}
	sub := testSub("drops")
	sub.RetryPolicy.MaxDeliveryAttempts = 3
	// The log's first record is refused, its third keeps failing.
	f.fail = func(ev Event, attempt int) error {
		switch ev.Seq {
		case 1:
			return &PermanentError{Err: errors.New("400")}
		case 3:
			return errors.New("503")
		}
		return nil
	}
	d, _ := startD(t, st, f, sub)
	recs := appendN(t, st, 4, changelog.BlobCreated)
	s := waitPos(t, d, recs[3].Seq)
	sent, tries := f.snapshot()
	if len(sent) != 2 || sent[0] != recs[1].ID || sent[1] != recs[3].ID {
		t.Fatalf("sent %v, want records 2 and 4", sent)
	}
	if tries[recs[0].ID] != 1 || tries[recs[2].ID] != 3 || s.Process.Dropped != 2 {
		t.Fatalf("tries %v, status %+v: want 1 try of the refused, 3 of the failing, 2 dropped", tries, s)
	}
}

// TestDeliverFilteredAdvance: records a subscription does not select
// move its position without a delivery.
func TestDeliverFilteredAdvance(t *testing.T) {
	st := mem.New()
	f := &fakeSender{}
	sub := testSub("deletes")
	sub.Filter.IncludedEventTypes = []string{"Microsoft.Storage.BlobDeleted"}
	d, _ := startD(t, st, f, sub)
	recs := appendN(t, st, 3, changelog.BlobCreated)
	recs = append(recs, appendN(t, st, 1, changelog.BlobSnapshotCreated)...)
	waitPos(t, d, recs[3].Seq)
	if sent, _ := f.snapshot(); len(sent) != 0 {
		t.Fatalf("sent %v", sent)
	}
}

// TestDeliverLease: two deliverers on one store deliver a subscription
// once: the one holding the lease; the other's advance is refused. After
// the holder stops (giving its lease up), the other delivers.
func TestDeliverLease(t *testing.T) {
	st := mem.New()
	fa, fb := &fakeSender{}, &fakeSender{}
	a, stopA := startD(t, st, fa, testSub("shared"))
	first := appendN(t, st, 1, changelog.BlobCreated)
	waitPos(t, a, first[0].Seq) // A holds the lease
	b, _ := startD(t, st, fb, testSub("shared"))
	recs := appendN(t, st, 5, changelog.BlobCreated)
	waitPos(t, a, recs[4].Seq)
	sa, _ := fa.snapshot()
	if sb, _ := fb.snapshot(); len(sa) != 6 || len(sb) != 0 {
		t.Fatalf("A sent %d, B sent %d: want all 6 by A", len(sa), len(sb))
	}
	if err := b.advance(context.Background(), &b.cfg.Subs[0], recs[4].Seq, recs[4].Seq+1); !errors.Is(err, errLostLease) {
		t.Fatalf("the non-holder's advance: %v, want errLostLease", err)
	}
	stopA()
	more := appendN(t, st, 2, changelog.BlobCreated)
	waitPos(t, b, more[1].Seq)
	if sent, _ := fb.snapshot(); len(sent) != 2 || sent[0] != more[0].ID || sent[1] != more[1].ID {
		t.Fatalf("after the takeover B sent %v", sent)
	}
	if sent, _ := fa.snapshot(); len(sent) != 6 {
		t.Fatalf("A sent %d after it stopped", len(sent))
	}
}

// TestFormat: the Event Grid and CloudEvents forms of a record, with the
// data fields Event Grid's Blob Storage schema gives each event type.
func TestFormat(t *testing.T) {
	s := testSub("fmt")
	r := changelog.Record{Seq: 7, ID: "id-7", EventType: changelog.BlobDeleted, Subject: changelog.Subject("c", "dir/b.txt"),
		EventTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Data: changelog.Data{API: "DeleteBlob", RequestID: "rq", ETag: "0x1", ContentLength: 9, BlobType: "BlockBlob", Sequencer: changelog.Sequencer(7)}}
	ev, ok := s.Format(r, URLs{Blob: "http://127.0.0.1:1/acct"})
	if !ok {
		t.Fatal("not selected")
	}
	var m map[string]any
	if err := json.Unmarshal(ev.JSON, &m); err != nil {
		t.Fatal(err)
	}
	data := m["data"].(map[string]any)
	if m["eventType"] != "Microsoft.Storage.BlobDeleted" || m["topic"] != TopicPrefix+"acct" || m["eventTime"] != "2026-01-02T03:04:05Z" || m["metadataVersion"] != "1" ||
		data["url"] != "http://127.0.0.1:1/acct/c/dir/b.txt" || data["sequencer"] != changelog.Sequencer(7) || data["api"] != "DeleteBlob" {
		t.Fatalf("%s", ev.JSON)
	}
	if _, has := data["eTag"]; has {
		t.Errorf("BlobDeleted carries eTag: %s", ev.JSON)
	}
	if _, has := data["contentLength"]; has {
		t.Errorf("BlobDeleted carries contentLength: %s", ev.JSON)
	}
	s.Schema = CloudEventSchema
	ev, _ = s.Format(r, URLs{Blob: "http://127.0.0.1:1/acct"})
	m = nil
	_ = json.Unmarshal(ev.JSON, &m)
	if m["specversion"] != "1.0" || m["type"] != "Microsoft.Storage.BlobDeleted" || m["source"] != TopicPrefix+"acct" || m["time"] != "2026-01-02T03:04:05Z" {
		t.Fatalf("%s", ev.JSON)
	}
	// Change-feed-only records are no Event Grid events.
	r.EventType = changelog.BlobPropertiesUpdated
	if _, ok := s.Format(r, URLs{}); ok {
		t.Fatal("BlobPropertiesUpdated formatted as an event")
	}
}

// TestMatchesSubject: subject filters ignore case unless
// isSubjectCaseSensitive.
func TestMatchesSubject(t *testing.T) {
	s := testSub("subj")
	s.Filter = Filter{SubjectBeginsWith: "/blobServices/default/containers/Images/", SubjectEndsWith: ".JPG"}
	typ := "Microsoft.Storage.BlobCreated"
	if !s.Matches(typ, "/blobServices/default/containers/images/blobs/a.jpg") {
		t.Error("case-insensitive match refused")
	}
	s.Filter.IsSubjectCaseSensitive = true
	if s.Matches(typ, "/blobServices/default/containers/images/blobs/a.jpg") || !s.Matches(typ, "/blobServices/default/containers/Images/blobs/a.JPG") {
		t.Error("case-sensitive match wrong")
	}
}

// TestDeliverLeaseExpiry: a lease left by a process that died (it never
// gave it up) keeps others from delivering until it expires on the
// store's clock, then another process takes the subscription over and
// delivers from the durable position.
func TestDeliverLeaseExpiry(t *testing.T) {
	st := mem.New()
	clk := clock.NewFake(time.Now())
	sub := testSub("orphaned")
	// The dead process's lease, valid for a minute more.
	if err := st.Update(context.Background(), func(tx kv.Tx) error {
		return tx.Put(leaseKey(&sub), []byte("dead "+strconv.FormatInt(clk.Now().Add(time.Minute).UnixNano(), 10)))
	}); err != nil {
		t.Fatal(err)
	}
	f := &fakeSender{}
	d := New(Config{Store: st, Clock: clk, Subs: []Subscription{sub}, Senders: map[string]Sender{"fake": f},
		Poll: 5 * time.Millisecond, Retry: []time.Duration{time.Millisecond}, LeaseTTL: 30 * time.Millisecond})
	runD(t, d)
	recs := appendN(t, st, 3, changelog.BlobCreated)
	time.Sleep(200 * time.Millisecond) // several lease checks
	if sent, _ := f.snapshot(); len(sent) != 0 {
		t.Fatalf("delivered %v under another process's lease", sent)
	}
	clk.Advance(time.Minute + time.Second)
	waitPos(t, d, recs[2].Seq)
	if sent, _ := f.snapshot(); len(sent) != 3 {
		t.Fatalf("after the lease expired: sent %v", sent)
	}
}

// countingStore counts write transactions.
type countingStore struct {
	kv.Store
	mu      sync.Mutex
	updates int
}

func (c *countingStore) Update(ctx context.Context, fn func(kv.Tx) error) error {
	c.mu.Lock()
	c.updates++
	c.mu.Unlock()
	return c.Store.Update(ctx, fn)
}

// TestIdleWrites: an idle subscription polls its log with reads and
// writes to the store only to renew its lease, every LeaseTTL/3 — not
// at every poll (it did, 60 writes in 300 ms, before).
func TestIdleWrites(t *testing.T) {
	st := &countingStore{Store: mem.New()}
	d := New(Config{Store: st, Clock: clock.Real{}, Subs: []Subscription{testSub("idle")}, Senders: map[string]Sender{"fake": &fakeSender{}},
		Poll: 5 * time.Millisecond, LeaseTTL: 300 * time.Millisecond})
	stop := runD(t, d)
	time.Sleep(300 * time.Millisecond)
	stop()
	st.mu.Lock()
	defer st.mu.Unlock()
	// Init, the first lease, the validation record, about three
	// renewals and the release.
	if st.updates > 10 {
		t.Fatalf("%d write transactions in 300 ms of idling", st.updates)
	}
}

// TestFormatDataLake: a hierarchical account's Data Lake records become
// Event Grid's Data Lake events: the dfs endpoint's URLs, sourceUrl and
// destinationUrl for a rename (no url), data.recursive as a string for
// a directory delete, contentOffset for a BlobCreated; Blob's URL when
// there is no dfs endpoint.
func TestFormatDataLake(t *testing.T) {
	s := testSub("dfs")
	u := URLs{Blob: "http://127.0.0.1:1/acct", DFS: "http://127.0.0.1:2/acct"}
	data := func(r changelog.Record, u URLs) map[string]any {
		t.Helper()
		ev, ok := s.Format(r, u)
		if !ok {
			t.Fatalf("%s not selected", r.EventType)
		}
		var m map[string]any
		if err := json.Unmarshal(ev.JSON, &m); err != nil {
			t.Fatal(err)
		}
		if m["eventType"] != "Microsoft.Storage."+r.EventType {
			t.Fatalf("%s", ev.JSON)
		}
		return m["data"].(map[string]any)
	}
	rec := func(typ string, d changelog.Data) changelog.Record {
		return changelog.Record{Seq: 3, ID: "id-3", DFS: true, EventType: typ, Subject: changelog.Subject("fs", "d/new"), Data: d}
	}
	d := data(rec(changelog.BlobRenamed, changelog.Data{API: "RenameFile", SourcePath: "/fs/d/old"}), u)
	if d["sourceUrl"] != "http://127.0.0.1:2/acct/fs/d/old" || d["destinationUrl"] != "http://127.0.0.1:2/acct/fs/d/new" || d["url"] != nil || d["contentType"] != nil || d["blobType"] != nil {
		t.Errorf("BlobRenamed data %v", d)
	}
	d = data(rec(changelog.DirectoryDeleted, changelog.Data{API: "DeleteDirectory"}), u)
	if d["recursive"] != "false" || d["url"] != "http://127.0.0.1:2/acct/fs/d/new" || d["eTag"] != nil {
		t.Errorf("DirectoryDeleted data %v", d)
	}
	d = data(rec(changelog.BlobCreated, changelog.Data{API: "FlushWithClose", ETag: "0x2", ContentLength: 11, ContentOffset: 5, BlobType: "BlockBlob"}), URLs{Blob: u.Blob})
	if d["url"] != "http://127.0.0.1:1/acct/fs/d/new" || d["contentLength"] != 11.0 || d["contentOffset"] != 5.0 || d["eTag"] != "0x2" || d["contentType"] != "" {
		t.Errorf("BlobCreated data %v", d)
	}
	d = data(rec(changelog.DirectoryCreated, changelog.Data{API: "CreateDirectory", ETag: "0x3"}), u)
	if d["url"] != "http://127.0.0.1:2/acct/fs/d/new" || d["eTag"] != "0x3" || d["contentLength"] != nil || d["blobType"] != nil {
		t.Errorf("DirectoryCreated data %v", d)
	}
	// A flat account's blob events keep their form.
	r := rec(changelog.BlobCreated, changelog.Data{API: "PutBlob", ContentLength: 1})
	r.DFS = false
	if d := data(r, u); d["url"] != "http://127.0.0.1:1/acct/fs/d/new" || d["contentOffset"] != nil {
		t.Errorf("blob BlobCreated data %v", d)
	}
}

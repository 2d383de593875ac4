package queue

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// harness drives the service's handlers in-process, without HTTP or
// authentication, with a fake clock.
type harness struct {
	t     testing.TB
	s     *Service
	store kv.Store
	clk   *clock.Fake
}

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func newHarness(t testing.TB, store kv.Store) *harness {
	clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	return &harness{t: t, s: New(store, clk, quietLog), store: store, clk: clk}
}

func boltStore(t testing.TB) kv.Store {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

type resp struct {
	status int
	code   string
	header http.Header
	body   string
}

// do sends one request; path is relative to the account ("/qq1/messages?...").
func (h *harness) do(method, path, body string, headers ...string) resp {
	hr := httptest.NewRequest(method, "http://127.0.0.1:10001/acct"+path, strings.NewReader(body))
	for i := 0; i+1 < len(headers); i += 2 {
		hr.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	sr := &server.Request{Request: hr, Account: "acct", Authenticated: true, Now: h.clk.Now(), Version: "2024-08-04", ID: "test"}
	if err := h.s.ServeAzure(rec, sr); err != nil {
		server.WriteXMLError(rec, hr, server.ToAzure(context.Background(), quietLog, err))
	}
	return resp{status: rec.Code, code: rec.Header().Get("x-ms-error-code"), header: rec.Header(), body: rec.Body.String()}
}

func (h *harness) must(r resp, status int) resp {
	h.t.Helper()
	if r.status != status {
		h.t.Fatalf("status %d %s, want %d: %s", r.status, r.code, status, r.body)
	}
	return r
}

func (h *harness) want(r resp, status int, code string) {
	h.t.Helper()
	if r.status != status || r.code != code {
		h.t.Fatalf("got %d %s, want %d %s: %s", r.status, r.code, status, code, r.body)
	}
}

type gotMessage struct {
	ID         string `xml:"MessageId"`
	Receipt    string `xml:"PopReceipt"`
	Text       string `xml:"MessageText"`
	Dequeues   int    `xml:"DequeueCount"`
	NextVis    string `xml:"TimeNextVisible"`
	Expiration string `xml:"ExpirationTime"`
}

func messages(t testing.TB, r resp) []gotMessage {
	t.Helper()
	var l struct {
		Items []gotMessage `xml:"QueueMessage"`
	}
	if err := xml.Unmarshal([]byte(r.body), &l); err != nil {
		t.Fatalf("decoding %q: %v", r.body, err)
	}
	return l.Items
}

func (h *harness) put(queue, text string, query string) gotMessage {
	h.t.Helper()
	r := h.must(h.do(http.MethodPost, "/"+queue+"/messages?"+query, string(buildMessageXML(text))), http.StatusCreated)
	return messages(h.t, r)[0]
}

func (h *harness) get(queue string, n, vt int) []gotMessage {
	h.t.Helper()
	r := h.must(h.do(http.MethodGet, fmt.Sprintf("/%s/messages?numofmessages=%d&visibilitytimeout=%d", queue, n, vt), ""), http.StatusOK)
	return messages(h.t, r)
}

func (h *harness) count(queue string) int {
	h.t.Helper()
	r := h.must(h.do(http.MethodGet, "/"+queue+"?comp=metadata", ""), http.StatusOK)
	n, err := strconv.Atoi(r.header.Get("x-ms-approximate-messages-count"))
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

// keys counts the store keys under a namespace ("qm", "qv", "qg").
func keys(t testing.TB, store kv.Store, ns string) int {
	n := 0
	p := kv.Key(ns)
	err := store.View(context.Background(), func(tx kv.Tx) error {
		return tx.Scan(p, kv.PrefixEnd(p), 0, false, func(_, _ []byte) bool { n++; return true })
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDeterministicUpdates runs every operation against a store that runs
// each Update fn twice on the same state and compares the outcomes.
func TestDeterministicUpdates(t *testing.T) {
	store := newReplayStore()
	h := newHarness(t, store)
	h.must(h.do(http.MethodPut, "/qq1", "", "x-ms-meta-a", "1"), http.StatusCreated)
	h.must(h.do(http.MethodPut, "/qq1", "", "x-ms-meta-a", "1"), http.StatusNoContent)
	h.want(h.do(http.MethodPut, "/qq1", "", "x-ms-meta-a", "2"), http.StatusConflict, "QueueAlreadyExists")
	for i := range 10 {
		h.put("qq1", fmt.Sprint("m", i), "messagettl=60")
	}
	got := h.get("qq1", 4, 30)
	r := h.must(h.do(http.MethodPut, "/qq1/messages/"+got[0].ID+"?visibilitytimeout=5&popreceipt="+got[0].Receipt, string(buildMessageXML("new"))), http.StatusNoContent)
	h.must(h.do(http.MethodDelete, "/qq1/messages/"+got[0].ID+"?popreceipt="+r.header.Get("x-ms-popreceipt"), ""), http.StatusNoContent)
	h.want(h.do(http.MethodDelete, "/qq1/messages/"+got[1].ID+"?popreceipt="+got[0].Receipt, ""), http.StatusBadRequest, "PopReceiptMismatch")
	h.must(h.do(http.MethodPut, "/qq1?comp=metadata", "", "x-ms-meta-b", "2"), http.StatusNoContent)
	h.must(h.do(http.MethodPut, "/qq1?comp=acl", `<SignedIdentifiers><SignedIdentifier><Id>p</Id><AccessPolicy><Permission>raup</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`), http.StatusNoContent)
	h.must(h.do(http.MethodPut, "/?restype=service&comp=properties", `<StorageServiceProperties><Cors/></StorageServiceProperties>`), http.StatusAccepted)
	h.clk.Advance(61 * time.Second)
	if got := h.get("qq1", 32, 30); len(got) != 0 {
		t.Errorf("expired messages returned: %v", got)
	}
	h.put("qq1", "late", "")
	h.must(h.do(http.MethodDelete, "/qq1/messages", ""), http.StatusNoContent)
	h.must(h.do(http.MethodDelete, "/qq1", ""), http.StatusNoContent)
	if _, err := h.s.CollectGarbage(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := store.divergences(); len(d) > 0 {
		t.Fatalf("non-deterministic Update fns: %v", d)
	}
	if store.updates < 20 {
		t.Fatalf("only %d updates ran", store.updates)
	}
	for _, ns := range []string{"q", "qm", "qv", "qg"} {
		if n := keys(t, store, ns); n != 0 {
			t.Errorf("%d %s keys left after delete", n, ns)
		}
	}
}

// TestCompetingConsumers: many goroutines dequeue and delete from one
// queue on the bolt backend, through two Service values sharing the store
// (two front ends, whose in-memory slot hints know nothing of each
// other); every message is delivered exactly once (the clock stands
// still, so no visibility window ever ends) and none is lost.
func TestCompetingConsumers(t *testing.T) {
	competingConsumers(t, boltStore(t), 3000, 8, 32)
}

// competingConsumers runs producers and consumers on one queue of store
// and checks exactly-once delivery.
func competingConsumers(t *testing.T, store kv.Store, total, producers, consumers int) {
	h := newHarness(t, store)
	h2 := &harness{t: t, s: New(store, h.clk, quietLog), store: store, clk: h.clk}
	h.must(h.do(http.MethodPut, "/race", ""), http.StatusCreated)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := p; i < total; i += producers {
				r := h.do(http.MethodPost, "/race/messages", string(buildMessageXML(strconv.Itoa(i))))
				if r.status != http.StatusCreated {
					t.Errorf("put: %d %s", r.status, r.code)
					return
				}
			}
		}()
	}
	var mu sync.Mutex
	seen := map[string]int{}
	done := make(chan struct{})
	var cwg sync.WaitGroup
	for c := range consumers {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			h := h
			if c%2 == 1 {
				h = h2
			}
			for {
				// Stop only on an empty answer to a request sent after the
				// last put was acknowledged: one sent before may read a
				// snapshot without it.
				finished := false
				select {
				case <-done:
					finished = true
				default:
				}
				n := 1 + rand.IntN(32)
				r := h.do(http.MethodGet, fmt.Sprintf("/race/messages?numofmessages=%d&visibilitytimeout=600", n), "")
				if r.status != http.StatusOK {
					t.Errorf("get: %d %s", r.status, r.code)
					return
				}
				ms := messages(t, r)
				if len(ms) == 0 {
					if finished {
						return
					}
					continue
				}
				for _, m := range ms {
					if m.Dequeues != 1 {
						t.Errorf("message %s dequeued %d times", m.Text, m.Dequeues)
					}
					mu.Lock()
					seen[m.Text]++
					mu.Unlock()
					d := h.do(http.MethodDelete, "/race/messages/"+m.ID+"?popreceipt="+m.Receipt, "")
					if d.status != http.StatusNoContent {
						t.Errorf("delete: %d %s", d.status, d.code)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	cwg.Wait()
	if len(seen) != total {
		t.Errorf("%d distinct messages delivered, want %d", len(seen), total)
	}
	for text, n := range seen {
		if n != 1 {
			t.Errorf("message %s delivered %d times", text, n)
		}
	}
	if n := h.count("race"); n != 0 {
		t.Errorf("%d messages left", n)
	}
}

// TestShardScan: oldest merges the shards into global (visibleAt, seq)
// order; from takes what it needs from one shard and moves on only when
// short; expired entries are set aside; nothing past now is visible.
func TestShardScan(t *testing.T) {
	tx := &memTx{data: map[string][]byte{}, writable: true}
	id := func(shard, i int) string {
		return fmt.Sprintf("%c%07d-0000-4000-8000-000000000000", hexDigits[shard], i)
	}
	type msg struct {
		shard, vis int
		seq        uint64
		expires    int64
	}
	// Shard 3 holds the oldest message; shard 10 the second; shard 0 one
	// that is not visible yet at now=100 and one expired.
	msgs := []msg{
		{3, 10, 1, never}, {10, 10, 2, never}, {3, 20, 3, never}, {10, 30, 4, never},
		{5, 40, 5, never}, {0, 50, 6, 60}, {0, 200, 7, never}, {3, 100, 8, never},
	}
	for i, m := range msgs {
		if err := writeMessage(tx, "a", "q", "inc", &message{ID: id(m.shard, i), Seq: m.seq, VisibleAt: int64(m.vis), Expires: m.expires}); err != nil {
			t.Fatal(err)
		}
	}
	seqs := func(sc *shardScan) []uint64 {
		var out []uint64
		for _, c := range sc.cands {
			m, _, err := loadMessage(tx, "a", "q", "inc", c.id)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, m.Seq)
		}
		return out
	}
	newScan := func() *shardScan { return &shardScan{tx: tx, prefix: visPrefix("a", "q", "inc"), now: 100} }
	tests := []struct {
		name string
		run  func(*shardScan) error
		want []uint64
		nExp int
	}{
		{"oldest 3", func(s *shardScan) error { return s.oldest(3) }, []uint64{1, 2, 3}, 1},
		{"oldest all", func(s *shardScan) error { return s.oldest(32) }, []uint64{1, 2, 3, 4, 5, 8}, 1},
		{"from shard 3", func(s *shardScan) error { return s.from(3, 2) }, []uint64{1, 3}, 0},
		{"from shard 3, short", func(s *shardScan) error { return s.from(3, 5) }, []uint64{1, 3, 8, 5, 2}, 0},
		{"from shard 10", func(s *shardScan) error { return s.from(10, 2) }, []uint64{2, 4}, 0},
		{"from shard 11 wraps", func(s *shardScan) error { return s.from(11, 2) }, []uint64{1, 3}, 1},
		{"from empty shard", func(s *shardScan) error { return s.from(1, 1) }, []uint64{1}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := newScan()
			if err := tc.run(sc); err != nil {
				t.Fatal(err)
			}
			if got := seqs(sc); !slices.Equal(got, tc.want) {
				t.Errorf("got seqs %v, want %v", got, tc.want)
			}
			if len(sc.expired) != tc.nExp {
				t.Errorf("%d expired entries, want %d", len(sc.expired), tc.nExp)
			}
		})
	}
}

func TestLoadTracker(t *testing.T) {
	var l loadTracker
	var slots []int
	for i := range 66 {
		slot, shared := l.acquire("a")
		if shared != (i > 0) {
			t.Fatalf("call %d: shared=%v", i, shared)
		}
		slots = append(slots, slot)
	}
	if slots[0] != 0 || slots[1] != 1 || slots[63] != 63 || slots[64] != 64 || slots[65] != 64 {
		t.Fatalf("slots %v", slots)
	}
	if slot, shared := l.acquire("b"); slot != 0 || shared {
		t.Fatal("queues share slots")
	}
	l.release("a", 1)
	l.release("a", 64)
	if s, _ := l.acquire("a"); s != 1 {
		t.Fatalf("freed slot not reused: %d", s)
	}
	for _, s := range slots {
		l.release("a", s)
	}
	l.release("b", 0)
	if len(l.busy) != 0 {
		t.Fatalf("tracker keeps %v", l.busy)
	}
	if slot, shared := l.acquire("a"); slot != 0 || shared {
		t.Fatal("a queue with nothing in flight is not alone")
	}
}

// TestVisibilityIndexOrder: within a shard keys sort by (visibleAt, seq),
// negative times included; visEnd(now) includes exactly the entries
// visible at now; every id lands in the shard of its first hex digit, and
// shard prefixes all have the same length.
func TestVisibilityIndexOrder(t *testing.T) {
	p := visPrefix("a", "q", "inc")
	type e struct {
		vis int64
		seq uint64
	}
	in := []e{{-5, 1}, {-1, 9}, {0, 0}, {0, 1}, {0, 1 << 40}, {1, 0}, {255, 3}, {256, 2}, {1 << 62, 0}, {1<<63 - 1, 0}}
	const id = "7b1a9c3e-5f2d-4c6b-8a7e-9d0f1e2c3b4a"
	var ks []string
	for _, x := range in {
		ks = append(ks, string(visKey(p, x.vis, x.seq, id)))
	}
	if !slices.IsSorted(ks) {
		t.Fatal("index keys do not sort by (visibleAt, seq)")
	}
	sp := shardPrefix(p, 7)
	for _, x := range in {
		end := string(visEnd(sp, x.vis))
		for j, k := range ks {
			if !strings.HasPrefix(k, string(sp)) {
				t.Fatalf("key of %s not in shard 7", id)
			}
			if visible := k < end; visible != (in[j].vis <= x.vis) {
				t.Errorf("now=%d: entry %d (vis %d) visible=%v", x.vis, j, in[j].vis, visible)
			}
		}
	}
	for sh := range numShards {
		if len(shardPrefix(p, sh)) != len(sp) {
			t.Errorf("shard %d prefix length differs", sh)
		}
		if got := shardOf(hexDigits[sh:sh+1] + id[1:]); got != sh {
			t.Errorf("shardOf(%c...) = %d", hexDigits[sh], got)
		}
		if string(visEnd(shardPrefix(p, sh), 1<<62)) >= string(kv.PrefixEnd(p)) {
			t.Errorf("shard %d range leaves the queue's range", sh)
		}
	}
	if shardOf("") != 0 || shardOf("Z") >= numShards {
		t.Error("shardOf of a malformed id out of range")
	}
}

func TestMessageRecordRoundTrip(t *testing.T) {
	tests := []*message{
		{ID: "x", Seq: 1, Inserted: 2, Expires: never, VisibleAt: -3, Dequeues: 4, Gen: 5, Text: []byte("hello")},
		{ID: "y", Text: []byte{}},
		{ID: "z", Seq: 1<<64 - 1, Inserted: -1 << 63, Expires: 1 << 62, Gen: 1<<64 - 1, Text: []byte(strings.Repeat("é", 1000))},
	}
	for _, m := range tests {
		got, err := decodeMessage(m.ID, m.encode())
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(m) {
			t.Errorf("got %+v, want %+v", got, m)
		}
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, append([]byte{9}, make([]byte, msgHeader)...)} {
		if _, err := decodeMessage("b", bad); err == nil {
			t.Errorf("decoded malformed record %v", bad)
		}
	}
}

// TestExpiryAndCollectGarbage: expired messages are not returned, not
// counted, and CollectGarbage removes them; purges interrupted by a
// cancelled request are finished by CollectGarbage.
func TestExpiryAndCollectGarbage(t *testing.T) {
	store := boltStore(t)
	h := newHarness(t, store)
	h.must(h.do(http.MethodPut, "/exp", ""), http.StatusCreated)
	for i := range 2500 {
		ttl := "messagettl=10"
		if i%5 == 0 {
			ttl = "messagettl=-1"
		}
		h.put("exp", strconv.Itoa(i), ttl)
	}
	if n := h.count("exp"); n != 2500 {
		t.Fatalf("count %d", n)
	}
	h.clk.Advance(10 * time.Second)
	if n := h.count("exp"); n != 500 {
		t.Fatalf("count after expiry %d, want 500", n)
	}
	n, err := h.s.CollectGarbage(context.Background())
	if err != nil || n != 2000 {
		t.Fatalf("CollectGarbage = %d, %v; want 2000", n, err)
	}
	if k := keys(t, store, "qm"); k != 500 {
		t.Fatalf("%d records left, want 500", k)
	}
	got := h.get("exp", 32, 30)
	if len(got) != 32 || got[0].Expiration != "Fri, 31 Dec 9999 23:59:59 GMT" {
		t.Fatalf("got %d messages, first %+v", len(got), got[0])
	}

	// A purge that could not run (the client went away) is left in the
	// graveyard and finished by the collector.
	h.must(h.do(http.MethodPut, "/gone", ""), http.StatusCreated)
	for i := range 1500 {
		h.put("gone", strconv.Itoa(i), "")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var inc string
	err = store.View(context.Background(), func(tx kv.Tx) error {
		q, err := loadQueue(tx, "acct", "gone")
		if err == nil {
			inc = q.Inc
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = store.Update(context.Background(), func(tx kv.Tx) error {
		if err := tx.Delete(queueKey("acct", "gone")); err != nil {
			return err
		}
		return tx.Put(graveKey("acct", "gone", inc), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.purge(ctx, "acct", "gone", inc); err == nil {
		t.Fatal("purge ran with a cancelled context")
	}
	if k := keys(t, store, "qg"); k != 1 {
		t.Fatalf("%d graveyard entries", k)
	}
	n, err = h.s.CollectGarbage(context.Background())
	if err != nil || n != 1500 {
		t.Fatalf("CollectGarbage = %d, %v; want 1500", n, err)
	}
	if k := keys(t, store, "qg"); k != 0 {
		t.Fatalf("%d graveyard entries left", k)
	}
	if k := keys(t, store, "qm"); k != 500 {
		t.Fatalf("%d records left, want 500", k)
	}
}

// TestDeleteAndClearAreImmediate: Clear Messages and Delete Queue hide
// every message at once and leave no keys behind; a queue recreated under
// the same name starts empty.
func TestDeleteAndClearAreImmediate(t *testing.T) {
	store := boltStore(t)
	h := newHarness(t, store)
	h.must(h.do(http.MethodPut, "/clr", ""), http.StatusCreated)
	var first gotMessage
	for i := range 2200 {
		m := h.put("clr", strconv.Itoa(i), "")
		if i == 0 {
			first = m
		}
	}
	h.must(h.do(http.MethodDelete, "/clr/messages", ""), http.StatusNoContent)
	if n := h.count("clr"); n != 0 {
		t.Fatalf("count after clear %d", n)
	}
	h.want(h.do(http.MethodDelete, "/clr/messages/"+first.ID+"?popreceipt="+first.Receipt, ""), http.StatusNotFound, "MessageNotFound")
	for _, ns := range []string{"qm", "qv", "qg"} {
		if k := keys(t, store, ns); k != 0 {
			t.Errorf("%d %s keys after clear", k, ns)
		}
	}
	h.put("clr", "after", "")
	h.must(h.do(http.MethodDelete, "/clr", ""), http.StatusNoContent)
	h.must(h.do(http.MethodPut, "/clr", ""), http.StatusCreated)
	if n := h.count("clr"); n != 0 {
		t.Fatalf("recreated queue holds %d messages", n)
	}
	for _, ns := range []string{"qm", "qv", "qg"} {
		if k := keys(t, store, ns); k != 0 {
			t.Errorf("%d %s keys after delete", k, ns)
		}
	}
}

// TestFIFOWhenAlone: a lone consumer gets messages in insertion order,
// also within one clock tick.
func TestFIFOWhenAlone(t *testing.T) {
	h := newHarness(t, newReplayStore())
	h.must(h.do(http.MethodPut, "/fifo", ""), http.StatusCreated)
	for i := range 50 {
		h.put("fifo", strconv.Itoa(i), "")
	}
	next := 0
	for next < 50 {
		for _, m := range h.get("fifo", 1+next%7, 30) {
			if m.Text != strconv.Itoa(next) {
				t.Fatalf("got %s, want %d", m.Text, next)
			}
			next++
		}
	}
}

func TestAnonymousRefused(t *testing.T) {
	h := newHarness(t, newReplayStore())
	hr := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/acct?comp=list", nil)
	err := h.s.ServeAzure(httptest.NewRecorder(), &server.Request{Request: hr, Account: "acct", Now: h.clk.Now()})
	wantCode(t, err, "NoAuthenticationInformation")
}

// TestGetSkipsExpired: Get Messages skips and deletes expired messages,
// at most maxScanPerCall index entries per call, and reaches the live
// message behind them within a few calls.
func TestGetSkipsExpired(t *testing.T) {
	store := boltStore(t)
	h := newHarness(t, store)
	h.must(h.do(http.MethodPut, "/skip", ""), http.StatusCreated)
	const dead = 3 * maxScanPerCall
	for i := range dead {
		h.put("skip", strconv.Itoa(i), "messagettl=1")
	}
	h.put("skip", "live", "")
	h.clk.Advance(time.Second)
	records := dead + 1
	found := false
	for call := 1; records > 1 || !found; call++ {
		if call > 5 {
			t.Fatalf("%d records left after %d calls (live found: %v)", records, call-1, found)
		}
		got := h.get("skip", 1, 30)
		if len(got) == 1 {
			if got[0].Text != "live" || found {
				t.Fatalf("call %d got %v", call, got)
			}
			found = true
		}
		left := keys(t, store, "qm")
		// Every call makes progress while expired records remain; once
		// only the live one is left, a call just returns it.
		if deleted := records - left; deleted > maxScanPerCall || (deleted < 1 && records > 1) {
			t.Fatalf("call %d deleted %d records", call, deleted)
		}
		records = left
	}
}

package queue

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv/kvtest"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
)

// The domain's own tests: its key layout, index scans and collectors,
// driven through the typed methods (the REST behaviour is tested in
// internal/queue/queuerest). net/http is imported for its TimeFormat
// only; test files do not count against the package's imports.

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// harness drives the domain methods with a fake clock.
type harness struct {
	t     testing.TB
	s     *Service
	store kv.Store
	clk   *clock.Fake
}

func newHarness(t testing.TB, store kv.Store) *harness {
	clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	return &harness{t: t, s: New(store, clk, quietLog), store: store, clk: clk}
}

// defaultTTL is the time to live of a message put without messagettl.
const defaultTTL = 7 * 24 * time.Hour

func (h *harness) id(queue string) QueueID { return QueueID{Account: "acct", Name: queue} }

func (h *harness) create(queue string) {
	h.t.Helper()
	if _, err := h.s.CreateQueue(context.Background(), CreateQueueInput{QueueID: h.id(queue)}); err != nil {
		h.t.Fatal(err)
	}
}

// put puts text with the time to live ttl (0: never expires).
func (h *harness) put(queue, text string, ttl time.Duration) Message {
	h.t.Helper()
	out, err := h.s.PutMessage(context.Background(), PutMessageInput{QueueID: h.id(queue), Text: text, TTL: ttl})
	if err != nil {
		h.t.Fatal(err)
	}
	return out.Message
}

func (h *harness) get(queue string, n, vt int) []Message {
	h.t.Helper()
	out, err := h.s.GetMessages(context.Background(), GetMessagesInput{QueueID: h.id(queue), Count: n, Visibility: time.Duration(vt) * time.Second})
	if err != nil {
		h.t.Fatal(err)
	}
	return out.Messages
}

func (h *harness) count(queue string) int {
	h.t.Helper()
	out, err := h.s.GetQueueProperties(context.Background(), GetQueuePropertiesInput{QueueID: h.id(queue)})
	if err != nil {
		h.t.Fatal(err)
	}
	return int(out.ApproximateMessageCount)
}

func boltStore(t testing.TB) kv.Store {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
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

// TestShardScan: oldest merges the shards into global (visibleAt, seq)
// order; from takes what it needs from one shard and moves on only when
// short; expired entries are set aside; nothing past now is visible.
func TestShardScan(t *testing.T) {
	tx := &kvtest.MapTx{Data: map[string][]byte{}, Writable: true}
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
	var turnA chan struct{}
	for i := range 66 {
		slot, shared, turn := l.acquire("a")
		if shared != (i > 0) {
			t.Fatalf("call %d: shared=%v", i, shared)
		}
		if turnA == nil {
			turnA = turn
		} else if turn != turnA {
			t.Fatalf("call %d: another turn for the same queue", i)
		}
		slots = append(slots, slot)
	}
	if slots[0] != 0 || slots[1] != 1 || slots[63] != 63 || slots[64] != 64 || slots[65] != 64 {
		t.Fatalf("slots %v", slots)
	}
	if slot, shared, turn := l.acquire("b"); slot != 0 || shared || turn == turnA {
		t.Fatal("queues share slots or a turn")
	}
	l.release("a", 1)
	l.release("a", 64)
	if s, _, _ := l.acquire("a"); s != 1 {
		t.Fatalf("freed slot not reused: %d", s)
	}
	for _, s := range slots {
		l.release("a", s)
	}
	l.release("b", 0)
	if len(l.busy) != 0 {
		t.Fatalf("tracker keeps %v", l.busy)
	}
	if slot, shared, _ := l.acquire("a"); slot != 0 || shared {
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
	h.create("exp")
	for i := range 2500 {
		ttl := 10 * time.Second
		if i%5 == 0 {
			ttl = 0 // messagettl=-1
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
	if len(got) != 32 || got[0].ExpirationTime.Format(http.TimeFormat) != "Fri, 31 Dec 9999 23:59:59 GMT" {
		t.Fatalf("got %d messages, first %+v", len(got), got[0])
	}

	// A purge that could not run (the client went away) is left in the
	// graveyard and finished by the collector.
	h.create("gone")
	for i := range 1500 {
		h.put("gone", strconv.Itoa(i), defaultTTL)
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

// TestGetSkipsExpired: Get Messages skips and deletes expired messages,
// at most maxScanPerCall index entries per call, and reaches the live
// message behind them within a few calls.
func TestGetSkipsExpired(t *testing.T) {
	store := boltStore(t)
	h := newHarness(t, store)
	h.create("skip")
	const dead = 3 * maxScanPerCall
	for i := range dead {
		h.put("skip", strconv.Itoa(i), time.Second)
	}
	h.put("skip", "live", defaultTTL)
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

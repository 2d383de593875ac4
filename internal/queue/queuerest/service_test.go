package queuerest

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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
	"github.com/cerulean-storage/cerulean/internal/queue"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// harness drives the service's handlers in-process, without HTTP or
// authentication, with a fake clock: s is the REST front end over the
// domain q.
type harness struct {
	t     testing.TB
	s     *Service
	q     *queue.Service
	store kv.Store
	clk   *clock.Fake
}

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func newHarness(t testing.TB, store kv.Store) *harness {
	clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	q := queue.New(store, clk, quietLog)
	return &harness{t: t, s: New(q), q: q, store: store, clk: clk}
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
	if _, err := h.q.CollectGarbage(context.Background()); err != nil {
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
	q2 := queue.New(store, h.clk, quietLog)
	h2 := &harness{t: t, s: New(q2), q: q2, store: store, clk: h.clk}
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

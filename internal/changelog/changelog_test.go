package changelog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// backends opens the stores the log runs on. Each returns n handles on
// one store: the embedded and in-memory stores are one process's, so
// they give the same handle n times; PostgreSQL gives n independent
// kv.Store handles (connection pools) on one schema, as n front ends
// have — their transactions conflict and retry for real. mem-twice runs
// every Update function twice (the first run discarded), which catches
// state kept outside the transaction.
func backends(t *testing.T) map[string]func(t *testing.T, n int) []kv.Store {
	same := func(s kv.Store, n int) []kv.Store {
		out := make([]kv.Store, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	m := map[string]func(t *testing.T, n int) []kv.Store{
		"bolt": func(t *testing.T, n int) []kv.Store {
			s, err := bolt.Open(filepath.Join(t.TempDir(), "meta.db"), bolt.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return same(s, n)
		},
		"mem": func(t *testing.T, n int) []kv.Store {
			s := mem.New()
			t.Cleanup(func() { s.Close() })
			return same(s, n)
		},
		"mem-twice": func(t *testing.T, n int) []kv.Store {
			s := mem.New()
			t.Cleanup(func() { s.Close() })
			return same(kv.Twice(s), n)
		},
	}
	if testenv.InMemory() {
		delete(m, "bolt")
	}
	if os.Getenv(pgtest.EnvVar) != "" {
		m["postgres"] = func(t *testing.T, n int) []kv.Store {
			dsn, _ := pgtest.Schema(t)
			out := make([]kv.Store, n)
			for i := range out {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				s, err := postgres.Open(ctx, dsn, postgres.Options{MaxConns: 4, MaxAttempts: 1000})
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				out[i] = s
			}
			return out
		}
	}
	return m
}

var errRefused = errors.New("refused")

// TestConcurrentAppends has writers (spread over several store handles:
// several front ends on PostgreSQL) append to one account at once, a
// third of their transactions failing after the append. It proves: every
// committed append is in the log exactly once, no failed one is;
// sequence numbers are dense from 1 and strictly increasing; and each
// writer's records, appended one after the other (so each causally after
// the one before), are in the log in that order. A second account's log
// is untouched by the first's.
func TestConcurrentAppends(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			const writers, each = 6, 25
			stores := open(t, 3)
			ctx := context.Background()
			var mu sync.Mutex
			committed := map[string]uint64{} // subject -> seq returned
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					store := stores[w%len(stores)]
					for i := 0; i < each; i++ {
						subj := Subject("c", fmt.Sprintf("w%d/%03d", w, i))
						fail := i%3 == 2
						var got Record
						err := store.Update(ctx, func(tx kv.Tx) error {
							r, err := Append(tx, "acct", Record{EventType: BlobCreated, Subject: subj, EventTime: testenv.Epoch, Data: Data{API: "PutBlob"}})
							if err != nil {
								return err
							}
							// Another key written by the same change, as
							// the blob's record is.
							if err := tx.Put(kv.Key("test", subj), []byte("x")); err != nil {
								return err
							}
							got = r
							if fail {
								return errRefused
							}
							return nil
						})
						if fail {
							if !errors.Is(err, errRefused) {
								errs <- fmt.Errorf("failing transaction: %v", err)
								return
							}
							continue
						}
						if err != nil {
							errs <- err
							return
						}
						mu.Lock()
						committed[subj] = got.Seq
						mu.Unlock()
					}
				}(w)
			}
			// An append to another account, between the others.
			if err := stores[0].Update(ctx, func(tx kv.Tx) error {
				_, err := Append(tx, "other", Record{EventType: BlobDeleted, Subject: Subject("c", "x"), EventTime: testenv.Epoch})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			// Read the log back in small pages.
			var all []Record
			if err := stores[len(stores)-1].View(ctx, func(tx kv.Tx) error {
				var after uint64
				for {
					page, more, err := After(tx, "acct", after, 7)
					if err != nil {
						return err
					}
					if len(page) > 7 {
						return fmt.Errorf("page of %d > 7", len(page))
					}
					all = append(all, page...)
					if !more {
						return nil
					}
					after = page[len(page)-1].Seq
				}
			}); err != nil {
				t.Fatal(err)
			}
			if len(all) != len(committed) {
				t.Fatalf("log has %d records, %d appends committed", len(all), len(committed))
			}
			seen := map[string]bool{}
			lastOf := map[string]string{} // writer -> last subject seen
			ids := map[string]bool{}
			for i, r := range all {
				if r.Seq != uint64(i+1) {
					t.Fatalf("record %d has seq %d: not dense and increasing", i, r.Seq)
				}
				if seen[r.Subject] {
					t.Fatalf("%s recorded twice", r.Subject)
				}
				seen[r.Subject] = true
				want, ok := committed[r.Subject]
				if !ok {
					t.Fatalf("%s recorded but its transaction did not commit", r.Subject)
				}
				if want != r.Seq {
					t.Fatalf("%s: Append returned seq %d, log has %d", r.Subject, want, r.Seq)
				}
				if r.Data.Sequencer != Sequencer(r.Seq) || ids[r.ID] || r.ID == "" {
					t.Fatalf("record %d: sequencer %q id %q", r.Seq, r.Data.Sequencer, r.ID)
				}
				if i > 0 && !(all[i-1].Data.Sequencer < r.Data.Sequencer) {
					t.Fatalf("sequencers out of order at %d", r.Seq)
				}
				ids[r.ID] = true
				w := r.Subject[:len("/blobServices/default/containers/c/blobs/w0")]
				if prev := lastOf[w]; prev != "" && prev > r.Subject {
					t.Fatalf("%s after %s: a writer's appends out of order", r.Subject, prev)
				}
				lastOf[w] = r.Subject
			}
			var other []Record
			if err := stores[0].View(ctx, func(tx kv.Tx) (err error) {
				other, _, err = After(tx, "other", 0, 100)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if len(other) != 1 || other[0].Seq != 1 || other[0].EventType != BlobDeleted {
				t.Fatalf("other account's log: %+v", other)
			}
		})
	}
}

// TestAppendRejectsIncomplete: a record without event type or subject is
// refused, and the refusal writes nothing.
func TestAppendRejectsIncomplete(t *testing.T) {
	s := mem.New()
	defer s.Close()
	err := s.Update(context.Background(), func(tx kv.Tx) error {
		_, err := Append(tx, "a", Record{Subject: "x"})
		return err
	})
	if !errors.Is(err, ErrBadRecord) {
		t.Fatalf("err = %v", err)
	}
	_ = s.View(context.Background(), func(tx kv.Tx) error {
		if n, _ := LastSeq(tx, "a"); n != 0 {
			t.Fatalf("Last = %d", n)
		}
		return nil
	})
}

// TestAfterPosition: After a position returns only the records after it,
// and nothing past the end.
func TestAfterPosition(t *testing.T) {
	s := mem.New()
	defer s.Close()
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		if err := s.Update(ctx, func(tx kv.Tx) error {
			_, err := Append(tx, "a", Record{EventType: BlobCreated, Subject: Subject("c", fmt.Sprint(i))})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.View(ctx, func(tx kv.Tx) error {
		got, more, err := After(tx, "a", 3, 10)
		if err != nil || more || len(got) != 2 || got[0].Seq != 4 || got[1].Subject != Subject("c", "4") {
			t.Fatalf("After(3) = %+v %v %v", got, more, err)
		}
		got, more, err = After(tx, "a", 5, 10)
		if err != nil || more || len(got) != 0 {
			t.Fatalf("After(5) = %+v %v %v", got, more, err)
		}
		got, more, _ = After(tx, "a", 0, 5)
		if len(got) != 5 || more {
			t.Fatalf("After(0, 5) = %d records, more %v", len(got), more)
		}
		return nil
	})
}

// TestSegments: records go to the hour of their event time, except that
// a record whose time is earlier than an hour already started (a slower
// clock on another front end) joins that later hour, so every hour's
// records are one run of the log and the hours follow the log's order.
func TestSegments(t *testing.T) {
	s := mem.New()
	defer s.Close()
	ctx := context.Background()
	h := testenv.Epoch.Truncate(time.Hour)
	times := []time.Time{
		h.Add(10 * time.Minute), h.Add(20 * time.Minute), // hour 0
		h.Add(70 * time.Minute),          // hour 1
		h.Add(50 * time.Minute),          // early: stays in hour 1
		h.Add(3*time.Hour + time.Second), // hour 3
	}
	for i, at := range times {
		if err := s.Update(ctx, func(tx kv.Tx) error {
			_, err := Append(tx, "a", Record{EventType: BlobCreated, Subject: Subject("c", fmt.Sprint(i)), EventTime: at})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.View(ctx, func(tx kv.Tx) error {
		segs, err := Segments(tx, "a")
		if err != nil {
			t.Fatal(err)
		}
		want := []Segment{{h, 1, 2}, {h.Add(time.Hour), 3, 4}, {h.Add(3 * time.Hour), 5, 5}}
		if fmt.Sprint(segs) != fmt.Sprint(want) {
			t.Fatalf("segments %v, want %v", segs, want)
		}
		recs, _, _ := After(tx, "a", 0, 10)
		if !recs[3].Segment.Equal(h.Add(time.Hour)) || !recs[3].EventTime.Equal(times[3]) {
			t.Fatalf("the early record: segment %v time %v", recs[3].Segment, recs[3].EventTime)
		}
		if segs, err := Segments(tx, "none"); err != nil || segs != nil {
			t.Fatalf("empty log: %v %v", segs, err)
		}
		return nil
	})
}

// TestTrim: whole hours ending at or before the cutoff go, oldest first,
// within the limit per call (index entries before their records), never
// the hour holding the last record; the records kept (the last one numbering the next) are
// untouched, so appends go on from the same sequence number; Accounts
// lists each account with a log once.
func TestTrim(t *testing.T) {
	s := mem.New()
	defer s.Close()
	ctx := context.Background()
	h := testenv.Epoch.Truncate(time.Hour)
	appendAt := func(acct string, at time.Time) {
		t.Helper()
		if err := s.Update(ctx, func(tx kv.Tx) error {
			_, err := Append(tx, acct, Record{EventType: BlobCreated, Subject: Subject("c", "b"), EventTime: at})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// Hours 0 (3 records), 1 (2), 2 (1), 5 (1): 7 records.
	for _, m := range []int{1, 2, 3, 61, 62, 121, 301} {
		appendAt("a", h.Add(time.Duration(m)*time.Minute))
	}
	appendAt("b\x00x", h) // an account name the key escapes
	trim := func(before time.Time, limit int) int {
		t.Helper()
		var n int
		if err := s.Update(ctx, func(tx kv.Tx) (err error) {
			n, err = Trim(tx, "a", before, limit)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	state := func() ([]Segment, []uint64) {
		t.Helper()
		var segs []Segment
		var seqs []uint64
		_ = s.View(ctx, func(tx kv.Tx) error {
			var err error
			if segs, err = Segments(tx, "a"); err != nil {
				t.Fatal(err)
			}
			recs, _, err := After(tx, "a", 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				seqs = append(seqs, r.Seq)
			}
			return nil
		})
		return segs, seqs
	}
	// A cutoff inside hour 1: hour 0 alone goes; a limit of 2 takes its
	// index entry and one record, the next call the other two.
	if n := trim(h.Add(90*time.Minute), 2); n != 2 {
		t.Fatalf("first trim removed %d, want 2", n)
	}
	segs, seqs := state()
	if len(segs) != 3 || segs[0].First != 4 || fmt.Sprint(seqs) != "[2 3 4 5 6 7]" {
		t.Fatalf("after the first trim: segments %v, records %v", segs, seqs)
	}
	if n := trim(h.Add(90*time.Minute), 2); n != 2 {
		t.Fatalf("second trim removed %d, want 2", n)
	}
	if n := trim(h.Add(90*time.Minute), 2); n != 0 {
		t.Fatalf("third trim removed %d, want 0", n)
	}
	if _, seqs = state(); fmt.Sprint(seqs) != "[4 5 6 7]" {
		t.Fatalf("records %v, want 4-7", seqs)
	}
	// A cutoff far ahead: every hour but the last goes.
	for trim(h.Add(100*time.Hour), 1000) != 0 {
	}
	segs, seqs = state()
	if len(segs) != 1 || segs[0].First != 7 || fmt.Sprint(seqs) != "[7]" {
		t.Fatalf("after trimming all: segments %v, records %v", segs, seqs)
	}
	appendAt("a", h.Add(302*time.Minute))
	if _, seqs = state(); fmt.Sprint(seqs) != "[7 8]" {
		t.Fatalf("an append after the trim: records %v", seqs)
	}
	_ = s.View(ctx, func(tx kv.Tx) error {
		accts, err := Accounts(tx)
		if err != nil || fmt.Sprint(accts) != fmt.Sprint([]string{"a", "b\x00x"}) {
			t.Fatalf("accounts %q, %v", accts, err)
		}
		return nil
	})
}

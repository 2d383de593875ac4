package changelog

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// fullRecord is a record with every field set.
func fullRecord() Record {
	return Record{
		EventType: BlobPropertiesUpdated, Subject: Subject("c", "dir/ü.txt"),
		EventTime: testenv.Epoch.Add(90*time.Minute + 123456789), DFS: true,
		Data: Data{
			API: "SetBlobProperties", ClientRequestID: "client", RequestID: "req", ETag: "0x8D1",
			ContentType: "text/plain", ContentLength: 1 << 40, ContentOffset: -3, BlobType: "BlockBlob",
			BlobVersion: "2026-01-01T00:00:00.0000000Z", ContainerVersion: "01", BlobAccessTier: "Hot",
			URL: "http://127.0.0.1/a/c/b", Snapshot: "2026-01-02T00:00:00.0000000Z",
			PreviousInfo: &PreviousInfo{SoftDeleteSnapshot: "s", WasBlobSoftDeleted: true, BlobVersion: "v",
				LastVersion: "l", PreviousTier: "Cool"},
			UpdatedBlobProperties: map[string]PropertyChange{"ContentType": {Previous: "a", Current: "b"},
				"CacheControl": {Previous: "", Current: "no-cache"}},
			UpdatedBlobMetadata: map[string]string{"k": "v", "empty": ""},
			SourceURL:           "http://src", SourcePath: "/fs/old", Recursive: true,
		},
	}
}

// TestRecordForms: a record is read back from the compact form as it was
// appended, every field; and the same store state gives the same bytes.
func TestRecordForms(t *testing.T) {
	s := mem.New()
	defer s.Close()
	ctx := context.Background()
	in := fullRecord()
	var appended Record
	if err := s.Update(ctx, func(tx kv.Tx) (err error) {
		appended, err = Append(tx, "a", in)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.View(ctx, func(tx kv.Tx) error {
		raw, err := tx.Get(recordKey("a", 1))
		if err != nil {
			return err
		}
		if raw[0] != recordCompact {
			t.Errorf("stored as %q, want the compact form", raw)
		}
		if again := encodeRecord(nil, &appended); string(again) != string(raw) {
			t.Errorf("encoded again to other bytes")
		}
		recs, _, err := After(tx, "a", 0, 10)
		if err != nil {
			return err
		}
		if len(recs) != 1 || !reflect.DeepEqual(recs[0], appended) {
			t.Errorf("read back %+v\nappended %+v", recs, appended)
		}
		if appended.Seq != 1 || appended.ID != eventID("a", 1) || appended.Data.Sequencer != Sequencer(1) ||
			!appended.Segment.Equal(testenv.Epoch.Add(90*time.Minute).Truncate(time.Hour)) {
			t.Errorf("appended %+v", appended)
		}
		// A record cut short anywhere is an error, not a panic or a
		// record with fields missing.
		for n := 1; n < len(raw); n++ {
			var r Record
			if err := decodeRecord("a", 1, raw[:n], &r); err == nil {
				t.Errorf("record cut to %d of %d bytes decoded: %+v", n, len(raw), r)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// A record without the optional parts reads back without them.
	var plain Record
	if err := s.Update(ctx, func(tx kv.Tx) (err error) {
		plain, err = Append(tx, "a", Record{EventType: BlobCreated, Subject: Subject("c", "b"), EventTime: testenv.Epoch.Add(2 * time.Hour),
			Data: Data{API: "PutBlob", UpdatedBlobMetadata: map[string]string{}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	plain.Data.UpdatedBlobMetadata = nil // an empty map is not kept, as in JSON with omitempty
	_ = s.View(ctx, func(tx kv.Tx) error {
		recs, _, err := After(tx, "a", 1, 10)
		if err != nil || len(recs) != 1 || !reflect.DeepEqual(recs[0], plain) {
			t.Errorf("read back %+v %v\nappended %+v", recs, err, plain)
		}
		return nil
	})
}

// putLegacy stores r as the log's record seq the way records were first
// stored: JSON, with the counter key holding the last number and hour.
func putLegacy(t *testing.T, tx kv.Tx, account string, r Record, newHour bool) {
	t.Helper()
	r.ID, r.Data.Sequencer = eventID(account, r.Seq), Sequencer(r.Seq)
	if newHour {
		if err := tx.Put(segmentKey(account, r.Segment), []byte(strconv.FormatUint(r.Seq, 10))); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Put(counterKey(account), []byte(strconv.FormatUint(r.Seq, 10)+" "+strconv.FormatInt(r.Segment.Unix(), 10))); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Put(recordKey(account, r.Seq), raw); err != nil {
		t.Fatal(err)
	}
}

// TestLegacyRecords: a log whose records were stored as JSON (with the
// counter key) is read as before, in both forms once appended to;
// appends go on from its last number in its last hour; the counter key
// is retired so that an older Cerulean cannot number a record again;
// and a log that has only the counter key (its records trimmed by
// hand, say) goes on from the counter's number.
func TestLegacyRecords(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, 1)[0]
			ctx := context.Background()
			h := testenv.Epoch.Truncate(time.Hour)
			old := []Record{
				{Seq: 1, Segment: h, EventType: BlobCreated, Subject: Subject("c", "a"), EventTime: h.Add(time.Minute),
					Data: Data{API: "PutBlob", ETag: "0x1", ContentLength: 5, BlobType: "BlockBlob"}},
				fullRecord(),
			}
			old[1].Seq, old[1].Segment = 2, h.Add(time.Hour)
			old[1].EventTime = old[1].EventTime.UTC()
			if err := s.Update(ctx, func(tx kv.Tx) error {
				putLegacy(t, tx, "a", old[0], true)
				putLegacy(t, tx, "a", old[1], true)
				return tx.Put(counterKey("b"), []byte("7 "+strconv.FormatInt(h.Unix(), 10)))
			}); err != nil {
				t.Fatal(err)
			}
			for i := range old {
				old[i].ID, old[i].Data.Sequencer = eventID("a", old[i].Seq), Sequencer(old[i].Seq)
			}
			// Within the last legacy record's hour (its event time is
			// earlier than the hour: it joins it, as with the counter).
			var next, nextB Record
			if err := s.Update(ctx, func(tx kv.Tx) (err error) {
				if next, err = Append(tx, "a", Record{EventType: BlobDeleted, Subject: Subject("c", "a"), EventTime: h.Add(30 * time.Minute)}); err != nil {
					return err
				}
				nextB, err = Append(tx, "b", Record{EventType: BlobDeleted, Subject: Subject("c", "a"), EventTime: h})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if next.Seq != 3 || !next.Segment.Equal(h.Add(time.Hour)) {
				t.Errorf("after the legacy records: seq %d segment %v, want 3 %v", next.Seq, next.Segment, h.Add(time.Hour))
			}
			if nextB.Seq != 8 || !nextB.Segment.Equal(h) {
				t.Errorf("after a counter alone: seq %d segment %v, want 8 %v", nextB.Seq, nextB.Segment, h)
			}
			if err := s.View(ctx, func(tx kv.Tx) error {
				recs, _, err := After(tx, "a", 0, 10)
				if err != nil {
					return err
				}
				if len(recs) != 3 || !reflect.DeepEqual(recs[:2], old) || !reflect.DeepEqual(recs[2], next) {
					t.Errorf("read %+v\nwant %+v then %+v", recs, old, next)
				}
				segs, err := Segments(tx, "a")
				if err != nil {
					return err
				}
				if want := []Segment{{h, 1, 1}, {h.Add(time.Hour), 2, 3}}; !reflect.DeepEqual(segs, want) {
					t.Errorf("segments %v, want %v", segs, want)
				}
				for _, acct := range []string{"a", "b"} {
					c, err := tx.Get(counterKey(acct))
					if err != nil || string(c) != counterRetired {
						t.Errorf("counter of %s: %q %v, want it retired", acct, c, err)
					}
					// What an older Cerulean does with it: refuse it.
					if _, perr := strconv.ParseUint(string(c), 10, 64); perr == nil {
						t.Errorf("retired counter %q parses as a number", c)
					}
				}
				if n, err := LastSeq(tx, "a"); err != nil || n != 3 {
					t.Errorf("Last: %d %v, want 3", n, err)
				}
				if n, err := LastSeq(tx, "b"); err != nil || n != 8 {
					t.Errorf("Last of b: %d %v, want 8", n, err)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			// Appending to a compact tail leaves the counter alone.
			if err := s.Update(ctx, func(tx kv.Tx) error {
				if err := tx.Delete(counterKey("a")); err != nil {
					return err
				}
				_, err := Append(tx, "a", Record{EventType: BlobDeleted, Subject: Subject("c", "b"), EventTime: h.Add(time.Hour)})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			_ = s.View(ctx, func(tx kv.Tx) error {
				if _, err := tx.Get(counterKey("a")); err != kv.ErrNotFound {
					t.Errorf("counter written again: %v", err)
				}
				if n, err := LastSeq(tx, "a"); err != nil || n != 4 {
					t.Errorf("Last: %d %v, want 4", n, err)
				}
				return nil
			})
		})
	}
}

// TestEventIDStable: a record's id is the one earlier Cerulean versions
// gave it (the ids of records already delivered or in the change feed
// must not change), whatever the account name's length.
func TestEventIDStable(t *testing.T) {
	for _, c := range []struct {
		account string
		seq     uint64
		want    string
	}{
		{"a", 0, "b6ceb5b6-cc3a-520f-a72f-e231b2000290"},
		{"a", 1, "bb709fcf-0353-5d0b-9a0b-18a265e19afe"},
	} {
		if got := eventID(c.account, c.seq); got != c.want {
			t.Errorf("eventID(%q, %d) = %s, want %s", c.account, c.seq, got, c.want)
		}
	}
	long := string(make([]byte, 300))
	if a, b := eventID(long, 7), eventID(long[:299], 7); a == b || len(a) != 36 {
		t.Errorf("long account names: %s %s", a, b)
	}
}

// TestAppendTwiceInOneTransaction: the log's end a transaction reads
// includes the records it appended itself, on every store.
func TestAppendTwiceInOneTransaction(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, 1)[0]
			ctx := context.Background()
			var seqs []uint64
			if err := s.Update(ctx, func(tx kv.Tx) error {
				seqs = seqs[:0]
				for i := 0; i < 3; i++ {
					r, err := Append(tx, "a", Record{EventType: BlobCreated, Subject: Subject("c", strconv.Itoa(i)), EventTime: testenv.Epoch})
					if err != nil {
						return err
					}
					seqs = append(seqs, r.Seq)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(seqs, []uint64{1, 2, 3}) {
				t.Fatalf("sequence numbers %v, want 1 2 3", seqs)
			}
			_ = s.View(ctx, func(tx kv.Tx) error {
				recs, _, err := After(tx, "a", 0, 10)
				if err != nil || len(recs) != 3 || recs[2].Subject != Subject("c", "2") {
					t.Errorf("read %+v %v", recs, err)
				}
				return nil
			})
		})
	}
}

// FuzzDecodeRecord: any stored value either decodes or is an error,
// never a panic or an allocation beyond its size; a compact record that
// decodes encodes again to a record that decodes to the same.
func FuzzDecodeRecord(f *testing.F) {
	full := fullRecord()
	full.Seq, full.Segment = 7, testenv.Epoch.Truncate(time.Hour)
	f.Add(encodeRecord(nil, &full))
	f.Add(encodeRecord(nil, &Record{EventType: "Microsoft.Storage.BlobCreated"}))
	f.Add([]byte{recordCompact})
	f.Add([]byte(`{"eventType":"Microsoft.Storage.BlobDeleted"}`))
	f.Add([]byte{recordCompact, 0, 0, 0, 0x1f, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, v []byte) {
		var r Record
		if err := decodeRecord("a", 7, v, &r); err != nil || len(v) == 0 || v[0] != recordCompact {
			return
		}
		again := encodeRecord(nil, &r)
		var r2 Record
		if err := decodeRecord("a", 7, again, &r2); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip:\n%+v\n%+v", r, r2)
		}
	})
}

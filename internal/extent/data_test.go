package extent

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/testenv"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// dtService returns a Store over a real bolt store and chunk store in a
// temporary directory, with a fake clock.
func dtService(t *testing.T) (*Store, *clock.Fake) {
	t.Helper()
	store, chunks, clk := testenv.Stores(t)
	return New(store, chunks), clk
}

// dtItem is the state of one data item record.
type dtItem = Item

// dtItems reads every data item record.
func dtItems(t *testing.T, s *Store) map[string]dtItem {
	t.Helper()
	out, err := s.Items(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dtQueue reads the collector queue as "id@due" strings, sorted.
func dtQueue(t *testing.T, s *Store) []string {
	t.Helper()
	out, err := s.Queue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dtQueued formats the queue entries expected for ids released at now.
func dtQueued(now time.Time, ids ...string) []string {
	var out []string
	for _, id := range ids {
		k := gcKey(now.Add(GCGrace), id)
		parts, _ := kv.Split(k)
		out = append(out, parts[2]+"@"+parts[1])
	}
	sort.Strings(out)
	return out
}

func dtParts(ids ...string) []Part {
	var out []Part
	for i, id := range ids {
		out = append(out, Part{Off: int64(i) * 10, Len: 10, ID: id})
	}
	return out
}

func TestAdjustRefs(t *testing.T) {
	tests := []struct {
		name     string
		initial  map[string]uint32
		old, new []Part
		want     map[string]uint32
		queued   []string
		wantErr  bool
	}{
		{name: "take a reference", initial: map[string]uint32{"ia": 0},
			new: dtParts("ia"), want: map[string]uint32{"ia": 1}},
		{name: "one per occurrence", initial: map[string]uint32{"ia": 0, "cb": 0},
			new: dtParts("ia", "cb", "ia"), want: map[string]uint32{"ia": 2, "cb": 1}},
		{name: "unchanged", initial: map[string]uint32{"ia": 1},
			old: dtParts("ia"), new: dtParts("ia"), want: map[string]uint32{"ia": 1}},
		{name: "shared item keeps living", initial: map[string]uint32{"ia": 2},
			old: dtParts("ia"), want: map[string]uint32{"ia": 1}},
		{name: "last reference queues", initial: map[string]uint32{"ia": 1},
			old: dtParts("ia"), want: map[string]uint32{"ia": 0}, queued: []string{"ia"}},
		{name: "move", initial: map[string]uint32{"ia": 1, "ib": 0, "cc": 3},
			old: dtParts("ia", "cc"), new: dtParts("ib", "cc"),
			want: map[string]uint32{"ia": 0, "ib": 1, "cc": 3}, queued: []string{"ia"}},
		{name: "split part", initial: map[string]uint32{"ia": 1},
			old: dtParts("ia"), new: dtParts("ia", "ia"), want: map[string]uint32{"ia": 2}},
		{name: "drop several", initial: map[string]uint32{"ia": 2, "cb": 1, "ic": 5},
			old:  dtParts("ia", "ia", "cb", "ic"),
			want: map[string]uint32{"ia": 0, "cb": 0, "ic": 4}, queued: []string{"cb", "ia"}},
		{name: "below zero", initial: map[string]uint32{"ia": 0},
			old: dtParts("ia"), wantErr: true},
		{name: "missing item", initial: map[string]uint32{},
			new: dtParts("ia"), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := dtService(t)
			ctx := context.Background()
			now := clk.Now()
			err := s.store.Update(ctx, func(tx kv.Tx) error {
				for id, n := range tc.initial {
					if err := tx.Put(dataKey(id), encodeData(n, []byte("payload-"+id))); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			err = s.store.Update(ctx, func(tx kv.Tx) error { return AdjustRefs(tx, now, tc.old, tc.new) })
			if tc.wantErr {
				if err == nil {
					t.Fatal("want an error")
				}
				// Nothing changed.
				for id, it := range dtItems(t, s) {
					if it.Refs != tc.initial[id] {
						t.Fatalf("%s: refs %d after a failed adjust", id, it.Refs)
					}
				}
				if q := dtQueue(t, s); len(q) != 0 {
					t.Fatalf("queued %v after a failed adjust", q)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			items := dtItems(t, s)
			if len(items) != len(tc.want) {
				t.Fatalf("items %v, want %v", items, tc.want)
			}
			for id, n := range tc.want {
				it, ok := items[id]
				if !ok || it.Refs != n {
					t.Fatalf("%s: %+v, want refs %d", id, it, n)
				}
				if it.Data != "payload-"+id {
					t.Fatalf("%s: payload %q", id, it.Data)
				}
			}
			if got, want := dtQueue(t, s), dtQueued(now, tc.queued...); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("queue %v, want %v", got, want)
			}
		})
	}
}

// TestRefcountLifecycle follows data items through staging, a blob and a
// snapshot sharing them, and the collector.
func TestRefcountLifecycle(t *testing.T) {
	s, clk := dtService(t)
	ctx := context.Background()
	small := []byte("small body")
	large := bytes.Repeat([]byte("0123456789abcdef"), (InlineMax+100)/16)
	var parts []Part
	for _, body := range [][]byte{small, large} {
		st, err := s.Stage(ctx, bytes.NewReader(body), int64(len(body)), Digests{}, true)
		if err != nil {
			t.Fatal(err)
		}
		err = s.store.Update(ctx, func(tx kv.Tx) error {
			if err := st.Write(tx); err != nil {
				return err
			}
			return AdjustRefs(tx, clk.Now(), nil, st.Parts)
		})
		st.Release()
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, st.Parts...)
	}
	if len(parts) != 2 || !isInline(parts[0].ID) || isInline(parts[1].ID) {
		t.Fatalf("parts %v: want one inline and one chunk item", parts)
	}
	ids := []string{parts[0].ID, parts[1].ID}
	refs := func() []uint32 {
		items := dtItems(t, s)
		return []uint32{items[ids[0]].Refs, items[ids[1]].Refs}
	}
	update := func(old, new []Part) {
		t.Helper()
		if err := s.store.Update(ctx, func(tx kv.Tx) error { return AdjustRefs(tx, clk.Now(), old, new) }); err != nil {
			t.Fatal(err)
		}
	}
	// A snapshot takes its own references.
	update(nil, parts)
	if r := refs(); r[0] != 2 || r[1] != 2 {
		t.Fatalf("refs %v", r)
	}
	// The blob goes: the snapshot keeps the items alive, nothing queued.
	update(parts, nil)
	if r := refs(); r[0] != 1 || r[1] != 1 {
		t.Fatalf("refs %v", r)
	}
	if q := dtQueue(t, s); len(q) != 0 {
		t.Fatalf("queued %v while referenced", q)
	}
	// The snapshot goes a minute later: both items are queued.
	clk.Advance(time.Minute)
	released := clk.Now()
	update(parts, nil)
	if got, want := dtQueue(t, s), dtQueued(released, ids...); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("queue %v, want %v", got, want)
	}

	// Nothing is freed before the grace period.
	for _, d := range []time.Duration{0, GCGrace / 2, GCGrace - time.Nanosecond} {
		clk.Set(released.Add(d))
		n, err := s.Collect(ctx, clk.Now())
		if err != nil || n != 0 {
			t.Fatalf("at +%v: freed %d, %v", d, n, err)
		}
		if len(dtItems(t, s)) != 2 || len(dtQueue(t, s)) != 2 {
			t.Fatalf("at +%v: items or queue entries removed early", d)
		}
		r, err := s.chunks.Open(ctx, ids[1][1:])
		if err != nil {
			t.Fatalf("at +%v: chunk removed early: %v", d, err)
		}
		r.Close()
	}
	// A reader that looked the parts up just before the delete still
	// reads the bytes during the grace period.
	cr := s.NewReader(ctx, []Part{{Off: 0, Len: int64(len(small)), ID: ids[0]}, {Off: int64(len(small)), Len: int64(len(large)), ID: ids[1]}}, nil, 0, int64(len(small)+len(large)))
	got, err := io.ReadAll(cr)
	cr.Close()
	if err != nil || !bytes.Equal(got, append(append([]byte{}, small...), large...)) {
		t.Fatalf("read during grace: %d bytes, %v", len(got), err)
	}

	// At the due time both go, and the chunk file with them.
	clk.Set(released.Add(GCGrace))
	n, err := s.Collect(ctx, clk.Now())
	if err != nil || n != 2 {
		t.Fatalf("freed %d, %v; want 2", n, err)
	}
	if items := dtItems(t, s); len(items) != 0 {
		t.Fatalf("items left: %v", items)
	}
	if q := dtQueue(t, s); len(q) != 0 {
		t.Fatalf("queue left: %v", q)
	}
	if _, err := s.chunks.Open(ctx, ids[1][1:]); !errors.Is(err, chunk.ErrNotFound) {
		t.Fatalf("chunk after collection: %v", err)
	}
	// A second pass finds nothing.
	if n, err := s.Collect(ctx, clk.Now()); err != nil || n != 0 {
		t.Fatalf("second pass freed %d, %v", n, err)
	}
}

func TestCollectOrder(t *testing.T) {
	s, clk := dtService(t)
	ctx := context.Background()
	t0 := clk.Now()
	// Three items released at t0, t0+5m and t0+20m; one queue entry whose
	// item is referenced again, one whose record is gone.
	put := func(id string, refs uint32) {
		t.Helper()
		err := s.store.Update(ctx, func(tx kv.Tx) error { return tx.Put(dataKey(id), encodeData(refs, []byte(id))) })
		if err != nil {
			t.Fatal(err)
		}
	}
	release := func(id string, at time.Time) {
		t.Helper()
		put(id, 1)
		err := s.store.Update(ctx, func(tx kv.Tx) error { return AdjustRefs(tx, at, dtParts(id), nil) })
		if err != nil {
			t.Fatal(err)
		}
	}
	release("i1", t0)
	release("i2", t0.Add(5*time.Minute))
	release("i3", t0.Add(20*time.Minute))
	put("i4", 1)
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		if err := tx.Put(gcKey(t0.Add(GCGrace), "i4"), nil); err != nil {
			return err
		}
		return tx.Put(gcKey(t0.Add(GCGrace), "i5"), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	names := func() string {
		items := dtItems(t, s)
		var ids []string
		for id := range items {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		return strings.Join(ids, ",")
	}

	clk.Set(t0.Add(GCGrace))
	if _, err := s.Collect(ctx, clk.Now()); err != nil {
		t.Fatal(err)
	}
	// i1 is freed; i4 is referenced so it stays; the queue entries of
	// i1, i4 and i5 are consumed.
	if got := names(); got != "i2,i3,i4" {
		t.Fatalf("items %s", got)
	}
	want := append(dtQueued(t0.Add(5*time.Minute), "i2"), dtQueued(t0.Add(20*time.Minute), "i3")...)
	sort.Strings(want)
	if got := dtQueue(t, s); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("queue %v, want %v", got, want)
	}
	clk.Set(t0.Add(5*time.Minute + GCGrace))
	n, err := s.Collect(ctx, clk.Now())
	if err != nil || n != 1 {
		t.Fatalf("freed %d, %v", n, err)
	}
	if got := names(); got != "i3,i4" {
		t.Fatalf("items %s", got)
	}
	clk.Set(t0.Add(time.Hour))
	n, err = s.Collect(ctx, clk.Now())
	if err != nil || n != 1 {
		t.Fatalf("freed %d, %v", n, err)
	}
	if got := names(); got != "i4" {
		t.Fatalf("items %s", got)
	}
	if q := dtQueue(t, s); len(q) != 0 {
		t.Fatalf("queue left %v", q)
	}
}

func TestStage(t *testing.T) {
	s, _ := dtService(t)
	ctx := context.Background()
	body := func(n int) []byte { return bytes.Repeat([]byte{'q'}, n) }
	tests := []struct {
		name      string
		body      []byte
		n         int64 // declared length; -1 for until EOF
		wantParts []int64
		inline    bool
		wantErr   string
	}{
		{name: "empty", body: nil, n: 0},
		{name: "small", body: body(10), n: 10, wantParts: []int64{10}, inline: true},
		{name: "inline max", body: body(InlineMax), n: InlineMax, wantParts: []int64{InlineMax}, inline: true},
		{name: "just over inline", body: body(InlineMax + 1), n: InlineMax + 1, wantParts: []int64{InlineMax + 1}},
		{name: "two chunks", body: body(ChunkMax + 5), n: ChunkMax + 5, wantParts: []int64{ChunkMax, 5}},
		{name: "unknown length", body: body(100), n: -1, wantParts: []int64{100}},
		{name: "unknown length empty", body: nil, n: -1},
		{name: "short body", body: body(5), n: 10, wantErr: "InvalidInput"},
		{name: "short chunk body", body: body(InlineMax + 1), n: InlineMax + 10, wantErr: "InvalidInput"},
		{name: "long body", body: body(11), n: 10, wantErr: "InvalidInput"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := s.Stage(ctx, bytes.NewReader(tc.body), tc.n, Digests{}, true)
			if tc.wantErr != "" {
				if got := errCode(err); got != tc.wantErr {
					t.Fatalf("error %q, want %s", got, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Size != int64(len(tc.body)) {
				t.Fatalf("size %d", st.Size)
			}
			sum := md5.Sum(tc.body)
			if !bytes.Equal(st.MD5, sum[:]) {
				t.Fatalf("md5 %x", st.MD5)
			}
			var lens []int64
			var off int64
			for _, p := range st.Parts {
				if p.Off != off || isInline(p.ID) != tc.inline {
					t.Fatalf("part %+v at %d", p, off)
				}
				off += p.Len
				lens = append(lens, p.Len)
			}
			if fmt.Sprint(lens) != fmt.Sprint(tc.wantParts) {
				t.Fatalf("part lengths %v, want %v", lens, tc.wantParts)
			}
			// The bytes read back through a content reader.
			cr := s.NewReader(ctx, st.Parts, st.inline, 0, st.Size)
			got, err := io.ReadAll(cr)
			cr.Close()
			if err != nil || !bytes.Equal(got, tc.body) {
				t.Fatalf("read back %d bytes, %v", len(got), err)
			}
		})
	}
}

// TestStageConcurrentMD5: large bodies staged at the same time (which
// share the multi-buffer MD5) each get their own digest, for sizes that
// end mid-block, including failed stagings in between.
func TestStageConcurrentMD5(t *testing.T) {
	s, _ := dtService(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := make([]byte, InlineMax+1+i*777_777)
			for j := range body {
				body[j] = byte(j*7 + i)
			}
			n := int64(len(body))
			if i%5 == 4 {
				n++ // short body: fails after hashing what came
			}
			st, err := s.Stage(ctx, bytes.NewReader(body), n, Digests{}, true)
			if i%5 == 4 {
				if err == nil {
					t.Errorf("body %d: short body staged", i)
				}
				return
			}
			if err != nil {
				t.Error(err)
				return
			}
			if sum := md5.Sum(body); !bytes.Equal(st.MD5, sum[:]) {
				t.Errorf("body %d (%d bytes): md5 %x, want %x", i, len(body), st.MD5, sum)
			}
		}()
	}
	wg.Wait()
}

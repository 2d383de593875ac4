package extent

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// pattern returns n bytes that differ at every chunk offset.
func pattern(seed byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7+i/ChunkMax) ^ seed
	}
	return b
}

// hookReader serves data and calls hook(k) when the reader first asks for
// byte k*ChunkMax (k ≥ 1), i.e. once chunk k-1 of a Stage is committed.
type hookReader struct {
	data  []byte
	pos   int
	fired int
	hook  func(k int)
}

func (r *hookReader) Read(p []byte) (int, error) {
	if r.pos >= len(r.data) {
		return 0, io.EOF
	}
	if k := r.pos / ChunkMax; k > r.fired && r.pos%ChunkMax == 0 {
		r.fired = k
		r.hook(k)
	}
	// Never read across a chunk boundary, so the hook sees each one.
	end := min(len(r.data), r.pos+len(p), (r.pos/ChunkMax+1)*ChunkMax)
	n := copy(p, r.data[r.pos:end])
	r.pos += n
	return n, nil
}

// record writes st's items and takes references on its parts, then ends
// its pins, as a handler does.
func record(t *testing.T, s *Store, now time.Time, st *Staged) {
	t.Helper()
	err := s.store.Update(context.Background(), func(tx kv.Tx) error {
		if err := st.Write(tx); err != nil {
			return err
		}
		return AdjustRefs(tx, now, nil, st.Parts)
	})
	st.Release()
	if err != nil {
		t.Fatal(err)
	}
}

func readBack(t *testing.T, s *Store, parts []Part, n int64) []byte {
	t.Helper()
	r := s.NewReader(context.Background(), parts, nil, 0, n)
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	return got
}

// An upload whose body streams over many hours of the clock, with the
// collector and the orphan sweeper running between its chunks, commits
// and reads back byte-exact: the chunks it wrote are pinned, not orphans.
func TestStageSurvivesSweepsDuringSlowUpload(t *testing.T) {
	s, clk := dtService(t)
	ctx := context.Background()
	body := pattern(1, 4*ChunkMax+1000)
	hooks := 0
	r := &hookReader{data: body, hook: func(k int) {
		hooks++
		clk.Advance(OrphanGrace / 2) // 3 hours between chunks
		if n, err := s.SweepOrphans(ctx, clk.Now()); err != nil || n != 0 {
			t.Errorf("sweep before chunk %d: removed %d, %v", k, n, err)
		}
		if _, err := s.Collect(ctx, clk.Now()); err != nil {
			t.Errorf("collect before chunk %d: %v", k, err)
		}
	}}
	st, err := s.Stage(ctx, r, int64(len(body)), Digests{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if hooks != 4 || len(st.Parts) != 5 {
		t.Fatalf("%d sweeps, %d parts; want 4 and 5", hooks, len(st.Parts))
	}
	// One more sweep between the body's end and the recording
	// transaction (a slow precondition check, a busy store).
	clk.Advance(OrphanGrace * 2)
	if n, err := s.SweepOrphans(ctx, clk.Now()); err != nil || n != 0 {
		t.Fatalf("sweep before recording: removed %d, %v", n, err)
	}
	record(t, s, clk.Now(), st)
	clk.Advance(OrphanGrace * 2)
	if n, err := s.SweepOrphans(ctx, clk.Now()); err != nil || n != 0 {
		t.Fatalf("sweep after recording: removed %d, %v", n, err)
	}
	if got := readBack(t, s, st.Parts, int64(len(body))); !bytes.Equal(got, body) {
		t.Fatal("read back differs from the upload")
	}
}

// The chunks of an upload that never got recorded (a failed precondition,
// a client that hung up) are pinned only until Release, then swept.
func TestStageAbandonedChunksSweptAfterRelease(t *testing.T) {
	s, clk := dtService(t)
	ctx := context.Background()
	body := pattern(2, 2*ChunkMax)
	st, err := s.Stage(ctx, bytes.NewReader(body), int64(len(body)), Digests{}, false)
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(OrphanGrace * 10)
	if n, err := s.SweepOrphans(ctx, clk.Now()); err != nil || n != 0 {
		t.Fatalf("sweep while staged: removed %d, %v", n, err)
	}
	st.Release()
	st.Release() // harmless
	if n, err := s.SweepOrphans(ctx, clk.Now()); err != nil || n != 2 {
		t.Fatalf("sweep after release: removed %d, %v; want 2", n, err)
	}
	for _, p := range st.Parts {
		if _, err := s.chunks.Open(ctx, p.ID[1:]); !errors.Is(err, chunk.ErrNotFound) {
			t.Fatalf("abandoned chunk %s: %v", p.ID, err)
		}
	}

	// A body cut short: Stage itself removes the chunks it wrote before
	// the error (nothing can reference them) and unpins them, so the
	// sweeper finds nothing left.
	short := &io.LimitedReader{R: bytes.NewReader(body), N: ChunkMax + 10}
	if _, err := s.Stage(ctx, short, int64(len(body)), Digests{}, false); err == nil {
		t.Fatal("Stage of a short body succeeded")
	}
	if n := len(s.pins.n); n != 0 {
		t.Fatalf("%d chunks still pinned after a failed Stage", n)
	}
	clk.Advance(OrphanGrace * 10)
	if n, err := s.SweepOrphans(ctx, clk.Now()); err != nil || n != 0 {
		t.Fatalf("sweep after a failed Stage: removed %d, %v; want 0 (Stage removed them)", n, err)
	}
}

// A download that started before its blob was overwritten returns the
// bytes it started on, however long it streams: the collector and the
// sweeper run far past their grace periods meanwhile and keep its chunks,
// then free them once it is closed.
func TestReaderPinsChunksAcrossRelease(t *testing.T) {
	s, clk := dtService(t)
	ctx := context.Background()
	body := pattern(3, 3*ChunkMax+5)
	st, err := s.Stage(ctx, bytes.NewReader(body), int64(len(body)), Digests{}, false)
	if err != nil {
		t.Fatal(err)
	}
	record(t, s, clk.Now(), st)
	parts := st.Parts

	r := s.NewReader(ctx, parts, nil, 0, int64(len(body)))
	first := make([]byte, 1<<20)
	if _, err := io.ReadFull(r, first); err != nil {
		t.Fatal(err)
	}
	// The blob is overwritten: its items lose their last reference.
	if err := s.store.Update(ctx, func(tx kv.Tx) error { return AdjustRefs(tx, clk.Now(), parts, nil) }); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		clk.Advance(GCGrace + time.Hour)
		if n, err := s.Collect(ctx, clk.Now()); err != nil || n != 0 {
			t.Fatalf("collect during the download: freed %d, %v", n, err)
		}
		if n, err := s.SweepOrphans(ctx, clk.Now().Add(OrphanGrace)); err != nil || n != 0 {
			t.Fatalf("sweep during the download: removed %d, %v", n, err)
		}
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("download after the overwrite: %v", err)
	}
	if !bytes.Equal(append(first, rest...), body) {
		t.Fatal("download differs from the version it started on")
	}
	r.Close()
	r.Close() // harmless

	clk.Advance(GCGrace)
	if n, err := s.Collect(ctx, clk.Now()); err != nil || n != 4 {
		t.Fatalf("collect after the download: freed %d, %v; want 4", n, err)
	}
	if q := dtQueue(t, s); len(q) != 0 {
		t.Fatalf("queue left: %v", q)
	}
	for _, p := range parts {
		if _, err := s.chunks.Open(ctx, p.ID[1:]); !errors.Is(err, chunk.ErrNotFound) {
			t.Fatalf("chunk %s after the download: %v", p.ID, err)
		}
	}
}

// Uploads and the sweeper racing, with the clock far ahead so that every
// chunk is old enough to sweep: no recorded chunk is ever lost.
func TestSweepRacingUploads(t *testing.T) {
	s, clk := dtService(t)
	ctx := context.Background()
	clk.Advance(100 * OrphanGrace)
	stop := make(chan struct{})
	swept := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				swept <- nil
				return
			default:
			}
			if _, err := s.SweepOrphans(ctx, clk.Now()); err != nil {
				swept <- err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var all [][]Part
	var errs []error
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				body := pattern(byte(g*16+i), InlineMax+1+i)
				st, err := s.Stage(ctx, bytes.NewReader(body), int64(len(body)), Digests{}, false)
				if err == nil {
					err = s.store.Update(ctx, func(tx kv.Tx) error {
						if err := st.Write(tx); err != nil {
							return err
						}
						return AdjustRefs(tx, clk.Now(), nil, st.Parts)
					})
					st.Release()
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					all = append(all, st.Parts)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-swept; err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Fatalf("uploads failed: %v", errs)
	}
	for _, parts := range all {
		readBack(t, s, parts, parts[0].Len)
	}
}

// peerOf returns a Store over the same kv and chunk stores as s with pins
// of its own: another Cerulean process sharing a PostgreSQL database.
func peerOf(s *Store) *Store {
	return &Store{store: s.store, chunks: s.chunks, pins: newPinTable()}
}

// Another process's upload and download, published by its collector pass,
// keep their chunks from this process's sweeper and collector until they
// end; the pins of a process that stopped lapse after PinLease.
func TestPinsPublishedToOtherProcesses(t *testing.T) {
	s, clk := dtService(t)
	peer := peerOf(s)
	ctx := context.Background()

	// The peer's upload is staged, not yet recorded; its download reads a
	// blob this process then overwrites.
	up := pattern(4, ChunkMax+10)
	staged, err := peer.Stage(ctx, bytes.NewReader(up), int64(len(up)), Digests{}, false)
	if err != nil {
		t.Fatal(err)
	}
	down := pattern(5, 2*ChunkMax)
	st, err := s.Stage(ctx, bytes.NewReader(down), int64(len(down)), Digests{}, false)
	if err != nil {
		t.Fatal(err)
	}
	record(t, s, clk.Now(), st)
	r := peer.NewReader(ctx, st.Parts, nil, 0, int64(len(down)))
	defer r.Close()
	if err := s.store.Update(ctx, func(tx kv.Tx) error { return AdjustRefs(tx, clk.Now(), st.Parts, nil) }); err != nil {
		t.Fatal(err)
	}
	if _, err := peer.Collect(ctx, clk.Now()); err != nil { // publishes
		t.Fatal(err)
	}

	for range 3 {
		clk.Advance(PinLease / 3)
		if n, err := s.Collect(ctx, clk.Now()); err != nil || n != 0 {
			t.Fatalf("collect while the peer reads: freed %d, %v", n, err)
		}
		// (The chunk files are older than OrphanGrace: the fake clock
		// starts years after their modification times.)
		if n, err := s.SweepOrphans(ctx, clk.Now()); err != nil || n != 0 {
			t.Fatalf("sweep while the peer uploads: removed %d, %v", n, err)
		}
		if _, err := peer.SweepOrphans(ctx, clk.Now()); err != nil { // renews
			t.Fatal(err)
		}
	}
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, down) {
		t.Fatalf("peer's download: %d bytes, %v", len(got), err)
	}
	record(t, peer, clk.Now(), staged)
	if got := readBack(t, s, staged.Parts, int64(len(up))); !bytes.Equal(got, up) {
		t.Fatal("peer's upload differs")
	}

	// The peer stops with its download still open: once its lease lapses
	// the items are freed and its records reclaimed.
	clk.Advance(PinLease + time.Minute)
	if n, err := s.Collect(ctx, clk.Now()); err != nil || n != 2 {
		t.Fatalf("collect after the peer's lease lapsed: freed %d, %v; want 2", n, err)
	}
	err = s.store.View(ctx, func(tx kv.Tx) error {
		for _, pre := range [][]byte{kv.Key("xo", peer.pins.owner), kv.Key("xp", peer.pins.owner)} {
			if err := tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, _ []byte) bool {
				t.Errorf("lapsed owner's record %q left", k)
				return true
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// pausingStore pauses Create after the chunk exists, before the caller
// gets its Writer.
type pausingStore struct {
	chunk.Store
	created, proceed chan struct{}
}

func (p *pausingStore) Create(ctx context.Context) (chunk.Writer, error) {
	w, err := p.Store.Create(ctx)
	close(p.created)
	<-p.proceed
	return w, err
}

// A chunk the sweeper finds between its creation and its writer pinning
// it is not removed: the sweeper's last check waits for the pin.
func TestSweepWaitsForPinOfNewChunk(t *testing.T) {
	base, clk := dtService(t)
	ps := &pausingStore{Store: base.chunks, created: make(chan struct{}), proceed: make(chan struct{})}
	s := New(base.store, ps)
	ctx := context.Background()
	clk.Advance(100 * OrphanGrace) // the new chunk file looks old at once
	body := pattern(7, InlineMax+1)
	staged := make(chan error, 1)
	var st *Staged
	go func() {
		var err error
		st, err = s.Stage(ctx, bytes.NewReader(body), int64(len(body)), Digests{}, false)
		staged <- err
	}()
	<-ps.created
	type result struct {
		n   int
		err error
	}
	swept := make(chan result, 1)
	go func() {
		n, err := s.SweepOrphans(ctx, clk.Now())
		swept <- result{n, err}
	}()
	// Wait until the sweeper either finished (it must not have removed
	// the chunk) or waits for the gate the paused Create holds: with a
	// writer waiting, TryRLock fails.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if !s.pins.gate.TryRLock() {
			break
		}
		s.pins.gate.RUnlock()
		select {
		case r := <-swept:
			swept <- r
		default:
			if time.Now().Before(deadline) {
				runtime.Gosched()
				continue
			}
			t.Fatal("the sweeper neither finished nor waited for the gate")
		}
		break
	}
	close(ps.proceed)
	if err := <-staged; err != nil {
		t.Fatalf("Stage with a sweep racing its chunk's creation: %v", err)
	}
	if r := <-swept; r.err != nil || r.n != 0 {
		t.Fatalf("sweep: removed %d, %v", r.n, r.err)
	}
	record(t, s, clk.Now(), st)
	if got := readBack(t, s, st.Parts, int64(len(body))); !bytes.Equal(got, body) {
		t.Fatal("read back differs")
	}
}

// Inline items a reader did not prefetch (a blob of many small blocks)
// are pinned as chunks are: the collector keeps them while it streams.
func TestReaderPinsInlineItems(t *testing.T) {
	s, clk := dtService(t)
	ctx := context.Background()
	var parts []Part
	var want []byte
	for i := range 8 {
		body := pattern(byte(8+i), InlineMax)
		st, err := s.Stage(ctx, bytes.NewReader(body), int64(len(body)), Digests{}, false)
		if err != nil {
			t.Fatal(err)
		}
		record(t, s, clk.Now(), st)
		p := st.Parts[0]
		if !isInline(p.ID) {
			t.Fatalf("part %v is not inline", p)
		}
		p.Off = int64(len(want))
		parts = append(parts, p)
		want = append(want, body...)
	}
	r := s.NewReader(ctx, parts, nil, 0, int64(len(want)))
	defer r.Close()
	first := make([]byte, InlineMax+10)
	if _, err := io.ReadFull(r, first); err != nil {
		t.Fatal(err)
	}
	if err := s.store.Update(ctx, func(tx kv.Tx) error { return AdjustRefs(tx, clk.Now(), parts, nil) }); err != nil {
		t.Fatal(err)
	}
	clk.Advance(GCGrace + time.Hour)
	if n, err := s.Collect(ctx, clk.Now()); err != nil || n != 0 {
		t.Fatalf("collect during the read: freed %d, %v", n, err)
	}
	rest, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(append(first, rest...), want) {
		t.Fatalf("read after the release: %d bytes, %v", len(first)+len(rest), err)
	}
	r.Close()
	clk.Advance(GCGrace)
	if n, err := s.Collect(ctx, clk.Now()); err != nil || n != 8 {
		t.Fatalf("collect after the read: freed %d, %v; want 8", n, err)
	}
}

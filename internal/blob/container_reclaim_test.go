package blob

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// countingStore counts the writes of each Update, and runs before (when
// set) ahead of each one.
type countingStore struct {
	kv.Store
	mu     sync.Mutex
	writes []int // per committed Update
	before func(n int) error
}

type countingTx struct {
	kv.Tx
	n int
}

func (t *countingTx) Put(k, v []byte) error { t.n++; return t.Tx.Put(k, v) }
func (t *countingTx) Delete(k []byte) error { t.n++; return t.Tx.Delete(k) }

func (c *countingStore) Update(ctx context.Context, fn func(kv.Tx) error) error {
	c.mu.Lock()
	n, before := len(c.writes), c.before
	c.mu.Unlock()
	if before != nil {
		if err := before(n); err != nil {
			return err
		}
	}
	var last int
	err := c.Store.Update(ctx, func(tx kv.Tx) error {
		ct := &countingTx{Tx: tx}
		err := fn(ct)
		last = ct.n
		return err
	})
	if err == nil {
		c.mu.Lock()
		c.writes = append(c.writes, last)
		c.mu.Unlock()
	}
	return err
}

func (c *countingStore) counts() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.writes...)
}

// fillContainer writes n tagged blobs (one with a snapshot) and an
// uncommitted block into c.
func fillContainer(t *testing.T, s *Service, c ContainerRef, n int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		body := fmt.Sprintf("blob %d of %s", i, c.Container)
		_, err := s.PutBlob(ctx, PutBlobInput{Ref: blobAt(c, fmt.Sprintf("b%05d", i)), Type: BlockBlob, Body: strings.NewReader(body), Length: int64(len(body)),
			NewBlob: NewBlob{Tags: blobtags.Tags{"k": "v"}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SnapshotBlob(ctx, SnapshotBlobInput{Ref: blobAt(c, "b00000")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBlock(ctx, PutBlockInput{Ref: blobAt(c, "staged"), BlockID: "YmxrMQ==", Body: strings.NewReader("staged"), Length: 6}); err != nil {
		t.Fatal(err)
	}
}

// containerKeys counts the records of c under the blob, soft-deleted and
// uncommitted-block prefixes, and its tombstone.
func containerKeys(t *testing.T, store kv.Store, c ContainerRef) (records int, tombstone bool) {
	t.Helper()
	err := store.View(context.Background(), func(tx kv.Tx) error {
		records = 0
		for _, p := range [][]byte{blobsPrefix(c.Account, c.Container), deletedPrefix(c.Account, c.Container), kv.Key("u", c.Account, c.Container)} {
			if err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(_, _ []byte) bool { records++; return true }); err != nil {
				return err
			}
		}
		var err error
		tombstone, err = containerBeingDeleted(tx, c.Account, c.Container)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return records, tombstone
}

// TestDeleteContainerReturnsAtOnce: Delete Container writes a bounded
// number of records whatever the container holds (it wrote one per blob,
// snapshot and block before, all in the request's transaction); until
// the reclaim ends the name answers 409 ContainerBeingDeleted to Create
// Container and 404 ContainerNotFound to everything else, and no listing
// shows the container or its blobs; the reclaim then removes every record
// in bounded transactions, releases every data reference, and the name
// can be created again, empty.
func TestDeleteContainerReturnsAtOnce(t *testing.T) {
	ctx := context.Background()
	store, chunks, clk := testenv.Stores(t)
	cs := &countingStore{Store: store}
	s := New(cs, chunks, clk, nil)
	c := ContainerRef{Account: "acct", Container: "cnt"}
	other := ContainerRef{Account: "acct", Container: "other"}
	for _, r := range []ContainerRef{c, other} {
		if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: r}); err != nil {
			t.Fatal(err)
		}
	}
	const n = 700
	fillContainer(t, s, other, 3)
	heldBefore := referenced(t, s)
	fillContainer(t, s, c, n)
	if referenced(t, s) <= heldBefore {
		t.Fatal("the container's blobs hold no data items")
	}
	records, _ := containerKeys(t, store, c)
	if records < n+2 { // the blobs, a snapshot, a staged block
		t.Fatalf("%d records before the delete, want at least %d", records, n+2)
	}

	before := len(cs.counts())
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	// The delete's own transaction writes a few records; then the
	// request runs at most reclaim.Inline bounded steps (a container
	// this large does not fit in them) and leaves the rest to the
	// background.
	w := cs.counts()[before:]
	if len(w) < 1 || len(w) > 1+reclaim.Inline || w[0] > 4 {
		t.Fatalf("Delete Container of %d blobs: writes per transaction %v, want one transaction of a few writes and at most %d bounded steps", n, w, reclaim.Inline)
	}
	for _, x := range w[1:] {
		if x > 2*reclaim.Batch {
			t.Fatalf("Delete Container of %d blobs: writes per transaction %v, an inline step over its bound", n, w)
		}
	}

	_, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c})
	wantCode(t, err, 409, azerr.ContainerBeingDeleted)
	_, err = s.GetContainerProperties(ctx, GetContainerPropertiesInput{Ref: c})
	wantCode(t, err, 404, azerr.ContainerNotFound)
	_, err = s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: blobAt(c, "b00001")})
	wantCode(t, err, 404, azerr.ContainerNotFound)
	_, err = s.PutBlob(ctx, PutBlobInput{Ref: blobAt(c, "new"), Type: BlockBlob, Body: strings.NewReader("x"), Length: 1})
	wantCode(t, err, 404, azerr.ContainerNotFound)
	err = s.DeleteContainer(ctx, DeleteContainerInput{Ref: c})
	wantCode(t, err, 404, azerr.ContainerNotFound)
	lc, err := s.ListContainers(ctx, ListContainersInput{Account: "acct", MaxResults: 10})
	if err != nil || len(lc.Items) != 1 || lc.Items[0].Name != "other" {
		t.Fatalf("List Containers while reclaiming: %+v %v", lc, err)
	}
	where, err := blobtags.ParseWhere(`"k"='v'`)
	if err != nil {
		t.Fatal(err)
	}
	found, err := s.FindBlobsByTags(ctx, FindBlobsByTagsInput{Account: "acct", Where: where, MaxResults: 5000})
	if err != nil || len(found.Items) != 3 {
		t.Fatalf("Find Blobs by Tags while reclaiming: %d items, %v; want the 3 of the other container", len(found.Items), err)
	}
	for _, it := range found.Items {
		if it.Container != "other" {
			t.Fatalf("Find Blobs by Tags shows %s/%s of the deleted container", it.Container, it.Name)
		}
	}

	before = len(cs.counts())
	steps, err := s.ReclaimContainers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (n+2)/reclaim.Batch + 1 - (len(w) - 1); steps < want {
		t.Fatalf("reclaim took %d transactions, want at least %d (bounded batches)", steps, want)
	}
	for _, k := range cs.counts()[before:] {
		// A batch deletes its records and adjusts one data item each
		// (a reference and, at zero, a collector queue entry).
		if k > 4*reclaim.Batch {
			t.Fatalf("a reclaim transaction wrote %d records, over the bound %d", k, 4*reclaim.Batch)
		}
	}
	if records, tomb := containerKeys(t, store, c); records != 0 || tomb {
		t.Fatalf("after the reclaim: %d records, tombstone %v", records, tomb)
	}
	// Only the other container's blobs still hold data.
	if held := referenced(t, s); held != heldBefore {
		t.Fatalf("%d data items referenced after the reclaim, want %d (the other container's)", held, heldBefore)
	}
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
		t.Fatalf("Create Container after the reclaim: %v", err)
	}
	lb, err := s.ListBlobs(ctx, ListBlobsInput{Ref: c, MaxResults: 10})
	if err != nil || len(lb.Items) != 0 {
		t.Fatalf("recreated container lists %+v, %v", lb.Items, err)
	}
	if _, body := readBlob(t, s, GetBlobInput{Ref: blobAt(other, "b00002")}); body != "blob 2 of other" {
		t.Fatalf("other container's blob reads %q", body)
	}
}

// TestReclaimLetsOtherWritersIn: the reclaim of a big container is a
// series of short transactions, not one: between two of its steps
// another client's Put Blob commits (before the fix the whole container
// went in the request's one transaction, ahead of every other writer).
// The other writer runs while the reclaim is held between its first and
// second step, so it must commit without waiting for the reclaim's end.
func TestReclaimLetsOtherWritersIn(t *testing.T) {
	ctx := context.Background()
	store, chunks, clk := testenv.Stores(t)
	s := New(store, chunks, clk, nil)
	c := ContainerRef{Account: "acct", Container: "big"}
	other := ContainerRef{Account: "acct", Container: "busy"}
	for _, r := range []ContainerRef{c, other} {
		if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: r}); err != nil {
			t.Fatal(err)
		}
	}
	fillContainer(t, s, c, 3*reclaim.Batch)
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}

	cs := &countingStore{Store: store}
	var putErr error
	var midway int
	cs.before = func(n int) error {
		if n != 1 {
			return nil
		}
		// One reclaim step is done and the next not begun: another
		// writer gets in, and sees the reclaim unfinished.
		done := make(chan error, 1)
		go func() {
			_, err := s.PutBlob(ctx, PutBlobInput{Ref: blobAt(other, "during"), Type: BlockBlob, Body: strings.NewReader("1 KiB"), Length: 5})
			done <- err
		}()
		select {
		case putErr = <-done:
		case <-time.After(10 * time.Second):
			putErr = fmt.Errorf("Put Blob into another container did not finish in 10 s while the reclaim was between steps")
		}
		midway, _ = containerKeys(t, store, c)
		return nil
	}
	r := reclaim.New(cs, clk, nil, reclaim.Batch) // fixed: the default adapts to the machine
	r.Register(reclaimKindContainer, reclaimContainerStep)
	steps, err := r.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if putErr != nil {
		t.Fatal(putErr)
	}
	if midway == 0 {
		t.Fatal("the reclaim was already over when the other writer ran: not bounded transactions")
	}
	if steps < 3 {
		t.Fatalf("reclaim of %d blobs in %d transactions", 3*reclaim.Batch, steps)
	}
	if records, tomb := containerKeys(t, store, c); records != 0 || tomb {
		t.Fatalf("after the reclaim: %d records, tombstone %v", records, tomb)
	}
	if _, body := readBlob(t, s, GetBlobInput{Ref: blobAt(other, "during")}); body != "1 KiB" {
		t.Fatalf("the other writer's blob reads %q", body)
	}
}

// TestReclaimResumesAfterRestart: a process stopped mid-reclaim (its
// context cancelled between two steps, then the store closed) leaves the
// tombstone and the rest of the records; a new process over the same
// files still answers 409 ContainerBeingDeleted, finishes the reclaim at
// start, and nothing else is lost.
func TestReclaimResumesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(testenv.Epoch)
	open := func() (*bolt.DB, *Service) {
		db, err := bolt.Open(filepath.Join(dir, "meta.db"), bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		chunks, err := chunk.NewFS(filepath.Join(dir, "chunks"))
		if err != nil {
			t.Fatal(err)
		}
		return db, New(db, chunks, clk, nil)
	}
	db, s := open()
	ctx := context.Background()
	c := ContainerRef{Account: "acct", Container: "big"}
	keep := ContainerRef{Account: "acct", Container: "keep"}
	for _, r := range []ContainerRef{c, keep} {
		if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: r}); err != nil {
			t.Fatal(err)
		}
	}
	fillContainer(t, s, c, 3*reclaim.Batch)
	fillContainer(t, s, keep, 5)
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	// Stop after the first step, as SIGTERM would.
	cs := &countingStore{Store: db}
	stop, cancel := context.WithCancel(ctx)
	cs.before = func(n int) error {
		if n == 1 {
			cancel()
		}
		return nil
	}
	r := reclaim.New(cs, clk, nil, reclaim.Batch) // fixed: the default adapts to the machine
	r.Register(reclaimKindContainer, reclaimContainerStep)
	if steps, err := r.Drain(stop); err == nil || steps != 1 {
		t.Fatalf("stopped reclaim: %d steps, %v; want 1 and the context's error", steps, err)
	}
	left, tomb := containerKeys(t, db, c)
	if left == 0 || !tomb {
		t.Fatalf("after one step: %d records, tombstone %v", left, tomb)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, s = open()
	defer db.Close()
	_, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c})
	wantCode(t, err, 409, azerr.ContainerBeingDeleted)
	run, stopRun := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); s.Reclaimer().Run(run, time.Hour) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left, tomb = containerKeys(t, db, c)
		if left == 0 && !tomb {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reclaim not resumed after restart: %d records, tombstone %v", left, tomb)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopRun()
	<-done
	for i := 0; i < 5; i++ {
		want := fmt.Sprintf("blob %d of keep", i)
		if _, body := readBlob(t, s, GetBlobInput{Ref: blobAt(keep, fmt.Sprintf("b%05d", i))}); !bytes.Equal([]byte(body), []byte(want)) {
			t.Fatalf("kept blob %d reads %q", i, body)
		}
	}
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
		t.Fatalf("Create Container after the resumed reclaim: %v", err)
	}
}

// referenced counts the data items with references.
func referenced(t *testing.T, s *Service) int {
	t.Helper()
	n := 0
	for _, it := range dtItems(t, s) {
		if it.Refs > 0 {
			n++
		}
	}
	return n
}

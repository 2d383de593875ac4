package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/google/uuid"
)

const (
	raceN      = 16
	raceRounds = 5
)

// raceOutcome is what one contender got back.
type raceOutcome struct {
	status int
	code   string
	etag   string
}

// race runs fn(i) for i in [0, raceN) at once (released together) and
// returns the outcomes; fn returns the new ETag on success.
func race(fn func(i int) (string, error)) []raceOutcome {
	out := make([]raceOutcome, raceN)
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	for i := range raceN {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-gate
			etag, err := fn(i)
			st, code := bxErrCode(err)
			out[i] = raceOutcome{status: st, code: code, etag: etag}
		}()
	}
	ready.Wait()
	close(gate)
	done.Wait()
	return out
}

// oneWinner asserts exactly one success and raceN-1 failures with
// loseStatus/loseCode, and returns the winner's index.
func oneWinner(t *testing.T, round int, out []raceOutcome, loseStatus int, loseCode bloberror.Code) int {
	t.Helper()
	winner := -1
	for i, o := range out {
		switch {
		case o.status == 0 && o.code == "":
			if winner >= 0 {
				t.Fatalf("round %d: contenders %d and %d both succeeded", round, winner, i)
			}
			winner = i
		case o.status == loseStatus && o.code == string(loseCode):
		default:
			t.Fatalf("round %d: contender %d got %d %s, want success or %d %s", round, i, o.status, o.code, loseStatus, loseCode)
		}
	}
	if winner < 0 {
		t.Fatalf("round %d: no contender succeeded", round)
	}
	return winner
}

func raceBody(round, i int) []byte {
	// Large enough for the chunk store on some contenders, inline on others.
	n := 1000
	if i%2 == 1 {
		n = 70 << 10
	}
	return bytes.Repeat([]byte{byte('A' + i)}, n+round)
}

func TestRaceIfMatchPutBlob(t *testing.T) {
	b := newBlobT(t)
	c := b.bb("r")
	etag := *b.put("r", []byte("start"), nil).ETag
	for round := range raceRounds {
		out := race(func(i int) (string, error) {
			r, err := c.Upload(b.ctx, bxBody(raceBody(round, i)), &blockblob.UploadOptions{
				AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfMatch: &etag}),
				Metadata:         bxMeta("writer", fmt.Sprint(i)),
			})
			return bxETag(r.ETag), err
		})
		w := oneWinner(t, round, out, 412, bloberror.ConditionNotMet)
		if got := b.read(c); !bytes.Equal(got, raceBody(round, w)) {
			t.Fatalf("round %d: content is not the winner's (%d bytes of %q)", round, len(got), got[:1])
		}
		p := b.props(c)
		bxWantMeta(t, p.Metadata, map[string]string{"writer": fmt.Sprint(w)})
		if bxETag(p.ETag) != out[w].etag {
			t.Fatalf("round %d: ETag %s, winner got %s", round, bxETag(p.ETag), out[w].etag)
		}
		etag = *p.ETag
	}
}

func TestRaceIfMatchSetMetadata(t *testing.T) {
	b := newBlobT(t)
	c := b.bb("m")
	data := []byte("content stays")
	etag := *b.put("m", data, nil).ETag
	for round := range raceRounds {
		out := race(func(i int) (string, error) {
			r, err := c.SetMetadata(b.ctx, bxMeta("writer", fmt.Sprint(i), "round", fmt.Sprint(round)), &blob.SetMetadataOptions{
				AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfMatch: &etag}),
			})
			return bxETag(r.ETag), err
		})
		w := oneWinner(t, round, out, 412, bloberror.ConditionNotMet)
		p := b.props(c)
		bxWantMeta(t, p.Metadata, map[string]string{"writer": fmt.Sprint(w), "round": fmt.Sprint(round)})
		if bxETag(p.ETag) != out[w].etag {
			t.Fatalf("round %d: ETag %s, winner got %s", round, bxETag(p.ETag), out[w].etag)
		}
		if !bytes.Equal(b.read(c), data) {
			t.Fatal("content changed")
		}
		etag = *p.ETag
	}
}

func TestRaceIfMatchMixedWrites(t *testing.T) {
	// Different kinds of writes race on one ETag: still exactly one wins.
	b := newBlobT(t)
	c := b.bb("x")
	etag := *b.put("x", []byte("start"), nil).ETag
	for round := range raceRounds {
		out := race(func(i int) (string, error) {
			ac := bxMAC(&blob.ModifiedAccessConditions{IfMatch: &etag})
			switch i % 4 {
			case 0:
				r, err := c.Upload(b.ctx, bxBody(raceBody(round, i)), &blockblob.UploadOptions{AccessConditions: ac})
				return bxETag(r.ETag), err
			case 1:
				r, err := c.SetMetadata(b.ctx, bxMeta("w", fmt.Sprint(i)), &blob.SetMetadataOptions{AccessConditions: ac})
				return bxETag(r.ETag), err
			case 2:
				r, err := c.SetHTTPHeaders(b.ctx, blob.HTTPHeaders{BlobContentType: bxPtr(fmt.Sprintf("text/w%d", i))}, &blob.SetHTTPHeadersOptions{AccessConditions: ac})
				return bxETag(r.ETag), err
			default:
				r, err := c.CommitBlockList(b.ctx, nil, &blockblob.CommitBlockListOptions{AccessConditions: ac})
				return bxETag(r.ETag), err
			}
		})
		w := oneWinner(t, round, out, 412, bloberror.ConditionNotMet)
		p := b.props(c)
		if bxETag(p.ETag) != out[w].etag {
			t.Fatalf("round %d: ETag %s, winner %d got %s", round, bxETag(p.ETag), w, out[w].etag)
		}
		etag = *p.ETag
	}
}

func bxPtr[T any](v T) *T { return &v }

func TestRaceCreateIfNoneMatchStar(t *testing.T) {
	b := newBlobT(t)
	star := azcore.ETagAny
	for round := range raceRounds {
		name := fmt.Sprintf("new-%d", round)
		c := b.bb(name)
		out := race(func(i int) (string, error) {
			r, err := c.Upload(b.ctx, bxBody(raceBody(round, i)), &blockblob.UploadOptions{
				AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfNoneMatch: &star}),
			})
			return bxETag(r.ETag), err
		})
		w := oneWinner(t, round, out, 409, bloberror.BlobAlreadyExists)
		if got := b.read(c); !bytes.Equal(got, raceBody(round, w)) {
			t.Fatalf("round %d: content is not the winner's", round)
		}
		if bxETag(b.props(c).ETag) != out[w].etag {
			t.Fatalf("round %d: ETag is not the winner's", round)
		}
	}
	// The same with Put Block List as the creating write.
	for round := range raceRounds {
		name := fmt.Sprintf("list-%d", round)
		c := b.bb(name)
		out := race(func(i int) (string, error) {
			r, err := c.CommitBlockList(b.ctx, nil, &blockblob.CommitBlockListOptions{
				AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfNoneMatch: &star}),
				Metadata:         bxMeta("writer", fmt.Sprint(i)),
			})
			return bxETag(r.ETag), err
		})
		w := oneWinner(t, round, out, 409, bloberror.BlobAlreadyExists)
		bxWantMeta(t, b.props(c).Metadata, map[string]string{"writer": fmt.Sprint(w)})
	}
}

func TestRaceLeaseAcquire(t *testing.T) {
	b := newBlobT(t)
	b.put("l", []byte("x"), nil)
	for round := range raceRounds {
		ids := make([]string, raceN)
		for i := range ids {
			ids[i] = uuid.NewString()
		}
		dur := int32(-1)
		if round%2 == 1 {
			dur = 15
		}
		out := race(func(i int) (string, error) {
			lc, err := lease.NewBlobClient(b.bb("l"), &lease.BlobClientOptions{LeaseID: &ids[i]})
			if err != nil {
				return "", err
			}
			r, err := lc.AcquireLease(b.ctx, dur, nil)
			return bxETag(r.ETag), err
		})
		w := oneWinner(t, round, out, 409, bloberror.LeaseAlreadyPresent)
		want := lease.DurationTypeInfinite
		if dur > 0 {
			want = lease.DurationTypeFixed
		}
		b.wantLeased("l", want)
		// Only the winner's id writes.
		for i, id := range ids {
			_, err := b.bb("l").SetMetadata(b.ctx, bxMeta("r", fmt.Sprint(round)), &blob.SetMetadataOptions{AccessConditions: bxLeaseAC(id)})
			if i == w {
				must(t, err)
			} else {
				wantCode(t, err, 412, bloberror.LeaseIDMismatchWithBlobOperation)
			}
		}
		// Racing releases: the winner's succeeds, every other id fails.
		out = race(func(i int) (string, error) {
			lc, err := lease.NewBlobClient(b.bb("l"), &lease.BlobClientOptions{LeaseID: &ids[i]})
			if err != nil {
				return "", err
			}
			r, err := lc.ReleaseLease(b.ctx, nil)
			return bxETag(r.ETag), err
		})
		if w2 := oneWinner(t, round, out, 409, bloberror.LeaseIDMismatchWithLeaseOperation); w2 != w {
			t.Fatalf("round %d: %d released the lease of %d", round, w2, w)
		}
		b.wantLease("l", lease.StatusTypeUnlocked, lease.StateTypeAvailable, "")
	}
}

func TestRaceLeasedWritersAndBreak(t *testing.T) {
	// Writers holding the lease id race a break with period 0: every write
	// either lands before the break (with the id) or fails after it
	// (412 LeaseNotPresentWithBlobOperation); none is lost or half-applied.
	b := newBlobT(t)
	b.put("lb", []byte("x"), nil)
	for round := range raceRounds {
		A := b.lc("lb", "")
		_, err := A.AcquireLease(b.ctx, -1, nil)
		must(t, err)
		id := *A.LeaseID()
		out := race(func(i int) (string, error) {
			if i == 0 {
				_, err := b.lc("lb", "").BreakLease(b.ctx, &lease.BlobBreakOptions{BreakPeriod: bxPtr[int32](0)})
				return "", err
			}
			r, err := b.bb("lb").SetMetadata(b.ctx, bxMeta("w", fmt.Sprint(i)), &blob.SetMetadataOptions{AccessConditions: bxLeaseAC(id)})
			return bxETag(r.ETag), err
		})
		if out[0].status != 0 {
			t.Fatalf("round %d: break failed: %d %s", round, out[0].status, out[0].code)
		}
		var last string
		for i, o := range out[1:] {
			switch {
			case o.status == 0:
				last = o.etag
			case o.status == 412 && o.code == string(bloberror.LeaseNotPresentWithBlobOperation):
			default:
				t.Fatalf("round %d: writer %d got %d %s", round, i+1, o.status, o.code)
			}
		}
		b.wantLease("lb", lease.StatusTypeUnlocked, lease.StateTypeBroken, "")
		p := b.props(b.bb("lb"))
		if last != "" {
			found := false
			for _, o := range out[1:] {
				if o.status == 0 && o.etag == bxETag(p.ETag) {
					found = true
				}
			}
			if !found {
				t.Fatalf("round %d: final ETag %s is not any successful writer's", round, bxETag(p.ETag))
			}
		}
	}
}

// TestRaceSnapshotIsolation: readers never see a mix of two versions
// while writers keep replacing the whole body.
func TestRaceSnapshotIsolation(t *testing.T) {
	b := newBlobT(t)
	const (
		writers       = 4
		readers       = 8
		writesPerWrtr = 12
	)
	for _, size := range []int{200 << 10, 40 << 10, 9 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			defer b.use(t)()
			name := fmt.Sprintf("iso-%d", size)
			c := b.bb(name)
			b.put(name, bytes.Repeat([]byte{0}, size), nil)
			var version atomic.Int32
			var stop atomic.Bool
			errs := make(chan error, writers+readers)
			var wg sync.WaitGroup
			writes := writesPerWrtr
			if size > 1<<20 {
				writes = 3
			}
			for range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range writes {
						v := byte(version.Add(1))
						if _, err := c.Upload(b.ctx, bxBody(bytes.Repeat([]byte{v}, size)), nil); err != nil {
							errs <- fmt.Errorf("write: %w", err)
							return
						}
					}
				}()
			}
			var reads atomic.Int64
			var rwg sync.WaitGroup
			for r := range readers {
				rwg.Add(1)
				go func() {
					defer rwg.Done()
					// One buffer per reader: under -race every fresh
					// multi-MiB allocation costs shadow memory, and
					// io.ReadAll's regrowth made this test take minutes.
					buf := make([]byte, size+1)
					for !stop.Load() {
						var o *blob.DownloadStreamOptions
						if r%2 == 1 {
							// A ranged read spanning the whole middle.
							o = &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 1, Count: int64(size - 2)}}
						}
						resp, err := c.DownloadStream(b.ctx, o)
						if err != nil {
							errs <- fmt.Errorf("read: %w", err)
							return
						}
						n, err := io.ReadFull(resp.Body, buf)
						resp.Body.Close()
						if err != nil && err != io.ErrUnexpectedEOF {
							errs <- fmt.Errorf("read body: %w", err)
							return
						}
						got := buf[:n]
						want := size
						if o != nil {
							want = size - 2
						}
						if len(got) != want {
							errs <- fmt.Errorf("read %d bytes, want %d", len(got), want)
							return
						}
						if n := bytes.Count(got, got[:1]); n != len(got) {
							errs <- fmt.Errorf("read a mix of versions: starts with %d, %d of %d bytes match", got[0], n, len(got))
							return
						}
						reads.Add(1)
					}
				}()
			}
			wg.Wait()
			stop.Store(true)
			rwg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if reads.Load() == 0 {
				t.Fatal("no read completed")
			}
			// The final content is one whole version.
			got := b.read(c)
			if len(got) != size || bytes.Count(got, got[:1]) != size {
				t.Fatal("final content is not one whole version")
			}
		})
	}
}

// TestRaceCommitBlockListIfMatch: concurrent Put Block / Put Block List on one blob
// with If-Match: every commit is all-or-nothing.
func TestRaceCommitBlockListIfMatch(t *testing.T) {
	b := newBlobT(t)
	c := b.bb("bl")
	etag := *b.put("bl", []byte("start"), nil).ETag
	for round := range raceRounds {
		out := race(func(i int) (string, error) {
			id := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("r%02d-w%02d", round, i)))
			if _, err := c.StageBlock(b.ctx, id, bxBody(raceBody(round, i)), nil); err != nil {
				return "", err
			}
			r, err := c.CommitBlockList(b.ctx, []string{id}, &blockblob.CommitBlockListOptions{
				AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfMatch: &etag}),
			})
			return bxETag(r.ETag), err
		})
		// Losers either fail the condition or find their block already
		// discarded by the winner's commit.
		winner := -1
		for i, o := range out {
			switch {
			case o.status == 0:
				if winner >= 0 {
					t.Fatalf("round %d: %d and %d both committed", round, winner, i)
				}
				winner = i
			case o.status == 412 && o.code == string(bloberror.ConditionNotMet):
			case o.status == 400 && o.code == string(bloberror.InvalidBlockList):
			default:
				t.Fatalf("round %d: contender %d got %d %s", round, i, o.status, o.code)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody committed", round)
		}
		if got := b.read(c); !bytes.Equal(got, raceBody(round, winner)) {
			t.Fatalf("round %d: content is not the winner's", round)
		}
		p := b.props(c)
		if bxETag(p.ETag) != out[winner].etag {
			t.Fatalf("round %d: ETag is not the winner's", round)
		}
		etag = *p.ETag
	}
}

package multiproc

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
)

// blockBlob returns the client of container/name on cl's process.
func blockBlob(cl *azblob.Client, container, name string) *blockblob.Client {
	return cl.ServiceClient().NewContainerClient(container).NewBlockBlobClient(name)
}

// putBlob is one Put Blob of content.
func putBlob(ctx context.Context, bb *blockblob.Client, content string, ac *blob.AccessConditions) (azcore.ETag, error) {
	resp, err := bb.Upload(ctx, streaming.NopCloser(strings.NewReader(content)), &blockblob.UploadOptions{AccessConditions: ac})
	if err != nil {
		return "", err
	}
	return *resp.ETag, nil
}

// getBlob is one Get Blob: the content and the ETag of one response.
func getBlob(ctx context.Context, bb *blockblob.Client) (string, azcore.ETag, error) {
	resp, err := bb.DownloadStream(ctx, nil)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", "", err
	}
	return string(b), *resp.ETag, nil
}

func ifMatch(etag azcore.ETag) *blob.AccessConditions {
	return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(etag)}}
}

func withLease(id string) *blob.AccessConditions {
	return &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: to.Ptr(id)}}
}

// TestIfMatchRace: in every round, 4 clients on each process send a
// conditional Put Blob with the same If-Match ETag at once. Exactly one
// wins, every other gets 412 ConditionNotMet, and afterwards every process
// serves the winner's content and ETag.
func TestIfMatchRace(t *testing.T) {
	c := newCluster(t, blobSvc)
	ctx := ctxFor(t, 2*time.Minute)
	const rounds, perNode = 40, 4
	_, err := c.Blob(0).CreateContainer(ctx, "race", nil)
	must(t, "create container", err)
	etag, err := putBlob(ctx, blockBlob(c.Blob(0), "race", "b"), "initial", nil)
	must(t, "initial put", err)

	type racer struct {
		node int
		bb   *blockblob.Client
	}
	var racers []racer
	var readers []*blockblob.Client
	for i := range nodes {
		readers = append(readers, blockBlob(c.Blob(i), "race", "b"))
		for range perNode {
			racers = append(racers, racer{i, blockBlob(c.Blob(i), "race", "b")})
		}
	}
	type result struct {
		content string
		etag    azcore.ETag
		err     error
	}
	wins := make([]int, nodes)
	losses := 0
	start := time.Now()
	for r := range rounds {
		results := make([]result, len(racers))
		gate := make(chan struct{})
		var wg sync.WaitGroup
		for k, rc := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				content := fmt.Sprintf("round %d racer %d node %d", r, k, rc.node)
				<-gate
				e, err := putBlob(ctx, rc.bb, content, ifMatch(etag))
				results[k] = result{content, e, err}
			}()
		}
		close(gate)
		wg.Wait()
		var winner *result
		for k := range results {
			res := &results[k]
			if res.err == nil {
				if winner != nil {
					t.Fatalf("round %d: two winners: %q (ETag %s) and %q (ETag %s)", r, winner.content, winner.etag, res.content, res.etag)
				}
				winner = res
				wins[racers[k].node]++
				continue
			}
			if !bloberror.HasCode(res.err, bloberror.ConditionNotMet) {
				t.Fatalf("round %d: racer %d (node %d): want success or 412 ConditionNotMet, got %v", r, k, racers[k].node, errOrOK(res.err))
			}
			wantCode(t, fmt.Sprintf("round %d racer %d", r, k), res.err, 412, string(bloberror.ConditionNotMet))
			losses++
		}
		if winner == nil {
			t.Fatalf("round %d: no winner among %d conditional writers", r, len(racers))
		}
		if winner.etag == etag {
			t.Fatalf("round %d: the winning write kept the ETag %s", r, etag)
		}
		for i, rd := range readers {
			content, e, err := getBlob(ctx, rd)
			must(t, fmt.Sprintf("round %d: read through node %d", r, i), err)
			if content != winner.content || e != winner.etag {
				t.Fatalf("round %d: node %d reads %q (ETag %s), want the winner's %q (ETag %s)", r, i, content, e, winner.content, winner.etag)
			}
		}
		etag = winner.etag
	}
	t.Logf("%d rounds of %d concurrent If-Match writers over %d processes in %v: one winner per round (wins per process %v), %d × 412 ConditionNotMet, every process then read the winner",
		rounds, len(racers), nodes, time.Since(start).Round(time.Millisecond), wins, losses)
}

// version parses the content "v<n>" written by TestReadYourWrites.
func version(content string) (int64, error) {
	if !strings.HasPrefix(content, "v") {
		return 0, fmt.Errorf("content %q is not a version", content)
	}
	return strconv.ParseInt(content[1:], 10, 64)
}

// TestReadYourWrites: a writer writes increasing versions through process
// 0. After each acknowledged write, reads through processes 1 and 2 return
// that version or a newer one. Meanwhile readers on every process read in
// a loop: each read returns at least the version acknowledged before it
// started, versions never go backwards for a reader, and every (version,
// ETag) pair read is the one the writer was given.
func TestReadYourWrites(t *testing.T) {
	c := newCluster(t, blobSvc)
	ctx := ctxFor(t, 2*time.Minute)
	const writes, readersPerNode = 150, 2
	const maxWriting = 40 * time.Second
	_, err := c.Blob(0).CreateContainer(ctx, "ryw", nil)
	must(t, "create container", err)
	writer := blockBlob(c.Blob(0), "ryw", "b")
	e0, err := putBlob(ctx, writer, "v0", nil)
	must(t, "put v0", err)

	var etags sync.Map // version → the ETag its Put Blob returned
	etags.Store(int64(0), e0)
	var acked atomic.Int64
	done := make(chan struct{})

	type seen struct {
		v    int64
		etag azcore.ETag
	}
	var wg sync.WaitGroup
	var reads atomic.Int64
	observed := make([][]seen, nodes*readersPerNode)
	for r := range nodes * readersPerNode {
		node := r % nodes
		bb := blockBlob(c.Blob(node), "ryw", "b")
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(-1)
			for n := 0; n < 100000; n++ {
				select {
				case <-done:
					return
				default:
				}
				lower := acked.Load()
				content, e, err := getBlob(ctx, bb)
				if err != nil {
					t.Errorf("reader %d (node %d): %v", r, node, err)
					return
				}
				v, err := version(content)
				if err != nil {
					t.Errorf("reader %d (node %d): %v", r, node, err)
					return
				}
				reads.Add(1)
				if v < lower {
					t.Errorf("reader %d (node %d) read v%d although v%d was acknowledged before the read started", r, node, v, lower)
				}
				if v < last {
					t.Errorf("reader %d (node %d) read v%d after v%d: versions went backwards", r, node, v, last)
				}
				last = v
				observed[r] = append(observed[r], seen{v, e})
			}
		}()
	}

	checkers := []*blockblob.Client{blockBlob(c.Blob(1), "ryw", "b"), blockBlob(c.Blob(2), "ryw", "b")}
	start := time.Now()
	n := int64(1)
	for ; n <= writes && time.Since(start) < maxWriting && !t.Failed(); n++ {
		e, err := putBlob(ctx, writer, fmt.Sprintf("v%d", n), nil)
		if err != nil {
			t.Errorf("put v%d through node 0: %v", n, err)
			break
		}
		etags.Store(n, e)
		acked.Store(n)
		for i, ch := range checkers {
			content, _, err := getBlob(ctx, ch)
			if err != nil {
				t.Errorf("read through node %d after v%d: %v", i+1, n, err)
				continue
			}
			if v, err := version(content); err != nil || v < n {
				t.Errorf("read through node %d after v%d was acknowledged returned %q", i+1, n, content)
			}
		}
	}
	close(done)
	wg.Wait()
	written := n - 1
	if written < 50 {
		t.Errorf("only %d versions written in %v", written, maxWriting)
	}
	for r, obs := range observed {
		for _, s := range obs {
			if e, ok := etags.Load(s.v); !ok || e.(azcore.ETag) != s.etag {
				t.Errorf("reader %d read v%d with ETag %s; its Put Blob returned %v", r, s.v, s.etag, e)
				break
			}
		}
	}
	t.Logf("%d versions written through node 0 in %v, each read back through nodes 1 and 2; %d concurrent reads by %d readers on %d processes: none stale, none backwards, ETags consistent",
		written, time.Since(start).Round(time.Millisecond), reads.Load(), nodes*readersPerNode, nodes)
}

// TestLeaseAcrossProcesses: lease state lives in the shared store, so a
// lease taken through one process binds every other process.
func TestLeaseAcrossProcesses(t *testing.T) {
	c := newCluster(t, blobSvc)
	ctx := ctxFor(t, time.Minute)
	_, err := c.Blob(0).CreateContainer(ctx, "lease", nil)
	must(t, "create container", err)
	var bb [nodes]*blockblob.Client
	for i := range nodes {
		bb[i] = blockBlob(c.Blob(i), "lease", "b")
	}
	_, err = putBlob(ctx, bb[0], "initial", nil)
	must(t, "initial put", err)
	leaseClient := func(i int, id string) *lease.BlobClient {
		lc, err := lease.NewBlobClient(bb[i], &lease.BlobClientOptions{LeaseID: to.Ptr(id)})
		must(t, "lease client", err)
		return lc
	}

	// Two clients per process race to acquire: exactly one lease is granted.
	type attempt struct {
		node int
		id   string
		err  error
	}
	attempts := make([]attempt, 2*nodes)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for k := range attempts {
		node := k % nodes
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", k+1)
		lc := leaseClient(node, id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			_, err := lc.AcquireLease(ctx, 60, nil)
			attempts[k] = attempt{node, id, err}
		}()
	}
	close(gate)
	wg.Wait()
	var holder *attempt
	for k := range attempts {
		a := &attempts[k]
		if a.err == nil {
			if holder != nil {
				t.Fatalf("two leases granted at once: %s through node %d and %s through node %d", holder.id, holder.node, a.id, a.node)
			}
			holder = a
			continue
		}
		wantCode(t, fmt.Sprintf("concurrent acquire through node %d", a.node), a.err, 409, string(bloberror.LeaseAlreadyPresent))
	}
	if holder == nil {
		t.Fatal("no concurrent acquire succeeded")
	}
	// Released through another process than the one that granted it.
	_, err = leaseClient((holder.node+1)%nodes, holder.id).ReleaseLease(ctx, nil)
	must(t, fmt.Sprintf("release through node %d of the lease acquired through node %d", (holder.node+1)%nodes, holder.node), err)

	// A acquires; B and C cannot write without the lease id.
	const id = "11111111-1111-4111-8111-111111111111"
	_, err = leaseClient(0, id).AcquireLease(ctx, 60, nil)
	must(t, "acquire through node 0", err)
	for i := 1; i < nodes; i++ {
		_, err := putBlob(ctx, bb[i], "no lease", nil)
		wantCode(t, fmt.Sprintf("put without lease id through node %d", i), err, 412, string(bloberror.LeaseIDMissing))
		_, err = bb[i].SetMetadata(ctx, map[string]*string{"k": to.Ptr("v")}, nil)
		wantCode(t, fmt.Sprintf("set metadata without lease id through node %d", i), err, 412, string(bloberror.LeaseIDMissing))
		_, err = putBlob(ctx, bb[i], "wrong lease", withLease("22222222-2222-4222-8222-222222222222"))
		wantCode(t, fmt.Sprintf("put with another lease id through node %d", i), err, 412, string(bloberror.LeaseIDMismatchWithBlobOperation))
		_, err = leaseClient(i, "33333333-3333-4333-8333-333333333333").AcquireLease(ctx, 60, nil)
		wantCode(t, fmt.Sprintf("acquire through node %d", i), err, 409, string(bloberror.LeaseAlreadyPresent))
	}
	// Writes carrying the lease id succeed through any process.
	for i := range nodes {
		content := fmt.Sprintf("leased write through node %d", i)
		e, err := putBlob(ctx, bb[i], content, withLease(id))
		must(t, fmt.Sprintf("put with the lease id through node %d", i), err)
		got, ge, err := getBlob(ctx, bb[(i+1)%nodes])
		must(t, "read back", err)
		if got != content || ge != e {
			t.Errorf("node %d reads %q (%s) after the leased write %q (%s) through node %d", (i+1)%nodes, got, ge, content, e, i)
		}
	}
	// C breaks the lease at once; A sees it broken.
	_, err = leaseClient(2, id).BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr(int32(0))})
	must(t, "break through node 2", err)
	p, err := bb[0].GetProperties(ctx, nil)
	must(t, "properties through node 0", err)
	if p.LeaseState == nil || *p.LeaseState != lease.StateTypeBroken || p.LeaseStatus == nil || *p.LeaseStatus != lease.StatusTypeUnlocked {
		t.Errorf("node 0 after the break through node 2: lease state %v, status %v; want broken, unlocked", deref(p.LeaseState), deref(p.LeaseStatus))
	}
	_, err = putBlob(ctx, bb[0], "old lease", withLease(id))
	wantCode(t, "put with the broken lease's id through node 0", err, 412, string(bloberror.LeaseNotPresentWithBlobOperation))
	_, err = leaseClient(0, id).RenewLease(ctx, nil)
	wantCode(t, "renew of the broken lease through node 0", err, 409, string(bloberror.LeaseIsBrokenAndCannotBeRenewed))
	_, err = putBlob(ctx, bb[0], "after break", nil)
	must(t, "put without lease through node 0 after the break", err)
	_, err = leaseClient(0, "44444444-4444-4444-8444-444444444444").AcquireLease(ctx, 60, nil)
	must(t, "new acquire through node 0 after the break", err)
	_, err = putBlob(ctx, bb[1], "no lease", nil)
	wantCode(t, "put without lease id through node 1 after the new acquire", err, 412, string(bloberror.LeaseIDMissing))
	t.Logf("%d concurrent acquires through %d processes: one lease (through node %d), released through node %d; lease through node 0 enforced by nodes 1 and 2, leased writes through all; break through node 2 seen by node 0",
		len(attempts), nodes, holder.node, (holder.node+1)%nodes)
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// ScaleOptions configure Scale.
type ScaleOptions struct {
	BlobURL, QueueURL, TableURL string
	Account, Key                string
	Sizes                       []int         // item counts (default 10⁴, 10⁵, 10⁶)
	Clients                     int           // fill concurrency (default 16)
	Samples                     int           // point operations timed per size (default 1,000)
	FillLimit                   time.Duration // a fill slower than this stops the larger sizes (default 10 min)
	MetricsURL                  string        // the server's /metrics, for RSS
	DataDir                     string        // the server's data directory, for its size
	Services                    []string      // of "blob", "table", "queue" (default all)
}

func (o *ScaleOptions) defaults() {
	if len(o.Sizes) == 0 {
		o.Sizes = []int{1e4, 1e5, 1e6}
	}
	if o.Clients <= 0 {
		o.Clients = 16
	}
	if o.Samples <= 0 {
		o.Samples = 1000
	}
	if o.FillLimit <= 0 {
		o.FillLimit = 10 * time.Minute
	}
	if len(o.Services) == 0 {
		o.Services = []string{"blob", "table", "queue"}
	}
}

// errFillTooSlow stops a service's larger sizes.
var errFillTooSlow = errors.New("fill slower than the limit")

// Scale is the scale benchmark of docs/benchmarks.md ("Scale"): for each
// size N it fills a fresh container with N blobs, a table with N entities
// and a queue with N messages, and reports the fill rate, the latency of
// point operations at that size (Get Blob Properties, Put Blob, Get Entity,
// Insert Entity, Put Message, Peek Messages, Get+Delete Message), the
// full-listing rate, the root listing with a delimiter, a filtered scan of
// the table, the server's RSS and data size, and then the big delete
// (Delete Container, Delete Table, Clear Messages): how long the request
// took, how long until the name can be created again, and another
// client's 1 KiB Put Blob p50/p99 while it ran against the same client's
// figures before it. A fill that takes longer than o.FillLimit ends that
// service's larger sizes (Azurite's slower fills).
func Scale(ctx context.Context, o ScaleOptions, out io.Writer) error {
	o.defaults()
	bc, err := Client(o.BlobURL, o.Account, o.Key, o.Clients+2)
	if err != nil {
		return err
	}
	ts, err := TableClient(o.TableURL, o.Account, o.Key, o.Clients)
	if err != nil {
		return err
	}
	qs, err := QueueClient(o.QueueURL, o.Account, o.Key, o.Clients)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, s := range o.Services {
		want[s] = true
	}
	stats := func() string {
		var parts []string
		if o.MetricsURL != "" {
			parts = append(parts, serverStats(o.MetricsURL))
		}
		if o.DataDir != "" {
			onDisk, apparent := dirSize(o.DataDir)
			parts = append(parts, fmt.Sprintf("data %.0f MiB on disk (%.0f apparent)", float64(onDisk)/(1<<20), float64(apparent)/(1<<20)))
		}
		return strings.Join(parts, "; ")
	}
	// The other writer of the big-delete figures writes into a container
	// of its own.
	other := fmt.Sprintf("scaleother%d", time.Now().UnixNano())
	if _, err := bc.CreateContainer(ctx, other, nil); err != nil {
		return fmt.Errorf("create %s: %w", other, err)
	}
	defer bc.DeleteContainer(context.WithoutCancel(ctx), other, nil)
	during := func(fn func() error) (base, while latencies, err error) {
		base = otherWriter(ctx, bc, other, 2*time.Second, nil)
		done := make(chan struct{})
		var ferr error
		go func() { defer close(done); ferr = fn() }()
		while = otherWriter(ctx, bc, other, 0, done)
		return base, while, ferr
	}
	stopped := map[string]bool{}
	for _, n := range o.Sizes {
		fmt.Fprintf(out, "== %d items\n", n)
		if want["blob"] && !stopped["blob"] {
			if err := scaleBlobs(ctx, bc, n, o, out, stats, during); errors.Is(err, errFillTooSlow) {
				stopped["blob"] = true
			} else if err != nil {
				return fmt.Errorf("blobs at %d: %w", n, err)
			}
		}
		if want["table"] && !stopped["table"] {
			if err := scaleTable(ctx, ts, n, o, out, stats, during); errors.Is(err, errFillTooSlow) {
				stopped["table"] = true
			} else if err != nil {
				return fmt.Errorf("table at %d: %w", n, err)
			}
		}
		if want["queue"] && !stopped["queue"] {
			if err := scaleQueue(ctx, qs, n, o, out, stats, during); errors.Is(err, errFillTooSlow) {
				stopped["queue"] = true
			} else if err != nil {
				return fmt.Errorf("queue at %d: %w", n, err)
			}
		}
	}
	return nil
}

// latencies are sorted durations.
type latencies []time.Duration

func (l latencies) String() string {
	if len(l) == 0 {
		return "no samples"
	}
	return fmt.Sprintf("p50 %v p99 %v (%d)", percentile(l, .5).Round(10*time.Microsecond), percentile(l, .99).Round(10*time.Microsecond), len(l))
}

// otherWriter puts 1 KiB blobs into container from one client for d, or
// until done is closed, and returns their latencies.
func otherWriter(ctx context.Context, bc *azblob.Client, container string, d time.Duration, done <-chan struct{}) latencies {
	body := make([]byte, 1024)
	var l latencies
	end := time.Now().Add(d)
	for i := 0; ; i++ {
		if done != nil {
			select {
			case <-done:
				slices.Sort(l)
				return l
			default:
			}
		} else if time.Now().After(end) {
			break
		}
		t0 := time.Now()
		if _, err := bc.UploadBuffer(ctx, container, fmt.Sprintf("o%d", i%100), body, nil); err == nil {
			l = append(l, time.Since(t0))
		}
		if ctx.Err() != nil {
			break
		}
	}
	slices.Sort(l)
	return l
}

// fill runs put(i) for i in [0, n) from clients workers and returns the
// rate, or errFillTooSlow once it has run longer than limit.
func fill(ctx context.Context, n, clients int, limit time.Duration, put func(ctx context.Context, i int) error) (float64, error) {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var slow atomic.Bool
	t0 := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil || slow.Load() {
					return
				}
				if time.Since(t0) > limit {
					slow.Store(true)
					return
				}
				if err := put(ctx, i); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	if slow.Load() {
		return 0, fmt.Errorf("%w (%v for %d of %d)", errFillTooSlow, limit, next.Load(), n)
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

// timeN runs fn samples times and returns the sorted latencies.
func timeN(ctx context.Context, samples int, fn func(ctx context.Context, i int) error) (latencies, error) {
	l := make(latencies, 0, samples)
	for i := range samples {
		t0 := time.Now()
		if err := fn(ctx, i); err != nil {
			return nil, err
		}
		l = append(l, time.Since(t0))
	}
	slices.Sort(l)
	return l, nil
}

// waitCreate retries create until it succeeds (the name is free again)
// and returns how long that took.
func waitCreate(ctx context.Context, create func() error) (time.Duration, error) {
	t0 := time.Now()
	for {
		err := create()
		if err == nil {
			return time.Since(t0), nil
		}
		if !strings.Contains(err.Error(), "BeingDeleted") && !strings.Contains(err.Error(), "AlreadyExists") {
			return 0, err
		}
		if time.Since(t0) > 30*time.Minute || ctx.Err() != nil {
			return 0, fmt.Errorf("name not free after %v: %w", time.Since(t0), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type duringFunc func(fn func() error) (base, while latencies, err error)

func scaleBlobs(ctx context.Context, bc *azblob.Client, n int, o ScaleOptions, out io.Writer, stats func() string, during duringFunc) error {
	name := fmt.Sprintf("scale%d-%d", n, time.Now().UnixNano())
	if _, err := bc.CreateContainer(ctx, name, nil); err != nil {
		return err
	}
	body := []byte("0123456789")
	blobName := func(i int) string { return fmt.Sprintf("dir%02d/blob-%07d", i%100, i) }
	rate, err := fill(ctx, n, o.Clients, o.FillLimit, func(ctx context.Context, i int) error {
		_, err := bc.UploadBuffer(ctx, name, blobName(i), body, nil)
		return err
	})
	if err != nil {
		fmt.Fprintf(out, "  blobs: %v\n", err)
		_, _ = bc.DeleteContainer(context.WithoutCancel(ctx), name, nil)
		return err
	}
	fmt.Fprintf(out, "  blobs: fill %.0f/s; %s\n", rate, stats())
	cc := bc.ServiceClient().NewContainerClient(name)
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	props, err := timeN(ctx, o.Samples, func(ctx context.Context, _ int) error {
		_, err := cc.NewBlobClient(blobName(rng.IntN(n))).GetProperties(ctx, nil)
		return err
	})
	if err != nil {
		return err
	}
	puts, err := timeN(ctx, o.Samples, func(ctx context.Context, i int) error {
		_, err := bc.UploadBuffer(ctx, name, blobName(rng.IntN(n)), body, nil)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  Get Blob Properties %v; Put Blob (overwrite) %v\n", props, puts)
	t0 := time.Now()
	listed := 0
	p := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{MaxResults: to.Ptr(int32(5000))})
	for p.More() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		listed += len(page.Segment.BlobItems)
	}
	if listed != n {
		return fmt.Errorf("listed %d blobs, want %d", listed, n)
	}
	el := time.Since(t0)
	root, err := timeN(ctx, 20, func(ctx context.Context, _ int) error {
		hp := cc.NewListBlobsHierarchyPager("/", nil)
		_, err := hp.NextPage(ctx)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  List Blobs, all %d: %.0f blobs/s; root listing with a delimiter %v\n", n, float64(n)/el.Seconds(), root)
	var answered time.Duration
	base, while, err := during(func() error {
		t0 := time.Now()
		if _, err := bc.DeleteContainer(ctx, name, nil); err != nil {
			return err
		}
		answered = time.Since(t0)
		free, err := waitCreate(ctx, func() error { _, err := bc.CreateContainer(ctx, name, nil); return err })
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  Delete Container: answered in %v, name free after %v\n", answered.Round(time.Millisecond), (answered + free).Round(time.Millisecond))
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  another client's Put Blob 1 KiB: before %v, during the delete %v; %s\n", base, while, stats())
	_, _ = bc.DeleteContainer(context.WithoutCancel(ctx), name, nil)
	return nil
}

func scaleTable(ctx context.Context, svc *aztables.ServiceClient, n int, o ScaleOptions, out io.Writer, stats func() string, during duringFunc) error {
	name := fmt.Sprintf("scale%d%d", n, time.Now().UnixNano()%1e9)
	if _, err := svc.CreateTable(ctx, name, nil); err != nil {
		return err
	}
	tc := svc.NewClient(name)
	entity := func(i int) []byte {
		return fmt.Appendf(nil, `{"PartitionKey":"p%02d","RowKey":"%08d","N":%d,"Name":"entity-%d"}`, i%16, i, i, i)
	}
	// Batches of 100 in one partition each: the fill is not what is
	// measured, and 10⁶ single inserts would take most of the run.
	batches := (n + 99) / 100
	rate, err := fill(ctx, batches, o.Clients, o.FillLimit, func(ctx context.Context, b int) error {
		var ops []aztables.TransactionAction
		for i := b * 100; i < min((b+1)*100, n); i++ {
			// One partition per batch: entity i of batch b gets partition b%16.
			e := fmt.Appendf(nil, `{"PartitionKey":"p%02d","RowKey":"%08d","N":%d,"Name":"entity-%d"}`, b%16, i, i, i)
			ops = append(ops, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: e})
		}
		_, err := tc.SubmitTransaction(ctx, ops, nil)
		return err
	})
	if err != nil {
		fmt.Fprintf(out, "  entities: %v\n", err)
		_, _ = svc.DeleteTable(context.WithoutCancel(ctx), name, nil)
		return err
	}
	fmt.Fprintf(out, "  entities: fill %.0f/s (batches of 100); %s\n", rate*100, stats())
	rng := rand.New(rand.NewPCG(uint64(n), 2))
	gets, err := timeN(ctx, o.Samples, func(ctx context.Context, _ int) error {
		i := rng.IntN(n)
		_, err := tc.GetEntity(ctx, fmt.Sprintf("p%02d", (i/100)%16), fmt.Sprintf("%08d", i), nil)
		return err
	})
	if err != nil {
		return err
	}
	ins, err := timeN(ctx, o.Samples, func(ctx context.Context, i int) error {
		_, err := tc.AddEntity(ctx, entity(n+i), nil)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  Get Entity %v; Insert Entity %v\n", gets, ins)
	// A filtered scan of one partition reads every entity of it.
	t0 := time.Now()
	scanned := 0
	filter := fmt.Sprintf("PartitionKey eq 'p03' and N lt %d", n+o.Samples+1)
	p := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	for p.More() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		scanned += len(page.Entities)
	}
	fmt.Fprintf(out, "  query of one partition (%d entities): %.0f entities/s\n", scanned, float64(scanned)/time.Since(t0).Seconds())
	base, while, err := during(func() error {
		t0 := time.Now()
		if _, err := svc.DeleteTable(ctx, name, nil); err != nil {
			return err
		}
		answered := time.Since(t0)
		free, err := waitCreate(ctx, func() error { _, err := svc.CreateTable(ctx, name, nil); return err })
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  Delete Table: answered in %v, name free after %v\n", answered.Round(time.Millisecond), (answered + free).Round(time.Millisecond))
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  another client's Put Blob 1 KiB: before %v, during the delete %v; %s\n", base, while, stats())
	_, _ = svc.DeleteTable(context.WithoutCancel(ctx), name, nil)
	return nil
}

func scaleQueue(ctx context.Context, qs *azqueue.ServiceClient, n int, o ScaleOptions, out io.Writer, stats func() string, during duringFunc) error {
	name := fmt.Sprintf("scale%d-%d", n, time.Now().UnixNano())
	q := qs.NewQueueClient(name)
	if _, err := q.Create(ctx, nil); err != nil {
		return err
	}
	rate, err := fill(ctx, n, o.Clients, o.FillLimit, func(ctx context.Context, i int) error {
		_, err := q.EnqueueMessage(ctx, fmt.Sprintf("message %d", i), nil)
		return err
	})
	if err != nil {
		fmt.Fprintf(out, "  messages: %v\n", err)
		_, _ = q.Delete(context.WithoutCancel(ctx), nil)
		return err
	}
	fmt.Fprintf(out, "  messages: fill %.0f/s; %s\n", rate, stats())
	puts, err := timeN(ctx, o.Samples, func(ctx context.Context, i int) error {
		_, err := q.EnqueueMessage(ctx, "sample", nil)
		return err
	})
	if err != nil {
		return err
	}
	peeks, err := timeN(ctx, o.Samples, func(ctx context.Context, _ int) error {
		_, err := q.PeekMessage(ctx, nil)
		return err
	})
	if err != nil {
		return err
	}
	cycles, err := timeN(ctx, o.Samples, func(ctx context.Context, _ int) error {
		got, err := q.DequeueMessage(ctx, &azqueue.DequeueMessageOptions{VisibilityTimeout: to.Ptr(int32(60))})
		if err != nil {
			return err
		}
		if len(got.Messages) != 1 {
			return fmt.Errorf("get messages gave %d", len(got.Messages))
		}
		_, err = q.DeleteMessage(ctx, *got.Messages[0].MessageID, *got.Messages[0].PopReceipt, nil)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  Put Message %v; Peek Messages %v; Get+Delete Message %v\n", puts, peeks, cycles)
	base, while, err := during(func() error {
		t0 := time.Now()
		if _, err := q.ClearMessages(ctx, nil); err != nil {
			return err
		}
		answered := time.Since(t0)
		fmt.Fprintf(out, "  Clear Messages: answered in %v\n", answered.Round(time.Millisecond))
		t0 = time.Now()
		if _, err := q.Delete(ctx, nil); err != nil {
			return err
		}
		answered = time.Since(t0)
		free, err := waitCreate(ctx, func() error { _, err := q.Create(ctx, nil); return err })
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  Delete Queue (emptied): answered in %v, name free after %v\n", answered.Round(time.Millisecond), (answered + free).Round(time.Millisecond))
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  another client's Put Blob 1 KiB: before %v, during the clear %v; %s\n", base, while, stats())
	_, _ = q.Delete(context.WithoutCancel(ctx), nil)
	return nil
}

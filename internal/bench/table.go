package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// TableOptions sizes the Table workload.
type TableOptions struct {
	Clients int           // concurrent clients (default 16)
	Time    time.Duration // duration of the insert and point-read phases (default 10 s)
	// PartitionSize is the number of entities in the partition the
	// filtered queries run over (default 100,000); Rows is how many of
	// them each query returns (default 1,000).
	PartitionSize int
	Rows          int
	// QueryRuns is how many times each query is timed (default 10).
	QueryRuns int
	// PointOnly stops after the insert and point-read phases (no
	// partition load, no queries): the tablepoint workload.
	PointOnly bool
}

func (o *TableOptions) defaults() {
	if o.Clients <= 0 {
		o.Clients = 16
	}
	if o.Time <= 0 {
		o.Time = 10 * time.Second
	}
	if o.PartitionSize <= 0 {
		o.PartitionSize = 100_000
	}
	if o.Rows <= 0 || o.Rows > o.PartitionSize {
		o.Rows = min(1000, o.PartitionSize)
	}
	if o.QueryRuns <= 0 {
		o.QueryRuns = 10
	}
}

// TableClient returns an aztables service client for an account URL
// (e.g. http://127.0.0.1:10002/devstoreaccount1) with a connection pool
// sized for conns and SDK retries off.
func TableClient(url, account, key string, conns int) (*aztables.ServiceClient, error) {
	cred, err := aztables.NewSharedKeyCredential(account, key)
	if err != nil {
		return nil, err
	}
	return aztables.NewServiceClientWithSharedKey(url, cred, &aztables.ClientOptions{ClientOptions: sdkOptions(conns)})
}

// TableWorkload measures the Table service at url with clients
// concurrent aztables clients: Insert Entity and point reads (Get
// Entity) for d each, then filtered queries over a 100,000-entity
// partition that return 1,000 rows (loaded with entity group
// transactions). Targets: ≥ 5,000 inserts/s and ≥ 8,000 point reads/s
// with 16 clients, and each query under 200 ms.
func TableWorkload(ctx context.Context, url, account, key string, clients int, d time.Duration) ([]Result, error) {
	return TableWorkloadWith(ctx, url, account, key, TableOptions{Clients: clients, Time: d})
}

// TableWorkloadWith is TableWorkload with every size adjustable.
func TableWorkloadWith(ctx context.Context, url, account, key string, o TableOptions) ([]Result, error) {
	o.defaults()
	svc, err := TableClient(url, account, key, o.Clients)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("bench%d", time.Now().UnixNano())
	if _, err := svc.CreateTable(ctx, name, nil); err != nil {
		return nil, err
	}
	defer svc.DeleteTable(context.WithoutCancel(ctx), name, nil)
	c := svc.NewClient(name)
	n := o.Clients

	// Small entities of the usual shape: a few typed properties.
	entity := func(pk, rk string, i int) []byte {
		b, _ := json.Marshal(map[string]any{
			"PartitionKey": pk, "RowKey": rk, "N": i, "Name": fmt.Sprintf("entity-%d", i),
			"Score": float64(i) + 0.5, "Active": i%2 == 0, "Big": fmt.Sprint(int64(i) << 33), "Big@odata.type": "Edm.Int64",
		})
		return b
	}
	written := make([]atomic.Int64, n)
	ins := Run(ctx, fmt.Sprintf("Table Insert Entity (%d clients)", n), n, o.Time, func(ctx context.Context, w int, i int64) error {
		_, err := c.AddEntity(ctx, entity(fmt.Sprint("w", w), fmt.Sprintf("%010d", i), int(i)), nil)
		if err == nil {
			written[w].Store(i + 1)
		}
		return err
	})
	get := Run(ctx, fmt.Sprintf("Table Get Entity (%d clients)", n), n, o.Time, func(ctx context.Context, w int, i int64) error {
		have := max(1, written[w].Load())
		_, err := c.GetEntity(ctx, fmt.Sprint("w", w), fmt.Sprintf("%010d", i%have), nil)
		return err
	})

	if o.PointOnly {
		return []Result{ins, get}, nil
	}
	// Load one large partition with batches of 100 from every client.
	batches := (o.PartitionSize + 99) / 100
	var next atomic.Int64
	var loadErr error
	var once sync.Once
	var wg sync.WaitGroup
	t0 := time.Now()
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b := int(next.Add(1)) - 1
				if b >= batches || ctx.Err() != nil {
					return
				}
				var ops []aztables.TransactionAction
				for i := b * 100; i < min((b+1)*100, o.PartitionSize); i++ {
					ops = append(ops, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: entity("big", fmt.Sprintf("%08d", i), i)})
				}
				if _, err := c.SubmitTransaction(ctx, ops, nil); err != nil {
					once.Do(func() { loadErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	if loadErr != nil {
		return nil, fmt.Errorf("loading the query partition: %w", loadErr)
	}
	load := Result{Name: fmt.Sprintf("Table load %d entities (batches of 100)", o.PartitionSize), Ops: int64(o.PartitionSize), Elapsed: time.Since(t0)}

	lo := o.PartitionSize / 2
	if lo+o.Rows > o.PartitionSize {
		lo = 0
	}
	queries := []struct{ name, filter string }{
		// N is an ordinary property: every entity of the partition is
		// read and tested.
		{fmt.Sprintf("Table query property filter, %d of %d rows", o.Rows, o.PartitionSize),
			fmt.Sprintf("PartitionKey eq 'big' and N ge %d and N lt %d", lo, lo+o.Rows)},
		// A RowKey range: only the matching rows are read.
		{fmt.Sprintf("Table query RowKey range, %d of %d rows", o.Rows, o.PartitionSize),
			fmt.Sprintf("PartitionKey eq 'big' and RowKey ge '%08d' and RowKey lt '%08d'", lo, lo+o.Rows)},
	}
	res := []Result{ins, get, load}
	for _, q := range queries {
		var lats []time.Duration
		var errs int64
		t0 := time.Now()
		for r := 0; r < o.QueryRuns && ctx.Err() == nil; r++ {
			start := time.Now()
			rows := 0
			p := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &q.filter})
			for p.More() {
				page, err := p.NextPage(ctx)
				if err != nil {
					errs++
					break
				}
				rows += len(page.Entities)
			}
			if rows != o.Rows {
				errs++
				continue
			}
			lats = append(lats, time.Since(start))
		}
		res = append(res, latencyResult(q.name, lats, errs, time.Since(t0)))
	}
	return res, nil
}

// latencyResult summarises sequential runs.
func latencyResult(name string, lats []time.Duration, errs int64, el time.Duration) Result {
	sorted := slices.Clone(lats)
	slices.Sort(sorted)
	pct := func(p float64) time.Duration {
		if len(sorted) == 0 {
			return 0
		}
		return sorted[int(float64(len(sorted)-1)*p)]
	}
	return Result{Name: name, Ops: int64(len(lats)), Errors: errs, Elapsed: el, P50: pct(0.5), P95: pct(0.95), P99: pct(0.99)}
}

package multiproc

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// entityJSON marshals an entity given as a map.
func entityJSON(t *testing.T, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	must(t, "marshal entity", err)
	return b
}

// userProps returns the entity's own properties: without the keys,
// Timestamp, and OData annotations (odata.*, Name@odata.type). It also
// returns the body's odata.etag ("" when absent).
func userProps(raw []byte) (map[string]any, azcore.ETag, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "", fmt.Errorf("entity %q is not JSON: %w", raw, err)
	}
	var etag azcore.ETag
	if e, ok := m["odata.etag"].(string); ok {
		etag = azcore.ETag(e)
	}
	for k := range m {
		if k == "PartitionKey" || k == "RowKey" || k == "Timestamp" || strings.HasPrefix(k, "odata.") || strings.Contains(k, "@odata.") {
			delete(m, k)
		}
	}
	return m, etag, nil
}

// normalize round-trips m through JSON, so that it compares equal to a
// decoded entity (numbers become float64).
func normalize(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	var out map[string]any
	must(t, "normalize", json.Unmarshal(entityJSON(t, m), &out))
	return out
}

// TestTableIfMatchRace: in every round, 4 clients on each process send
// Update Entity (replace in even rounds, merge in odd ones) with the same
// If-Match ETag on one entity. Exactly one wins; every other gets 412
// UpdateConditionNotSatisfied; afterwards every process reads the
// winner's ETag and exactly the properties the winning update gives (a
// replace drops the properties of earlier rounds, a merge keeps them).
func TestTableIfMatchRace(t *testing.T) {
	c := newCluster(t, tableSvc)
	ctx := ctxFor(t, 2*time.Minute)
	const rounds, perNode, table = 40, 4, "race"
	_, err := c.Table(0).CreateTable(ctx, table, nil)
	must(t, "create table", err)
	initial := map[string]any{"PartitionKey": "p", "RowKey": "r", "Winner": -1, "Round": -1, "Initial": true}
	add, err := c.Table(0).NewClient(table).AddEntity(ctx, entityJSON(t, initial), nil)
	must(t, "add entity", err)
	etag := add.ETag
	want, _, err := userProps(entityJSON(t, initial))
	must(t, "initial properties", err)

	type racer struct {
		node int
		cl   *aztables.Client
	}
	var racers []racer
	var readers []*aztables.Client
	for i := range nodes {
		readers = append(readers, c.Table(i).NewClient(table))
		for range perNode {
			racers = append(racers, racer{i, c.Table(i).NewClient(table)})
		}
	}
	type result struct {
		props map[string]any
		etag  azcore.ETag
		err   error
	}
	wins := make([]int, nodes)
	losses := 0
	start := time.Now()
	for r := range rounds {
		mode := aztables.UpdateModeReplace
		if r%2 == 1 {
			mode = aztables.UpdateModeMerge
		}
		results := make([]result, len(racers))
		gate := make(chan struct{})
		var wg sync.WaitGroup
		for k, rc := range racers {
			// Each round writes one property of its own, so the reads
			// tell a replace (earlier rounds' properties gone) from a
			// merge (kept).
			props := map[string]any{"Winner": k, "Round": r, "Node": rc.node, "Mode": string(mode), fmt.Sprintf("R%02d", r): fmt.Sprintf("racer %d", k)}
			body := map[string]any{"PartitionKey": "p", "RowKey": "r"}
			for key, v := range props {
				body[key] = v
			}
			payload := entityJSON(t, body)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				resp, err := rc.cl.UpdateEntity(ctx, payload, &aztables.UpdateEntityOptions{IfMatch: to.Ptr(etag), UpdateMode: mode})
				results[k] = result{props, resp.ETag, err}
			}()
		}
		close(gate)
		wg.Wait()
		var winner *result
		for k := range results {
			res := &results[k]
			if res.err == nil {
				if winner != nil {
					t.Fatalf("round %d (%s): two winners: racer %v (ETag %s) and racer %v (ETag %s)", r, mode, winner.props["Winner"], winner.etag, res.props["Winner"], res.etag)
				}
				winner = res
				wins[racers[k].node]++
				continue
			}
			if st, code := status(res.err); st != http.StatusPreconditionFailed || code != string(aztables.UpdateConditionNotSatisfied) {
				t.Fatalf("round %d (%s): racer %d (node %d): want success or 412 UpdateConditionNotSatisfied, got %v", r, mode, k, racers[k].node, errOrOK(res.err))
			}
			losses++
		}
		if winner == nil {
			t.Fatalf("round %d (%s): no winner among %d conditional updates", r, mode, len(racers))
		}
		if winner.etag == "" || winner.etag == etag {
			t.Fatalf("round %d (%s): the winning update returned ETag %q (the If-Match ETag was %s)", r, mode, winner.etag, etag)
		}
		if mode == aztables.UpdateModeReplace {
			want = map[string]any{}
		}
		for key, v := range winner.props {
			want[key] = v
		}
		want = normalize(t, want)
		for i, rd := range readers {
			got, err := rd.GetEntity(ctx, "p", "r", nil)
			must(t, fmt.Sprintf("round %d: read through node %d", r, i), err)
			props, bodyETag, err := userProps(got.Value)
			must(t, fmt.Sprintf("round %d: read through node %d", r, i), err)
			if got.ETag != winner.etag || (bodyETag != "" && bodyETag != winner.etag) {
				t.Fatalf("round %d (%s): node %d reads ETag %s (body %q), want the winner's %s", r, mode, i, got.ETag, bodyETag, winner.etag)
			}
			if !reflect.DeepEqual(props, want) {
				t.Fatalf("round %d (%s): node %d reads %v, want %v (winner: racer %v)", r, mode, i, props, want, winner.props["Winner"])
			}
		}
		etag = winner.etag
	}
	t.Logf("%d rounds (replace and merge alternating) of %d concurrent If-Match updates over %d processes in %v: one winner per round (wins per process %v), %d × 412 UpdateConditionNotSatisfied; every process then read the winner's ETag and properties (%d properties at the end)",
		rounds, len(racers), nodes, time.Since(start).Round(time.Millisecond), wins, losses, len(want))
}

// TestTableBatchAtomicity: a writer submits entity group transactions
// through process 0, each rewriting all 100 entities of a partition with a
// new version (InsertReplace and UpdateMerge alternating); every third
// batch fails on its last operation and must apply nothing. Readers on
// processes 1 and 2 query the partition meanwhile: every query returns all
// 100 entities with one version, never a failed batch's version, never an
// older version than one acknowledged before the query started, and
// versions never go backwards for a reader.
func TestTableBatchAtomicity(t *testing.T) {
	c := newCluster(t, tableSvc)
	ctx := ctxFor(t, 2*time.Minute)
	const (
		table          = "atomic"
		n              = 100 // entities per batch: the most a changeset may hold
		batches        = 45
		readersPerNode = 2
		maxWriting     = 60 * time.Second
	)
	_, err := c.Table(0).CreateTable(ctx, table, nil)
	must(t, "create table", err)
	rk := func(i int) string { return fmt.Sprintf("%03d", i) }
	action := func(kind aztables.TransactionType, m map[string]any) aztables.TransactionAction {
		return aztables.TransactionAction{ActionType: kind, Entity: entityJSON(t, m)}
	}
	var seed []aztables.TransactionAction
	for i := range n {
		seed = append(seed, action(aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "p", "RowKey": rk(i), "Version": 0, "Pad": strings.Repeat("x", 200)}))
	}
	writer := c.Table(0).NewClient(table)
	_, err = writer.SubmitTransaction(ctx, seed, nil)
	must(t, "seed batch", err)
	// Another partition, written outside batches, which unfiltered
	// queries return too.
	_, err = writer.AddEntity(ctx, entityJSON(t, map[string]any{"PartitionKey": "q", "RowKey": "other", "Version": 0}), nil)
	must(t, "add other partition", err)

	var acked atomic.Int64
	var stop atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int64]bool{} // versions some reader observed
	for k := range 2 * readersPerNode {
		node := 1 + k%2
		cl := c.Table(node).NewClient(table)
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(-1)
			for q := 0; q < 100000 && !stop.Load() && ctx.Err() == nil; q++ {
				var opts *aztables.ListEntitiesOptions
				switch q % 3 {
				case 1:
					opts = &aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p'")}
				case 2:
					opts = &aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p' and Version ge 0")}
				}
				lower := acked.Load()
				page, err := cl.NewListEntitiesPager(opts).NextPage(ctx)
				if err != nil {
					t.Errorf("reader %d (node %d): query: %v", k, node, err)
					return
				}
				if page.NextPartitionKey != nil {
					t.Errorf("reader %d (node %d): the partition came in more than one page (continuation %s/%s): the test needs one query per read", k, node, *page.NextPartitionKey, deref(page.NextRowKey))
					return
				}
				versions := map[int64]int{}
				count := 0
				for _, raw := range page.Entities {
					var m struct {
						PartitionKey string
						Version      int64
					}
					if err := json.Unmarshal(raw, &m); err != nil {
						t.Errorf("reader %d (node %d): entity %s: %v", k, node, raw, err)
						return
					}
					if m.PartitionKey != "p" {
						continue
					}
					count++
					versions[m.Version]++
				}
				if count != n || len(versions) != 1 {
					t.Errorf("reader %d (node %d): query %d saw %d entities with versions %v: a partial batch", k, node, q, count, versions)
					return
				}
				var v int64
				for ver := range versions {
					v = ver
				}
				if v < 0 {
					t.Errorf("reader %d (node %d): saw version %d of a failed batch", k, node, v)
					return
				}
				if v < lower {
					t.Errorf("reader %d (node %d): saw version %d although version %d was acknowledged before the query started", k, node, v, lower)
					return
				}
				if v < last {
					t.Errorf("reader %d (node %d): saw version %d after %d: versions went backwards", k, node, v, last)
					return
				}
				last = v
				reads.Add(1)
				mu.Lock()
				seen[v] = true
				mu.Unlock()
			}
		}()
	}

	start := time.Now()
	committed, failed := 0, 0
	for v := 1; v <= batches && time.Since(start) < maxWriting && !t.Failed(); v++ {
		fail := v%3 == 0
		ver := v
		if fail {
			ver = -v
		}
		var ops []aztables.TransactionAction
		for i := range n {
			if v%2 == 1 {
				ops = append(ops, action(aztables.TransactionTypeInsertReplace, map[string]any{"PartitionKey": "p", "RowKey": rk(i), "Version": ver, "Pad": strings.Repeat("y", 200)}))
			} else {
				ops = append(ops, action(aztables.TransactionTypeUpdateMerge, map[string]any{"PartitionKey": "p", "RowKey": rk(i), "Version": ver}))
			}
		}
		if fail {
			// The last operation deletes a missing entity: the whole
			// batch must fail and apply nothing.
			ops[n-1] = action(aztables.TransactionTypeDelete, map[string]any{"PartitionKey": "p", "RowKey": "missing"})
		}
		_, err := writer.SubmitTransaction(ctx, ops, nil)
		if fail {
			if st, _ := status(err); st != http.StatusAccepted || !strings.Contains(err.Error(), "ResourceNotFound") {
				t.Errorf("batch %d should fail with a 202 response holding 404 ResourceNotFound, got %v", v, errOrOK(err))
			}
			failed++
			continue
		}
		if err != nil {
			t.Errorf("batch %d through node 0: %v", v, err)
			break
		}
		acked.Store(int64(v))
		committed++
		// Between batches, let the readers run a little.
		time.Sleep(5 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if t.Failed() {
		return
	}
	last := acked.Load()
	for i := range nodes {
		page, err := c.Table(i).NewClient(table).NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p'")}).NextPage(ctx)
		must(t, fmt.Sprintf("final query through node %d", i), err)
		if len(page.Entities) != n {
			t.Errorf("node %d: %d entities at the end, want %d", i, len(page.Entities), n)
		}
		for _, raw := range page.Entities {
			var m struct{ Version int64 }
			if err := json.Unmarshal(raw, &m); err != nil || m.Version != last {
				t.Errorf("node %d: entity %s at the end, want version %d", i, raw, last)
				break
			}
		}
	}
	if reads.Load() < 20 || len(seen) < 3 {
		t.Errorf("the readers did not overlap the batches: %d consistent reads, %d versions seen", reads.Load(), len(seen))
	}
	t.Logf("%d batches of %d operations through node 0 in %v (%d committed, %d failed on their last operation); %d queries by %d readers on nodes 1 and 2 saw %d distinct versions, each whole: no partial batch, no failed batch's version, none older than acknowledged, none backwards",
		committed+failed, n, time.Since(start).Round(time.Millisecond), committed, failed, reads.Load(), 2*readersPerNode, len(seen))
}

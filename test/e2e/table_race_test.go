package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

const tbRaceN = 16

// tbRace runs fn(i) for i in [0, tbRaceN) released together, and counts
// successes and error statuses.
func tbRace(fn func(i int) error) (wins int, statuses map[string]int) {
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	errs := make([]error, tbRaceN)
	for i := range tbRaceN {
		ready.Add(1)
		done.Add(1)
		go func(i int) {
			defer done.Done()
			ready.Done()
			<-gate
			errs[i] = fn(i)
		}(i)
	}
	ready.Wait()
	close(gate)
	done.Wait()
	statuses = map[string]int{}
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		st, code := tbCode(err)
		statuses[fmt.Sprint(st, " ", code)]++
	}
	return wins, statuses
}

func TestTableRaceIfMatch(t *testing.T) {
	e := tbStart(t)
	c := e.table("race")
	e.tbAdd(c, map[string]any{"PartitionKey": "p", "RowKey": "r", "Winner": -1})
	for round := 0; round < 5; round++ {
		for _, mode := range []aztables.UpdateMode{aztables.UpdateModeReplace, aztables.UpdateModeMerge} {
			_, etag := e.tbGet(c, "p", "r")
			var winner atomic.Int64
			wins, st := tbRace(func(i int) error {
				_, err := c.UpdateEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "Winner": i}), &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: mode})
				if err == nil {
					winner.Store(int64(i))
				}
				return err
			})
			if wins != 1 || st["412 UpdateConditionNotSatisfied"] != tbRaceN-1 {
				t.Fatalf("round %d %s: %d winners, %v", round, mode, wins, st)
			}
			got, _ := e.tbGet(c, "p", "r")
			if got["Winner"] != float64(winner.Load()) {
				t.Fatalf("stored winner %v, reported %d", got["Winner"], winner.Load())
			}
		}
		// Conditional deletes: one winner, the rest 412 (stale) or 404.
		_, etag := e.tbGet(c, "p", "r")
		wins, st := tbRace(func(i int) error {
			_, err := c.DeleteEntity(e.ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: &etag})
			return err
		})
		if wins != 1 || st["404 ResourceNotFound"] != tbRaceN-1 {
			t.Fatalf("round %d delete: %d winners, %v", round, wins, st)
		}
		// Inserts of one key: one 201, the rest 409.
		wins, st = tbRace(func(i int) error {
			_, err := c.AddEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "Winner": i}), nil)
			return err
		})
		if wins != 1 || st["409 EntityAlreadyExists"] != tbRaceN-1 {
			t.Fatalf("round %d insert: %d winners, %v", round, wins, st)
		}
	}
}

func TestTableRaceBatches(t *testing.T) {
	e := tbStart(t)
	c := e.table("racebatch")
	var seed []aztables.TransactionAction
	for i := 0; i < 10; i++ {
		seed = append(seed, tbAction(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprint(i), "Owner": -1}, nil))
	}
	_, err := c.SubmitTransaction(e.ctx, seed, nil)
	tbMust(t, err)
	// Every contender replaces all ten entities, conditionally on the
	// ETags it read: exactly one batch may win, and it wins entirely.
	all, _ := e.tbList(c, nil)
	etags := make([]azcore.ETag, len(all))
	for i, m := range all {
		etags[i] = azcore.ETag(m["odata.etag"].(string))
	}
	wins, st := tbRace(func(w int) error {
		var ops []aztables.TransactionAction
		for i := range 10 {
			ops = append(ops, tbAction(t, aztables.TransactionTypeUpdateReplace, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprint(i), "Owner": w}, &etags[i]))
		}
		_, err := c.SubmitTransaction(e.ctx, ops, nil)
		return err
	})
	if wins != 1 || st["202 "] != tbRaceN-1 {
		t.Fatalf("%d winning batches, %v", wins, st)
	}
	all, _ = e.tbList(c, nil)
	for _, m := range all {
		if m["Owner"] != all[0]["Owner"] || m["Owner"] == -1.0 {
			t.Fatalf("entities owned by different batches: %v", all)
		}
	}
}

// TestTableBatchAtomicUnderReaders checks that readers never see part of
// a batch: writers rewrite a whole partition per batch (some batches fail
// on their last operation), readers query it and must always see one
// version on every entity, and never a failed batch's version.
func TestTableBatchAtomicUnderReaders(t *testing.T) {
	e := tbStart(t)
	c := e.table("atomic")
	const n = 40
	var ops []aztables.TransactionAction
	for i := 0; i < n; i++ {
		ops = append(ops, tbAction(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%02d", i), "Version": 0}, nil))
	}
	_, err := c.SubmitTransaction(e.ctx, ops, nil)
	tbMust(t, err)

	// The deadline only guards against a hang; the writer stops the
	// readers when it is done.
	ctx, cancel := context.WithTimeout(e.ctx, 3*time.Minute)
	defer cancel()
	var stop atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	failures := make(chan string, 16)
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() && ctx.Err() == nil {
				var filter *string
				if r%2 == 1 {
					filter = to.Ptr("PartitionKey eq 'p' and Version ge 0")
				}
				p := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: filter})
				page, err := p.NextPage(ctx)
				if err != nil {
					if ctx.Err() == nil {
						failures <- err.Error()
					}
					return
				}
				versions := map[string]int{}
				for _, raw := range page.Entities {
					var m aztables.EDMEntity
					if err := m.UnmarshalJSON(raw); err != nil {
						failures <- err.Error()
						return
					}
					versions[fmt.Sprint(m.Properties["Version"])]++
				}
				for ver := range versions {
					if strings.HasPrefix(ver, "-") {
						failures <- fmt.Sprintf("reader saw version %s of a failed batch", ver)
						return
					}
				}
				if len(page.Entities) != n || len(versions) != 1 {
					failures <- fmt.Sprintf("reader saw %d entities with versions %v", len(page.Entities), versions)
					return
				}
				reads.Add(1)
			}
		}()
	}
	const batches = 45
	for v := 1; v <= batches; v++ {
		var ops []aztables.TransactionAction
		fail := v%3 == 0
		for i := 0; i < n; i++ {
			ver := v
			if fail {
				ver = -v
			}
			ops = append(ops, tbAction(t, aztables.TransactionTypeInsertReplace, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%02d", i), "Version": ver}, nil))
		}
		if fail {
			// The last operation deletes a missing entity: nothing applies.
			ops[n-1] = tbAction(t, aztables.TransactionTypeDelete, map[string]any{"PartitionKey": "p", "RowKey": "missing"}, nil)
		}
		_, err := c.SubmitTransaction(e.ctx, ops, nil)
		if fail {
			if st, _ := tbCode(err); st != http.StatusAccepted {
				t.Fatalf("batch %d should fail with a 202 error response, got %v", v, err)
			}
		} else {
			tbMust(t, err)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Fatal(f)
	}
	if reads.Load() < 10 {
		t.Fatalf("only %d consistent reads happened", reads.Load())
	}
	all, _ := e.tbList(c, nil)
	for _, m := range all {
		if m["Version"] != float64(batches-1) { // the last batch failed
			t.Fatalf("final version %v", m["Version"])
		}
	}
}

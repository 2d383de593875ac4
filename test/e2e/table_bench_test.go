package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/bench"
)

// TestTableWorkloadRuns runs the Table benchmark workload at a small
// size: every phase must complete without errors and return the rows it
// asked for.
func TestTableWorkloadRuns(t *testing.T) {
	e := tbStart(t)
	res, err := bench.TableWorkloadWith(e.ctx, e.app.TableURL, app.DevAccount, app.DevKey, bench.TableOptions{
		Clients: 4, Time: 300 * time.Millisecond, PartitionSize: 2000, Rows: 100, QueryRuns: 2,
	})
	tbMust(t, err)
	if len(res) != 5 {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if r.Errors != 0 || r.Ops == 0 {
			t.Fatalf("%s", r)
		}
		if strings.Contains(r.Name, "query") && r.Ops != 2 {
			t.Fatalf("%s", r)
		}
	}
	// The workload removes its table.
	p := e.svc.NewListTablesPager(nil)
	page, err := p.NextPage(e.ctx)
	tbMust(t, err)
	if len(page.Tables) != 0 {
		t.Fatalf("workload left %d tables", len(page.Tables))
	}
}

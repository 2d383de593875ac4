package e2e

import (
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/bench"
)

// TestQueueBenchWorkload runs the benchmark's queue workload briefly: no
// errors, and no message left behind.
func TestQueueBenchWorkload(t *testing.T) {
	e := quStart(t)
	res, err := bench.QueueWorkload(e.ctx, e.app.QueueURL, app.DevAccount, app.DevKey, 8, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || res.Ops == 0 {
		t.Fatalf("workload: %v", res)
	}
	t.Log(res)
	if names, _, _ := quList(t, e, nil); len(names) != 0 {
		t.Errorf("workload left queues behind: %v", names)
	}
}

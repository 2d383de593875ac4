package bench

import (
	"context"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestFloorServesTheWorkloads: the floor answers every request of the
// blob, queue and tablepoint workloads in a way the Azure SDK accepts, so
// the CPU floor counts operations, not errors; and with the meter on this
// process (the floor runs in it) each result carries the CPU it used.
func TestFloorServesTheWorkloads(t *testing.T) {
	srv := httptest.NewServer(Floor(1024))
	defer srv.Close()
	url := srv.URL + "/" + app.DevAccount
	meter = &cpuMeter{pid: os.Getpid()}
	defer func() { meter = nil }()
	ctx := context.Background()
	d := 300 * time.Millisecond

	c, err := Client(url, app.DevAccount, app.DevKey, 4)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Small(ctx, []*azblob.Client{c}, "floor", 4, 1024, 1000, d)
	if err != nil {
		t.Fatal(err)
	}
	q, err := QueueWorkload(ctx, url, app.DevAccount, app.DevKey, 4, d)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := TableWorkloadWith(ctx, url, app.DevAccount, app.DevKey, TableOptions{Clients: 4, Time: d, PointOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	all := append(append(rs, q), ts...)
	if len(all) != 5 {
		t.Fatalf("%d results, want Put, Get, queue cycle, insert, point read", len(all))
	}
	for _, r := range all {
		t.Log(r)
		if r.Errors != 0 || r.Ops == 0 {
			t.Errorf("%s: %d ops, %d errors against the floor", r.Name, r.Ops, r.Errors)
		}
		if r.ServerCPU <= 0 {
			t.Errorf("%s: no CPU measured", r.Name)
		}
	}
}

// TestCeilingRuns: -ceiling runs target and ceiling alternately and
// prints each comparable workload's share; here the target is a second
// floor, so every workload has both figures and a share.
func TestCeilingRuns(t *testing.T) {
	srv := httptest.NewServer(Floor(1024))
	defer srv.Close()
	u := srv.URL + "/" + app.DevAccount
	var out strings.Builder
	o := runOpts{account: app.DevAccount, key: app.DevKey, clients: 2, size: 1024, dur: 150 * time.Millisecond,
		want: map[string]bool{"blob": true, "queue": true, "tablepoint": true}}
	rs, err := ceilingRuns(context.Background(), target{url: u, queue: u, table: u}, o, 2, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 20 {
		t.Errorf("%d results, want 5 workloads × 2 targets × 2 rounds", len(rs))
	}
	for _, w := range []string{"Put Blob", "Get Blob", "Queue put+get+delete", "Table Insert Entity", "Table Get Entity"} {
		if !regexp.MustCompile(regexp.QuoteMeta(w) + `.*\d+%`).MatchString(out.String()) {
			t.Errorf("no share line for %s:\n%s", w, out.String())
		}
	}
}

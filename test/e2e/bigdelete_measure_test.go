package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestMeasureBigDelete measures Delete Container of a container of
// CERULEAN_BIGDELETE_N blobs (skipped without it) on the backend the
// e2e tests run on (durable, for the embedded store): the request's
// latency, the time until the name can be created again (the reclaim's
// end), and another client's 1 KiB Put Blob latency, p50 and p99, idle
// and while the delete and its reclaim run. docs/benchmarks.md has the
// figures.
func TestMeasureBigDelete(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CERULEAN_BIGDELETE_N"))
	if n <= 0 {
		t.Skip("CERULEAN_BIGDELETE_N not set")
	}
	cfg := backendConfig(t)
	cfg.NoSync = false
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort, cfg.DFSPort, cfg.SMBPort = 0, -1, -1, -1, -1, -1
	cfg.GCEvery = time.Hour
	a, err := app.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	// A Delete Container that does the whole delete in the request took
	// longer than the harness client's 60 s at 10⁵ blobs.
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	opts := clientOptions()
	opts.Transport = &http.Client{Timeout: 30 * time.Minute}
	c, err := azblob.NewClientWithSharedKeyCredential(a.BlobURL, cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"big", "other"} {
		if _, err := c.CreateContainer(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	errc := make(chan error, 32)
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 32 {
				if _, err := c.UploadBuffer(ctx, "big", fmt.Sprintf("blob-%08d", i), []byte("x"), nil); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}
	t.Logf("filled %d blobs in %v", n, time.Since(start))

	body := make([]byte, 1024)
	put := func(i int) time.Duration {
		s := time.Now()
		if _, err := c.UploadBuffer(ctx, "other", fmt.Sprintf("p-%08d", i), body, nil); err != nil {
			t.Error(err)
		}
		return time.Since(s)
	}
	var idle []time.Duration
	for i := 0; i < 300; i++ {
		idle = append(idle, put(i))
	}

	stop := make(chan struct{})
	var during []time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1000; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			during = append(during, put(i))
		}
	}()
	time.Sleep(20 * time.Millisecond)
	s := time.Now()
	if _, err := c.DeleteContainer(ctx, "big", nil); err != nil {
		t.Fatal(err)
	}
	req := time.Since(s)
	for {
		_, err := c.CreateContainer(ctx, "big", nil)
		if err == nil {
			break
		}
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.ErrorCode != "ContainerBeingDeleted" {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	reclaimed := time.Since(s)
	close(stop)
	<-done
	p := func(ds []time.Duration, q float64) time.Duration {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return ds[min(len(ds)-1, int(float64(len(ds))*q))]
	}
	backend := "embedded"
	switch {
	case cfg.InMemory:
		backend = "in-memory"
	case cfg.Postgres != "":
		backend = "postgres"
	}
	t.Logf("MEASURE backend=%s n=%d request=%v reclaimed=%v idle_p50=%v idle_p99=%v during_p50=%v during_p99=%v during_max=%v during_n=%d",
		backend, n, req.Round(time.Millisecond), reclaimed.Round(time.Millisecond),
		p(idle, 0.5).Round(10*time.Microsecond), p(idle, 0.99).Round(10*time.Microsecond),
		p(during, 0.5).Round(10*time.Microsecond), p(during, 0.99).Round(10*time.Microsecond), p(during, 1).Round(10*time.Microsecond), len(during))
}

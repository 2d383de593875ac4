package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/events"
)

// BenchmarkPutBlobEvents: 1 KiB Put Blob through the SDK, 4 writers,
// with the change feed and one webhook subscription off, then on
// (default poll interval; webhook-poll without the writes' wake-up),
// side by side; with them on it reports the
// delivery latency (request start to the webhook's receipt), p50 and
// p99.
func BenchmarkPutBlobEvents(b *testing.B) {
	for _, mode := range []string{"off", "feed", "webhook-poll", "webhook", "feed+webhook"} {
		name, on := mode, mode == "webhook" || mode == "webhook-poll" || mode == "feed+webhook"
		b.Run(name, func(b *testing.B) {
			var mu sync.Mutex
			received := map[string]time.Time{}
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				var evs []struct {
					Subject string `json:"subject"`
					Data    struct {
						ValidationCode string `json:"validationCode"`
					} `json:"data"`
				}
				_ = json.Unmarshal(body, &evs)
				if r.Header.Get("aeg-event-type") == "SubscriptionValidation" {
					_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": evs[0].Data.ValidationCode})
					return
				}
				mu.Lock()
				received[evs[0].Subject] = time.Now()
				mu.Unlock()
			}))
			defer hook.Close()
			var subs []events.Subscription
			if on {
				subs = []events.Subscription{webhookSub("bench", hook.URL)}
			}
			// webhook-poll: delivery found by the poll alone, as before
			// writes woke the deliverer.
			c, stop := startEventsBench(b, "bench", subs, mode == "feed" || mode == "feed+webhook", mode == "webhook-poll")
			defer stop()
			ctx := context.Background()
			body := make([]byte, 1024)
			started := make([]time.Time, b.N)
			var next int64
			var nmu sync.Mutex
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := 0; w < 4; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						nmu.Lock()
						i := next
						next++
						nmu.Unlock()
						if i >= int64(b.N) {
							return
						}
						started[i] = time.Now()
						if _, err := c.UploadBuffer(ctx, "bench", fmt.Sprintf("b%d", i), body, nil); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			if !on {
				return
			}
			deadline := time.Now().Add(60 * time.Second)
			var lat []time.Duration
			for {
				mu.Lock()
				n := len(received)
				if n == b.N {
					for i := range started {
						lat = append(lat, received[fmt.Sprintf("/blobServices/default/containers/bench/blobs/b%d", i)].Sub(started[i]))
					}
				}
				mu.Unlock()
				if n == b.N {
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("%d of %d events delivered", n, b.N)
				}
				time.Sleep(10 * time.Millisecond)
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// benchClient is client for a benchmark.
func benchClient(b *testing.B, url string) *azblob.Client {
	b.Helper()
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if err != nil {
		b.Fatal(err)
	}
	c, err := azblob.NewClientWithSharedKeyCredential(url, cred, clientOptions())
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkEventLatencyLone: one 1 KiB Put Blob at a time, each waiting
// for its event and 20 ms more before the next, so the deliverer is
// idle at every write: the delivery latency (request start to the webhook's receipt)
// of a lone write, p50 and p99, with the deliverer woken by the write
// (wake) and found by the 100 ms poll alone (poll).
func BenchmarkEventLatencyLone(b *testing.B) {
	for _, mode := range []string{"poll", "wake"} {
		b.Run(mode, func(b *testing.B) {
			got := make(chan time.Time, 1)
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				var evs []struct {
					Data struct {
						ValidationCode string `json:"validationCode"`
					} `json:"data"`
				}
				_ = json.Unmarshal(body, &evs)
				if r.Header.Get("aeg-event-type") == "SubscriptionValidation" {
					_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": evs[0].Data.ValidationCode})
					return
				}
				got <- time.Now()
			}))
			defer hook.Close()
			c, stop := startEventsBench(b, "lone", []events.Subscription{webhookSub("lone", hook.URL)}, false, mode == "poll")
			defer stop()
			ctx := context.Background()
			body := make([]byte, 1024)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, err := c.UploadBuffer(ctx, "lone", fmt.Sprintf("b%d", i), body, nil); err != nil {
					b.Fatal(err)
				}
				select {
				case at := <-got:
					lat = append(lat, at.Sub(start))
				case <-time.After(30 * time.Second):
					b.Fatalf("event %d not delivered", i)
				}
				// Let the deliverer finish the round and go idle.
				b.StopTimer()
				time.Sleep(20 * time.Millisecond)
				b.StartTimer()
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// startEventsBench starts a Blob-only server on the fake clock with subs
// (the change feed on when feed; the deliverer left to its poll when
// noWake) and returns a client with container made, and the server's stop.
func startEventsBench(b *testing.B, container string, subs []events.Subscription, feed, noWake bool) (*azblob.Client, func()) {
	cfg := backendConfig(b)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort = 0, -1, -1, -1
	cfg.Clock, cfg.GCEvery = clock.NewFake(time.Now()), time.Hour
	cfg.ChangeFeed = feed
	cfg.Events.Subscriptions = subs
	cfg.Events.NoWake = noWake
	a, err := app.Start(cfg)
	if err != nil {
		b.Fatal(err)
	}
	stop := func() { _ = a.Close(context.Background()) }
	c := benchClient(b, a.BlobURL)
	if _, err := c.CreateContainer(context.Background(), container, nil); err != nil {
		stop()
		b.Fatal(err)
	}
	return c, stop
}

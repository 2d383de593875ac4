package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// BenchmarkListBlobs100KSDK lists a container of 10⁵ blobs through
// azblob's flat pager (5,000 a page) over loopback, as XML and with
// StorageResponseFormatArrow: server, transfer and the SDK's decoding
// into BlobItems. One op is the whole listing; blobs/s its throughput.
func BenchmarkListBlobs100KSDK(b *testing.B) {
	const n = 100_000
	a, _ := startApp(b, 0, -1, -1)
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if err != nil {
		b.Fatal(err)
	}
	c, err := azblob.NewClientWithSharedKeyCredential(a.BlobURL, cred, clientOptions())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.CreateContainer(ctx, "big", nil); err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := g; i < n; i += 16 {
				if _, err := c.UploadBuffer(ctx, "big", fmt.Sprintf("dir%02d/blob-%06d", i%50, i), []byte("0123456789"), nil); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("big")
	listAll := func(b *testing.B, format container.StorageResponseFormat) {
		listed := 0
		pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{ResponseFormat: format})
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				b.Fatal(err)
			}
			listed += len(page.Segment.BlobItems)
		}
		if listed != n {
			b.Fatalf("listed %d of %d", listed, n)
		}
	}
	for _, tc := range []struct {
		name   string
		format container.StorageResponseFormat
	}{{"xml", container.StorageResponseFormatXML}, {"arrow", container.StorageResponseFormatArrow}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				listAll(b, tc.format)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "blobs/s")
		})
	}
	// Both formats in turn within each op, so that a shared machine's load
	// falls on both alike: arrow/xml is the speed-up.
	b.Run("paired", func(b *testing.B) {
		var tx, ta time.Duration
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			listAll(b, container.StorageResponseFormatXML)
			t1 := time.Now()
			listAll(b, container.StorageResponseFormatArrow)
			tx, ta = tx+t1.Sub(t0), ta+time.Since(t1)
		}
		b.ReportMetric(float64(n)*float64(b.N)/tx.Seconds(), "xml-blobs/s")
		b.ReportMetric(float64(n)*float64(b.N)/ta.Seconds(), "arrow-blobs/s")
		b.ReportMetric(tx.Seconds()/ta.Seconds(), "arrow/xml")
	})
}

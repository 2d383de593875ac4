package blob

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// BenchmarkPutBlobChangeFeed is a 1 KiB Put Blob with the change feed off
// and on, side by side, on the store testenv gives (the embedded store;
// CERULEAN_TEST_BACKEND=memory: the in-memory one).
func BenchmarkPutBlobChangeFeed(b *testing.B) {
	noVerify(b)
	body := bytes.Repeat([]byte("x"), 1024)
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			store, chunks, clk := testenv.Stores(b)
			s := New(store, chunks, clk, nil)
			s.SetChangeFeed(func(string) bool { return on })
			ctx := context.Background()
			c := ContainerRef{Account: "acct", Container: "cnt"}
			if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.PutBlob(ctx, PutBlobInput{Ref: blobAt(c, fmt.Sprintf("b%d", i%100)), Type: BlockBlob,
					Body: bytes.NewReader(body), Length: int64(len(body))}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSetBlobMetadataChangeFeed is Set Blob Metadata of a 1 KiB
// blob with the change feed off and on: a logged write that changes a
// blob rather than creating it, whose record needs the blob before it.
func BenchmarkSetBlobMetadataChangeFeed(b *testing.B) {
	noVerify(b)
	body := bytes.Repeat([]byte("x"), 1024)
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			store, chunks, clk := testenv.Stores(b)
			s := New(store, chunks, clk, nil)
			s.SetChangeFeed(func(string) bool { return on })
			ctx := context.Background()
			c := ContainerRef{Account: "acct", Container: "cnt"}
			if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
				b.Fatal(err)
			}
			for i := 0; i < 100; i++ {
				if _, err := s.PutBlob(ctx, PutBlobInput{Ref: blobAt(c, fmt.Sprintf("b%d", i)), Type: BlockBlob,
					Body: bytes.NewReader(body), Length: int64(len(body))}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.SetBlobMetadata(ctx, SetBlobMetadataInput{Ref: blobAt(c, fmt.Sprintf("b%d", i%100)),
					Metadata: map[string]string{"n": fmt.Sprint(i)}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPutBlobChangeFeedFrontEnds is BenchmarkPutBlobChangeFeed with
// concurrent writers spread over three front ends (three store handles on
// one schema with $CERULEAN_TEST_POSTGRES; one store otherwise), writing
// distinct blobs: on PostgreSQL, with the feed on, they conflict on the
// account's log counter and retry.
func BenchmarkPutBlobChangeFeedFrontEnds(b *testing.B) {
	noVerify(b)
	body := bytes.Repeat([]byte("x"), 1024)
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			svcs := feedServices(b, 3)
			for _, s := range svcs {
				s.SetChangeFeed(func(string) bool { return on })
			}
			ctx := context.Background()
			c := ContainerRef{Account: "acct", Container: "cnt"}
			if _, err := svcs[0].CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
				b.Fatal(err)
			}
			var n atomic.Int64
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					s := svcs[i%3]
					if _, err := s.PutBlob(ctx, PutBlobInput{Ref: blobAt(c, fmt.Sprintf("b%d", i)), Type: BlockBlob,
						Body: bytes.NewReader(body), Length: int64(len(body))}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// noVerify turns the tests' check of every change record off for the
// benchmark b: it reads each blob back, which is what is measured.
func noVerify(b *testing.B) {
	old := verifyChangeTx
	verifyChangeTx = false
	b.Cleanup(func() { verifyChangeTx = old })
}

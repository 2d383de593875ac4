package blob

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// BenchmarkPutBlobChangeFeed is a 1 KiB Put Blob with the change feed off
// and on, side by side, on the store testenv gives (the embedded store;
// CERULEAN_TEST_BACKEND=memory: the in-memory one).
func BenchmarkPutBlobChangeFeed(b *testing.B) {
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

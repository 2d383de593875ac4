package blob

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// FuzzListMarker: any marker string either decodes or is rejected; a
// decoded marker re-encodes to itself.
func FuzzListMarker(f *testing.F) {
	f.Add(encodeMarker("b", "dir/a b.txt", ""))
	f.Add(encodeMarker("p", "dir/", ""))
	f.Add(encodeMarker("b", "x", "2026-11-22T00:00:00.0000000Z"))
	f.Add("b.")
	f.Add("zzz")
	f.Fuzz(func(t *testing.T, m string) {
		kind, name, snap, ok := decodeMarker(m)
		if !ok {
			return
		}
		if back := encodeMarker(kind, name, snap); back != m {
			if k2, n2, s2, ok2 := decodeMarker(back); !ok2 || k2 != kind || n2 != name || s2 != snap {
				t.Fatalf("marker %q decoded to (%q,%q,%q) which does not round-trip", m, kind, name, snap)
			}
		}
	})
}

// scanCounter is a kv.Tx that adds up the limits of the scans made
// through it: the rows a store that fetches a scan's whole batch in one
// round trip (PostgreSQL) would read.
type scanCounter struct {
	kv.Tx
	rows int
}

func (c *scanCounter) Scan(start, end []byte, limit int, reverse bool, fn func(k, v []byte) bool) error {
	c.rows += limit
	return c.Tx.Scan(start, end, limit, reverse, fn)
}

// TestDelimiterListingBatches: a root listing with a delimiter over 100
// directories of 50 blobs folds each directory after reading a small
// batch, not a full one (prefixBatch), and lists all 100 prefixes.
func TestDelimiterListingBatches(t *testing.T) {
	ctx := context.Background()
	store, chunks, clk := testenv.Stores(t)
	s := New(store, chunks, clk, nil)
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: ContainerRef{Account: "a", Container: "c"}}); err != nil {
		t.Fatal(err)
	}
	for d := 0; d < 100; d++ {
		for i := 0; i < 50; i++ {
			name := fmt.Sprintf("dir%02d/blob-%03d", d, i)
			if _, err := s.PutBlob(ctx, PutBlobInput{Ref: BlobRef{Account: "a", Container: "c", Blob: name}, Type: BlockBlob, Body: strings.NewReader("x"), Length: 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	base := kv.Key("b", "a", "c")
	err := store.View(ctx, func(tx kv.Tx) error {
		c := &scanCounter{Tx: tx}
		sc := blobScan{start: base, end: kv.PrefixEnd(base), delim: "/"}
		out, err := sc.collect(c, 5000)
		if err != nil {
			return err
		}
		if len(out) != 100 || !out[0].prefix || out[99].name != "dir99/" {
			t.Fatalf("listed %d entries, first %+v", len(out), out[0])
		}
		if c.rows > 2000 { // 100 prefixes of 16 rows each, and the end: not a full batch each

			t.Fatalf("the listing asked for %d rows for 100 prefixes", c.rows)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

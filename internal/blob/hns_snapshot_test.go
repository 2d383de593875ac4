package blob

import (
	"context"
	"strings"
	"testing"
)

// TestHNSSnapshotReferences: each snapshot of a file holds its own
// reference on every data item it shares with the file; deleting one
// snapshot releases its references, and deleting the file lets the
// collector (Reclaim) remove the remaining snapshot records and free
// every data item.
func TestHNSSnapshotReferences(t *testing.T) {
	s, n, pass := hnsEnv(t)
	ctx := context.Background()
	big := strings.Repeat("s", 200<<10) // a chunk, not inline
	appendAt(t, s, 0, big)
	ref := PathRef{Account: "acct", Filesystem: "fs", Path: "f"}
	if _, err := s.FlushData(ctx, FlushDataInput{PathRef: ref, Position: int64(len(big))}); err != nil {
		t.Fatal(err)
	}
	refs := func() uint32 {
		t.Helper()
		items := dtItems(t, s)
		if len(items) != 1 {
			t.Fatalf("data items: %v", items)
		}
		for _, it := range items {
			return it.Refs
		}
		return 0
	}
	base := BlobRef{Account: "acct", Container: "fs", Blob: "f"}
	var snaps []string
	for range 2 {
		out, err := s.SnapshotBlob(ctx, SnapshotBlobInput{Ref: base})
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, out.Snapshot)
	}
	if r := refs(); r != 3 {
		t.Fatalf("references with two snapshots: %d, want 3", r)
	}
	snapRef := base
	snapRef.Snapshot = snaps[0]
	if _, got := readBlob(t, s, GetBlobInput{Ref: snapRef}); got != big {
		t.Fatalf("snapshot read %d bytes", len(got))
	}
	if _, err := s.DeleteBlob(ctx, DeleteBlobInput{Ref: snapRef}); err != nil {
		t.Fatal(err)
	}
	if r := refs(); r != 2 {
		t.Fatalf("references after deleting a snapshot: %d, want 2", r)
	}
	if c := countKeys(t, s, "dls"); c != 1 {
		t.Fatalf("%d snapshot records, want 1", c)
	}
	deleteAndCollect(t, s, n, pass, func() {
		if c, d := countKeys(t, s, "dls"), countKeys(t, s, "dlc"); c != 0 || d != 0 {
			t.Fatalf("after GC: %d snapshot and %d content records", c, d)
		}
	})
}

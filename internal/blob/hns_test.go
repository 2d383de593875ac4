package blob

import (
	"context"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// hnsEnv is a Blob service whose account "acct" is hierarchical, with
// filesystem "fs" and an empty file "f".
func hnsEnv(t *testing.T) (*Service, *ns.Namespace, func()) {
	t.Helper()
	s, clk := dtService(t)
	n := ns.New(clk)
	s.SetNamespace(n, func(a string) bool { return a == "acct" })
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: ContainerRef{Account: "acct", Container: "fs"}}); err != nil {
		t.Fatal(err)
	}
	// The container's creation made the filesystem's root (Layout).
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		_, err := n.Create(tx, ns.FS{Account: "acct", Filesystem: "fs"}, ns.CreateInput{Path: "f"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, n, func() { clk.Advance(2 * extent.GCGrace) }
}

// countKeys counts the keys of the ranges with first component first.
func countKeys(t *testing.T, s *Service, first string) int {
	t.Helper()
	n := 0
	err := s.store.View(context.Background(), func(tx kv.Tx) error {
		p := kv.Key(first)
		return tx.Scan(p, kv.PrefixEnd(p), 0, false, func(_, _ []byte) bool { n++; return true })
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func appendAt(t *testing.T, s *Service, pos int64, data string) {
	t.Helper()
	_, err := s.AppendData(context.Background(), AppendDataInput{PathRef: PathRef{Account: "acct", Filesystem: "fs", Path: "f"},
		Position: pos, Body: strings.NewReader(data), Length: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHNSContentReferencesAndReclaim: every part held by a content or
// pending record holds exactly one reference, through appends, a flush
// that retains and one that discards; deleting the file and running the
// Blob GC (which runs the namespace's collector with Reclaim) releases
// the records and frees every data item.
func TestHNSContentReferencesAndReclaim(t *testing.T) {
	s, n, pass := hnsEnv(t)
	ctx := context.Background()
	big := strings.Repeat("b", 200<<10) // a chunk, not inline
	appendAt(t, s, 0, "hello ")
	appendAt(t, s, 6, big)
	appendAt(t, s, 6+int64(len(big)), "tail")
	ref := PathRef{Account: "acct", Filesystem: "fs", Path: "f"}
	if _, err := s.FlushData(ctx, FlushDataInput{PathRef: ref, Position: 6, RetainUncommitted: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FlushData(ctx, FlushDataInput{PathRef: ref, Position: 6 + int64(len(big))}); err != nil {
		t.Fatal(err)
	}
	out, got := readBlob(t, s, GetBlobInput{Ref: BlobRef{Account: "acct", Container: "fs", Blob: "f"}})
	if got != "hello "+big || out.Properties.Path == nil || out.Properties.Path.Dir {
		t.Fatalf("read %d bytes, path %+v", len(got), out.Properties.Path)
	}
	// "tail" was discarded by the second flush: no pending record.
	if c := countKeys(t, s, "dlp"); c != 0 {
		t.Fatalf("%d pending records after the discarding flush", c)
	}
	checkRefs := func(want int) {
		t.Helper()
		items := dtItems(t, s)
		live := 0
		for _, it := range items {
			if it.Refs > 1 {
				t.Fatalf("a data item with %d references", it.Refs)
			}
			live += int(it.Refs)
		}
		if live != want {
			t.Fatalf("%d referenced data items, want %d (%v)", live, want, items)
		}
	}
	var fc fileContent
	err := s.store.View(ctx, func(tx kv.Tx) error {
		node, err := n.Lookup(tx, ns.FS{Account: "acct", Filesystem: "fs"}, "f", nil)
		if err != nil {
			return err
		}
		_, err = kv.GetJSON(tx, node.Ref, &fc)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	withID := 0
	for _, p := range fc.Parts {
		if p.ID != "" {
			withID++
		}
	}
	checkRefs(withID)
	// A pending append left behind is reclaimed with the file too.
	appendAt(t, s, 6+int64(len(big)), "more")
	deleteAndCollect(t, s, n, pass, func() {
		if c, p := countKeys(t, s, "dlc"), countKeys(t, s, "dlp"); c != 0 || p != 0 {
			t.Fatalf("after GC: %d content and %d pending records", c, p)
		}
	})
}

// TestHNSFlatAccountUnchanged: an account the namespace does not cover
// reads its blobs by name, without path properties.
func TestHNSFlatAccountUnchanged(t *testing.T) {
	s, _, _ := hnsEnv(t)
	ctx := context.Background()
	c := ContainerRef{Account: "flat", Container: "cnt"}
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	putBlock(t, s, blobAt(c, "a/b"), "x", Access{})
	p, err := s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: blobAt(c, "a/b")})
	if err != nil || p.Path != nil || p.Size != 1 {
		t.Fatalf("flat read: %+v %v", p, err)
	}
}

// TestPathBlockIDs: the committed blocks of a path are consecutive
// ranges of at most pathBlockMax bytes whose names read back as those
// ranges and nothing else.
func TestPathBlockIDs(t *testing.T) {
	if got := pathBlocks(0); len(got) != 0 {
		t.Fatalf("empty file: %v", got)
	}
	size := 2*int64(pathBlockMax) + 5
	bl := pathBlocks(size)
	if len(bl) != 3 || bl[2].Size != 5 || len(bl[0].Name) != len(bl[2].Name) {
		t.Fatalf("blocks of %d: %+v", size, bl)
	}
	for i, b := range bl {
		off, n, ok := pathBlockRange(b.Name, size)
		if !ok || off != int64(i)*pathBlockMax || n != b.Size {
			t.Fatalf("block %d: %d %d %v", i, off, n, ok)
		}
	}
	for _, bad := range []string{"", "!!", bl[0].Name[:4], pathBlockID(3), pathBlockID(-1)} {
		if _, _, ok := pathBlockRange(bad, size); ok {
			t.Fatalf("pathBlockRange(%q) accepted", bad)
		}
	}
}

// deleteAndCollect deletes file f of filesystem fs and runs the collector
// past the grace period (pass), then check; after a second pass no data
// item may be left.
func deleteAndCollect(t *testing.T, s *Service, n *ns.Namespace, pass, check func()) {
	t.Helper()
	ctx := context.Background()
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		_, err := n.Delete(tx, ns.FS{Account: "acct", Filesystem: "fs"}, ns.DeleteInput{Path: "f"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		pass()
		if _, err := s.CollectGarbage(ctx); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			check()
		}
	}
	if items := dtItems(t, s); len(items) != 0 {
		t.Fatalf("data items left after GC: %v", items)
	}
}

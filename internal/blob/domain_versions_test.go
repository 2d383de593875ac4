package blob

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// TestNextVersionID: an id is the write's time with 7 fractional digits;
// a time not after the last id (the same clock tick, or a clock set
// back) gets the last id plus 100 ns, so ids strictly increase and sort
// as strings in time order.
func TestNextVersionID(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 21, 0, 0, 123456789, time.UTC)
	if got := nextVersionID(t0, ""); got != "2026-11-28T21:00:00.1234567Z" {
		t.Fatalf("first id %s", got)
	}
	last := ""
	var ids []string
	for _, at := range []time.Time{t0, t0, t0.Add(50), t0.Add(-time.Hour), t0.Add(time.Second), t0.Add(time.Second)} {
		id := nextVersionID(at, last)
		if id <= last {
			t.Fatalf("id %s not after %s", id, last)
		}
		if _, err := wire.ParseSnapshot(id); err != nil {
			t.Fatalf("id %s: %v", id, err)
		}
		ids = append(ids, id)
		last = id
	}
	want := "2026-11-28T21:00:00.1234567Z 2026-11-28T21:00:00.1234568Z 2026-11-28T21:00:00.1234569Z 2026-11-28T21:00:00.1234570Z 2026-11-28T21:00:01.1234567Z 2026-11-28T21:00:01.1234568Z"
	if got := strings.Join(ids, " "); got != want {
		t.Fatalf("ids\n got %s\nwant %s", got, want)
	}
}

// TestVersionReferencesAndReclaim: versions hold references to the data
// items they share with the blob (one per record), never copies; deleting
// a version releases its references, deleting the base keeps them in the
// version it becomes, and deleting the container removes every version
// and lets the collector free every item.
func TestVersionReferencesAndReclaim(t *testing.T) {
	ctx := context.Background()
	s, clk := dtService(t)
	s.SetVersioning(func(string) bool { return true })
	c := ContainerRef{Account: "acct", Container: "cnt"}
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	ref := blobAt(c, "b")
	refs := func() (items, total int) {
		t.Helper()
		for _, it := range dtItems(t, s) {
			if it.Refs > 0 {
				items++
				total += int(it.Refs)
			}
		}
		return
	}
	var ids []string
	for _, ch := range "ABC" {
		out := putBlock(t, s, ref, strings.Repeat(string(ch), 200<<10), Access{}) // chunks, not inline
		ids = append(ids, out.VersionID)
	}
	if n, total := refs(); n != 3 || total != 3 {
		t.Fatalf("after 3 puts: %d items with %d references, want 3 and 3 (no copy)", n, total)
	}
	md, err := s.SetBlobMetadata(ctx, SetBlobMetadataInput{Ref: ref, Metadata: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if md.VersionID <= ids[2] {
		t.Fatalf("metadata version %s not after %s", md.VersionID, ids[2])
	}
	if n, total := refs(); n != 3 || total != 4 {
		t.Fatalf("after Set Blob Metadata: %d items with %d references, want 3 and 4", n, total)
	}
	// Delete version A: its item loses its only reference.
	vref := ref
	vref.VersionID = ids[0]
	if _, err := s.DeleteBlob(ctx, DeleteBlobInput{Ref: vref}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: vref}); err == nil {
		t.Fatal("deleted version still read")
	}
	if n, total := refs(); n != 2 || total != 3 {
		t.Fatalf("after deleting a version: %d items with %d references, want 2 and 3", n, total)
	}
	// Delete the base: it becomes a version, references kept.
	if _, err := s.DeleteBlob(ctx, DeleteBlobInput{Ref: ref}); err != nil {
		t.Fatal(err)
	}
	if n, total := refs(); n != 2 || total != 3 {
		t.Fatalf("after deleting the base: %d items with %d references, want 2 and 3", n, total)
	}
	if k := countKeys(t, s, "bv"); k != 3 {
		t.Fatalf("%d version records, want 3", k)
	}
	vref.VersionID = md.VersionID
	if _, got := readBlob(t, s, GetBlobInput{Ref: vref}); got != strings.Repeat("C", 200<<10) {
		t.Fatal("the deleted base's version reads other content")
	}
	// Delete the container: the reclaimer removes the versions, the
	// collector then frees every item.
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReclaimContainers(ctx); err != nil {
		t.Fatal(err)
	}
	if k := countKeys(t, s, "bv"); k != 0 {
		t.Fatalf("%d version records after the container's reclaim", k)
	}
	if n, total := refs(); n != 0 || total != 0 {
		t.Fatalf("after reclaim: %d items with %d references", n, total)
	}
	clk.Advance(extent.GCGrace + time.Minute)
	if _, err := s.CollectGarbage(ctx); err != nil {
		t.Fatal(err)
	}
	if items := dtItems(t, s); len(items) != 0 {
		t.Fatalf("%d data items left after GC", len(items))
	}
}

// TestSoftDeletedVersionPurged: with soft delete on, a deleted version
// keeps its references until its retention ends; the collector then
// purges it and its data item is freed.
func TestSoftDeletedVersionPurged(t *testing.T) {
	ctx := context.Background()
	s, clk := dtService(t)
	s.SetVersioning(func(string) bool { return true })
	days := 1
	if _, err := s.props.SetProperties(ctx, svcprops.SetPropertiesInput{Account: "acct", Properties: svcprops.Properties{
		DeleteRetentionPolicy: &svcprops.Retention{Enabled: true, Days: &days}}}); err != nil {
		t.Fatal(err)
	}
	c := ContainerRef{Account: "acct", Container: "cnt"}
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	ref := blobAt(c, "b")
	v1 := putBlock(t, s, ref, strings.Repeat("A", 200<<10), Access{}).VersionID
	putBlock(t, s, ref, strings.Repeat("B", 200<<10), Access{})
	vref := ref
	vref.VersionID = v1
	out, err := s.DeleteBlob(ctx, DeleteBlobInput{Ref: vref})
	if err != nil || !out.SoftDeleted {
		t.Fatalf("delete version: %+v %v", out, err)
	}
	live := func() int {
		n := 0
		for _, it := range dtItems(t, s) {
			if it.Refs > 0 {
				n++
			}
		}
		return n
	}
	if n := live(); n != 2 {
		t.Fatalf("%d referenced items while the version is retained, want 2", n)
	}
	clk.Advance(24*time.Hour + time.Minute)
	if _, err := s.CollectGarbage(ctx); err != nil {
		t.Fatal(err)
	}
	if n := live(); n != 1 {
		t.Fatalf("%d referenced items after the retention, want 1", n)
	}
	if k := countKeys(t, s, "bv"); k != 0 {
		t.Fatalf("%d version records after the purge", k)
	}
}

// TestVersioningTurnedOnLater: a blob written before versioning was on
// has no version id; its first overwrite afterwards keeps it as a
// version whose id is its last-modified time, before the new one's.
func TestVersioningTurnedOnLater(t *testing.T) {
	ctx := context.Background()
	s, advance, c := domainEnv(t)
	ref := blobAt(c, "old")
	if out := putBlock(t, s, ref, "before", Access{}); out.VersionID != "" {
		t.Fatalf("version id %s with versioning off", out.VersionID)
	}
	p, err := s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: ref})
	if err != nil || p.VersionID != "" || p.IsCurrentVersion {
		t.Fatalf("before: %+v %v", p, err)
	}
	s.SetVersioning(func(string) bool { return true })
	advance(time.Second)
	out := putBlock(t, s, ref, "after", Access{})
	want := wire.FormatISO7(p.LastModified)
	if out.VersionID <= want {
		t.Fatalf("new id %s not after the old blob's %s", out.VersionID, want)
	}
	vref := ref
	vref.VersionID = want
	if _, got := readBlob(t, s, GetBlobInput{Ref: vref}); got != "before" {
		t.Fatalf("old state reads %q", got)
	}
	list, err := s.ListBlobs(ctx, ListBlobsInput{Ref: c, MaxResults: 10, Include: ListBlobsInclude{Versions: true}})
	if err != nil || len(list.Items) != 2 || list.Items[0].Properties.VersionID != want || !list.Items[1].Properties.IsCurrentVersion {
		t.Fatalf("listing: %+v %v", list.Items, err)
	}
}

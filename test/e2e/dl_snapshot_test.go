package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/extent"
)

// dlSnapEnv is a hierarchical account with filesystem name, reached
// through azblob on the Blob endpoint.
func dlSnapEnv(t *testing.T, name string) (*dlEnv, *container.Client) {
	e := startDL(t, true)
	e.mkfs(name)
	return e, client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient(name)
}

// snapOf is blob name's snapshot snap.
func snapOf(t *testing.T, bc *container.Client, name, snap string) *blob.Client {
	t.Helper()
	c, err := bc.NewBlobClient(name).WithSnapshot(snap)
	must(t, err)
	return c
}

// readBlob downloads b whole.
func readBlob(t *testing.T, ctx context.Context, b *blob.Client) []byte {
	t.Helper()
	resp, err := b.DownloadStream(ctx, nil)
	must(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	must(t, err)
	return got
}

// listSnaps lists bc under prefix with include=snapshots, max per page,
// as "name@snapshot" ("name" for a base blob).
func listSnaps(t *testing.T, ctx context.Context, bc *container.Client, prefix string, max int32) []string {
	t.Helper()
	var out []string
	pg := bc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr(prefix), MaxResults: to.Ptr(max),
		Include: container.ListBlobsInclude{Snapshots: true}})
	for pg.More() {
		page, err := pg.NextPage(ctx)
		must(t, err)
		for _, it := range page.Segment.BlobItems {
			s := *it.Name
			if it.Snapshot != nil && *it.Snapshot != "" {
				s += "@" + *it.Snapshot
			}
			out = append(out, s)
		}
	}
	return out
}

func sameList(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDLSnapshotReadAndList: Snapshot Blob of a file of a hierarchical
// account freezes its content, headers, metadata (or the request's),
// ETag and Last-Modified; Get Blob, Get Blob Properties and Get Block
// List read a snapshot with ?snapshot=, List Blobs include=snapshots
// lists them before the file, oldest first, across pages; a snapshot is
// a copy source; the snapshots
// follow the file through a rename of it and of its parent directory;
// Set Blob Tier applies to a snapshot alone. A directory is 409
// PathConflict, a missing path or snapshot 404 BlobNotFound, conditions
// and lease apply as on a flat account, an archived file is 409
// BlobArchived.
func TestDLSnapshotReadAndList(t *testing.T) {
	e, bc := dlSnapEnv(t, "snaps")
	fs := e.fs("snaps")
	_, err := fs.NewDirectoryClient("d").Create(e.ctx, nil)
	must(t, err)
	bs := client(t, e.app.BlobURL, app.DevKey)
	_, err = bs.UploadBuffer(e.ctx, "snaps", "d/f", []byte("version one"), &azblob.UploadBufferOptions{
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/one")}, Metadata: map[string]*string{"k": to.Ptr("v1")}})
	must(t, err)
	b := bc.NewBlobClient("d/f")
	p1, err := b.GetProperties(e.ctx, nil)
	must(t, err)
	s1, err := b.CreateSnapshot(e.ctx, nil)
	must(t, err)
	if s1.Snapshot == nil || *s1.ETag != *p1.ETag || !s1.LastModified.Equal(*p1.LastModified) {
		t.Fatalf("snapshot answer %+v, file %v %v", s1, *p1.ETag, *p1.LastModified)
	}
	s2, err := b.CreateSnapshot(e.ctx, &blob.CreateSnapshotOptions{Metadata: map[string]*string{"m": to.Ptr("snap")}})
	must(t, err)
	if *s2.Snapshot <= *s1.Snapshot {
		t.Fatalf("snapshot times %s then %s", *s1.Snapshot, *s2.Snapshot)
	}
	// The file moves on: a new file over it through the datalake SDK
	// (Path - Create, append, flush) and new metadata.
	_, err = fs.NewFileClient("d/f").Create(e.ctx, nil)
	must(t, err)
	must(t, fs.NewFileClient("d/f").UploadBuffer(e.ctx, []byte("version two, longer"), nil))
	_, err = b.SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v2")}, nil)
	must(t, err)

	if got := readBlob(t, e.ctx, snapOf(t, bc, "d/f", *s1.Snapshot)); string(got) != "version one" {
		t.Fatalf("snapshot content %q", got)
	}
	if got := readBlob(t, e.ctx, b); string(got) != "version two, longer" {
		t.Fatalf("file content %q", got)
	}
	sp, err := snapOf(t, bc, "d/f", *s1.Snapshot).GetProperties(e.ctx, nil)
	must(t, err)
	if *sp.ContentLength != int64(len("version one")) || *sp.ContentType != "text/one" || *sp.Metadata["K"] != "v1" ||
		*sp.ETag != *p1.ETag || !sp.LastModified.Equal(*p1.LastModified) || sp.LeaseState != nil {
		t.Fatalf("snapshot properties: %d %s %v %s %v lease %v", *sp.ContentLength, *sp.ContentType, sp.Metadata, *sp.ETag, *sp.LastModified, sp.LeaseState)
	}
	sp2, err := snapOf(t, bc, "d/f", *s2.Snapshot).GetProperties(e.ctx, nil)
	must(t, err)
	if len(sp2.Metadata) != 1 || *sp2.Metadata["M"] != "snap" {
		t.Fatalf("metadata of the snapshot taken with metadata: %v", sp2.Metadata)
	}
	bl, err := bc.NewBlockBlobClient("d/f").WithSnapshot(*s1.Snapshot)
	must(t, err)
	blocks, err := bl.GetBlockList(e.ctx, blockblob.BlockListTypeAll, nil)
	must(t, err)
	if len(blocks.CommittedBlocks) != 1 || *blocks.CommittedBlocks[0].Size != int64(len("version one")) || len(blocks.UncommittedBlocks) != 0 {
		t.Fatalf("block list of the snapshot: %+v", blocks.BlockList)
	}
	// A snapshot is a copy source.
	_, err = bc.NewBlobClient("restored").StartCopyFromURL(e.ctx, snapOf(t, bc, "d/f", *s1.Snapshot).URL(), nil)
	must(t, err)
	if got := readBlob(t, e.ctx, bc.NewBlobClient("restored")); string(got) != "version one" {
		t.Fatalf("copy of the snapshot: %q", got)
	}
	_, err = snapOf(t, bc, "d/f", "2001-01-01T00:00:00.0000000Z").GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	_, err = snapOf(t, bc, "d/f", "2001-01-01T00:00:00.0000000Z").DownloadStream(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)

	// Listing: snapshots before the file, oldest first, on any page size.
	want := []string{"d/f@" + *s1.Snapshot, "d/f@" + *s2.Snapshot, "d/f"}
	for _, max := range []int32{1, 2, 100} {
		if got := listSnaps(t, e.ctx, bc, "d/", max); !sameList(got, want) {
			t.Fatalf("include=snapshots, pages of %d: %v, want %v", max, got, want)
		}
	}
	page, err := bc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Snapshots: true}}).NextPage(e.ctx)
	must(t, err)
	if items := page.Segment.BlobItems; len(items) != 5 || *items[0].Name != "d" || *items[1].Properties.ContentLength != int64(len("version one")) || *items[4].Name != "restored" {
		t.Fatalf("listing with the directory: %d items", len(items))
	}
	page, err = bc.NewListBlobsFlatPager(nil).NextPage(e.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 3 {
		t.Fatalf("listing without include=snapshots: %d items", len(page.Segment.BlobItems))
	}

	// A rename of the file, then of its directory: the snapshots follow.
	_, err = fs.NewFileClient("d/f").Rename(e.ctx, "d/g", nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("d").Rename(e.ctx, "e", nil)
	must(t, err)
	if got := readBlob(t, e.ctx, snapOf(t, bc, "e/g", *s1.Snapshot)); string(got) != "version one" {
		t.Fatalf("snapshot after the renames: %q", got)
	}
	_, err = snapOf(t, bc, "d/f", *s1.Snapshot).GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	if got := listSnaps(t, e.ctx, bc, "e/", 5); !sameList(got, []string{"e/g@" + *s1.Snapshot, "e/g@" + *s2.Snapshot, "e/g"}) {
		t.Fatalf("listing after the renames: %v", got)
	}

	// Set Blob Tier of a snapshot: its own tier, the file's unchanged.
	_, err = snapOf(t, bc, "e/g", *s1.Snapshot).SetTier(e.ctx, blob.AccessTierCool, nil)
	must(t, err)
	sp, err = snapOf(t, bc, "e/g", *s1.Snapshot).GetProperties(e.ctx, nil)
	must(t, err)
	fp, err := bc.NewBlobClient("e/g").GetProperties(e.ctx, nil)
	must(t, err)
	if *sp.AccessTier != "Cool" || *fp.AccessTier != "Hot" {
		t.Fatalf("tiers: snapshot %s, file %s", *sp.AccessTier, *fp.AccessTier)
	}

	// What is refused.
	_, err = bc.NewBlobClient("e").CreateSnapshot(e.ctx, nil)
	wantRaw(t, err, http.StatusConflict, "PathConflict")
	_, err = bc.NewBlobClient("e/none").CreateSnapshot(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	_, err = bc.NewBlobClient("e/g").CreateSnapshot(e.ctx, &blob.CreateSnapshotOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag(`"0x1"`))}}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = bc.NewBlobClient("e/g").CreateSnapshot(e.ctx, &blob.CreateSnapshotOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: fp.ETag}}})
	must(t, err)
	lc, err := lease.NewBlobClient(bc.NewBlobClient("e/g"), &lease.BlobClientOptions{LeaseID: to.Ptr("11111111-1111-1111-1111-111111111111")})
	must(t, err)
	_, err = lc.AcquireLease(e.ctx, -1, nil)
	must(t, err)
	_, err = bc.NewBlobClient("e/g").CreateSnapshot(e.ctx, &blob.CreateSnapshotOptions{AccessConditions: &blob.AccessConditions{
		LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: to.Ptr("22222222-2222-2222-2222-222222222222")}}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.LeaseIDMismatchWithBlobOperation)
	_, err = bc.NewBlobClient("e/g").CreateSnapshot(e.ctx, nil) // a lease does not prevent a snapshot
	must(t, err)
	_, err = bc.NewBlobClient("e/g").CreateSnapshot(e.ctx, &blob.CreateSnapshotOptions{AccessConditions: &blob.AccessConditions{
		LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: lc.LeaseID()}}})
	must(t, err)
	_, err = bs.UploadBuffer(e.ctx, "snaps", "cold", []byte("x"), &azblob.UploadBufferOptions{AccessTier: to.Ptr(blob.AccessTierArchive)})
	must(t, err)
	_, err = bc.NewBlobClient("cold").CreateSnapshot(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)

	// An empty file made by Path Create can be snapshotted too.
	_, err = fs.NewFileClient("empty").Create(e.ctx, nil)
	must(t, err)
	se, err := bc.NewBlobClient("empty").CreateSnapshot(e.ctx, nil)
	must(t, err)
	if got := readBlob(t, e.ctx, snapOf(t, bc, "empty", *se.Snapshot)); len(got) != 0 {
		t.Fatalf("snapshot of an empty file: %q", got)
	}
}

// TestDLSnapshotDelete: a file with snapshots is not deleted without
// x-ms-delete-snapshots (409 SnapshotsPresent, after the conditions), on
// the Blob endpoint and by Path - Delete, nor replaced by a rename onto
// it; ?snapshot= deletes one,
// "only" the snapshots, "include" both; an overwrite of the file (Put
// Blob, Path - Create) keeps them; with soft delete on, a file deleted
// with its snapshots is gone for good, and a directory deleted over a
// file with snapshots comes back with them on Undelete.
func TestDLSnapshotDelete(t *testing.T) {
	e, bc := dlSnapEnv(t, "snapdel")
	fs := e.fs("snapdel")
	bs := client(t, e.app.BlobURL, app.DevKey)
	_, err := bs.UploadBuffer(e.ctx, "snapdel", "a/f", []byte("first"), nil)
	must(t, err)
	f := bc.NewBlobClient("a/f")
	s1, err := f.CreateSnapshot(e.ctx, nil)
	must(t, err)
	s2, err := f.CreateSnapshot(e.ctx, nil)
	must(t, err)

	_, err = f.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.SnapshotsPresent)
	_, err = f.Delete(e.ctx, &blob.DeleteOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag(`"0x1"`))}}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = fs.NewFileClient("a/f").Delete(e.ctx, nil)
	wantRaw(t, err, http.StatusConflict, "SnapshotsPresent")
	resp, out := e.raw(http.MethodDelete, "/snapdel/a/f?recursive=true", nil, nil)
	if resp.StatusCode != http.StatusConflict || resp.Header.Get("x-ms-error-code") != "SnapshotsPresent" {
		t.Fatalf("Path - Delete recursive=true of a file with snapshots: %d %s", resp.StatusCode, out)
	}

	// One snapshot.
	_, err = snapOf(t, bc, "a/f", *s1.Snapshot).Delete(e.ctx, nil)
	must(t, err)
	_, err = snapOf(t, bc, "a/f", *s1.Snapshot).GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	_, err = snapOf(t, bc, "a/f", *s1.Snapshot).Delete(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	if got := listSnaps(t, e.ctx, bc, "a/", 10); !sameList(got, []string{"a/f@" + *s2.Snapshot, "a/f"}) {
		t.Fatalf("after deleting one snapshot: %v", got)
	}

	// A rename onto it would delete it with its snapshots: refused, and
	// nothing moves.
	_, err = bs.UploadBuffer(e.ctx, "snapdel", "a/src", []byte("src"), nil)
	must(t, err)
	_, err = fs.NewFileClient("a/src").Rename(e.ctx, "a/f", nil)
	wantRaw(t, err, http.StatusConflict, "SnapshotsPresent")
	if got := readBlob(t, e.ctx, bc.NewBlobClient("a/src")); string(got) != "src" {
		t.Fatalf("rename source after the refused rename: %q", got)
	}
	_, err = fs.NewFileClient("a/f").Rename(e.ctx, "a/moved", nil) // a rename of it is fine
	must(t, err)
	_, err = fs.NewFileClient("a/moved").Rename(e.ctx, "a/f", nil)
	must(t, err)

	// An overwrite keeps the snapshots of the name.
	_, err = bs.UploadBuffer(e.ctx, "snapdel", "a/f", []byte("second"), nil)
	must(t, err)
	_, err = fs.NewFileClient("a/f").Create(e.ctx, nil)
	must(t, err)
	if got := readBlob(t, e.ctx, snapOf(t, bc, "a/f", *s2.Snapshot)); string(got) != "first" {
		t.Fatalf("snapshot after two overwrites: %q", got)
	}
	if got := readBlob(t, e.ctx, f); len(got) != 0 {
		t.Fatalf("file after Path - Create: %q", got)
	}

	// only: the snapshots go, the file stays.
	_, err = f.Delete(e.ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeOnly)})
	must(t, err)
	if got := listSnaps(t, e.ctx, bc, "a/", 10); !sameList(got, []string{"a/f", "a/src"}) {
		t.Fatalf("after only: %v", got)
	}
	_, err = fs.NewFileClient("a/f").Delete(e.ctx, nil) // no snapshot left
	must(t, err)

	// include: the file and its snapshots.
	_, err = bs.UploadBuffer(e.ctx, "snapdel", "a/g", []byte("g"), nil)
	must(t, err)
	sg, err := bc.NewBlobClient("a/g").CreateSnapshot(e.ctx, nil)
	must(t, err)
	_, err = bc.NewBlobClient("a/g").Delete(e.ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)})
	must(t, err)
	_, err = snapOf(t, bc, "a/g", *sg.Snapshot).GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	// A new file at the name has none of the old one's snapshots.
	_, err = bs.UploadBuffer(e.ctx, "snapdel", "a/g", []byte("new g"), nil)
	must(t, err)
	_, err = snapOf(t, bc, "a/g", *sg.Snapshot).GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)

	// Soft delete on: a file deleted with its snapshots is not kept ("Soft
	// delete for blobs", hierarchical namespace table: "Soft delete won't
	// be supported for blobs with snapshots"); a directory deleted over
	// one is, and comes back with the file's snapshots
	// (TestDLSoftDocDeleteBlob covers both further).
	_, err = e.svc.SetProperties(e.ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7))}})
	must(t, err)
	_, err = bs.UploadBuffer(e.ctx, "snapdel", "a/h", []byte("h content"), nil)
	must(t, err)
	sh, err := bc.NewBlobClient("a/h").CreateSnapshot(e.ctx, nil)
	must(t, err)
	_, err = bc.NewBlobClient("a/h").Delete(e.ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)})
	must(t, err)
	if names, _, _ := deletedPaths(t, e, fs, nil); len(names) != 0 {
		t.Fatalf("kept after include under the policy: %v", names)
	}
	_, err = bs.UploadBuffer(e.ctx, "snapdel", "a/h", []byte("h content"), nil)
	must(t, err)
	sh, err = bc.NewBlobClient("a/h").CreateSnapshot(e.ctx, nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("a").Delete(e.ctx, nil)
	must(t, err)
	_, ids, _ := deletedPaths(t, e, fs, nil)
	resp, out = e.raw(http.MethodPut, "/snapdel/a?comp=undelete", map[string]string{"x-ms-undelete-source": "?deletionid=" + ids["a"]}, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("undelete: %d %s", resp.StatusCode, out)
	}
	if got := readBlob(t, e.ctx, snapOf(t, bc, "a/h", *sh.Snapshot)); string(got) != "h content" {
		t.Fatalf("snapshot after undelete: %q", got)
	}
}

// TestDLSnapshotReclaim: a snapshot holds its own references on the
// data items it shares with the file: replacing the file's content does
// not free them, deleting the snapshots (only) does, and a recursive
// delete of the directory above a file with snapshots (allowed: the
// directory goes with them) lets the collector release the file's
// content and its snapshots' down to no data item left.
func TestDLSnapshotReclaim(t *testing.T) {
	e, bc := dlSnapEnv(t, "snapgc")
	fs := e.fs("snapgc")
	bs := client(t, e.app.BlobURL, app.DevKey)
	chunk := func(c byte) []byte { return bytes.Repeat([]byte{c}, 200<<10) } // a data item of its own, not inline
	collect := func() int {
		t.Helper()
		// The first run releases what the namespace hands back, a run
		// after the data items' grace frees them (extent.GCGrace; on a
		// store only this server uses the first run frees them already,
		// see extent.TrackViews): the sum counts each once. The SDK
		// signs with the real time, so the clock moves only around the
		// collector.
		n1, err := e.app.Blob.CollectGarbage(e.ctx)
		must(t, err)
		e.clock.Set(time.Now().Add(extent.GCGrace + time.Second))
		defer e.clock.Set(time.Now())
		n2, err := e.app.Blob.CollectGarbage(e.ctx)
		must(t, err)
		return n1 + n2
	}
	_, err := bs.UploadBuffer(e.ctx, "snapgc", "r/x", chunk('a'), nil)
	must(t, err)
	sa, err := bc.NewBlobClient("r/x").CreateSnapshot(e.ctx, nil)
	must(t, err)
	_, err = bs.UploadBuffer(e.ctx, "snapgc", "r/x", chunk('b'), nil) // a replaced file
	must(t, err)
	_, err = bc.NewBlobClient("r/x").CreateSnapshot(e.ctx, nil)
	must(t, err)
	_, err = fs.NewFileClient("r/x").Create(e.ctx, nil) // replaced again, then appended to
	must(t, err)
	must(t, fs.NewFileClient("r/x").UploadBuffer(e.ctx, chunk('c'), nil))
	if n := collect(); n != 0 {
		t.Fatalf("freed %d data items the snapshots hold", n)
	}
	if got := readBlob(t, e.ctx, snapOf(t, bc, "r/x", *sa.Snapshot)); !bytes.Equal(got, chunk('a')) {
		t.Fatalf("first snapshot after the collection: %d bytes", len(got))
	}

	// only: the snapshot's data items are freed, the file's stays.
	_, err = bs.UploadBuffer(e.ctx, "snapgc", "r/y", chunk('d'), nil)
	must(t, err)
	_, err = bc.NewBlobClient("r/y").CreateSnapshot(e.ctx, nil)
	must(t, err)
	_, err = fs.NewFileClient("r/y").Create(e.ctx, nil)
	must(t, err)
	must(t, fs.NewFileClient("r/y").UploadBuffer(e.ctx, chunk('e'), nil))
	_, err = bc.NewBlobClient("r/y").Delete(e.ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeOnly)})
	must(t, err)
	if n := collect(); n != 1 {
		t.Fatalf("collected %d data items after deleting r/y's snapshot, want 1", n)
	}

	// The directory goes, with the files and their snapshots.
	_, err = fs.NewDirectoryClient("r").Delete(e.ctx, nil)
	must(t, err)
	if n := collect(); n != 4 { // a, b, c (r/x and its snapshots) and e (r/y)
		t.Fatalf("collected %d data items after the recursive delete, want 4", n)
	}
	if n := collect(); n != 0 {
		t.Fatalf("second collection: %d", n)
	}
}

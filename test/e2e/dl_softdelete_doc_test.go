package e2e

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/datalakeerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/extent"
)

// The hierarchical namespace table of "Soft delete for blobs"
// (learn.microsoft.com/azure/storage/blobs/soft-delete-blob-overview,
// "Blob soft delete protection by operation"), with soft delete enabled:
// Delete Blob creates a soft-deleted object, but "Soft delete won't be
// supported for blobs with snapshots and snapshots"; Path - Create that
// renames soft-deletes an "existing destination blob or empty
// directory"; an expired blob does not become a soft-deleted one.

// softDocPolicy turns Blob soft delete on for 7 days.
func softDocPolicy(t *testing.T, e *dlEnv, on bool) {
	t.Helper()
	p := &service.RetentionPolicy{Enabled: to.Ptr(on)}
	if on {
		p.Days = to.Ptr(int32(7))
	}
	_, err := e.svc.SetProperties(e.ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: p})
	must(t, err)
}

// softDocDelete is Delete Blob (the Blob API on the dfs port: no
// recursive parameter) of path with x-ms-delete-snapshots ds ("" for
// none); it wants 202 and returns x-ms-delete-type-permanent.
func softDocDelete(t *testing.T, e *dlEnv, path, ds string) string {
	t.Helper()
	var hdr map[string]string
	if ds != "" {
		hdr = map[string]string{"x-ms-delete-snapshots": ds}
	}
	resp, out := e.raw(http.MethodDelete, path, hdr, nil)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("Delete Blob %s (%s): %d %s", path, ds, resp.StatusCode, out)
	}
	return resp.Header.Get("x-ms-delete-type-permanent")
}

// softDocCollect runs the collector twice, the second time past the
// data items' grace (extent.GCGrace), at the injected clock's now plus
// skew, and returns the data items freed. The SDK signs with the real
// time, so the clock moves only around the collector.
func softDocCollect(t *testing.T, e *dlEnv, skew time.Duration) int {
	t.Helper()
	defer e.clock.Set(time.Now())
	e.clock.Set(time.Now().Add(skew))
	// A run, then one after the data items' grace (extent.GCGrace): on a
	// store only this server uses the first frees what it releases at
	// once (extent.TrackViews), elsewhere the second does; the sum
	// counts each item once.
	n1, err := e.app.Blob.CollectGarbage(e.ctx)
	must(t, err)
	e.clock.Set(time.Now().Add(skew + extent.GCGrace + time.Second))
	n2, err := e.app.Blob.CollectGarbage(e.ctx)
	must(t, err)
	return n1 + n2
}

// TestDLSoftDocDeleteBlob: with soft delete on, Delete Blob of a file
// with x-ms-delete-snapshots: include is permanent when the file has
// snapshots (x-ms-delete-type-permanent: true, nothing listed by List
// Deleted Paths, nothing for Undelete Blob, the file's and snapshots'
// data freed by the collector at once); so are a snapshot's delete and
// only. A file without snapshots is soft-deleted (include or not: false)
// and restored by Undelete Blob. Path - Delete of a file with snapshots
// stays 409 SnapshotsPresent, and a recursive Path - Delete of the
// directory above one is one soft-deleted directory that comes back
// with the file and its snapshots.
func TestDLSoftDocDeleteBlob(t *testing.T) {
	e, bc := dlSnapEnv(t, "sdocdel")
	fs := e.fs("sdocdel")
	bs := client(t, e.app.BlobURL, app.DevKey)
	chunk := func(c byte) []byte { return bytes.Repeat([]byte{c}, 200<<10) } // a data item of its own
	softDocPolicy(t, e, true)

	// A file with two snapshots of two contents.
	_, err := bs.UploadBuffer(e.ctx, "sdocdel", "a/f", chunk('a'), nil)
	must(t, err)
	s1, err := bc.NewBlobClient("a/f").CreateSnapshot(e.ctx, nil)
	must(t, err)
	_, err = bs.UploadBuffer(e.ctx, "sdocdel", "a/f", chunk('b'), nil)
	must(t, err)
	s2, err := bc.NewBlobClient("a/f").CreateSnapshot(e.ctx, nil)
	must(t, err)
	_, err = fs.NewFileClient("a/f").Delete(e.ctx, nil)
	wantRaw(t, err, http.StatusConflict, "SnapshotsPresent")

	// A snapshot: permanent.
	if p := softDocDelete(t, e, "/sdocdel/a/f?snapshot="+*s1.Snapshot, ""); p != "true" {
		t.Fatalf("Delete Blob of a snapshot: x-ms-delete-type-permanent %q", p)
	}
	// The file with its snapshot: permanent, nothing kept.
	if p := softDocDelete(t, e, "/sdocdel/a/f", "include"); p != "true" {
		t.Fatalf("Delete Blob include of a file with snapshots: x-ms-delete-type-permanent %q", p)
	}
	if names, _, _ := deletedPaths(t, e, fs, nil); len(names) != 0 {
		t.Fatalf("soft-deleted after include: %v", names)
	}
	_, err = snapOf(t, bc, "a/f", *s2.Snapshot).GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	_, err = bc.NewBlobClient("a/f").Undelete(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	// a (the first snapshot, released at its delete) and b (the file's
	// content and the second snapshot's) are freed.
	if n := softDocCollect(t, e, 0); n != 2 {
		t.Fatalf("data items freed after include: %d, want 2", n)
	}

	// only: the snapshots go for good, the file stays.
	_, err = bs.UploadBuffer(e.ctx, "sdocdel", "a/g", []byte("g"), nil)
	must(t, err)
	_, err = bc.NewBlobClient("a/g").CreateSnapshot(e.ctx, nil)
	must(t, err)
	if p := softDocDelete(t, e, "/sdocdel/a/g", "only"); p != "true" {
		t.Fatalf("Delete Blob only: x-ms-delete-type-permanent %q", p)
	}
	if got := listSnaps(t, e.ctx, bc, "a/", 10); !sameList(got, []string{"a/g"}) {
		t.Fatalf("after only: %v", got)
	}

	// Files without snapshots are soft-deleted, include or not.
	_, err = bs.UploadBuffer(e.ctx, "sdocdel", "a/h", []byte("h"), nil)
	must(t, err)
	if p := softDocDelete(t, e, "/sdocdel/a/g", "include"); p != "false" {
		t.Fatalf("Delete Blob include of a file without snapshots: x-ms-delete-type-permanent %q", p)
	}
	if p := softDocDelete(t, e, "/sdocdel/a/h", ""); p != "false" {
		t.Fatalf("Delete Blob of a file without snapshots: x-ms-delete-type-permanent %q", p)
	}
	if names, _, _ := deletedPaths(t, e, fs, nil); !sameList(names, []string{"a/g", "a/h"}) {
		t.Fatalf("soft-deleted files: %v", names)
	}
	_, err = bc.NewBlobClient("a/g").Undelete(e.ctx, nil)
	must(t, err)
	if got := readBlob(t, e.ctx, bc.NewBlobClient("a/g")); string(got) != "g" {
		t.Fatalf("a/g after Undelete Blob: %q", got)
	}

	// A recursive Path - Delete of the directory above a file with
	// snapshots: one soft-deleted directory, restored with the file and
	// its snapshots.
	_, err = bs.UploadBuffer(e.ctx, "sdocdel", "d/x", []byte("x"), nil)
	must(t, err)
	sx, err := bc.NewBlobClient("d/x").CreateSnapshot(e.ctx, nil)
	must(t, err)
	dr, err := fs.NewDirectoryClient("d").Delete(e.ctx, nil)
	must(t, err)
	if dr.DeletionID == nil || *dr.DeletionID == "" {
		t.Fatal("recursive delete of d: no deletion id")
	}
	if names, _, _ := deletedPaths(t, e, fs, nil); !sameList(names, []string{"a/h", "d"}) {
		t.Fatalf("soft-deleted after deleting d: %v", names)
	}
	resp, out := e.raw(http.MethodPut, "/sdocdel/d?comp=undelete", map[string]string{"x-ms-undelete-source": "?deletionid=" + *dr.DeletionID}, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("undelete d: %d %s", resp.StatusCode, out)
	}
	if got := readBlob(t, e.ctx, snapOf(t, bc, "d/x", *sx.Snapshot)); string(got) != "x" {
		t.Fatalf("d/x's snapshot after undeleting d: %q", got)
	}
}

// TestDLSoftDocRename: with soft delete on, a rename (Path - Create with
// x-ms-rename-source, legacy mode as the SDK sends it, and posix mode)
// onto an existing file or empty directory soft-deletes the destination:
// List Deleted Paths lists it with its deletion id, Path Undelete
// restores it once its name is free (409 BlobAlreadyExists before), and
// it is gone after the retention. A destination file with snapshots is
// still 409 SnapshotsPresent, nothing kept; without the policy the
// destination is gone at once.
func TestDLSoftDocRename(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("sdocren")
	other := e.mkfs("sdocother")
	mkfile := func(p, body string) {
		t.Helper()
		f := fs.NewFileClient(p)
		_, err := f.Create(e.ctx, nil)
		must(t, err)
		must(t, f.UploadBuffer(e.ctx, []byte(body), nil))
	}
	softDocPolicy(t, e, true)

	// Legacy mode (the SDK's), onto a file.
	mkfile("dst", "old dst")
	mkfile("src", "new")
	_, err := fs.NewFileClient("src").Rename(e.ctx, "dst", nil)
	must(t, err)
	names, ids, _ := deletedPaths(t, e, fs, nil)
	if !sameList(names, []string{"dst"}) {
		t.Fatalf("soft-deleted after the rename onto dst: %v", names)
	}
	if got := fileText(t, e, fs, "dst"); got != "new" {
		t.Fatalf("dst after the rename: %q", got)
	}
	undelete := func(path, id string) (int, string) {
		t.Helper()
		resp, _ := e.raw(http.MethodPut, path+"?comp=undelete", map[string]string{"x-ms-undelete-source": "?deletionid=" + id}, nil)
		return resp.StatusCode, resp.Header.Get("x-ms-error-code")
	}
	if st, code := undelete("/sdocren/dst", ids["dst"]); st != http.StatusConflict || code != "BlobAlreadyExists" {
		t.Fatalf("undelete onto the renamed file: %d %s", st, code)
	}
	_, err = fs.NewFileClient("dst").Rename(e.ctx, "moved", nil)
	must(t, err)
	if st, code := undelete("/sdocren/dst", ids["dst"]); st != http.StatusOK {
		t.Fatalf("undelete of the replaced dst: %d %s", st, code)
	}
	if got := fileText(t, e, fs, "dst"); got != "old dst" {
		t.Fatalf("dst after undelete: %q", got)
	}

	// Posix mode, onto a file; and onto an empty directory.
	mkfile("src2", "src2")
	resp, out := e.raw(http.MethodPut, "/sdocren/dst?mode=posix", map[string]string{"x-ms-rename-source": "/sdocren/src2"}, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("posix rename onto dst: %d %s", resp.StatusCode, out)
	}
	for _, d := range []string{"edst", "esrc"} {
		_, err = fs.NewDirectoryClient(d).Create(e.ctx, nil)
		must(t, err)
	}
	mkfile("esrc/x", "x")
	_, err = fs.NewDirectoryClient("esrc").Rename(e.ctx, "edst", nil)
	must(t, err)
	names, ids, _ = deletedPaths(t, e, fs, nil)
	if !sameList(names, []string{"dst", "edst"}) {
		t.Fatalf("soft-deleted after the posix rename and the directory rename: %v", names)
	}
	if got := fileText(t, e, fs, "edst/x"); got != "x" {
		t.Fatalf("edst/x after the directory rename: %q", got)
	}
	_, err = fs.NewDirectoryClient("edst").Rename(e.ctx, "full", nil)
	must(t, err)
	if st, code := undelete("/sdocren/edst", ids["edst"]); st != http.StatusOK {
		t.Fatalf("undelete of the replaced empty directory: %d %s", st, code)
	}
	if p, err := fs.NewDirectoryClient("edst").GetProperties(e.ctx, nil); err != nil || p.ResourceType == nil || *p.ResourceType != "directory" {
		t.Fatalf("edst after undelete: %v %v", p, err)
	}

	// Across filesystems: kept in the destination's.
	_, err = other.NewFileClient("y").Create(e.ctx, nil)
	must(t, err)
	mkfile("src3", "src3")
	resp, out = e.raw(http.MethodPut, "/sdocother/y", map[string]string{"x-ms-rename-source": "/sdocren/src3"}, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("rename onto another filesystem's y: %d %s", resp.StatusCode, out)
	}
	if names, _, _ := deletedPaths(t, e, other, nil); !sameList(names, []string{"y"}) {
		t.Fatalf("soft-deleted in the destination filesystem: %v", names)
	}

	// A destination with snapshots: refused, nothing kept.
	bc := client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("sdocren")
	_, err = bc.NewBlobClient("moved").CreateSnapshot(e.ctx, nil)
	must(t, err)
	mkfile("src4", "src4")
	_, err = fs.NewFileClient("src4").Rename(e.ctx, "moved", nil)
	wantRaw(t, err, http.StatusConflict, "SnapshotsPresent")
	if names, _, _ := deletedPaths(t, e, fs, nil); !sameList(names, []string{"dst"}) {
		t.Fatalf("soft-deleted after the refused rename: %v", names)
	}

	// The end of the retention: gone.
	const week = 7 * 24 * time.Hour
	softDocCollect(t, e, week+time.Minute)
	if names, _, _ := deletedPaths(t, e, fs, nil); len(names) != 0 {
		t.Fatalf("soft-deleted after the retention: %v", names)
	}
	if st, code := undelete("/sdocren/dst", ids["dst"]); st != http.StatusNotFound || code != "BlobNotFound" {
		t.Fatalf("undelete after the retention: %d %s", st, code)
	}

	// Without the policy: gone at once.
	softDocPolicy(t, e, false)
	_, err = fs.NewFileClient("src4").Rename(e.ctx, "dst", nil)
	must(t, err)
	if names, _, _ := deletedPaths(t, e, fs, nil); len(names) != 0 {
		t.Fatalf("soft-deleted without the policy: %v", names)
	}
}

// fileText downloads path of fs whole.
func fileText(t *testing.T, e *dlEnv, fs *filesystem.Client, path string) string {
	t.Helper()
	rd, err := fs.NewFileClient(path).DownloadStream(e.ctx, nil)
	must(t, err)
	defer rd.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(rd.Body)
	must(t, err)
	return b.String()
}

// TestDLSoftDocExpiry: a file that expires (Set Blob Expiry) with soft
// delete on is gone for good: not listed by List Deleted Paths, nothing
// for Undelete Blob, its content freed by the collector ("An expired
// blob does not become a soft-deleted blob when it expires").
func TestDLSoftDocExpiry(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("sdocexp")
	softDocPolicy(t, e, true)
	f := fs.NewFileClient("e")
	_, err := f.Create(e.ctx, nil)
	must(t, err)
	must(t, f.UploadBuffer(e.ctx, bytes.Repeat([]byte("e"), 200<<10), nil))
	_, err = f.SetExpiry(e.ctx, file.SetExpiryValues{ExpiryType: file.SetExpiryTypeRelativeToNow, ExpiresOn: "30000"}, nil)
	must(t, err)
	e.clock.Advance(31 * time.Second)
	_, err = f.GetProperties(e.ctx, nil)
	wantDL(t, err, http.StatusNotFound, string(datalakeerror.PathNotFound))
	if names, _, _ := deletedPaths(t, e, fs, nil); len(names) != 0 {
		t.Fatalf("soft-deleted after the expiry: %v", names)
	}
	bc := client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("sdocexp")
	_, err = bc.NewBlobClient("e").Undelete(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	if n := softDocCollect(t, e, 31*time.Second); n != 1 {
		t.Fatalf("data items freed after the expiry: %d, want 1", n)
	}
	if names, _, _ := deletedPaths(t, e, fs, nil); len(names) != 0 {
		t.Fatalf("soft-deleted after the collection: %v", names)
	}
}

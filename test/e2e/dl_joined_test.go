package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestDLJoinedWrites: the writes that create a file through the Blob
// API of a hierarchical account treat index tags and snapshots alike,
// whether they make a block blob, an append blob or read a source URL:
// Put Blob of an append blob and Put Blob From URL take x-ms-tags (or
// the source's, with x-ms-copy-source-tag-option: COPY), are found by
// tags, honour x-ms-if-tags on the file they replace, and keep that
// file's snapshots.
func TestDLJoinedWrites(t *testing.T) {
	e := startDL(t, true)
	e.mkfs("joined")
	cli := dlTagsClient(t, e)
	bc := cli.ServiceClient().NewContainerClient("joined")

	// An append blob file with tags.
	ab := bc.NewAppendBlobClient("logs/app.log")
	_, err := ab.Create(e.ctx, &appendblob.CreateOptions{Tags: map[string]string{"kind": "log"}})
	must(t, err)
	_, err = ab.AppendBlock(e.ctx, bxBody([]byte("line 1\n")), nil)
	must(t, err)
	if got := dlTags(t, e, bc.NewBlockBlobClient("logs/app.log")); got != "kind=log" {
		t.Fatalf("tags of the append blob file: %q", got)
	}

	// Put Blob From URL with the source's tags, then with its own.
	src := bc.NewBlockBlobClient("src/data.bin")
	_, err = src.Upload(e.ctx, bxBody([]byte("source bytes")), &blockblob.UploadOptions{Tags: map[string]string{"kind": "src"}})
	must(t, err)
	dst := bc.NewBlockBlobClient("copies/a/data.bin")
	_, err = dst.UploadBlobFromURL(e.ctx, src.URL(), &blockblob.UploadBlobFromURLOptions{CopySourceTags: to.Ptr(blockblob.BlobCopySourceTagsCopy)})
	must(t, err)
	if got := dlTags(t, e, dst); got != "kind=src" {
		t.Fatalf("tags copied from the source: %q", got)
	}
	found := dlFind(t, e, cli.ServiceClient(), nil, `"kind"='log'`, 0)
	if len(found) != 1 || found[0] != "joined/logs/app.log[kind=log]" {
		t.Fatalf("find kind=log: %v", found)
	}

	// A snapshot of the copy survives Put Blob From URL over it, which
	// is refused while x-ms-if-tags does not hold.
	snap, err := dst.CreateSnapshot(e.ctx, nil)
	must(t, err)
	_, err = dst.UploadBlobFromURL(e.ctx, ab.URL(), &blockblob.UploadBlobFromURLOptions{Tags: map[string]string{"kind": "new"},
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfTags: to.Ptr(`"kind"='other'`)}}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = dst.UploadBlobFromURL(e.ctx, src.URL(), &blockblob.UploadBlobFromURLOptions{Tags: map[string]string{"kind": "new"},
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfTags: to.Ptr(`"kind"='src'`)}}})
	must(t, err)
	if got := dlTags(t, e, dst); got != "kind=new" {
		t.Fatalf("tags after the replacing Put Blob From URL: %q", got)
	}
	sc, err := dst.WithSnapshot(*snap.Snapshot)
	must(t, err)
	if got := readBlob(t, e.ctx, sc.BlobClient()); string(got) != "source bytes" {
		t.Fatalf("snapshot after the overwrite: %q", got)
	}
	// The snapshot keeps the tags the file had then, as a flat blob's
	// snapshot does; Find Blobs by Tags finds only the file.
	if got := dlTags(t, e, sc); got != "kind=src" {
		t.Fatalf("tags of the snapshot: %q", got)
	}
	if found := dlFind(t, e, cli.ServiceClient(), nil, `"kind"='src'`, 0); len(found) != 1 || found[0] != "joined/src/data.bin[kind=src]" {
		t.Fatalf("find kind=src: %v", found)
	}

	// Put Blob of an append blob over a file keeps its snapshots too.
	asnap, err := ab.CreateSnapshot(e.ctx, nil)
	must(t, err)
	_, err = ab.Create(e.ctx, nil)
	must(t, err)
	asc, err := ab.WithSnapshot(*asnap.Snapshot)
	must(t, err)
	if got := readBlob(t, e.ctx, asc.BlobClient()); string(got) != "line 1\n" {
		t.Fatalf("append file snapshot after Put Blob over it: %q", got)
	}
	if got := readBlob(t, e.ctx, ab.BlobClient()); len(got) != 0 {
		t.Fatalf("re-created append file: %q", got)
	}
	if got := dlTags(t, e, bc.NewBlockBlobClient("logs/app.log")); got != "" {
		t.Fatalf("tags after a Put Blob without x-ms-tags: %q", got)
	}
}

// TestDLJoinedListSnapshotsAndDeleted: List Blobs of a hierarchical
// account with include=snapshots,deleted lists, for each name, the
// file's snapshots oldest first, the file, then its retained deletions
// oldest first, as a flat account orders a blob's snapshots before it;
// pages of every size, whose markers end on a snapshot, a file or a
// deletion, list the same entries.
func TestDLJoinedListSnapshotsAndDeleted(t *testing.T) {
	e := startDL(t, true)
	sd := newSoftDeleted(t, e, "both")
	bc, del := sd.bc, sd.del
	var err error
	put := func(name string) { t.Helper(); sd.put(name, name) }
	snap := func(name string) {
		t.Helper()
		e.clock.Advance(time.Second)
		_, err := bc.NewBlobClient(name).CreateSnapshot(e.ctx, nil)
		must(t, err)
	}
	put("a")
	del("a")
	put("a")
	snap("a")
	snap("a")
	put("b")
	del("b")
	put("b")
	del("b")
	put("c")
	snap("c")

	entry := func(it *container.BlobItem) string {
		s := *it.Name
		switch {
		case it.Snapshot != nil && *it.Snapshot != "":
			s += "@snap"
		case it.Deleted != nil && *it.Deleted:
			s += "(deleted)"
		}
		return s
	}
	list := func(max int32) []string {
		var got []string
		pg := bc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{MaxResults: to.Ptr(max), Include: container.ListBlobsInclude{Deleted: true, Snapshots: true}})
		for pg.More() {
			page, err := pg.NextPage(e.ctx)
			must(t, err)
			for _, it := range page.Segment.BlobItems {
				got = append(got, entry(it))
			}
		}
		return got
	}
	want := "a@snap,a@snap,a,a(deleted),b(deleted),b(deleted),c@snap,c"
	for _, max := range []int32{1, 2, 3, 4, 5000} {
		if got := strings.Join(list(max), ","); got != want {
			t.Fatalf("pages of %d:\n got %s\nwant %s", max, got, want)
		}
	}
	// List Deleted Paths (showonly=deleted) lists paths only: with
	// include=snapshots Azure refuses the request.
	_, err = e.fs("both").NewListDeletedPathsPager(nil).NextPage(e.ctx)
	must(t, err)
	req, err := http.NewRequest(http.MethodGet, e.app.BlobURL+"/both?restype=container&comp=list&showonly=deleted&include=snapshots", nil)
	must(t, err)
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2021-06-08")
	signRaw(req)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "InvalidQueryParameterValue" {
		t.Fatalf("showonly=deleted&include=snapshots: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
}

// TestCopySealBlob: Copy Blob of an append blob seals the copy as the
// source is sealed, unless x-ms-seal-blob says otherwise, on a flat and
// on a hierarchical account (azure-sdk-for-python's recorded
// test_copy_sealed_blob_will_get_a_sealed_blob,
// test_copy_unsealed_blob_will_get_a_sealed_blob and
// test_copy_sealed_blob_with_seal_blob_will_get_a_sealed_blob).
func TestCopySealBlob(t *testing.T) {
	for _, hns := range []bool{false, true} {
		t.Run(map[bool]string{false: "flat", true: "hierarchical"}[hns], func(t *testing.T) {
			e := startDL(t, hns)
			bs := client(t, e.app.BlobURL, app.DevKey)
			_, err := bs.CreateContainer(e.ctx, "seal", nil)
			must(t, err)
			bc := bs.ServiceClient().NewContainerClient("seal")
			sealed, open := bc.NewAppendBlobClient("src/sealed"), bc.NewAppendBlobClient("src/open")
			for _, ab := range []*appendblob.Client{sealed, open} {
				_, err = ab.Create(e.ctx, nil)
				must(t, err)
				_, err = ab.AppendBlock(e.ctx, bxBody([]byte("data")), nil)
				must(t, err)
			}
			_, err = sealed.Seal(e.ctx, nil)
			must(t, err)
			copyTo := func(dst string, src *appendblob.Client, seal *bool) *appendblob.Client {
				t.Helper()
				d := bc.NewAppendBlobClient(dst)
				_, err := d.BlobClient().StartCopyFromURL(e.ctx, src.URL(), &blob.StartCopyFromURLOptions{SealBlob: seal})
				must(t, err)
				return d
			}
			isSealed := func(ab *appendblob.Client) bool {
				t.Helper()
				p, err := ab.GetProperties(e.ctx, nil)
				must(t, err)
				return p.IsSealed != nil && *p.IsSealed
			}
			if d := copyTo("copy/kept", sealed, nil); !isSealed(d) {
				t.Fatal("a copy of a sealed append blob is not sealed")
			}
			if d := copyTo("copy/open", open, nil); isSealed(d) {
				t.Fatal("a copy of an unsealed append blob is sealed")
			}
			d := copyTo("copy/sealed", open, to.Ptr(true))
			if !isSealed(d) {
				t.Fatal("x-ms-seal-blob: true did not seal the copy")
			}
			_, err = d.AppendBlock(e.ctx, bxBody([]byte("more")), nil)
			wantCode(t, err, http.StatusConflict, bloberror.Code("BlobIsSealed"))
			d = copyTo("copy/unsealed", sealed, to.Ptr(false))
			if isSealed(d) {
				t.Fatal("x-ms-seal-blob: false left the copy sealed")
			}
			_, err = d.AppendBlock(e.ctx, bxBody([]byte("more")), nil)
			must(t, err)
			if got := readBlob(t, e.ctx, d.BlobClient()); string(got) != "datamore" {
				t.Fatalf("unsealed copy after an append: %q", got)
			}
		})
	}
}

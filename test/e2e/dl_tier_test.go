package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestDLSetTierOnPath: Set Blob Tier of a file of a hierarchical account
// (access tiers work there) changes its tier, reported by Get Blob
// Properties and List Blobs, without a new ETag; a directory is 409
// PathConflict, for Archive as well. A write may name the tier, Archive
// included.
func TestDLSetTierOnPath(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("tiers")
	f := fs.NewFileClient("d/f")
	_, err := fs.NewDirectoryClient("d").Create(e.ctx, nil)
	must(t, err)
	_, err = f.Create(e.ctx, nil)
	must(t, err)
	must(t, f.UploadBuffer(e.ctx, []byte("tiered"), nil))
	bc := client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("tiers")
	b := bc.NewBlobClient("d/f")
	p, err := b.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.AccessTier != "Hot" || !*p.AccessTierInferred {
		t.Fatalf("default tier: %v %v", *p.AccessTier, *p.AccessTierInferred)
	}
	etag := *p.ETag
	_, err = b.SetTier(e.ctx, blob.AccessTierCool, nil)
	must(t, err)
	p, err = b.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.AccessTier != "Cool" || (p.AccessTierInferred != nil && *p.AccessTierInferred) || p.AccessTierChangeTime == nil || *p.ETag != etag {
		t.Fatalf("after Set Blob Tier: %v %v %v etag %v (was %v)", *p.AccessTier, p.AccessTierInferred, p.AccessTierChangeTime, *p.ETag, etag)
	}
	page, err := bc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr("d/")}).NextPage(e.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 1 || *page.Segment.BlobItems[0].Properties.AccessTier != "Cool" {
		t.Fatalf("listed tier: %+v", page.Segment.BlobItems)
	}
	_, err = bc.NewBlobClient("d").SetTier(e.ctx, blob.AccessTierCool, nil)
	wantRaw(t, err, http.StatusConflict, "PathConflict")
	_, err = bc.NewBlobClient("d").SetTier(e.ctx, blob.AccessTierArchive, nil)
	wantRaw(t, err, http.StatusConflict, "PathConflict")
	_, err = bc.NewBlobClient("d/none").SetTier(e.ctx, blob.AccessTierCool, nil)
	wantRaw(t, err, http.StatusNotFound, string(bloberror.BlobNotFound))

	// A tier on the write: Put Blob, Put Block List (upload) and Copy Blob.
	bs := client(t, e.app.BlobURL, app.DevKey)
	_, err = bs.UploadBuffer(e.ctx, "tiers", "w/put", []byte("x"), &azblob.UploadBufferOptions{AccessTier: to.Ptr(blob.AccessTierCold)})
	must(t, err)
	_, err = bc.NewBlockBlobClient("w/list").CommitBlockList(e.ctx, nil, &blockblob.CommitBlockListOptions{Tier: to.Ptr(blob.AccessTierCool)})
	must(t, err)
	_, err = bc.NewBlobClient("w/copy").StartCopyFromURL(e.ctx, b.URL(), &blob.StartCopyFromURLOptions{Tier: to.Ptr(blob.AccessTierCold)})
	must(t, err)
	for name, want := range map[string]string{"w/put": "Cold", "w/list": "Cool", "w/copy": "Cold"} {
		p, err := bc.NewBlobClient(name).GetProperties(e.ctx, nil)
		must(t, err)
		if *p.AccessTier != want {
			t.Fatalf("%s: tier %s, want %s", name, *p.AccessTier, want)
		}
	}
	_, err = bs.UploadBuffer(e.ctx, "tiers", "w/archived", []byte("x"), &azblob.UploadBufferOptions{AccessTier: to.Ptr(blob.AccessTierArchive)})
	must(t, err)
	_, err = bc.NewBlobClient("w/archived").DownloadStream(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
}

// TestDLArchiveOnPath: Set Blob Tier Archive on a file of a hierarchical
// account ("Blob Storage feature support in Azure Storage accounts":
// access tiers incl. Archive on Data Lake Storage) takes it offline as on
// a flat account (TestSetBlobTier): reads through either endpoint, content
// and property writes and overwrites are 409 BlobArchived, while its
// properties, listing, lease, rename and delete still work; Archive ->
// Hot or Cool is a rehydration, 202 Accepted, complete at once, the
// change time taken from the server's clock.
func TestDLArchiveOnPath(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("arch")
	f := fs.NewFileClient("d/f")
	_, err := f.Create(e.ctx, nil)
	must(t, err)
	must(t, f.UploadBuffer(e.ctx, []byte("cold data"), nil))
	bc := client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("arch")
	b := bc.NewBlockBlobClient("d/f")
	before, err := b.GetProperties(e.ctx, nil)
	must(t, err)

	e.clock.Advance(5 * time.Second)
	var raw *http.Response
	_, err = b.SetTier(policy.WithCaptureResponse(e.ctx, &raw), blob.AccessTierArchive, nil)
	must(t, err)
	if raw.StatusCode != http.StatusOK {
		t.Fatalf("Set Blob Tier Hot->Archive: status %d, want 200", raw.StatusCode)
	}
	p, err := b.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.AccessTier != "Archive" || *p.ETag != *before.ETag || p.AccessTierChangeTime == nil || !p.AccessTierChangeTime.Equal(e.clock.Now().Truncate(time.Second)) {
		t.Fatalf("archived: tier %v etag %v (was %v) changed %v (clock %v)", *p.AccessTier, *p.ETag, *before.ETag, p.AccessTierChangeTime, e.clock.Now())
	}

	// Offline: reads through the Blob and the dfs endpoints, writes of
	// content and properties, overwrites by any API.
	_, err = b.DownloadStream(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	// The datalake SDK reports the wire's BlobArchived as PathArchived
	// (exported.ConvertToDFSError renames "Blob" to "Path").
	_, err = f.DownloadStream(e.ctx, nil)
	wantRaw(t, err, http.StatusConflict, "PathArchived")
	_, err = b.SetMetadata(e.ctx, map[string]*string{"a": to.Ptr("b")}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	_, err = b.SetHTTPHeaders(e.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("x/y")}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	_, err = f.SetHTTPHeaders(e.ctx, file.HTTPHeaders{ContentType: to.Ptr("x/y")}, nil)
	wantRaw(t, err, http.StatusConflict, "PathArchived")
	_, err = f.AppendData(e.ctx, int64(len("cold data")), body([]byte("more")), nil)
	wantRaw(t, err, http.StatusConflict, "PathArchived")
	_, err = f.FlushData(e.ctx, int64(len("cold data")), nil)
	wantRaw(t, err, http.StatusConflict, "PathArchived")
	_, err = b.Upload(e.ctx, body([]byte("over")), nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	_, err = b.CommitBlockList(e.ctx, nil, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	_, err = fs.NewFileClient("d/f").Create(e.ctx, nil)
	wantRaw(t, err, http.StatusConflict, "PathArchived")
	must(t, get(bc.NewBlockBlobClient("src").Upload(e.ctx, body([]byte("src")), nil)))
	_, err = b.StartCopyFromURL(e.ctx, bc.NewBlobClient("src").URL(), nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	// A copy of it needs an online destination tier, as on a flat account.
	_, err = bc.NewBlobClient("copy").StartCopyFromURL(e.ctx, b.URL(), nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	// Nothing above changed it; its properties and listing stay readable.
	p, err = b.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ETag != *before.ETag || len(p.Metadata) != 0 || *p.ContentLength != 9 {
		t.Fatalf("archived file changed: %v %v %d", *p.ETag, p.Metadata, *p.ContentLength)
	}
	page, err := bc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr("d/")}).NextPage(e.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 1 || *page.Segment.BlobItems[0].Properties.AccessTier != "Archive" {
		t.Fatalf("listed: %+v", page.Segment.BlobItems)
	}
	// The namespace still moves it: a rename keeps it archived.
	_, err = f.Rename(e.ctx, "d/g", nil)
	must(t, err)
	moved := bc.NewBlockBlobClient("d/g")
	_, err = moved.DownloadStream(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)

	// Archive -> Cool: a rehydration, 202, the data back online.
	e.clock.Advance(7 * time.Second)
	_, err = moved.SetTier(policy.WithCaptureResponse(e.ctx, &raw), blob.AccessTierCool, &blob.SetTierOptions{RehydratePriority: to.Ptr(blob.RehydratePriorityStandard)})
	must(t, err)
	if raw.StatusCode != http.StatusAccepted {
		t.Fatalf("Set Blob Tier Archive->Cool: status %d, want 202", raw.StatusCode)
	}
	p, err = moved.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.AccessTier != "Cool" || !p.AccessTierChangeTime.Equal(e.clock.Now().Truncate(time.Second)) {
		t.Fatalf("rehydrated: %v at %v", *p.AccessTier, p.AccessTierChangeTime)
	}
	if got := download(t, e, fs.NewFileClient("d/g")); string(got) != "cold data" {
		t.Fatalf("rehydrated read %q", got)
	}
	_, err = moved.SetTier(policy.WithCaptureResponse(e.ctx, &raw), blob.AccessTierHot, nil)
	must(t, err)
	if raw.StatusCode != http.StatusOK {
		t.Fatalf("Set Blob Tier Cool->Hot: status %d, want 200", raw.StatusCode)
	}

	// An archived file can be deleted, through either endpoint.
	_, err = moved.SetTier(e.ctx, blob.AccessTierArchive, nil)
	must(t, err)
	_, err = moved.Delete(e.ctx, nil)
	must(t, err)
	_, err = bc.NewBlockBlobClient("w").Upload(e.ctx, body([]byte("w")), &blockblob.UploadOptions{Tier: to.Ptr(blob.AccessTierArchive)})
	must(t, err)
	_, err = fs.NewFileClient("w").Delete(e.ctx, nil)
	must(t, err)
}

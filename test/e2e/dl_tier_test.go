package e2e

import (
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestDLSetTierOnPath: Set Blob Tier of a file of a hierarchical account
// (access tiers work there) changes its tier, reported by Get Blob
// Properties and List Blobs, without a new ETag; a directory is 409
// PathConflict and Archive, not carried on paths here, 409
// FeatureNotYetSupportedForHierarchicalNamespaceAccounts.
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
	_, err = b.SetTier(e.ctx, blob.AccessTierArchive, nil)
	wantRaw(t, err, http.StatusConflict, "FeatureNotYetSupportedForHierarchicalNamespaceAccounts")
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
	wantRaw(t, err, http.StatusConflict, "FeatureNotYetSupportedForHierarchicalNamespaceAccounts")
}

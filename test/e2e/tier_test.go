package e2e

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
)

// wantTier checks the tier a blob reports on Get Blob Properties and in
// List Blobs.
func (b *blobT) wantTier(name string, tier blob.AccessTier, inferred bool) {
	b.t.Helper()
	p := b.props(b.bb(name))
	if bxVal(p.AccessTier) != string(tier) || bxVal(p.AccessTierInferred) != inferred {
		b.t.Fatalf("%s: properties tier %q inferred %v, want %q %v", name, bxVal(p.AccessTier), bxVal(p.AccessTierInferred), tier, inferred)
	}
	page, err := b.cli.ServiceClient().NewContainerClient(b.cont).NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr(name)}).NextPage(b.ctx)
	must(b.t, err)
	for _, it := range page.Segment.BlobItems {
		if *it.Name != name || it.Snapshot != nil {
			continue
		}
		if bxVal(it.Properties.AccessTier) != tier || bxVal(it.Properties.AccessTierInferred) != inferred {
			b.t.Fatalf("%s: listed tier %q inferred %v, want %q %v", name, bxVal(it.Properties.AccessTier), bxVal(it.Properties.AccessTierInferred), tier, inferred)
		}
		return
	}
	b.t.Fatalf("%s: not listed", name)
}

func TestSetBlobTier(t *testing.T) {
	b := newBlobT(t)
	up := b.put("t", []byte("tiered"), nil)
	b.wantTier("t", blob.AccessTierHot, true)

	// Hot -> Cool: 200, ETag and Last-Modified unchanged, change time set.
	b.clock.Advance(3 * time.Second)
	var raw *http.Response
	_, err := b.bb("t").SetTier(policy.WithCaptureResponse(b.ctx, &raw), blob.AccessTierCool, nil)
	must(t, err)
	if raw.StatusCode != http.StatusOK {
		t.Fatalf("Set Blob Tier Hot->Cool: status %d, want 200", raw.StatusCode)
	}
	b.wantTier("t", blob.AccessTierCool, false)
	p := b.props(b.bb("t"))
	if bxETag(p.ETag) != bxETag(up.ETag) || !p.LastModified.Equal(*up.LastModified) {
		t.Fatalf("Set Blob Tier changed ETag/Last-Modified: %s %v -> %s %v", bxETag(up.ETag), up.LastModified, bxETag(p.ETag), p.LastModified)
	}
	if p.AccessTierChangeTime == nil || !p.AccessTierChangeTime.Equal(up.LastModified.Add(3*time.Second)) {
		t.Fatalf("access tier change time %v, want %v", p.AccessTierChangeTime, up.LastModified.Add(3*time.Second))
	}
	// Cold, then Archive.
	for _, tier := range []blob.AccessTier{blob.AccessTierCold, blob.AccessTierArchive} {
		_, err = b.bb("t").SetTier(b.ctx, tier, nil)
		must(t, err)
		b.wantTier("t", tier, false)
	}

	// Archived: the data is offline.
	_, err = b.bb("t").DownloadStream(b.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	_, err = b.bb("t").SetMetadata(b.ctx, bxMeta("a", "b"), nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	_, err = b.bb("t").SetHTTPHeaders(b.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("x/y")}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	_, err = b.bb("t").CreateSnapshot(b.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	_, err = b.bb("t").Upload(b.ctx, bxBody([]byte("over")), nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	_, err = b.bb("t").StageBlock(b.ctx, "YmxvY2sx", bxBody([]byte("blk")), nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	_, err = b.bb("t").CommitBlockList(b.ctx, nil, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	// Copying it needs an online destination tier.
	src := b.bb("t").URL()
	_, err = b.bb("copy").StartCopyFromURL(b.ctx, src, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	_, err = b.bb("copy").StartCopyFromURL(b.ctx, src, &blob.StartCopyFromURLOptions{Tier: to.Ptr(blob.AccessTierArchive)})
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	_, err = b.bb("copy").StartCopyFromURL(b.ctx, src, &blob.StartCopyFromURLOptions{Tier: to.Ptr(blob.AccessTierHot)})
	must(t, err)
	if got := b.read(b.bb("copy")); !bytes.Equal(got, []byte("tiered")) {
		t.Fatalf("copy of the archived blob read %q", got)
	}
	b.wantTier("copy", blob.AccessTierHot, false)
	// Nor can a blob be copied onto it.
	_, err = b.bb("t").StartCopyFromURL(b.ctx, b.bb("copy").URL(), nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)
	// Properties stay readable; nothing above changed the blob.
	p = b.props(b.bb("t"))
	if bxETag(p.ETag) != bxETag(up.ETag) || len(p.Metadata) != 0 || bxVal(p.ContentLength) != 6 {
		t.Fatalf("archived blob changed: %s, %d metadata, %d bytes", bxETag(p.ETag), len(p.Metadata), bxVal(p.ContentLength))
	}

	// Archive -> Hot is a rehydration: 202, complete at once here.
	_, err = b.bb("t").SetTier(policy.WithCaptureResponse(b.ctx, &raw), blob.AccessTierHot, &blob.SetTierOptions{RehydratePriority: to.Ptr(blob.RehydratePriorityHigh)})
	must(t, err)
	if raw.StatusCode != http.StatusAccepted {
		t.Fatalf("Set Blob Tier Archive->Hot: status %d, want 202", raw.StatusCode)
	}
	b.wantTier("t", blob.AccessTierHot, false)
	if got := b.read(b.bb("t")); !bytes.Equal(got, []byte("tiered")) {
		t.Fatalf("rehydrated blob read %q", got)
	}

	// A new upload is back in the default tier, unless it names one.
	b.put("t", []byte("again"), nil)
	b.wantTier("t", blob.AccessTierHot, true)
	b.put("u", []byte("cool at birth"), &blockblob.UploadOptions{Tier: to.Ptr(blob.AccessTierCool)})
	b.wantTier("u", blob.AccessTierCool, false)
	_, err = b.bb("v").CommitBlockList(b.ctx, nil, &blockblob.CommitBlockListOptions{Tier: to.Ptr(blob.AccessTierArchive)})
	must(t, err)
	b.wantTier("v", blob.AccessTierArchive, false)
}

func TestSetBlobTierErrors(t *testing.T) {
	b := newBlobT(t)
	b.put("t", []byte("x"), nil)
	before := b.state(b.bb("t"))

	// Unknown tiers, unknown rehydrate priority, no tier at all.
	_, err := b.bb("t").SetTier(b.ctx, blob.AccessTier("Lukewarm"), nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidBlobTier)
	_, err = b.bb("t").SetTier(b.ctx, blob.AccessTier("P10"), nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidBlobTier)
	_, err = b.bb("t").SetTier(b.ctx, blob.AccessTierCool, &blob.SetTierOptions{RehydratePriority: to.Ptr(blob.RehydratePriority("Urgent"))})
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidHeaderValue)
	_, err = b.bb("t").SetTier(bxWithoutHeader(b.ctx, "x-ms-access-tier"), blob.AccessTierCool, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.MissingRequiredHeader)
	b.wantUnchanged("bad Set Blob Tier", b.bb("t"), before)
	b.wantTier("t", blob.AccessTierHot, true)

	// Missing blob and container.
	_, err = b.bb("nope").SetTier(b.ctx, blob.AccessTierCool, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	_, err = b.cli.ServiceClient().NewContainerClient("nocont").NewBlockBlobClient("x").SetTier(b.ctx, blob.AccessTierCool, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.ContainerNotFound)

	// Page and append blobs have no tier in a standard account.
	pc := b.cli.ServiceClient().NewContainerClient(b.cont).NewPageBlobClient("pg")
	_, err = pc.Create(b.ctx, 512, nil)
	must(t, err)
	_, err = pc.SetTier(b.ctx, blob.AccessTierCool, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.Code("AccessTierNotSupportedForBlobType"))
	_, err = b.cli.ServiceClient().NewContainerClient(b.cont).NewPageBlobClient("pg2").Create(b.ctx, 512, &pageblob.CreateOptions{Tier: to.Ptr(pageblob.PremiumPageBlobAccessTierP10)})
	wantCode(t, err, http.StatusBadRequest, bloberror.Code("AccessTierNotSupportedForBlobType"))
	ac := b.cli.ServiceClient().NewContainerClient(b.cont).NewAppendBlobClient("ap")
	_, err = ac.Create(b.ctx, nil)
	must(t, err)
	_, err = b.cli.ServiceClient().NewContainerClient(b.cont).NewBlobClient("ap").SetTier(b.ctx, blob.AccessTierCool, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.Code("AccessTierNotSupportedForBlobType"))
	_, err = b.cli.ServiceClient().NewContainerClient(b.cont).NewAppendBlobClient("ap2").Create(bxWithHeader(b.ctx, "x-ms-access-tier", "Hot"), nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.Code("AccessTierNotSupportedForBlobType"))
	_, err = b.bb("bad").Upload(b.ctx, bxBody([]byte("x")), &blockblob.UploadOptions{Tier: to.Ptr(blob.AccessTier("Tepid"))})
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidBlobTier)
	_, err = b.bb("bad").GetProperties(b.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)

	// A leased blob needs its lease id; a wrong one fails.
	id := "c0ffee00-0000-4000-8000-000000000001"
	_, err = b.lc("t", id).AcquireLease(b.ctx, 15, nil)
	must(t, err)
	_, err = b.bb("t").SetTier(b.ctx, blob.AccessTierCool, nil)
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.LeaseIDMissing)
	_, err = b.bb("t").SetTier(b.ctx, blob.AccessTierCool, &blob.SetTierOptions{AccessConditions: bxLeaseAC("c0ffee00-0000-4000-8000-000000000002")})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.LeaseIDMismatchWithBlobOperation)
	b.wantTier("t", blob.AccessTierHot, true)
	_, err = b.bb("t").SetTier(b.ctx, blob.AccessTierCool, &blob.SetTierOptions{AccessConditions: bxLeaseAC(id)})
	must(t, err)
	b.wantTier("t", blob.AccessTierCool, false)
	// An archived blob's lease can still be managed and it can be deleted.
	_, err = b.bb("t").SetTier(b.ctx, blob.AccessTierArchive, &blob.SetTierOptions{AccessConditions: bxLeaseAC(id)})
	must(t, err)
	_, err = b.lc("t", id).ReleaseLease(b.ctx, nil)
	must(t, err)
	_, err = b.bb("t").Delete(b.ctx, nil)
	must(t, err)
}

func TestSetBlobTierSnapshot(t *testing.T) {
	b := newBlobT(t)
	b.put("s", []byte("snap me"), nil)
	snap := b.snapshot("s", nil)
	sc := b.snap("s", snap)
	_, err := sc.SetTier(b.ctx, blob.AccessTierCool, nil)
	must(t, err)
	if p := b.props(sc); bxVal(p.AccessTier) != "Cool" || bxVal(p.AccessTierInferred) {
		t.Fatalf("snapshot tier %q inferred %v", bxVal(p.AccessTier), bxVal(p.AccessTierInferred))
	}
	b.wantTier("s", blob.AccessTierHot, true) // the base keeps its own
}

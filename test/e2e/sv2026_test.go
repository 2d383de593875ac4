package e2e

// Features of service versions 2026-02-06 to 2026-12-06, driven through
// the Go SDK (azblob v1.8.3) as docs/compatibility.md's table lists them.

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"hash/crc64"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestSV2026ListBlobsStartFrom: List Blobs' startFrom (2026-02-06) begins
// the listing at that name, inclusive, within prefix's range, and pages
// from there with the marker (List Blobs, "startFrom").
func TestSV2026ListBlobsStartFrom(t *testing.T) {
	t.Run("flat", func(t *testing.T) {
		e := start(t)
		e.container("startfrom")
		listStartFrom(t, e.ctx, e.c)
	})
	t.Run("hierarchical", func(t *testing.T) {
		d := startDL(t, true)
		c := client(t, d.app.BlobURL, app.DevKey)
		_, err := c.CreateContainer(d.ctx, "startfrom", nil)
		must(t, err)
		listStartFrom(t, d.ctx, c)
	})
}

func listStartFrom(t *testing.T, ctx context.Context, c *azblob.Client) {
	cc := c.ServiceClient().NewContainerClient("startfrom")
	for _, n := range []string{"a", "b/1", "b/2", "c", "d", "e"} {
		_, err := c.UploadBuffer(ctx, "startfrom", n, []byte(n), nil)
		must(t, err)
	}
	flat := func(o *container.ListBlobsFlatOptions) []string {
		var names []string
		p := cc.NewListBlobsFlatPager(o)
		for p.More() {
			page, err := p.NextPage(ctx)
			must(t, err)
			for _, b := range page.Segment.BlobItems {
				names = append(names, *b.Name)
			}
		}
		return names
	}
	eq := func(what string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: got %q, want %q", what, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: got %q, want %q", what, got, want)
			}
		}
	}
	eq("startFrom=c", flat(&container.ListBlobsFlatOptions{StartFrom: to.Ptr("c")}), "c", "d", "e")
	eq("startFrom=bz (between names)", flat(&container.ListBlobsFlatOptions{StartFrom: to.Ptr("bz")}), "c", "d", "e")
	eq("startFrom=c, pages of 1", flat(&container.ListBlobsFlatOptions{StartFrom: to.Ptr("c"), MaxResults: to.Ptr(int32(1))}), "c", "d", "e")
	eq("prefix=b/ startFrom=b/2", flat(&container.ListBlobsFlatOptions{Prefix: to.Ptr("b/"), StartFrom: to.Ptr("b/2")}), "b/2")
	eq("prefix=b/ startFrom=a (before the prefix)", flat(&container.ListBlobsFlatOptions{Prefix: to.Ptr("b/"), StartFrom: to.Ptr("a")}), "b/1", "b/2")
	eq("prefix=b/ startFrom=z (past the prefix)", flat(&container.ListBlobsFlatOptions{Prefix: to.Ptr("b/"), StartFrom: to.Ptr("z")}))

	// Hierarchy: a prefix entry whose blobs lie at or after startFrom.
	var got []string
	p := cc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{StartFrom: to.Ptr("b/2")})
	for p.More() {
		page, err := p.NextPage(ctx)
		must(t, err)
		for _, bp := range page.Segment.BlobPrefixes {
			got = append(got, *bp.Name)
		}
		for _, b := range page.Segment.BlobItems {
			got = append(got, *b.Name)
		}
	}
	eq("hierarchy startFrom=b/2", got, "b/", "c", "d", "e")
}

// TestSV2026DeleteBlobAccessTierConditions: Delete Blob's
// x-ms-access-tier-if-modified-since / -if-unmodified-since (2026-04-06,
// "Delete Blob Conditional Tier") delete only when the blob's tier was
// (not) changed since the time; otherwise 412 ConditionNotMet and the
// blob stays.
func TestSV2026DeleteBlobAccessTierConditions(t *testing.T) {
	e := start(t)
	e.container("tiercond")
	bc := e.c.ServiceClient().NewContainerClient("tiercond").NewBlobClient("b")
	_, err := e.c.UploadBuffer(e.ctx, "tiercond", "b", []byte("x"), nil)
	must(t, err)
	created := e.clock.Now()
	e.clock.Advance(2 * time.Minute)
	_, err = bc.SetTier(e.ctx, blob.AccessTierCool, nil)
	must(t, err)
	changed := e.clock.Now()
	e.clock.Advance(2 * time.Minute)

	del := func(c blob.AccessTierConditions) error {
		_, err := bc.Delete(e.ctx, &blob.DeleteOptions{AccessTierConditions: &c})
		return err
	}
	mod := func(t time.Time) blob.AccessTierConditions { return blob.AccessTierConditions{IfModifiedSince: &t} }
	unmod := func(t time.Time) blob.AccessTierConditions { return blob.AccessTierConditions{IfUnmodifiedSince: &t} }
	// The tier changed after created: "unmodified since created" fails,
	// and so does "modified since" the change itself.
	wantCode(t, del(unmod(created)), 412, "AccessTierChangeTimeConditionNotMet")
	wantCode(t, del(mod(changed.Add(30*time.Second))), 412, "AccessTierChangeTimeConditionNotMet")
	_, err = bc.GetProperties(e.ctx, nil)
	must(t, err)
	// Met: unchanged since the change, then changed since creation.
	must(t, del(unmod(changed.Add(30*time.Second))))
	_, err = bc.GetProperties(e.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)

	_, err = e.c.UploadBuffer(e.ctx, "tiercond", "b", []byte("x"), nil)
	must(t, err)
	e.clock.Advance(2 * time.Minute)
	_, err = bc.SetTier(e.ctx, blob.AccessTierCold, nil)
	must(t, err)
	must(t, del(mod(e.clock.Now().Add(-30*time.Second))))

	// A tier given on Put Blob dates the tier (azblob's recorded
	// TestBlobDeleteAccessTierIfModifiedSinceTrue/False).
	_, err = e.c.UploadBuffer(e.ctx, "tiercond", "b", []byte("x"), &azblob.UploadBufferOptions{AccessTier: to.Ptr(blob.AccessTierHot)})
	must(t, err)
	props, err := bc.GetProperties(e.ctx, nil)
	must(t, err)
	if props.AccessTierChangeTime == nil {
		t.Fatal("Put Blob with a tier: no x-ms-access-tier-change-time")
	}
	wantCode(t, del(mod(props.AccessTierChangeTime.Add(10*time.Second))), 412, "AccessTierChangeTimeConditionNotMet")
	must(t, del(mod(props.AccessTierChangeTime.Add(-10*time.Second))))
}

// TestSV2026BlobTagsConditions: Get Blob Tags and Set Blob Tags honour
// the blob's ETag and Last-Modified conditions (x-ms-blob-if-*,
// 2026-02-06), as azblob's recorded
// TestGetSetTagsWithBlobModifiedAccessConditions does: one not met is
// 412 ConditionNotMet and the tags stay as they were.
func TestSV2026BlobTagsConditions(t *testing.T) {
	e := start(t)
	e.container("tagcond")
	bc := e.c.ServiceClient().NewContainerClient("tagcond").NewBlobClient("b")
	_, err := e.c.UploadBuffer(e.ctx, "tagcond", "b", []byte("hello"), nil)
	must(t, err)
	props, err := bc.GetProperties(e.ctx, nil)
	must(t, err)
	etag, lm := props.ETag, *props.LastModified
	past, future := lm.Add(-time.Hour), lm.Add(time.Hour)
	other := azcore.ETag(`"0x1"`)
	set := func(v string, c blob.BlobModifiedAccessConditions) error {
		_, err := bc.SetTags(e.ctx, map[string]string{"k": v}, &blob.SetTagsOptions{BlobModifiedAccessConditions: &c})
		return err
	}
	get := func(c blob.ModifiedAccessConditions) (string, error) {
		r, err := bc.GetTags(e.ctx, &blob.GetTagsOptions{BlobAccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &c}})
		if err != nil {
			return "", err
		}
		for _, tg := range r.BlobTagSet {
			if *tg.Key == "k" {
				return *tg.Value, nil
			}
		}
		return "", nil
	}
	must(t, set("1", blob.BlobModifiedAccessConditions{IfMatch: etag}))
	wantCode(t, set("2", blob.BlobModifiedAccessConditions{IfNoneMatch: etag}), 412, bloberror.ConditionNotMet)
	wantCode(t, set("2", blob.BlobModifiedAccessConditions{IfMatch: &other}), 412, bloberror.ConditionNotMet)
	wantCode(t, set("2", blob.BlobModifiedAccessConditions{IfUnmodifiedSince: &past}), 412, bloberror.ConditionNotMet)
	wantCode(t, set("2", blob.BlobModifiedAccessConditions{IfModifiedSince: &future}), 412, bloberror.ConditionNotMet)
	must(t, set("3", blob.BlobModifiedAccessConditions{IfModifiedSince: &past}))

	v, err := get(blob.ModifiedAccessConditions{IfMatch: etag})
	must(t, err)
	if v != "3" {
		t.Fatalf("tag k = %q, want 3 (a refused Set Blob Tags changed it)", v)
	}
	_, err = get(blob.ModifiedAccessConditions{IfNoneMatch: etag})
	wantCode(t, err, 412, bloberror.ConditionNotMet)
	_, err = get(blob.ModifiedAccessConditions{IfMatch: &other})
	wantCode(t, err, 412, bloberror.ConditionNotMet)
	_, err = get(blob.ModifiedAccessConditions{IfUnmodifiedSince: &past})
	wantCode(t, err, 412, bloberror.ConditionNotMet)
	_, err = get(blob.ModifiedAccessConditions{IfUnmodifiedSince: &future})
	must(t, err)
}

// TestSV2026PutBlobAnswersMD5AndCRC64: Put Blob with a Content-MD5
// answers both Content-MD5 and x-ms-content-crc64 (2026-10-06; azblob
// 1.8.1-beta.1 "Blob put operations now return both ContentMD5 and
// ContentCRC64").
func TestSV2026PutBlobAnswersMD5AndCRC64(t *testing.T) {
	e := start(t)
	e.container("digests")
	data := []byte("the quick brown fox")
	sum := md5.Sum(data)
	bb := e.c.ServiceClient().NewContainerClient("digests").NewBlockBlobClient("b")
	r, err := bb.Upload(e.ctx, streaming.NopCloser(bytes.NewReader(data)), &blockblob.UploadOptions{TransactionalValidation: blob.TransferValidationTypeMD5(sum[:])})
	must(t, err)
	if !bytes.Equal(r.ContentMD5, sum[:]) {
		t.Fatalf("Content-MD5 %x, want %x", r.ContentMD5, sum)
	}
	want := crc64.Checksum(data, crc64.MakeTable(0x9A6C9329AC4BC9B5))
	if len(r.ContentCRC64) != 8 || binary.LittleEndian.Uint64(r.ContentCRC64) != want {
		t.Fatalf("x-ms-content-crc64 %x, want %x (little-endian)", r.ContentCRC64, want)
	}
}

// TestSV2026AccessTierOnGetBlobAndSmartTier: Get Blob answers the
// access-tier headers Get Blob Properties does (azblob 1.8.1-beta.1 adds
// them to the download response; its public DownloadResponse exposes
// AccessTier and AccessTierChangeTime), and the Smart tier
// (2026-06-06) is accepted by Set Blob Tier and Put Blob and reported,
// with its underlying tier, by Get Blob Properties, Get Blob and List
// Blobs.
func TestSV2026AccessTierOnGetBlobAndSmartTier(t *testing.T) {
	e := start(t)
	e.container("smart")
	cc := e.c.ServiceClient().NewContainerClient("smart")
	_, err := e.c.UploadBuffer(e.ctx, "smart", "inferred", []byte("x"), nil)
	must(t, err)
	d, err := cc.NewBlobClient("inferred").DownloadStream(e.ctx, nil)
	must(t, err)
	d.Body.Close()
	if d.AccessTier == nil || *d.AccessTier != "Hot" || d.AccessTierChangeTime != nil {
		t.Fatalf("Get Blob of an inferred-Hot blob: tier %v changed %v", d.AccessTier, d.AccessTierChangeTime)
	}

	bc := cc.NewBlobClient("s")
	_, err = e.c.UploadBuffer(e.ctx, "smart", "s", []byte("x"), nil)
	must(t, err)
	_, err = bc.SetTier(e.ctx, blob.AccessTierSmart, nil)
	must(t, err)
	p, err := bc.GetProperties(e.ctx, nil)
	must(t, err)
	if p.AccessTier == nil || *p.AccessTier != "Smart" || p.SmartAccessTier == nil || *p.SmartAccessTier != "Hot" || p.AccessTierChangeTime == nil {
		t.Fatalf("Get Blob Properties after Set Blob Tier Smart: tier %v smart %v changed %v", p.AccessTier, p.SmartAccessTier, p.AccessTierChangeTime)
	}
	d, err = bc.DownloadStream(e.ctx, nil)
	must(t, err)
	d.Body.Close()
	if d.AccessTier == nil || *d.AccessTier != "Smart" || d.AccessTierChangeTime == nil {
		t.Fatalf("Get Blob of a Smart blob: tier %v changed %v", d.AccessTier, d.AccessTierChangeTime)
	}

	_, err = e.c.UploadBuffer(e.ctx, "smart", "put-smart", []byte("x"), &azblob.UploadBufferOptions{AccessTier: to.Ptr(blob.AccessTierSmart)})
	must(t, err)
	pg := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr("put-smart")})
	page, err := pg.NextPage(e.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 1 {
		t.Fatalf("listing: %d items", len(page.Segment.BlobItems))
	}
	lp := page.Segment.BlobItems[0].Properties
	if lp.AccessTier == nil || *lp.AccessTier != blob.AccessTierSmart || lp.SmartAccessTier == nil || *lp.SmartAccessTier != blob.AccessTierHot {
		t.Fatalf("List Blobs of a Smart blob: tier %v smart %v", lp.AccessTier, lp.SmartAccessTier)
	}
}

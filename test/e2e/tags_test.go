package e2e

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// tags reads a blob's tags as "k=v,…" in key order.
func (b *blobT) tags(c *blockblob.Client) string {
	b.t.Helper()
	r, err := c.GetTags(b.ctx, nil)
	must(b.t, err)
	var kv []string
	for _, t := range r.BlobTagSet {
		kv = append(kv, *t.Key+"="+*t.Value)
	}
	return strings.Join(kv, ",")
}

func bxIfTags(expr string) *blob.AccessConditions {
	return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfTags: to.Ptr(expr)}}
}

func TestBlobTags(t *testing.T) {
	b := newBlobT(t)
	up := b.put("t", []byte("tagged"), &blockblob.UploadOptions{Tags: map[string]string{"project": "alpha", "n": "05", "with space": "a/b:c=d_e+f-g.h"}})
	if got := b.tags(b.bb("t")); got != "n=05,project=alpha,with space=a/b:c=d_e+f-g.h" {
		t.Fatalf("tags after upload: %s", got)
	}
	if p := b.props(b.bb("t")); bxVal(p.TagCount) != 3 {
		t.Fatalf("x-ms-tag-count %d", bxVal(p.TagCount))
	}
	// Set Blob Tags replaces them all, keeping ETag and Last-Modified.
	_, err := b.bb("t").SetTags(b.ctx, map[string]string{"project": "beta"}, nil)
	must(t, err)
	if got := b.tags(b.bb("t")); got != "project=beta" {
		t.Fatalf("tags after Set Blob Tags: %s", got)
	}
	p := b.props(b.bb("t"))
	if bxETag(p.ETag) != bxETag(up.ETag) || !p.LastModified.Equal(*up.LastModified) || bxVal(p.TagCount) != 1 {
		t.Fatalf("Set Blob Tags: ETag %s -> %s, tag count %d", bxETag(up.ETag), bxETag(p.ETag), bxVal(p.TagCount))
	}
	// Metadata and tier changes keep the tags; a snapshot keeps its own.
	_, err = b.bb("t").SetMetadata(b.ctx, bxMeta("m", "1"), nil)
	must(t, err)
	snap := b.snapshot("t", nil)
	_, err = b.bb("t").SetTags(b.ctx, map[string]string{"project": "gamma"}, nil)
	must(t, err)
	if got := b.tags(b.snap("t", snap)); got != "project=beta" {
		t.Fatalf("snapshot tags: %s", got)
	}
	// No tags clears them: no x-ms-tag-count.
	_, err = b.bb("t").SetTags(b.ctx, nil, nil)
	must(t, err)
	if got := b.tags(b.bb("t")); got != "" {
		t.Fatalf("tags after clearing: %s", got)
	}
	if p := b.props(b.bb("t")); p.TagCount != nil {
		t.Fatalf("x-ms-tag-count %d after clearing", *p.TagCount)
	}
	// An overwrite without tags leaves none; Put Block List sets them too.
	_, err = b.bb("t").SetTags(b.ctx, map[string]string{"a": "1"}, nil)
	must(t, err)
	b.put("t", []byte("again"), nil)
	if got := b.tags(b.bb("t")); got != "" {
		t.Fatalf("tags after overwrite: %s", got)
	}
	_, err = b.bb("bl").CommitBlockList(b.ctx, nil, &blockblob.CommitBlockListOptions{Tags: map[string]string{"k": "v"}})
	must(t, err)
	if got := b.tags(b.bb("bl")); got != "k=v" {
		t.Fatalf("Put Block List tags: %s", got)
	}
	// Copy: x-ms-tags, not the source's; Copy From URL may copy them.
	_, err = b.bb("c1").StartCopyFromURL(b.ctx, b.bb("bl").URL(), &blob.StartCopyFromURLOptions{BlobTags: map[string]string{"copied": "no"}})
	must(t, err)
	if got := b.tags(b.bb("c1")); got != "copied=no" {
		t.Fatalf("copy tags: %s", got)
	}
	_, err = b.bb("c2").CopyFromURL(bxWithHeader(b.ctx, "x-ms-copy-source-tag-option", "COPY"), b.bb("bl").URL(), nil)
	must(t, err)
	if got := b.tags(b.bb("c2")); got != "k=v" {
		t.Fatalf("Copy From URL with COPY: %s", got)
	}

	// Listing: TagCount always, the tags with include=tags.
	page, err := b.cli.ServiceClient().NewContainerClient(b.cont).NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr("bl"), Include: container.ListBlobsInclude{Tags: true}}).NextPage(b.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 1 {
		t.Fatalf("%d listed", len(page.Segment.BlobItems))
	}
	it := page.Segment.BlobItems[0]
	if bxVal(it.Properties.TagCount) != 1 || it.BlobTags == nil || len(it.BlobTags.BlobTagSet) != 1 || *it.BlobTags.BlobTagSet[0].Key != "k" || *it.BlobTags.BlobTagSet[0].Value != "v" {
		t.Fatalf("listed tags: count %d, %+v", bxVal(it.Properties.TagCount), it.BlobTags)
	}
}

func TestBlobTagErrors(t *testing.T) {
	b := newBlobT(t)
	b.put("t", []byte("x"), &blockblob.UploadOptions{Tags: map[string]string{"keep": "me"}})
	for _, c := range []struct {
		tags map[string]string
		code bloberror.Code
	}{
		{map[string]string{"bad!": "v"}, "InvalidTag"},
		{map[string]string{"k": "v\u00e9"}, "InvalidTag"},
		{map[string]string{"": "v"}, "EmptyTagName"},
		{map[string]string{strings.Repeat("k", 129): "v"}, "TagsTooLarge"},
		{map[string]string{"k": strings.Repeat("v", 257)}, "TagsTooLarge"},
		{map[string]string{"a": "1", "b": "1", "c": "1", "d": "1", "e": "1", "f": "1", "g": "1", "h": "1", "i": "1", "j": "1", "k": "1"}, "TagsTooLarge"},
	} {
		_, err := b.bb("t").SetTags(b.ctx, c.tags, nil)
		wantCode(t, err, http.StatusBadRequest, c.code)
		_, err = b.bb("new").Upload(b.ctx, bxBody([]byte("x")), &blockblob.UploadOptions{Tags: c.tags})
		wantCode(t, err, http.StatusBadRequest, c.code)
	}
	_, err := b.bb("new").GetProperties(b.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	if got := b.tags(b.bb("t")); got != "keep=me" {
		t.Fatalf("tags changed by failed requests: %s", got)
	}
	_, err = b.bb("missing").SetTags(b.ctx, map[string]string{"a": "b"}, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	_, err = b.bb("missing").GetTags(b.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)

	// A leased blob's tags need the lease id.
	id := "c0ffee00-0000-4000-8000-00000000000a"
	_, err = b.lc("t", id).AcquireLease(b.ctx, 15, nil)
	must(t, err)
	_, err = b.bb("t").SetTags(b.ctx, map[string]string{"a": "b"}, nil)
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.LeaseIDMissing)
	_, err = b.bb("t").SetTags(b.ctx, map[string]string{"a": "b"}, &blob.SetTagsOptions{AccessConditions: bxLeaseAC("c0ffee00-0000-4000-8000-00000000000b")})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.LeaseIDMismatchWithBlobOperation)
	_, err = b.bb("t").SetTags(b.ctx, map[string]string{"a": "b"}, &blob.SetTagsOptions{AccessConditions: bxLeaseAC(id)})
	must(t, err)
	if got := b.tags(b.bb("t")); got != "a=b" {
		t.Fatalf("tags with the lease id: %s", got)
	}
}

func TestIfTagsCondition(t *testing.T) {
	b := newBlobT(t)
	b.put("t", []byte("body"), &blockblob.UploadOptions{Tags: map[string]string{"state": "ready", "n": "5"}})
	before := b.state(b.bb("t"))
	// Reads.
	_, err := b.bb("t").DownloadStream(b.ctx, &blob.DownloadStreamOptions{AccessConditions: bxIfTags(`"state" = 'ready' AND "n" > '4'`)})
	must(t, err)
	_, err = b.bb("t").DownloadStream(b.ctx, &blob.DownloadStreamOptions{AccessConditions: bxIfTags(`"state" = 'done' OR "n" <> '5'`)})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = b.bb("t").GetProperties(b.ctx, &blob.GetPropertiesOptions{AccessConditions: bxIfTags(`"missing" = 'x'`)})
	if err == nil {
		t.Fatal("Get Blob Properties with an unmet x-ms-if-tags succeeded")
	}
	// Writes: nothing changes when the condition fails.
	_, err = b.bb("t").SetMetadata(b.ctx, bxMeta("a", "b"), &blob.SetMetadataOptions{AccessConditions: bxIfTags(`"state" = 'done'`)})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = b.bb("t").Upload(b.ctx, bxBody([]byte("new")), &blockblob.UploadOptions{AccessConditions: bxIfTags(`"state" = 'done'`)})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = b.bb("t").Delete(b.ctx, &blob.DeleteOptions{AccessConditions: bxIfTags(`("state" = 'done')`)})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = b.bb("t").SetTags(b.ctx, map[string]string{"x": "y"}, &blob.SetTagsOptions{AccessConditions: bxIfTags(`"state" = 'done'`)})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	b.wantUnchanged("unmet x-ms-if-tags", b.bb("t"), before)
	if got := b.tags(b.bb("t")); got != "n=5,state=ready" {
		t.Fatalf("tags: %s", got)
	}
	// A malformed condition is 400.
	_, err = b.bb("t").SetMetadata(b.ctx, bxMeta("a", "b"), &blob.SetMetadataOptions{AccessConditions: bxIfTags(`state = ready`)})
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidHeaderValue)
	// A met one lets the write through.
	_, err = b.bb("t").SetMetadata(b.ctx, bxMeta("a", "b"), &blob.SetMetadataOptions{AccessConditions: bxIfTags(`"state" = 'ready'`)})
	must(t, err)
	_, err = b.bb("t").SetTags(b.ctx, map[string]string{"state": "done"}, &blob.SetTagsOptions{AccessConditions: bxIfTags(`"state" = 'ready'`)})
	must(t, err)
	// No blob matches a tag condition.
	_, err = b.bb("fresh").Upload(b.ctx, bxBody([]byte("x")), &blockblob.UploadOptions{AccessConditions: bxIfTags(`"state" = 'ready'`)})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
}

func TestFindBlobsByTags(t *testing.T) {
	b := newBlobT(t)
	svc := b.cli.ServiceClient()
	_, err := svc.CreateContainer(b.ctx, "other", nil)
	must(t, err)
	other := svc.NewContainerClient("other")
	for i := 0; i < 7; i++ {
		tags := map[string]string{"batch": "b1", "i": fmt.Sprint(i)}
		if i%2 == 1 {
			tags["odd"] = "yes"
		}
		b.put(fmt.Sprintf("blob%d", i), []byte("x"), &blockblob.UploadOptions{Tags: tags})
		_, err := other.NewBlockBlobClient(fmt.Sprintf("o%d", i)).Upload(b.ctx, bxBody([]byte("y")), &blockblob.UploadOptions{Tags: tags})
		must(t, err)
	}
	b.put("untagged", []byte("x"), nil)
	// Snapshots are not found, only their base blobs.
	b.snapshot("blob1", nil)

	find := func(where string, o *service.FilterBlobsOptions) []string {
		t.Helper()
		var got []string
		for {
			r, err := svc.FilterBlobs(b.ctx, where, o)
			must(t, err)
			for _, it := range r.Blobs {
				var kv []string
				for _, tg := range it.Tags.BlobTagSet {
					kv = append(kv, *tg.Key+"="+*tg.Value)
				}
				got = append(got, *it.ContainerName+"/"+*it.Name+"["+strings.Join(kv, ",")+"]")
			}
			if r.NextMarker == nil || *r.NextMarker == "" {
				break
			}
			if o == nil {
				o = &service.FilterBlobsOptions{}
			}
			o.Marker = r.NextMarker
		}
		sort.Strings(got)
		return got
	}
	want := "[cont/blob1[odd=yes] cont/blob3[odd=yes] cont/blob5[odd=yes] other/o1[odd=yes] other/o3[odd=yes] other/o5[odd=yes]]"
	if got := fmt.Sprint(find(`"odd" = 'yes'`, nil)); got != want {
		t.Fatalf("odd:\n%s\nwant\n%s", got, want)
	}
	// Pages of two give the same result.
	if got := fmt.Sprint(find(`"odd" = 'yes'`, &service.FilterBlobsOptions{MaxResults: to.Ptr[int32](2)})); got != want {
		t.Fatalf("odd in pages of 2:\n%s", got)
	}
	if got := fmt.Sprint(find(`"i" >= '2' AND "i" < '4' AND @container = 'other'`, nil)); got != "[other/o2[i=2] other/o3[i=3]]" {
		t.Fatalf("range in other: %s", got)
	}
	if got := fmt.Sprint(find(`"batch" = 'b2'`, nil)); got != "[]" {
		t.Fatalf("no match: %s", got)
	}
	// Container level.
	r, err := other.FilterBlobs(b.ctx, `"i" = '6'`, nil)
	must(t, err)
	if len(r.Blobs) != 1 || *r.Blobs[0].Name != "o6" {
		t.Fatalf("container level: %d found", len(r.Blobs))
	}
	// Tag changes are found at once.
	_, err = b.bb("untagged").SetTags(b.ctx, map[string]string{"odd": "yes"}, nil)
	must(t, err)
	if got := find(`"odd" = 'yes'`, nil); len(got) != 7 {
		t.Fatalf("after Set Blob Tags: %v", got)
	}
	// Bad expressions: OR, <>, parentheses, no where.
	for _, where := range []string{`"a" = '1' OR "b" = '2'`, `"a" <> '1'`, `("a" = '1')`, `a = 1`, ``} {
		_, err = svc.FilterBlobs(b.ctx, where, nil)
		if where == "" {
			wantCode(t, err, http.StatusBadRequest, bloberror.MissingRequiredQueryParameter)
			continue
		}
		wantCode(t, err, http.StatusBadRequest, bloberror.InvalidQueryParameterValue)
	}
	// @container is allowed within a container too (blob index
	// documentation); TestFidBlobTagsWhereLimits checks what it finds.
	_, err = other.FilterBlobs(b.ctx, `@container = 'other'`, nil)
	must(t, err)
	_, err = svc.NewContainerClient("nocont").FilterBlobs(b.ctx, `"a" = '1'`, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.ContainerNotFound)
	_, err = svc.FilterBlobs(b.ctx, `"a" = '1'`, &service.FilterBlobsOptions{Marker: to.Ptr("not-a-marker!")})
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidQueryParameterValue)
}

// A container SAS: tags need t, finding by tags needs f.
func TestTagsWithSAS(t *testing.T) {
	b := newBlobT(t)
	b.put("t", []byte("x"), &blockblob.UploadOptions{Tags: map[string]string{"k": "v"}})
	cc := b.cli.ServiceClient().NewContainerClient(b.cont)
	sasClient := func(p sas.ContainerPermissions) *container.Client {
		u, err := cc.GetSASURL(p, time.Now().Add(time.Hour), nil)
		must(t, err)
		c, err := container.NewClientWithNoCredential(u, sasContainerOpts())
		must(t, err)
		return c
	}
	ok := sasClient(sas.ContainerPermissions{Tag: true, FilterByTags: true})
	r, err := ok.NewBlobClient("t").GetTags(b.ctx, nil)
	must(t, err)
	if len(r.BlobTagSet) != 1 {
		t.Fatalf("%d tags", len(r.BlobTagSet))
	}
	_, err = ok.NewBlobClient("t").SetTags(b.ctx, map[string]string{"k": "w"}, nil)
	must(t, err)
	f, err := ok.FilterBlobs(b.ctx, `"k" = 'w'`, nil)
	must(t, err)
	if len(f.Blobs) != 1 {
		t.Fatalf("%d found with the SAS", len(f.Blobs))
	}
	rw := sasClient(sas.ContainerPermissions{Read: true, Write: true, List: true})
	_, err = rw.NewBlobClient("t").GetTags(b.ctx, nil)
	wantCode(t, err, http.StatusForbidden, bloberror.AuthorizationPermissionMismatch)
	_, err = rw.NewBlobClient("t").SetTags(b.ctx, map[string]string{"k": "x"}, nil)
	wantCode(t, err, http.StatusForbidden, bloberror.AuthorizationPermissionMismatch)
	_, err = rw.FilterBlobs(b.ctx, `"k" = 'w'`, nil)
	wantCode(t, err, http.StatusForbidden, bloberror.AuthorizationPermissionMismatch)
}

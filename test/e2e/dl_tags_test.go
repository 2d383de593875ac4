package e2e

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	dlservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// dlTagsClient is a Blob client of a hierarchical account's server that
// can add headers the SDK would not send (bxWithHeader).
func dlTagsClient(t *testing.T, e *dlEnv) *azblob.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	opts := clientOptions()
	opts.PerCallPolicies = append(opts.PerCallPolicies, bxHeaderEditPolicy{})
	opts.Transport = e.hc
	cli, err := azblob.NewClientWithSharedKeyCredential(e.app.BlobURL, cred, opts)
	must(t, err)
	return cli
}

// dlTags reads a path's tags as "k=v,…" in key order.
func dlTags(t *testing.T, e *dlEnv, b *blockblob.Client) string {
	t.Helper()
	r, err := b.GetTags(e.ctx, nil)
	must(t, err)
	var kv []string
	for _, tg := range r.BlobTagSet {
		kv = append(kv, *tg.Key+"="+*tg.Value)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

// dlFind runs Find Blobs by Tags at the account level (c nil) or on
// container c, in pages of max (0: the default), and returns
// "container/name[tags]" sorted.
func dlFind(t *testing.T, e *dlEnv, svc *service.Client, c *container.Client, where string, max int32) []string {
	t.Helper()
	var got []string
	var marker *string
	for {
		var blobs []*service.FilterBlobItem
		var next *string
		if c == nil {
			o := &service.FilterBlobsOptions{Marker: marker}
			if max > 0 {
				o.MaxResults = &max
			}
			r, err := svc.FilterBlobs(e.ctx, where, o)
			must(t, err)
			blobs, next = r.Blobs, r.NextMarker
		} else {
			o := &container.FilterBlobsOptions{Marker: marker}
			if max > 0 {
				o.MaxResults = &max
			}
			r, err := c.FilterBlobs(e.ctx, where, o)
			must(t, err)
			blobs, next = r.Blobs, r.NextMarker
		}
		if max > 0 && len(blobs) > int(max) {
			t.Fatalf("%d results in a page of %d", len(blobs), max)
		}
		for _, it := range blobs {
			var kv []string
			for _, tg := range it.Tags.BlobTagSet {
				kv = append(kv, *tg.Key+"="+*tg.Value)
			}
			got = append(got, *it.ContainerName+"/"+*it.Name+"["+strings.Join(kv, ",")+"]")
		}
		if next == nil || *next == "" {
			sort.Strings(got)
			return got
		}
		marker = next
	}
}

// TestDLTagsSetGet: blob index tags on the files of a hierarchical
// account, through the Blob API as on a flat account (TestBlobTags):
// x-ms-tags on Put Blob, Put Block List and Copy Blob, Set Blob Tags
// without a new ETag or Last-Modified, x-ms-tag-count, List Blobs
// include=tags, the lease rule; tags move with a rename, a replacing
// write replaces them, a delete takes them. A directory has none: Get
// Blob Tags answers an empty set, Set Blob Tags is 409 PathConflict.
func TestDLTagsSetGet(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("tags")
	cli := dlTagsClient(t, e)
	bc := cli.ServiceClient().NewContainerClient("tags")
	bb := bc.NewBlockBlobClient

	up, err := bb("d/f").Upload(e.ctx, bxBody([]byte("tagged")), &blockblob.UploadOptions{Tags: map[string]string{"project": "alpha", "n": "05"}})
	must(t, err)
	if got := dlTags(t, e, bb("d/f")); got != "n=05,project=alpha" {
		t.Fatalf("tags after Put Blob: %s", got)
	}
	p, err := bb("d/f").GetProperties(e.ctx, nil)
	must(t, err)
	if p.TagCount == nil || *p.TagCount != 2 {
		t.Fatalf("x-ms-tag-count %v", p.TagCount)
	}
	_, err = bb("d/f").SetTags(e.ctx, map[string]string{"project": "beta"}, nil)
	must(t, err)
	p, err = bb("d/f").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ETag != *up.ETag || !p.LastModified.Equal(*up.LastModified) || p.TagCount == nil || *p.TagCount != 1 {
		t.Fatalf("Set Blob Tags: ETag %s -> %s, tag count %v", *up.ETag, *p.ETag, p.TagCount)
	}
	if got := dlTags(t, e, bb("d/f")); got != "project=beta" {
		t.Fatalf("tags after Set Blob Tags: %s", got)
	}
	// A file made through the dfs endpoint takes tags too.
	f2 := fs.NewFileClient("d/f2")
	_, err = f2.Create(e.ctx, nil)
	must(t, err)
	must(t, f2.UploadBuffer(e.ctx, []byte("dfs content"), nil))
	_, err = bb("d/f2").SetTags(e.ctx, map[string]string{"via": "dfs"}, nil)
	must(t, err)

	// Listing: TagCount, and the tags with include=tags.
	page, err := bc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr("d/"), Include: container.ListBlobsInclude{Tags: true}}).NextPage(e.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 2 {
		t.Fatalf("%d listed", len(page.Segment.BlobItems))
	}
	for _, it := range page.Segment.BlobItems {
		if it.Properties.TagCount == nil || *it.Properties.TagCount != 1 || it.BlobTags == nil || len(it.BlobTags.BlobTagSet) != 1 {
			t.Fatalf("listed %s: tag count %v, tags %+v", *it.Name, it.Properties.TagCount, it.BlobTags)
		}
	}

	// A directory: no tags to read, none to set.
	if got := dlTags(t, e, bb("d")); got != "" {
		t.Fatalf("directory tags: %s", got)
	}
	_, err = bb("d").SetTags(e.ctx, map[string]string{"a": "b"}, nil)
	wantRaw(t, err, http.StatusConflict, "PathConflict")
	_, err = bb("marked").Upload(e.ctx, bxBody(nil), &blockblob.UploadOptions{Metadata: map[string]*string{"hdi_isfolder": to.Ptr("true")}, Tags: map[string]string{"a": "b"}})
	wantRaw(t, err, http.StatusConflict, "PathConflict")
	_, err = bb("marked").GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	_, err = bb("d/missing").SetTags(e.ctx, map[string]string{"a": "b"}, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	_, err = bb("d/missing").GetTags(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	_, err = bb("d/f").SetTags(e.ctx, map[string]string{"bad!": "v"}, nil)
	wantCode(t, err, http.StatusBadRequest, "InvalidTag")

	// The lease rule of a flat blob.
	id := "c0ffee00-0000-4000-8000-00000000000a"
	lc, err := lease.NewBlobClient(bb("d/f"), &lease.BlobClientOptions{LeaseID: to.Ptr(id)})
	must(t, err)
	_, err = lc.AcquireLease(e.ctx, 15, nil)
	must(t, err)
	_, err = bb("d/f").SetTags(e.ctx, map[string]string{"a": "b"}, nil)
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.LeaseIDMissing)
	_, err = bb("d/f").SetTags(e.ctx, map[string]string{"project": "gamma"}, &blob.SetTagsOptions{AccessConditions: &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: to.Ptr(id)}}})
	must(t, err)
	_, err = lc.ReleaseLease(e.ctx, nil)
	must(t, err)

	// A rename keeps them.
	_, err = fs.NewDirectoryClient("d").Rename(e.ctx, "e", nil)
	must(t, err)
	if got := dlTags(t, e, bb("e/f")); got != "project=gamma" {
		t.Fatalf("tags after renaming the directory: %s", got)
	}
	// Put Block List and Copy Blob set them; an overwrite without them
	// leaves none.
	_, err = bb("w/list").CommitBlockList(e.ctx, nil, &blockblob.CommitBlockListOptions{Tags: map[string]string{"k": "list"}})
	must(t, err)
	_, err = bb("w/copy").StartCopyFromURL(e.ctx, bb("e/f").URL(), &blob.StartCopyFromURLOptions{BlobTags: map[string]string{"k": "copy"}})
	must(t, err)
	_, err = bb("w/plain").StartCopyFromURL(e.ctx, bb("e/f").URL(), nil)
	must(t, err)
	_, err = bb("w/synced").CopyFromURL(bxWithHeader(e.ctx, "x-ms-copy-source-tag-option", "COPY"), bb("e/f").URL(), nil)
	must(t, err)
	for name, want := range map[string]string{"w/list": "k=list", "w/copy": "k=copy", "w/plain": "", "w/synced": "project=gamma"} {
		if got := dlTags(t, e, bb(name)); got != want {
			t.Fatalf("%s: tags %q, want %q", name, got, want)
		}
	}
	_, err = bb("e/f").Upload(e.ctx, bxBody([]byte("again")), nil)
	must(t, err)
	if got := dlTags(t, e, bb("e/f")); got != "" {
		t.Fatalf("tags after overwrite: %s", got)
	}
	// A deleted and re-created file has none.
	_, err = bb("e/f2").Delete(e.ctx, nil)
	must(t, err)
	_, err = fs.NewFileClient("e/f2").Create(e.ctx, nil)
	must(t, err)
	if got := dlTags(t, e, bb("e/f2")); got != "" {
		t.Fatalf("tags of a re-created file: %s", got)
	}
}

// TestDLTagsFind: Find Blobs by Tags on a hierarchical account returns
// files under their current full names, after the directory above them
// was renamed (within a filesystem and to another one), and no longer
// returns deleted files, in pages of any size, at the account level and
// in one filesystem.
func TestDLTagsFind(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("tf1")
	e.mkfs("tf2")
	cli := dlTagsClient(t, e)
	svc := cli.ServiceClient()
	c1, c2 := svc.NewContainerClient("tf1"), svc.NewContainerClient("tf2")
	put := func(c *container.Client, name string, tags map[string]string) {
		t.Helper()
		_, err := c.NewBlockBlobClient(name).Upload(e.ctx, bxBody([]byte(name)), &blockblob.UploadOptions{Tags: tags})
		must(t, err)
	}
	put(c1, "proj/a/f1", map[string]string{"project": "p", "n": "1"})
	put(c1, "proj/a/f2", map[string]string{"project": "p", "n": "2"})
	put(c1, "proj/b/f3", map[string]string{"project": "q", "n": "3"})
	put(c2, "x/f4", map[string]string{"project": "p", "n": "4"})
	put(c1, "untagged", nil)

	want := "[tf1/proj/a/f1[project=p] tf1/proj/a/f2[project=p] tf2/x/f4[project=p]]"
	for _, max := range []int32{0, 1, 2} {
		if got := fmt.Sprint(dlFind(t, e, svc, nil, `"project" = 'p'`, max)); got != want {
			t.Fatalf("pages of %d:\n%s\nwant\n%s", max, got, want)
		}
	}
	if got := fmt.Sprint(dlFind(t, e, svc, nil, `"n" > '1' AND "n" <= '3' AND @container = 'tf1'`, 1)); got != "[tf1/proj/a/f2[n=2] tf1/proj/b/f3[n=3]]" {
		t.Fatalf("range in tf1: %s", got)
	}
	if got := fmt.Sprint(dlFind(t, e, svc, c2, `"project" = 'p'`, 0)); got != "[tf2/x/f4[project=p]]" {
		t.Fatalf("in tf2: %s", got)
	}

	// Renaming the directory above: the files are found under their new
	// names.
	_, err := fs.NewDirectoryClient("proj").Rename(e.ctx, "renamed", nil)
	must(t, err)
	want = "[tf1/renamed/a/f1[project=p] tf1/renamed/a/f2[project=p] tf2/x/f4[project=p]]"
	if got := fmt.Sprint(dlFind(t, e, svc, nil, `"project" = 'p'`, 1)); got != want {
		t.Fatalf("after rename:\n%s\nwant\n%s", got, want)
	}
	// To another filesystem.
	// (Path - Create with x-ms-rename-source naming the other
	// filesystem; the Go SDK's Rename stays within one.)
	if resp, body := e.raw(http.MethodPut, "/tf2/moved?mode=legacy", map[string]string{"x-ms-rename-source": "/tf1/renamed/a"}, nil); resp.StatusCode != http.StatusCreated {
		t.Fatalf("rename to tf2: %d %s", resp.StatusCode, body)
	}
	want = "[tf2/moved/f1[project=p] tf2/moved/f2[project=p] tf2/x/f4[project=p]]"
	if got := fmt.Sprint(dlFind(t, e, svc, nil, `"project" = 'p'`, 2)); got != want {
		t.Fatalf("after moving to tf2:\n%s\nwant\n%s", got, want)
	}
	if got := fmt.Sprint(dlFind(t, e, svc, c1, `"project" = 'p'`, 0)); got != "[]" {
		t.Fatalf("tf1 after the move: %s", got)
	}
	// Tag changes are found at once.
	_, err = c2.NewBlockBlobClient("moved/f1").SetTags(e.ctx, map[string]string{"project": "r"}, nil)
	must(t, err)
	if got := fmt.Sprint(dlFind(t, e, svc, nil, `"project" = 'r'`, 0)); got != "[tf2/moved/f1[project=r]]" {
		t.Fatalf("after Set Blob Tags: %s", got)
	}

	// Deleting a directory: nothing under it is found, even with a new
	// directory of the same name; a deleted file is not found.
	_, err = e.fs("tf2").NewDirectoryClient("moved").Delete(e.ctx, nil)
	must(t, err)
	_, err = e.fs("tf2").NewDirectoryClient("moved").Create(e.ctx, nil)
	must(t, err)
	_, err = c2.NewBlockBlobClient("x/f4").Delete(e.ctx, nil)
	must(t, err)
	for _, where := range []string{`"project" = 'p'`, `"project" = 'r'`} {
		if got := fmt.Sprint(dlFind(t, e, svc, nil, where, 0)); got != "[]" {
			t.Fatalf("%s after deletes: %s", where, got)
		}
	}
	if got := fmt.Sprint(dlFind(t, e, svc, nil, `"n" >= '0'`, 0)); got != "[tf1/renamed/b/f3[n=3]]" {
		t.Fatalf("what is left: %s", got)
	}
	// The collector removes the index entries of what was deleted; the
	// rest is still found.
	_, err = e.app.Blob.CollectGarbage(e.ctx)
	must(t, err)
	if got := fmt.Sprint(dlFind(t, e, svc, nil, `"n" >= '0'`, 0)); got != "[tf1/renamed/b/f3[n=3]]" {
		t.Fatalf("after the collector: %s", got)
	}

	_, err = svc.FilterBlobs(e.ctx, `"a" = '1'`, &service.FilterBlobsOptions{Marker: to.Ptr("not-a-marker!")})
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidQueryParameterValue)
	_, err = svc.NewContainerClient("nofs").FilterBlobs(e.ctx, `"a" = '1'`, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.ContainerNotFound)
}

// TestDLTagsConditions: x-ms-if-tags on the reads and writes of a path,
// as on a flat account (TestIfTagsCondition): an unmet condition is 412
// ConditionNotMet and changes nothing; no path matches a condition.
func TestDLTagsConditions(t *testing.T) {
	e := startDL(t, true)
	e.mkfs("cond")
	cli := dlTagsClient(t, e)
	bc := cli.ServiceClient().NewContainerClient("cond")
	bb := bc.NewBlockBlobClient
	_, err := bb("d/t").Upload(e.ctx, bxBody([]byte("body")), &blockblob.UploadOptions{Tags: map[string]string{"state": "ready", "n": "5"}})
	must(t, err)
	before, err := bb("d/t").GetProperties(e.ctx, nil)
	must(t, err)
	ifTags := func(expr string) *blob.AccessConditions {
		return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfTags: to.Ptr(expr)}}
	}
	unmet := ifTags(`"state" = 'done'`)

	// Reads.
	_, err = bb("d/t").DownloadStream(e.ctx, &blob.DownloadStreamOptions{AccessConditions: ifTags(`"state" = 'ready' AND "n" > '4'`)})
	must(t, err)
	_, err = bb("d/t").DownloadStream(e.ctx, &blob.DownloadStreamOptions{AccessConditions: ifTags(`"state" = 'done' OR "n" <> '5'`)})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = bb("d/t").GetProperties(e.ctx, &blob.GetPropertiesOptions{AccessConditions: unmet})
	if err == nil {
		t.Fatal("Get Blob Properties with an unmet x-ms-if-tags succeeded")
	}
	_, err = bb("d/t").GetTags(e.ctx, &blob.GetTagsOptions{BlobAccessConditions: unmet})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)

	// Writes.
	_, err = bb("d/t").SetMetadata(e.ctx, map[string]*string{"a": to.Ptr("b")}, &blob.SetMetadataOptions{AccessConditions: unmet})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = bb("d/t").SetHTTPHeaders(e.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/x")}, &blob.SetHTTPHeadersOptions{AccessConditions: unmet})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = bb("d/t").Upload(e.ctx, bxBody([]byte("new")), &blockblob.UploadOptions{AccessConditions: unmet})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = bb("d/t").CommitBlockList(e.ctx, nil, &blockblob.CommitBlockListOptions{AccessConditions: unmet})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = bb("d/t").StartCopyFromURL(e.ctx, bb("d/t").URL(), &blob.StartCopyFromURLOptions{AccessConditions: unmet})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = bb("d/t").SetTags(e.ctx, map[string]string{"x": "y"}, &blob.SetTagsOptions{AccessConditions: unmet})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	lc, err := lease.NewBlobClient(bb("d/t"), nil)
	must(t, err)
	_, err = lc.AcquireLease(e.ctx, 15, &lease.BlobAcquireOptions{ModifiedAccessConditions: &lease.ModifiedAccessConditions{IfTags: to.Ptr(`"state" = 'done'`)}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = bb("d/t").Delete(e.ctx, &blob.DeleteOptions{AccessConditions: unmet})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)

	after, err := bb("d/t").GetProperties(e.ctx, nil)
	must(t, err)
	if *after.ETag != *before.ETag || after.LeaseState == nil || *after.LeaseState != lease.StateTypeAvailable || len(after.Metadata) != 0 {
		t.Fatalf("changed by unmet conditions: ETag %s -> %s, lease %v, metadata %v", *before.ETag, *after.ETag, after.LeaseState, after.Metadata)
	}
	if got := dlTags(t, e, bb("d/t")); got != "n=5,state=ready" {
		t.Fatalf("tags: %s", got)
	}
	// A malformed condition is 400.
	_, err = bb("d/t").SetMetadata(e.ctx, map[string]*string{"a": to.Ptr("b")}, &blob.SetMetadataOptions{AccessConditions: ifTags(`state = ready`)})
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidHeaderValue)
	// No path matches: the write does not create it.
	_, err = bb("d/fresh").Upload(e.ctx, bxBody([]byte("x")), &blockblob.UploadOptions{AccessConditions: ifTags(`"state" = 'ready'`)})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = bb("d/fresh").GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	// Nor does a directory.
	_, err = bb("d").SetMetadata(e.ctx, map[string]*string{"a": to.Ptr("b")}, &blob.SetMetadataOptions{AccessConditions: ifTags(`"state" = 'ready'`)})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)

	// Met conditions let the writes through.
	met := ifTags(`"state" = 'ready'`)
	_, err = bb("d/t").SetMetadata(e.ctx, map[string]*string{"a": to.Ptr("b")}, &blob.SetMetadataOptions{AccessConditions: met})
	must(t, err)
	_, err = lc.AcquireLease(e.ctx, 15, &lease.BlobAcquireOptions{ModifiedAccessConditions: &lease.ModifiedAccessConditions{IfTags: to.Ptr(`"state" = 'ready'`)}})
	must(t, err)
	_, err = lc.BreakLease(e.ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](0)})
	must(t, err)
	_, err = bb("d/t").SetTags(e.ctx, map[string]string{"state": "done"}, &blob.SetTagsOptions{AccessConditions: met})
	must(t, err)
	_, err = bb("d/t").Upload(e.ctx, bxBody([]byte("v2")), &blockblob.UploadOptions{AccessConditions: ifTags(`"state" = 'done'`), Tags: map[string]string{"state": "v2"}})
	must(t, err)
	_, err = bb("d/t").Delete(e.ctx, &blob.DeleteOptions{AccessConditions: ifTags(`"state" = 'v2'`)})
	must(t, err)
}

// TestDLTagsSoftDelete: with Blob soft delete on, a deleted tagged file
// and the tagged files of a deleted directory are not found by tags
// while deleted, and are found again, with their tags, once restored
// (Path Undelete), as "Manage and find Azure Blob data with blob index
// tags" says of soft-deleted blobs.
func TestDLTagsSoftDelete(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("soft")
	cli := dlTagsClient(t, e)
	svc := cli.ServiceClient()
	bc := svc.NewContainerClient("soft")
	_, err := e.svc.SetProperties(e.ctx, &dlservice.SetPropertiesOptions{DeleteRetentionPolicy: &dlservice.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7))}})
	must(t, err)
	for _, p := range []string{"f", "d/x", "d/sub/y"} {
		_, err := bc.NewBlockBlobClient(p).Upload(e.ctx, bxBody([]byte(p)), &blockblob.UploadOptions{Tags: map[string]string{"keep": "yes"}})
		must(t, err)
	}
	all := "[soft/d/sub/y[keep=yes] soft/d/x[keep=yes] soft/f[keep=yes]]"
	if got := fmt.Sprint(dlFind(t, e, svc, nil, `"keep" = 'yes'`, 0)); got != all {
		t.Fatalf("before: %s", got)
	}
	_, err = fs.NewFileClient("f").Delete(e.ctx, nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("d").Delete(e.ctx, nil)
	must(t, err)
	if got := fmt.Sprint(dlFind(t, e, svc, nil, `"keep" = 'yes'`, 0)); got != "[]" {
		t.Fatalf("while deleted: %s", got)
	}
	_, ids, _ := deletedPaths(t, e, fs, nil)
	for _, p := range []string{"f", "d"} {
		if resp, out := e.raw(http.MethodPut, "/soft/"+p+"?comp=undelete", map[string]string{"x-ms-undelete-source": "?deletionid=" + ids[p]}, nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("undelete %s: %d %s", p, resp.StatusCode, out)
		}
	}
	if got := fmt.Sprint(dlFind(t, e, svc, nil, `"keep" = 'yes'`, 0)); got != all {
		t.Fatalf("after undelete: %s", got)
	}
	if got := dlTags(t, e, bc.NewBlockBlobClient("d/sub/y")); got != "keep=yes" {
		t.Fatalf("restored tags: %s", got)
	}
}

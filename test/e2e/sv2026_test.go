package e2e

// Features of service versions 2026-02-06 to 2026-12-06, driven through
// the Go SDK (azblob v1.8.3) as docs/compatibility.md's table lists them.

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// TestSV2026ListBlobsStartFrom: List Blobs' startFrom (2026-02-06) begins
// the listing at that name, inclusive, within prefix's range, and pages
// from there with the marker (List Blobs, "startFrom").
func TestSV2026ListBlobsStartFrom(t *testing.T) {
	e := start(t)
	e.container("startfrom")
	cc := e.c.ServiceClient().NewContainerClient("startfrom")
	for _, n := range []string{"a", "b/1", "b/2", "c", "d", "e"} {
		_, err := e.c.UploadBuffer(e.ctx, "startfrom", n, []byte(n), nil)
		must(t, err)
	}
	flat := func(o *container.ListBlobsFlatOptions) []string {
		var names []string
		p := cc.NewListBlobsFlatPager(o)
		for p.More() {
			page, err := p.NextPage(e.ctx)
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
		page, err := p.NextPage(e.ctx)
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

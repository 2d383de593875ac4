package e2e

import (
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestListBlobsStartFrom: List Blobs' startFrom (Azure REST reference, "List
// Blobs": "a fully qualified path within the container ... to list paths
// starting from a defined location", inclusive) lists from that name on, in
// every page and with every other parameter. object_store's list_with_offset
// sends it on the first page only, the Go SDK's pager on every page.
func TestListBlobsStartFrom(t *testing.T) {
	e := start(t)
	e.container("from")
	e.lsPut("from", "a", "a/1", "a/2", "a/3/x", "b", "b/1", "c", "d/1", "d/2", "e")
	var snaps []string
	for range 2 {
		snaps = append(snaps, e.lsSnapshot("from", "b"))
		e.clock.Advance(time.Second)
	}
	cases := []struct {
		q    url.Values
		want []string
	}{
		{url.Values{"startFrom": {"b"}}, []string{"b", "b/1", "c", "d/1", "d/2", "e"}},
		{url.Values{"startFrom": {"a/2"}}, []string{"a/2", "a/3/x", "b", "b/1", "c", "d/1", "d/2", "e"}},
		{url.Values{"startFrom": {"bb"}}, []string{"c", "d/1", "d/2", "e"}},
		{url.Values{"startFrom": {"f"}}, []string{}},
		{url.Values{"startFrom": {"0"}}, []string{"a", "a/1", "a/2", "a/3/x", "b", "b/1", "c", "d/1", "d/2", "e"}},
		{url.Values{"startFrom": {"a/2"}, "prefix": {"a/"}}, []string{"a/2", "a/3/x"}},
		{url.Values{"startFrom": {"0"}, "prefix": {"a/"}}, []string{"a/1", "a/2", "a/3/x"}},
		{url.Values{"startFrom": {"b"}, "prefix": {"a/"}}, []string{}},
		{url.Values{"startFrom": {"b"}, "delimiter": {"/"}}, []string{"b", "P:b/", "c", "P:d/", "e"}},
		{url.Values{"startFrom": {"b"}, "include": {"snapshots"}}, []string{"b@" + snaps[0], "b@" + snaps[1], "b", "b/1", "c", "d/1", "d/2", "e"}},
	}
	for _, c := range cases {
		for n := 0; n <= 3; n++ {
			if got := lsNames(e.lsAll("from", c.q, n)); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("%v maxresults %d:\n got %q\nwant %q", c.q, n, got, c.want)
			}
		}
	}

	// The SDK sends StartFrom with every page's marker.
	var got []string
	pager := e.ctClient("from").NewListBlobsFlatPager(&container.ListBlobsFlatOptions{StartFrom: to.Ptr("c"), MaxResults: to.Ptr(int32(1))})
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(t, err)
		for _, it := range page.Segment.BlobItems {
			got = append(got, *it.Name)
		}
	}
	if want := []string{"c", "d/1", "d/2", "e"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("SDK pager from c: %q, want %q", got, want)
	}
}

// TestListBlobsStartFromHNS: startFrom on an account with a hierarchical
// namespace, through the Blob endpoint: the listing is the one without it,
// less the names before startFrom, on every page size.
func TestListBlobsStartFromHNS(t *testing.T) {
	e := startDL(t, true)
	e.mkfs("tree")
	bc := client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("tree")
	for _, n := range []string{"a", "a0/1", "b/1", "b/2", "b/3/x", "c", "d/1", "e"} {
		_, err := bc.NewBlockBlobClient(n).UploadBuffer(e.ctx, []byte(n), nil)
		must(t, err)
	}
	list := func(o container.ListBlobsFlatOptions) []string {
		var got []string
		pager := bc.NewListBlobsFlatPager(&o)
		for pager.More() {
			page, err := pager.NextPage(e.ctx)
			must(t, err)
			for _, it := range page.Segment.BlobItems {
				got = append(got, *it.Name)
			}
		}
		return got
	}
	all := list(container.ListBlobsFlatOptions{})
	for _, from := range []string{"0", "a0", "b/2", "b/25", "c", "z"} {
		var want []string
		for _, n := range all {
			if n >= from {
				want = append(want, n)
			}
		}
		for n := int32(1); n <= 4; n++ {
			if got := list(container.ListBlobsFlatOptions{StartFrom: to.Ptr(from), MaxResults: to.Ptr(n)}); !reflect.DeepEqual(got, want) {
				t.Fatalf("startFrom %q maxresults %d:\n got %q\nwant %q (all: %q)", from, n, got, want, all)
			}
		}
	}
}

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/cerulean-storage/cerulean/internal/app"
)

const arrowCT = "application/vnd.apache.arrow.stream"

// arwCapture is a context that records each page's raw response, so a
// test can tell an Arrow page from the SDK's silent XML fallback.
func (e *env) arwCapture() (context.Context, **http.Response) {
	var raw *http.Response
	return policy.WithCaptureResponse(e.ctx, &raw), &raw
}

func (e *env) arwWantCT(raw *http.Response, arrow bool) {
	e.t.Helper()
	ct := raw.Header.Get("Content-Type")
	if arrow != strings.HasPrefix(ct, arrowCT) {
		e.t.Fatalf("page Content-Type %q, want Arrow %v", ct, arrow)
	}
}

// arwFlat lists cont with the flat pager in the given format; it checks
// that every page came in that format and returns the items and pages.
func (e *env) arwFlat(cont string, o container.ListBlobsFlatOptions, arrow bool) ([]*container.BlobItem, int) {
	e.t.Helper()
	o.ResponseFormat = container.StorageResponseFormatXML
	if arrow {
		o.ResponseFormat = container.StorageResponseFormatArrow
	}
	var out []*container.BlobItem
	pages := 0
	pager := e.ctClient(cont).NewListBlobsFlatPager(&o)
	for pager.More() {
		ctx, raw := e.arwCapture()
		page, err := pager.NextPage(ctx)
		must(e.t, err)
		e.arwWantCT(*raw, arrow)
		pages++
		if o.MaxResults != nil && len(page.Segment.BlobItems) > int(*o.MaxResults) {
			e.t.Fatalf("page of %d with maxresults %d", len(page.Segment.BlobItems), *o.MaxResults)
		}
		out = append(out, page.Segment.BlobItems...)
	}
	return out, pages
}

// arwHier lists cont with the hierarchy pager; prefixes come back as
// their names.
func (e *env) arwHier(cont string, o container.ListBlobsHierarchyOptions, arrow bool) ([]*container.BlobItem, []string, int) {
	e.t.Helper()
	o.ResponseFormat = container.StorageResponseFormatXML
	if arrow {
		o.ResponseFormat = container.StorageResponseFormatArrow
	}
	var items []*container.BlobItem
	var prefixes []string
	pages := 0
	pager := e.ctClient(cont).NewListBlobsHierarchyPager("/", &o)
	for pager.More() {
		ctx, raw := e.arwCapture()
		page, err := pager.NextPage(ctx)
		must(e.t, err)
		e.arwWantCT(*raw, arrow)
		pages++
		items = append(items, page.Segment.BlobItems...)
		for _, p := range page.Segment.BlobPrefixes {
			if arrow && (p.Properties == nil || p.Properties.ResourceType == nil || *p.Properties.ResourceType != "blobprefix") {
				e.t.Fatalf("Arrow prefix %s without ResourceType blobprefix", *p.Name)
			}
			prefixes = append(prefixes, *p.Name)
		}
	}
	return items, prefixes, pages
}

// arwJSON renders items for comparison: tags sorted by key (Arrow's map
// comes back through a Go map), metadata names in lower case, and an empty Content-MD5 as none (the XML
// decoder gives nil for an empty element, Arrow's base64 an empty slice).
func arwJSON(t *testing.T, items []*container.BlobItem) string {
	t.Helper()
	var b bytes.Buffer
	for _, it := range items {
		c := *it
		if c.Properties != nil {
			p := *c.Properties
			if len(p.ContentMD5) == 0 {
				p.ContentMD5 = nil
			}
			c.Properties = &p
		}
		if c.Metadata != nil {
			// azblob's XML decoder lower-cases metadata names
			// (BlobItem.UnmarshalXML); its Arrow reader keeps them as sent.
			m := map[string]*string{}
			for k, v := range c.Metadata {
				m[strings.ToLower(k)] = v
			}
			c.Metadata = m
		}
		if c.BlobTags != nil {
			set := append([]*container.BlobTag(nil), c.BlobTags.BlobTagSet...)
			sort.Slice(set, func(i, j int) bool { return *set[i].Key < *set[j].Key })
			c.BlobTags = &container.BlobTags{BlobTagSet: set}
		}
		j, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// arwFixture fills cont with one blob of each kind and state a listing
// shows: block blobs with headers, metadata and tags, a cool-tier blob, a
// page blob, a sealed append blob, a snapshot, a leased blob, a copy, a
// soft-deleted blob, an uncommitted blob and names under virtual
// directories.
func (e *env) arwFixture(cont string) {
	e.t.Helper()
	e.sdPolicy(true, 3, false)
	e.container(cont)
	cc := e.ctClient(cont)
	_, err := cc.NewBlockBlobClient("dir/a.txt").UploadBuffer(e.ctx, []byte("hello"), &blockblob.UploadBufferOptions{
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain"), BlobContentEncoding: to.Ptr("identity"), BlobContentLanguage: to.Ptr("en"),
			BlobCacheControl: to.Ptr("no-cache"), BlobContentDisposition: to.Ptr("inline")},
		Metadata: map[string]*string{"color": to.Ptr("blue"), "Size": to.Ptr("xl")},
		Tags:     map[string]string{"b": "2", "a": "1"},
	})
	must(e.t, err)
	e.lsPut(cont, "dir/sub/deep", "plain", "ünï/名前", "zz")
	_, err = cc.NewBlobClient("plain").SetTier(e.ctx, blob.AccessTierCool, nil)
	must(e.t, err)
	_, err = cc.NewPageBlobClient("page").Create(e.ctx, 1024, &pageblob.CreateOptions{SequenceNumber: to.Ptr[int64](7)})
	must(e.t, err)
	ab := cc.NewAppendBlobClient("append")
	_, err = ab.Create(e.ctx, nil)
	must(e.t, err)
	_, err = ab.Seal(e.ctx, nil)
	must(e.t, err)
	e.lsSnapshot(cont, "zz")
	bl, err := lease.NewBlobClient(cc.NewBlobClient("dir/a.txt"), nil)
	must(e.t, err)
	_, err = bl.AcquireLease(e.ctx, -1, nil)
	must(e.t, err)
	_, err = cc.NewBlobClient("copy").StartCopyFromURL(e.ctx, cc.NewBlobClient("plain").URL(), nil)
	must(e.t, err)
	e.lsPut(cont, "gone")
	_, err = cc.NewBlobClient("gone").Delete(e.ctx, nil)
	must(e.t, err)
	_, err = cc.NewBlockBlobClient("pending").StageBlock(e.ctx, "YWFhYQ==", btBody([]byte("abc")), nil)
	must(e.t, err)
}

// TestListBlobsArrowMatchesXML lists one container through azblob with
// StorageResponseFormatArrow and with XML, flat and by hierarchy, with
// every include the SDK reads and several page sizes: every page must
// come as an Arrow stream, and the SDK must build the same BlobItems
// (field for field), prefixes and page count from both.
func TestListBlobsArrowMatchesXML(t *testing.T) {
	e := start(t)
	e.arwFixture("arw")
	all := container.ListBlobsInclude{Copy: true, Deleted: true, Metadata: true, Snapshots: true, Tags: true, UncommittedBlobs: true}
	for _, inc := range []container.ListBlobsInclude{{}, {Metadata: true}, {Tags: true}, {Snapshots: true, Deleted: true}, all} {
		for _, size := range []*int32{nil, to.Ptr[int32](1), to.Ptr[int32](3)} {
			xi, xp := e.arwFlat("arw", container.ListBlobsFlatOptions{Include: inc, MaxResults: size}, false)
			ai, ap := e.arwFlat("arw", container.ListBlobsFlatOptions{Include: inc, MaxResults: size}, true)
			if x, a := arwJSON(t, xi), arwJSON(t, ai); x != a || xp != ap {
				t.Fatalf("flat include %+v maxresults %v: XML (%d pages)\n%s\nArrow (%d pages)\n%s", inc, size, xp, x, ap, a)
			}
			if len(xi) < 8 {
				t.Fatalf("fixture listed %d items", len(xi))
			}
			for _, prefix := range []string{"", "dir/"} {
				xi, xpr, xp := e.arwHier("arw", container.ListBlobsHierarchyOptions{Include: inc, MaxResults: size, Prefix: &prefix}, false)
				ai, apr, ap := e.arwHier("arw", container.ListBlobsHierarchyOptions{Include: inc, MaxResults: size, Prefix: &prefix}, true)
				if x, a := arwJSON(t, xi), arwJSON(t, ai); x != a || xp != ap || strings.Join(xpr, "|") != strings.Join(apr, "|") {
					t.Fatalf("hierarchy prefix %q include %+v maxresults %v: XML (%d pages, prefixes %v)\n%s\nArrow (%d pages, prefixes %v)\n%s", prefix, inc, size, xp, xpr, x, ap, apr, a)
				}
				if len(xpr) == 0 {
					t.Fatalf("prefix %q: no BlobPrefix listed", prefix)
				}
			}
		}
	}
	// The fields the fixture set reach the SDK through Arrow.
	ai, _ := e.arwFlat("arw", container.ListBlobsFlatOptions{Include: all}, true)
	seen := map[string]*container.BlobItem{}
	for _, it := range ai {
		if it.Snapshot == nil {
			seen[*it.Name] = it
		}
	}
	a := seen["dir/a.txt"]
	if a == nil || *a.Metadata["color"] != "blue" || len(a.BlobTags.BlobTagSet) != 2 || *a.Properties.ContentType != "text/plain" ||
		*a.Properties.LeaseState != lease.StateTypeLeased || *a.Properties.LeaseDuration != lease.DurationTypeInfinite || *a.Properties.ContentLength != 5 || len(a.Properties.ContentMD5) != 16 {
		t.Fatalf("dir/a.txt: %s", arwJSON(t, []*container.BlobItem{a}))
	}
	if p := seen["page"]; p == nil || *p.Properties.BlobSequenceNumber != 7 || *p.Properties.BlobType != "PageBlob" {
		t.Fatalf("page: %s", arwJSON(t, []*container.BlobItem{p}))
	}
	if p := seen["append"]; p == nil || p.Properties.IsSealed == nil || !*p.Properties.IsSealed {
		t.Fatalf("append: %s", arwJSON(t, []*container.BlobItem{p}))
	}
	if p := seen["copy"]; p == nil || p.Properties.CopyID == nil || p.Properties.CopyStatus == nil || p.Properties.CopyCompletionTime == nil {
		t.Fatalf("copy: %s", arwJSON(t, []*container.BlobItem{p}))
	}
	if p := seen["gone"]; p == nil || p.Deleted == nil || !*p.Deleted || p.Properties.DeletedTime == nil || p.Properties.RemainingRetentionDays == nil {
		t.Fatalf("gone: %s", arwJSON(t, []*container.BlobItem{p}))
	}
	if p := seen["plain"]; p == nil || *p.Properties.AccessTier != blob.AccessTierCool || p.Properties.AccessTierChangeTime == nil {
		t.Fatalf("plain: %s", arwJSON(t, []*container.BlobItem{p}))
	}
	if seen["pending"] == nil {
		t.Fatal("uncommitted blob not listed")
	}
}

// TestListBlobsArrowEmptyAndMarker: an empty container is an Arrow
// stream of no rows; and the schema's NextMarker is the same opaque
// marker the XML listing gives, so a page fetched by an XML marker
// continues an Arrow listing.
func TestListBlobsArrowEmptyAndMarker(t *testing.T) {
	e := start(t)
	e.container("empty")
	if items, pages := e.arwFlat("empty", container.ListBlobsFlatOptions{}, true); len(items) != 0 || pages != 1 {
		t.Fatalf("empty: %d items in %d pages", len(items), pages)
	}
	e.lsPut("empty", "a", "b", "c")
	r := e.svSigned(http.MethodGet, "/empty?restype=container&comp=list&maxresults=2", map[string]string{"Accept": arrowCT + ",application/xml", "x-ms-version": "2026-12-06"}, nil)
	if r.status != http.StatusOK || r.header.Get("Content-Type") != arrowCT {
		t.Fatalf("status %d Content-Type %q", r.status, r.header.Get("Content-Type"))
	}
	rd, err := ipc.NewReader(bytes.NewReader(r.body))
	must(t, err)
	md := rd.Schema().Metadata()
	i := md.FindKey("NextMarker")
	if i < 0 || md.Values()[i] == "" {
		t.Fatalf("no NextMarker: %v", md)
	}
	if n := md.FindKey("NumberOfRecords"); n < 0 || md.Values()[n] != "2" {
		t.Fatalf("NumberOfRecords: %v", md)
	}
	rows := 0
	for rd.Next() {
		rows += int(rd.RecordBatch().NumRows())
	}
	rd.Release()
	if rows != 2 {
		t.Fatalf("%d rows", rows)
	}
	rest, _ := e.arwFlat("empty", container.ListBlobsFlatOptions{Marker: to.Ptr(md.Values()[i])}, false)
	if len(rest) != 1 || *rest[0].Name != "c" {
		t.Fatalf("after the Arrow marker: %s", arwJSON(t, rest))
	}
}

// TestListBlobsArrowFallsBackToXML: without the Arrow media type in
// Accept, with it refused (q=0), or with an x-ms-version older than the
// one the SDK's Arrow requests carry, List Blobs answers in XML.
func TestListBlobsArrowFallsBackToXML(t *testing.T) {
	e := start(t)
	e.container("fbk")
	e.lsPut("fbk", "a")
	for _, h := range []map[string]string{
		{"Accept": "application/xml", "x-ms-version": "2026-12-06"},
		{"Accept": arrowCT + ";q=0, application/xml", "x-ms-version": "2026-12-06"},
		{"Accept": arrowCT + ",application/xml", "x-ms-version": "2025-11-05"},
	} {
		r := e.svSigned(http.MethodGet, "/fbk?restype=container&comp=list", h, nil)
		if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/xml" || !bytes.Contains(r.body, []byte("<Name>a</Name>")) {
			t.Fatalf("%v: status %d Content-Type %q body %s", h, r.status, r.header.Get("Content-Type"), r.body)
		}
	}
}

// TestListBlobsArrowHierarchicalAccountIsXML: on a hierarchical account
// an Arrow request gets XML (azblob: Arrow "is only supported on non-HNS
// (hierarchical namespace) accounts via the Blob endpoint"), and the
// SDK still lists through its XML fallback.
func TestListBlobsArrowHierarchicalAccountIsXML(t *testing.T) {
	d := startDL(t, true)
	d.mkfs("hnsarw")
	e := &env{t: t, app: d.app, clock: d.clock, c: client(t, d.app.BlobURL, app.DevKey), ctx: d.ctx}
	e.lsPut("hnsarw", "dir/f")
	pager := e.ctClient("hnsarw").NewListBlobsFlatPager(&container.ListBlobsFlatOptions{ResponseFormat: container.StorageResponseFormatArrow})
	ctx, raw := e.arwCapture()
	page, err := pager.NextPage(ctx)
	must(t, err)
	e.arwWantCT(*raw, false)
	found := false
	for _, it := range page.Segment.BlobItems {
		found = found || *it.Name == "dir/f"
	}
	if !found {
		t.Fatalf("listed %s", arwJSON(t, page.Segment.BlobItems))
	}
}

// TestListBlobsArrowEndBefore: azblob's EndBefore (Arrow only) ends the
// listing before that name, on whichever page reaches it, flat and by
// hierarchy.
func TestListBlobsArrowEndBefore(t *testing.T) {
	e := start(t)
	e.container("endb")
	e.lsPut("endb", "a", "b", "c", "d", "e", "x/1", "x/2", "y")
	for _, size := range []*int32{nil, to.Ptr[int32](1), to.Ptr[int32](2), to.Ptr[int32](3)} {
		for bound, want := range map[string]string{"d": "a|b|c", "c0": "a|b|c", "a": "", "x/2": "a|b|c|d|e|x/1", "zz": "a|b|c|d|e|x/1|x/2|y"} {
			items, _ := e.arwFlat("endb", container.ListBlobsFlatOptions{EndBefore: to.Ptr(bound), MaxResults: size}, true)
			var names []string
			for _, it := range items {
				names = append(names, *it.Name)
			}
			if got := strings.Join(names, "|"); got != want {
				t.Fatalf("endBefore %q maxresults %v: %s, want %s", bound, size, got, want)
			}
		}
		items, prefixes, _ := e.arwHier("endb", container.ListBlobsHierarchyOptions{EndBefore: to.Ptr("y"), MaxResults: size}, true)
		if len(items) != 5 || strings.Join(prefixes, "|") != "x/" {
			t.Fatalf("hierarchy endBefore y maxresults %v: %s prefixes %v", size, arwJSON(t, items), prefixes)
		}
	}
}

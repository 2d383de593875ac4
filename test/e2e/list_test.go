package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// lsContainers lists every container with the SDK pager.
func (e *env) lsContainers(o *service.ListContainersOptions) (names []string, pages int, items []*service.ContainerItem) {
	e.t.Helper()
	pager := e.c.NewListContainersPager(o)
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(e.t, err)
		pages++
		for _, it := range page.ContainerItems {
			names = append(names, *it.Name)
			items = append(items, it)
		}
		if o != nil && o.MaxResults != nil && len(page.ContainerItems) > int(*o.MaxResults) {
			e.t.Fatalf("page of %d items with maxresults %d", len(page.ContainerItems), *o.MaxResults)
		}
	}
	return names, pages, items
}

func TestListContainers(t *testing.T) {
	e := start(t)
	all := []string{"alpha-1", "alpha-2", "alpha-3", "alpha10", "beta-1", "beta-2", "gamma"}
	for _, n := range []string{"gamma", "beta-2", "alpha-3", "alpha-1", "alpha10", "beta-1", "alpha-2"} { // out of order
		_, err := e.ctClient(n).Create(e.ctx, &container.CreateOptions{Metadata: ctPtrMeta(map[string]string{"name": n})})
		must(t, err)
	}
	names, pages, items := e.lsContainers(nil)
	if !reflect.DeepEqual(names, all) || pages != 1 {
		t.Fatalf("list: %v in %d pages", names, pages)
	}
	for _, it := range items {
		if it.Metadata != nil {
			t.Fatalf("metadata without include: %v", ctDeref(it.Metadata))
		}
		p := it.Properties
		if p == nil || p.ETag == nil || p.LastModified == nil || *p.LeaseState != lease.StateTypeAvailable || *p.LeaseStatus != lease.StatusTypeUnlocked || p.LeaseDuration != nil || p.PublicAccess != nil {
			t.Fatalf("properties of %s: %+v", *it.Name, p)
		}
	}

	// Prefix.
	names, _, _ = e.lsContainers(&service.ListContainersOptions{Prefix: to.Ptr("alpha-")})
	if !reflect.DeepEqual(names, all[:3]) {
		t.Fatalf("prefix alpha-: %v", names)
	}
	names, _, _ = e.lsContainers(&service.ListContainersOptions{Prefix: to.Ptr("delta")})
	if len(names) != 0 {
		t.Fatalf("prefix delta: %v", names)
	}

	// Paging: every page size visits all containers, in order.
	for size := int32(1); size <= 8; size++ {
		names, pages, _ = e.lsContainers(&service.ListContainersOptions{MaxResults: to.Ptr(size)})
		if !reflect.DeepEqual(names, all) {
			t.Fatalf("maxresults %d: %v", size, names)
		}
		if want := (len(all) + int(size) - 1) / int(size); pages != want {
			t.Fatalf("maxresults %d: %d pages, want %d", size, pages, want)
		}
		names, _, _ = e.lsContainers(&service.ListContainersOptions{MaxResults: to.Ptr(size), Prefix: to.Ptr("alpha")})
		if !reflect.DeepEqual(names, all[:4]) {
			t.Fatalf("maxresults %d prefix alpha: %v", size, names)
		}
	}

	// Explicit marker: a page starts at the marker returned by the previous one.
	pager := e.c.NewListContainersPager(&service.ListContainersOptions{MaxResults: to.Ptr(int32(3))})
	page, err := pager.NextPage(e.ctx)
	must(t, err)
	if page.NextMarker == nil || *page.NextMarker == "" || page.MaxResults == nil || *page.MaxResults != 3 {
		t.Fatalf("first page: marker %v max %v", page.NextMarker, page.MaxResults)
	}
	names, _, _ = e.lsContainers(&service.ListContainersOptions{Marker: page.NextMarker})
	if !reflect.DeepEqual(names, all[3:]) {
		t.Fatalf("from marker %q: %v", *page.NextMarker, names)
	}

	// Include metadata; listing reflects leases and public access.
	lc, err := lease.NewContainerClient(e.ctClient("beta-1"), nil)
	must(t, err)
	_, err = lc.AcquireLease(e.ctx, -1, nil)
	must(t, err)
	_, err = e.ctClient("gamma").SetAccessPolicy(e.ctx, &container.SetAccessPolicyOptions{Access: to.Ptr(container.PublicAccessTypeContainer)})
	must(t, err)
	_, _, items = e.lsContainers(&service.ListContainersOptions{Include: service.ListContainersInclude{Metadata: true}})
	for _, it := range items {
		ctWantMeta(t, it.Metadata, map[string]string{"name": *it.Name})
		p := it.Properties
		switch *it.Name {
		case "beta-1":
			if *p.LeaseState != lease.StateTypeLeased || *p.LeaseStatus != lease.StatusTypeLocked || p.LeaseDuration == nil || *p.LeaseDuration != lease.DurationTypeInfinite {
				t.Fatalf("leased container in listing: %v %v %v", *p.LeaseState, *p.LeaseStatus, p.LeaseDuration)
			}
		case "gamma":
			if p.PublicAccess == nil || *p.PublicAccess != container.PublicAccessTypeContainer {
				t.Fatalf("public container in listing: %v", p.PublicAccess)
			}
		}
		props, err := e.ctClient(*it.Name).GetProperties(e.ctx, nil)
		must(t, err)
		if *props.ETag != *p.ETag || !props.LastModified.Equal(*p.LastModified) {
			t.Fatalf("%s: listing ETag %v / %v, properties %v / %v", *it.Name, *p.ETag, p.LastModified, *props.ETag, props.LastModified)
		}
	}

	// maxresults must be positive; include must be known.
	for _, q := range []string{"maxresults=0", "maxresults=-1", "maxresults=abc"} {
		r := e.svSigned(http.MethodGet, "/?comp=list&"+q, nil, nil)
		if r.status != 400 || r.header.Get("x-ms-error-code") == "" {
			t.Fatalf("%s: %d %q", q, r.status, r.header.Get("x-ms-error-code"))
		}
		svWantCommon(t, r.header)
	}
	r := e.svSigned(http.MethodGet, "/?comp=list&include=bogus", nil, nil)
	svWantRaw(t, r, 400, string(bloberror.InvalidQueryParameterValue))
}

// lsEntry is one element of a List Blobs response, in document order.
type lsEntry struct {
	Prefix   bool
	Name     string
	Snapshot string
}

func (x lsEntry) String() string {
	switch {
	case x.Prefix:
		return "P:" + x.Name
	case x.Snapshot != "":
		return x.Name + "@" + x.Snapshot
	}
	return x.Name
}

type lsPage struct {
	entries []lsEntry
	next    string
}

// lsRaw issues List Blobs directly and returns its Blobs children in
// document order (the SDK splits Blob and BlobPrefix into two slices).
func (e *env) lsRaw(cont string, q url.Values) lsPage {
	e.t.Helper()
	q.Set("restype", "container")
	q.Set("comp", "list")
	r := e.svSigned(http.MethodGet, "/"+cont+"?"+q.Encode(), nil, nil)
	svWantRaw(e.t, r, 200, "")
	dec := xml.NewDecoder(bytes.NewReader(r.body))
	var page lsPage
	var stack []string
	var cur *lsEntry
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		must(e.t, err)
		switch tk := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tk.Name.Local)
			if len(stack) == 3 && stack[1] == "Blobs" {
				cur = &lsEntry{Prefix: tk.Name.Local == "BlobPrefix"}
			}
		case xml.CharData:
			path := strings.Join(stack, "/")
			switch {
			case cur != nil && len(stack) == 4 && stack[3] == "Name":
				cur.Name += string(tk)
			case cur != nil && len(stack) == 4 && stack[3] == "Snapshot":
				cur.Snapshot += string(tk)
			case path == "EnumerationResults/NextMarker":
				page.next += string(tk)
			}
		case xml.EndElement:
			if len(stack) == 3 && cur != nil {
				page.entries = append(page.entries, *cur)
				cur = nil
			}
			stack = stack[:len(stack)-1]
		}
	}
	return page
}

// lsAll pages through List Blobs with maxresults n (0: no limit).
func (e *env) lsAll(cont string, q url.Values, n int) []lsEntry {
	e.t.Helper()
	var out []lsEntry
	marker := ""
	for i := 0; ; i++ {
		qq := url.Values{}
		for k, v := range q {
			qq[k] = v
		}
		if n > 0 {
			qq.Set("maxresults", fmt.Sprint(n))
		}
		if marker != "" {
			qq.Set("marker", marker)
		}
		p := e.lsRaw(cont, qq)
		if n > 0 && len(p.entries) > n {
			e.t.Fatalf("page of %d entries with maxresults %d", len(p.entries), n)
		}
		out = append(out, p.entries...)
		if p.next == "" {
			return out
		}
		if i > 1000 {
			e.t.Fatalf("listing does not end")
		}
		marker = p.next
	}
}

func lsNames(es []lsEntry) []string {
	out := make([]string, len(es))
	for i, x := range es {
		out[i] = x.String()
	}
	return out
}

func (e *env) lsPut(cont string, names ...string) {
	e.t.Helper()
	for _, n := range names {
		_, err := e.c.UploadBuffer(e.ctx, cont, n, []byte("data of "+n), nil)
		must(e.t, err)
	}
}

func (e *env) lsSnapshot(cont, name string) string {
	e.t.Helper()
	r, err := e.ctClient(cont).NewBlobClient(name).CreateSnapshot(e.ctx, nil)
	must(e.t, err)
	return *r.Snapshot
}

func TestListBlobsFlatAndPrefix(t *testing.T) {
	e := start(t)
	e.container("flat")
	names := []string{"a", "a b", "a/b", "a/c/d", "a0", "b", "dir/x.txt", "z", "ünïcödé/名前.txt", "émoji 😀", "x&y<z>"}
	shuffled := append([]string(nil), names...)
	sort.Sort(sort.Reverse(sort.StringSlice(shuffled)))
	e.lsPut("flat", shuffled...)
	sort.Strings(names)

	// SDK flat pager: every name round-trips, in byte order.
	var got []string
	pager := e.ctClient("flat").NewListBlobsFlatPager(nil)
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(t, err)
		for _, it := range page.Segment.BlobItems {
			got = append(got, *it.Name)
			p := it.Properties
			if *p.ContentLength != int64(len("data of "+*it.Name)) || *p.BlobType != blob.BlobTypeBlockBlob || p.ETag == nil || p.LastModified == nil ||
				*p.LeaseState != lease.StateTypeAvailable || it.Metadata != nil || it.Snapshot != nil {
				t.Fatalf("item %q: %+v", *it.Name, *p)
			}
		}
	}
	if !reflect.DeepEqual(got, names) {
		t.Fatalf("flat list:\n got %q\nwant %q", got, names)
	}
	// A listed name addresses the blob.
	for _, n := range names {
		r, err := e.c.DownloadStream(e.ctx, "flat", n, nil)
		must(t, err)
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if string(b) != "data of "+n {
			t.Fatalf("%q: %q", n, b)
		}
	}
	// Raw listing agrees.
	if raw := lsNames(e.lsAll("flat", url.Values{}, 0)); !reflect.DeepEqual(raw, names) {
		t.Fatalf("raw list %q", raw)
	}

	// Prefixes.
	for prefix, want := range map[string][]string{
		"a":       {"a", "a b", "a/b", "a/c/d", "a0"},
		"a/":      {"a/b", "a/c/d"},
		"ünïcödé": {"ünïcödé/名前.txt"},
		"émoji ":  {"émoji 😀"},
		"x&":      {"x&y<z>"},
		"q":       nil,
	} {
		var got []string
		pager := e.ctClient("flat").NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr(prefix)})
		for pager.More() {
			page, err := pager.NextPage(e.ctx)
			must(t, err)
			if page.Prefix == nil || *page.Prefix != prefix {
				t.Fatalf("response prefix %v", page.Prefix)
			}
			for _, it := range page.Segment.BlobItems {
				got = append(got, *it.Name)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("prefix %q: %q, want %q", prefix, got, want)
		}
	}

	_, err := e.ctClient("nothere").NewListBlobsFlatPager(nil).NextPage(e.ctx)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	r := e.svSigned(http.MethodGet, "/flat?restype=container&comp=list&include=bogus", nil, nil)
	svWantRaw(t, r, 400, string(bloberror.InvalidQueryParameterValue))
	r = e.svSigned(http.MethodGet, "/flat?restype=container&comp=list&maxresults=0", nil, nil)
	if r.status != 400 {
		t.Fatalf("maxresults=0: %d", r.status)
	}
	r = e.svSigned(http.MethodGet, "/flat?restype=container&comp=list&marker=garbage", nil, nil)
	if r.status != 400 {
		t.Fatalf("bad marker: %d", r.status)
	}
}

func TestListBlobsHierarchy(t *testing.T) {
	e := start(t)
	e.container("tree")
	e.lsPut("tree", "a", "a/b", "a/c/d", "a/c/e", "a0", "a-b/x", "b/", "b/y", "c", "d/e/f/g", "é/1", "z")

	// Delimiter "/": BlobPrefix entries sit in name order among the blobs.
	q := url.Values{"delimiter": {"/"}}
	want := []string{"a", "P:a-b/", "P:a/", "a0", "P:b/", "c", "P:d/", "z", "P:é/"}
	if got := lsNames(e.lsAll("tree", q, 0)); !reflect.DeepEqual(got, want) {
		t.Fatalf("delimiter /:\n got %q\nwant %q", got, want)
	}
	// One level down.
	q = url.Values{"delimiter": {"/"}, "prefix": {"a/"}}
	if got := lsNames(e.lsAll("tree", q, 0)); !reflect.DeepEqual(got, []string{"a/b", "P:a/c/"}) {
		t.Fatalf("prefix a/: %q", got)
	}
	q = url.Values{"delimiter": {"/"}, "prefix": {"b/"}}
	if got := lsNames(e.lsAll("tree", q, 0)); !reflect.DeepEqual(got, []string{"b/", "b/y"}) {
		t.Fatalf("prefix b/: %q", got)
	}
	// A delimiter of more than one character.
	q = url.Values{"delimiter": {"/c/"}}
	if got := lsNames(e.lsAll("tree", q, 0)); !reflect.DeepEqual(got, []string{"a", "a-b/x", "a/b", "P:a/c/", "a0", "b/", "b/y", "c", "d/e/f/g", "z", "é/1"}) {
		t.Fatalf("delimiter /c/: %q", got)
	}

	// The SDK hierarchy pager splits items and prefixes; check both.
	var items, prefixes []string
	pager := e.ctClient("tree").NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{MaxResults: to.Ptr(int32(2))})
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(t, err)
		if page.Delimiter == nil || *page.Delimiter != "/" {
			t.Fatalf("delimiter %v", page.Delimiter)
		}
		if n := len(page.Segment.BlobItems) + len(page.Segment.BlobPrefixes); n > 2 {
			t.Fatalf("page of %d", n)
		}
		for _, it := range page.Segment.BlobItems {
			items = append(items, *it.Name)
		}
		for _, p := range page.Segment.BlobPrefixes {
			prefixes = append(prefixes, *p.Name)
		}
	}
	if !reflect.DeepEqual(items, []string{"a", "a0", "c", "z"}) || !reflect.DeepEqual(prefixes, []string{"a-b/", "a/", "b/", "d/", "é/"}) {
		t.Fatalf("SDK hierarchy: items %q prefixes %q", items, prefixes)
	}
}

func TestListBlobsSnapshotsOrder(t *testing.T) {
	e := start(t)
	e.container("snaps")
	e.lsPut("snaps", "blob1", "blob2")
	s1 := e.lsSnapshot("snaps", "blob1")
	e.clock.Advance(time.Second)
	s2 := e.lsSnapshot("snaps", "blob1")
	if s1 >= s2 {
		t.Fatalf("snapshots %q %q not increasing", s1, s2)
	}

	// Without include=snapshots only base blobs are listed.
	if got := lsNames(e.lsAll("snaps", url.Values{}, 0)); !reflect.DeepEqual(got, []string{"blob1", "blob2"}) {
		t.Fatalf("no snapshots: %q", got)
	}
	// With it, a blob's snapshots come first, oldest to newest, then the
	// blob itself (as the service lists them).
	want := []string{"blob1@" + s1, "blob1@" + s2, "blob1", "blob2"}
	if got := lsNames(e.lsAll("snaps", url.Values{"include": {"snapshots"}}, 0)); !reflect.DeepEqual(got, want) {
		t.Fatalf("with snapshots:\n got %q\nwant %q", got, want)
	}
	var sdk []string
	pager := e.ctClient("snaps").NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Snapshots: true}, MaxResults: to.Ptr(int32(1))})
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(t, err)
		for _, it := range page.Segment.BlobItems {
			x := lsEntry{Name: *it.Name}
			if it.Snapshot != nil {
				x.Snapshot = *it.Snapshot
				if it.Properties.LeaseState != nil && *it.Properties.LeaseState != lease.StateTypeAvailable {
					t.Fatalf("snapshot reports a lease")
				}
			}
			sdk = append(sdk, x.String())
		}
	}
	if !reflect.DeepEqual(sdk, want) {
		t.Fatalf("SDK with snapshots, one per page:\n got %q\nwant %q", sdk, want)
	}
	// A snapshot keeps the content it was taken with.
	_, err := e.c.UploadBuffer(e.ctx, "snaps", "blob1", []byte("new"), nil)
	must(t, err)
	sc, err := e.ctClient("snaps").NewBlobClient("blob1").WithSnapshot(s1)
	must(t, err)
	r, err := sc.DownloadStream(e.ctx, nil)
	must(t, err)
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if string(b) != "data of blob1" {
		t.Fatalf("snapshot content %q", b)
	}
}

// Paging with small page sizes visits exactly the unpaged listing, across
// virtual directories, snapshots and uncommitted blobs.
func TestListBlobsPaging(t *testing.T) {
	e := start(t)
	e.container("pages")
	e.lsPut("pages", "a", "a/1", "a/2", "a/3/x", "b", "b/1", "c", "d/1", "d/2", "e")
	snaps := map[string][]string{}
	for _, n := range []string{"a", "b", "a/2", "e"} {
		for range 2 {
			snaps[n] = append(snaps[n], e.lsSnapshot("pages", n))
			e.clock.Advance(time.Second)
		}
	}
	bb := e.ctClient("pages").NewBlockBlobClient("c0-uncommitted")
	_, err := bb.StageBlock(e.ctx, base64.StdEncoding.EncodeToString([]byte("blk1")), streaming.NopCloser(strings.NewReader("x")), nil)
	must(t, err)
	bb = e.ctClient("pages").NewBlockBlobClient("d/3-uncommitted")
	_, err = bb.StageBlock(e.ctx, base64.StdEncoding.EncodeToString([]byte("blk1")), streaming.NopCloser(strings.NewReader("x")), nil)
	must(t, err)

	// Expected flat listing with snapshots.
	var wantFlat []string
	for _, n := range []string{"a", "a/1", "a/2", "a/3/x", "b", "b/1", "c", "d/1", "d/2", "e"} {
		for _, s := range snaps[n] {
			wantFlat = append(wantFlat, n+"@"+s)
		}
		wantFlat = append(wantFlat, n)
	}
	queries := []struct {
		q    url.Values
		want []string
	}{
		{url.Values{}, []string{"a", "a/1", "a/2", "a/3/x", "b", "b/1", "c", "d/1", "d/2", "e"}},
		{url.Values{"include": {"snapshots"}}, wantFlat},
		{url.Values{"delimiter": {"/"}}, []string{"a", "P:a/", "b", "P:b/", "c", "P:d/", "e"}},
		{url.Values{"delimiter": {"/"}, "include": {"snapshots"}}, []string{
			"a@" + snaps["a"][0], "a@" + snaps["a"][1], "a", "P:a/", "b@" + snaps["b"][0], "b@" + snaps["b"][1], "b", "P:b/", "c", "P:d/",
			"e@" + snaps["e"][0], "e@" + snaps["e"][1], "e"}},
		{url.Values{"delimiter": {"/"}, "prefix": {"a/"}, "include": {"snapshots"}}, []string{
			"a/1", "a/2@" + snaps["a/2"][0], "a/2@" + snaps["a/2"][1], "a/2", "P:a/3/"}},
		{url.Values{"include": {"uncommittedblobs"}}, []string{"a", "a/1", "a/2", "a/3/x", "b", "b/1", "c", "c0-uncommitted", "d/1", "d/2", "d/3-uncommitted", "e"}},
		{url.Values{"include": {"uncommittedblobs,snapshots"}, "prefix": {"c"}}, []string{"c", "c0-uncommitted"}},
		{url.Values{"include": {"uncommittedblobs"}, "delimiter": {"/"}}, []string{"a", "P:a/", "b", "P:b/", "c", "c0-uncommitted", "P:d/", "e"}},
	}
	for _, c := range queries {
		if got := lsNames(e.lsAll("pages", c.q, 0)); !reflect.DeepEqual(got, c.want) {
			t.Fatalf("%v unpaged:\n got %q\nwant %q", c.q, got, c.want)
		}
		for n := 1; n <= 4; n++ {
			if got := lsNames(e.lsAll("pages", c.q, n)); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("%v maxresults %d:\n got %q\nwant %q", c.q, n, got, c.want)
			}
		}
	}
	// MaxResults is echoed, and the last page has an empty NextMarker.
	p := e.lsRaw("pages", url.Values{"maxresults": {"100"}})
	if p.next != "" || len(p.entries) != 10 {
		t.Fatalf("single page: %d entries, next %q", len(p.entries), p.next)
	}
}

func TestListBlobsIncludes(t *testing.T) {
	e := start(t)
	e.container("inc")
	_, err := e.c.UploadBuffer(e.ctx, "inc", "meta", []byte("m"), &azblob.UploadBufferOptions{Metadata: ctPtrMeta(map[string]string{"color": "blue", "Size": "L"})})
	must(t, err)
	e.lsPut("inc", "plain", "src")
	src := e.ctClient("inc").NewBlobClient("src")
	cp, err := e.ctClient("inc").NewBlobClient("copy").StartCopyFromURL(e.ctx, src.URL(), nil)
	must(t, err)
	bb := e.ctClient("inc").NewBlockBlobClient("staged")
	_, err = bb.StageBlock(e.ctx, base64.StdEncoding.EncodeToString([]byte("blk1")), streaming.NopCloser(strings.NewReader("xyz")), nil)
	must(t, err)

	list := func(inc container.ListBlobsInclude) map[string]*container.BlobItem {
		out := map[string]*container.BlobItem{}
		pager := e.ctClient("inc").NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: inc})
		for pager.More() {
			page, err := pager.NextPage(e.ctx)
			must(t, err)
			for _, it := range page.Segment.BlobItems {
				out[*it.Name] = it
			}
		}
		return out
	}

	// Nothing included.
	items := list(container.ListBlobsInclude{})
	if len(items) != 4 || items["staged"] != nil {
		t.Fatalf("plain listing: %d items", len(items))
	}
	for n, it := range items {
		if it.Metadata != nil || it.Properties.CopyID != nil || it.Properties.CopyStatus != nil {
			t.Fatalf("%s: metadata/copy without include", n)
		}
	}

	// Metadata.
	items = list(container.ListBlobsInclude{Metadata: true})
	ctWantMeta(t, items["meta"].Metadata, map[string]string{"color": "blue", "Size": "L"})
	if len(items["plain"].Metadata) != 0 {
		t.Fatalf("plain has metadata %v", ctDeref(items["plain"].Metadata))
	}

	// Copy.
	items = list(container.ListBlobsInclude{Copy: true})
	c := items["copy"].Properties
	if c.CopyID == nil || *c.CopyID != *cp.CopyID || c.CopyStatus == nil || *c.CopyStatus != blob.CopyStatusTypeSuccess ||
		c.CopySource == nil || *c.CopySource != src.URL() || c.CopyProgress == nil || *c.CopyProgress != "11/11" || c.CopyCompletionTime == nil {
		t.Fatalf("copy properties: id %v status %v source %v progress %v completion %v", c.CopyID, c.CopyStatus, c.CopySource, c.CopyProgress, c.CopyCompletionTime)
	}
	if items["plain"].Properties.CopyID != nil {
		t.Fatalf("plain blob has copy properties")
	}

	// Uncommitted blobs.
	items = list(container.ListBlobsInclude{UncommittedBlobs: true})
	if items["staged"] == nil || len(items) != 5 {
		t.Fatalf("uncommitted: %d items, staged %v", len(items), items["staged"])
	}
	// Committing makes it an ordinary blob.
	_, err = bb.CommitBlockList(e.ctx, []string{base64.StdEncoding.EncodeToString([]byte("blk1"))}, nil)
	must(t, err)
	items = list(container.ListBlobsInclude{})
	if items["staged"] == nil || *items["staged"].Properties.ContentLength != 3 {
		t.Fatalf("committed blob not listed")
	}

	// Several at once.
	items = list(container.ListBlobsInclude{Metadata: true, Copy: true, Snapshots: true, UncommittedBlobs: true})
	if len(items) != 5 || items["copy"].Properties.CopyID == nil || len(items["meta"].Metadata) != 2 {
		t.Fatalf("combined includes: %d items", len(items))
	}
}

// A run of records the listing skips (snapshots, without include=snapshots)
// longer than one internal scan batch does not end the listing early.
func TestListBlobsManySnapshots(t *testing.T) {
	e := start(t)
	e.container("many")
	e.lsPut("many", "a", "b")
	const n = 2100
	bc := e.ctClient("many").NewBlobClient("a")
	for range n {
		e.clock.Advance(time.Microsecond) // distinct snapshot times without probing
		_, err := bc.CreateSnapshot(e.ctx, nil)
		must(t, err)
	}
	if got := lsNames(e.lsAll("many", url.Values{}, 0)); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("without snapshots: %q", got)
	}
	all := e.lsAll("many", url.Values{"include": {"snapshots"}}, 0)
	if len(all) != n+2 || all[n].String() != "a" || all[n+1].String() != "b" {
		t.Fatalf("with snapshots: %d entries, tail %q", len(all), lsNames(all[max(0, len(all)-3):]))
	}
	for i := 1; i < n; i++ {
		if all[i-1].Snapshot >= all[i].Snapshot {
			t.Fatalf("snapshots out of order at %d: %q %q", i, all[i-1].Snapshot, all[i].Snapshot)
		}
	}
	// A prefix past the run of snapshots starts after it.
	p := e.lsRaw("many", url.Values{"include": {"snapshots"}, "maxresults": {"3"}, "prefix": {"b"}})
	if len(p.entries) != 1 || p.entries[0].String() != "b" || p.next != "" {
		t.Fatalf("prefix b: %q next %q", lsNames(p.entries), p.next)
	}
}

// Names with characters XML cannot carry come back exactly (sent
// percent-encoded with Encoded="true").
func TestListBlobsControlCharacterNames(t *testing.T) {
	e := start(t)
	e.container("ctl")
	names := []string{"a+b c%20d", "ctl\x01char", "dir\x1f/x", "plain"}
	e.lsPut("ctl", names...)
	var got []string
	pager := e.ctClient("ctl").NewListBlobsFlatPager(nil)
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(t, err)
		for _, it := range page.Segment.BlobItems {
			got = append(got, *it.Name)
		}
	}
	if !reflect.DeepEqual(got, names) {
		t.Fatalf("names: %q, want %q", got, names)
	}
	page, err := e.ctClient("ctl").NewListBlobsHierarchyPager("/", nil).NextPage(e.ctx)
	must(t, err)
	if len(page.Segment.BlobPrefixes) != 1 || *page.Segment.BlobPrefixes[0].Name != "dir\x1f/" {
		t.Fatalf("prefixes: %d", len(page.Segment.BlobPrefixes))
	}
	r := e.svSigned(http.MethodGet, "/ctl?restype=container&comp=list&prefix=plain", nil, nil)
	if !bytes.Contains(r.body, []byte("<Name>plain</Name>")) {
		t.Fatalf("ordinary name encoded: %s", r.body)
	}
}

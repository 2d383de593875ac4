package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

// startVersioning is start with blob versioning on for every account
// (--blob-versioning), on the store backendConfig selects.
func startVersioning(t *testing.T) *env {
	t.Helper()
	a, clk := startAppWith(t, func(c *app.Config) { c.BlobVersioning = true })
	return &env{t: t, app: a, clock: clk, c: client(t, a.BlobURL, app.DevKey), ctx: context.Background()}
}

// listVersions lists the container with include=versions (and snapshots
// when snaps), page by page of size page, and returns "name@version*"
// (the * marking the current version) or "name#snapshot" per item.
func (e *env) listVersions(cont, prefix string, snaps bool, page int32) []string {
	e.t.Helper()
	var out []string
	opts := &container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Versions: true, Snapshots: snaps}}
	if prefix != "" {
		opts.Prefix = &prefix
	}
	if page > 0 {
		opts.MaxResults = &page
	}
	pager := e.c.NewListBlobsFlatPager(cont, opts)
	for pager.More() {
		resp, err := pager.NextPage(e.ctx)
		must(e.t, err)
		if page > 0 && len(resp.Segment.BlobItems) > int(page) {
			e.t.Fatalf("page of %d items, want at most %d", len(resp.Segment.BlobItems), page)
		}
		for _, it := range resp.Segment.BlobItems {
			switch {
			case it.Snapshot != nil && *it.Snapshot != "":
				out = append(out, *it.Name+"#"+*it.Snapshot)
			case it.VersionID != nil:
				s := *it.Name + "@" + *it.VersionID
				if it.IsCurrentVersion != nil && *it.IsCurrentVersion {
					s += "*"
				}
				out = append(out, s)
			default:
				out = append(out, *it.Name)
			}
		}
	}
	return out
}

func (e *env) readVersion(cont, name, vid string) string {
	e.t.Helper()
	bc, err := e.c.ServiceClient().NewContainerClient(cont).NewBlobClient(name).WithVersionID(vid)
	must(e.t, err)
	resp, err := bc.DownloadStream(e.ctx, nil)
	must(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(e.t, err)
	return string(b)
}

// TestVersioningWritesMakeVersions: each write that replaces content or
// metadata returns a new, strictly greater x-ms-version-id and keeps the
// previous state readable by versionid=; writes Azure documents as not
// versioning (Put Block, Set Blob Properties, Set Blob Tags, Set Blob
// Tier) keep the current id; a refused conditional write makes no
// version.
func TestVersioningWritesMakeVersions(t *testing.T) {
	e := startVersioning(t)
	e.container("vcver")
	cc := e.c.ServiceClient().NewContainerClient("vcver")
	bb := cc.NewBlockBlobClient("b")
	var ids []string
	up := func(body string) *azcore.ETag {
		resp, err := bb.UploadBuffer(e.ctx, []byte(body), nil)
		must(t, err)
		if resp.VersionID == nil {
			t.Fatal("Put Blob answered no x-ms-version-id")
		}
		ids = append(ids, *resp.VersionID)
		return resp.ETag
	}
	up("one")
	etag2 := up("two")
	// The version id looks like Azure's: RFC 3339, 7 fractional digits.
	if _, err := time.Parse("2006-01-02T15:04:05.0000000Z", ids[0]); err != nil {
		t.Fatalf("version id %q: %v", ids[0], err)
	}
	// A failed conditional Put: 412, no version.
	_, err := bb.Upload(e.ctx, streamOf("lost"), &blockblob.UploadOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag(`"0x1"`))}}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = bb.Upload(e.ctx, streamOf("lost"), &blockblob.UploadOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETag("*"))}}})
	wantCode(t, err, http.StatusConflict, bloberror.BlobAlreadyExists)
	// Set Blob Metadata makes a version.
	md, err := bb.SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v")}, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: etag2}}})
	must(t, err)
	if md.VersionID == nil {
		t.Fatal("Set Blob Metadata answered no version id")
	}
	ids = append(ids, *md.VersionID)
	// These do not.
	_, err = bb.SetHTTPHeaders(e.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain")}, nil)
	must(t, err)
	_, err = bb.SetTags(e.ctx, map[string]string{"t": "1"}, nil)
	must(t, err)
	_, err = bb.SetTier(e.ctx, blob.AccessTierCool, nil)
	must(t, err)
	_, err = bb.StageBlock(e.ctx, "AAAA", streamOf("blk"), nil)
	must(t, err)
	p, err := bb.GetProperties(e.ctx, nil)
	must(t, err)
	if p.VersionID == nil || *p.VersionID != ids[2] || p.IsCurrentVersion == nil || !*p.IsCurrentVersion {
		t.Fatalf("current version %v (current %v), want %s", p.VersionID, p.IsCurrentVersion, ids[2])
	}
	// Put Block List makes one.
	cl, err := bb.CommitBlockList(e.ctx, []string{"AAAA"}, nil)
	must(t, err)
	if cl.VersionID == nil {
		t.Fatal("Put Block List answered no version id")
	}
	ids = append(ids, *cl.VersionID)
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("version ids not strictly increasing: %v", ids)
		}
	}
	// Get Block List of the version Put Block List replaced: no blocks.
	bl, err := must2(bb.WithVersionID(ids[2])).GetBlockList(e.ctx, blockblob.BlockListTypeAll, nil)
	must(t, err)
	if len(bl.CommittedBlocks) != 0 || len(bl.UncommittedBlocks) != 0 {
		t.Fatalf("version %s block list: %d committed, %d uncommitted", ids[2], len(bl.CommittedBlocks), len(bl.UncommittedBlocks))
	}
	bl, err = bb.GetBlockList(e.ctx, blockblob.BlockListTypeAll, nil)
	must(t, err)
	if len(bl.CommittedBlocks) != 1 {
		t.Fatalf("current block list: %d committed", len(bl.CommittedBlocks))
	}
	want := []string{"one", "two", "two", "blk"}
	for i, id := range ids {
		if got := e.readVersion("vcver", "b", id); got != want[i] {
			t.Fatalf("version %d (%s) reads %q, want %q", i, id, got, want[i])
		}
	}
	// A previous version reports itself as not current, with its own
	// metadata (none before Set Blob Metadata).
	vc, err := bb.WithVersionID(ids[1])
	must(t, err)
	vp, err := vc.GetProperties(e.ctx, nil)
	must(t, err)
	if vp.IsCurrentVersion == nil || *vp.IsCurrentVersion || len(vp.Metadata) != 0 || *vp.VersionID != ids[1] {
		t.Fatalf("version %s: current %v, metadata %v", ids[1], vp.IsCurrentVersion, vp.Metadata)
	}
	vp, err = must2(bb.WithVersionID(ids[2])).GetProperties(e.ctx, nil)
	must(t, err)
	if len(vp.Metadata) != 1 {
		t.Fatalf("version %s metadata %v, want k=v", ids[2], vp.Metadata)
	}
	// The listing holds exactly the acknowledged versions, oldest first,
	// the last one current.
	got := e.listVersions("vcver", "", false, 0)
	var wantList []string
	for i, id := range ids {
		s := "b@" + id
		if i == len(ids)-1 {
			s += "*"
		}
		wantList = append(wantList, s)
	}
	if strings.Join(got, " ") != strings.Join(wantList, " ") {
		t.Fatalf("listing\n got %v\nwant %v", got, wantList)
	}
	// Without include=versions: the blob once.
	pager := cc.NewListBlobsFlatPager(nil)
	resp, err := pager.NextPage(e.ctx)
	must(t, err)
	if len(resp.Segment.BlobItems) != 1 {
		t.Fatalf("plain listing has %d items, want 1", len(resp.Segment.BlobItems))
	}
}

// TestVersioningPreviousVersionsImmutable: a write addressed to a
// previous version is refused (400 InvalidQueryParameterValue), while
// Set Blob Tags and Set Blob Tier may address one, and Get Blob Tags
// reads the version's own tags.
func TestVersioningPreviousVersionsImmutable(t *testing.T) {
	e := startVersioning(t)
	e.container("viver")
	bb := e.c.ServiceClient().NewContainerClient("viver").NewBlockBlobClient("b")
	r1, err := bb.UploadBuffer(e.ctx, []byte("one"), nil)
	must(t, err)
	_, err = bb.UploadBuffer(e.ctx, []byte("two"), nil)
	must(t, err)
	old := must2(bb.WithVersionID(*r1.VersionID))
	_, err = old.SetMetadata(e.ctx, map[string]*string{"a": to.Ptr("b")}, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidQueryParameterValue)
	_, err = old.Upload(e.ctx, streamOf("x"), nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidQueryParameterValue)
	_, err = old.SetTags(e.ctx, map[string]string{"v": "old"}, nil)
	must(t, err)
	tags, err := old.GetTags(e.ctx, nil)
	must(t, err)
	if len(tags.BlobTagSet) != 1 || *tags.BlobTagSet[0].Value != "old" {
		t.Fatalf("version tags %v", tags.BlobTagSet)
	}
	cur, err := bb.GetTags(e.ctx, nil)
	must(t, err)
	if len(cur.BlobTagSet) != 0 {
		t.Fatalf("current version has tags %v, set on the old one only", cur.BlobTagSet)
	}
	_, err = old.SetTier(e.ctx, blob.AccessTierCool, nil)
	must(t, err)
	p, err := old.GetProperties(e.ctx, nil)
	must(t, err)
	if p.AccessTier == nil || *p.AccessTier != "Cool" {
		t.Fatalf("version tier %v, want Cool", p.AccessTier)
	}
	if got := e.readVersion("viver", "b", *r1.VersionID); got != "one" {
		t.Fatalf("version reads %q", got)
	}
	// A version id no version has: 404.
	_, err = must2(bb.WithVersionID("2001-01-01T00:00:00.0000000Z")).GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, "")
}

// TestVersioningDeleteAndRestore: Delete Blob of the base keeps its
// versions (the blob has no current version); Delete Blob with a
// version id removes that version alone; copying a version onto the
// base restores it, as a new version (async Copy Blob and sync Copy
// Blob From URL).
func TestVersioningDeleteAndRestore(t *testing.T) {
	e := startVersioning(t)
	e.container("vdver")
	cc := e.c.ServiceClient().NewContainerClient("vdver")
	bb := cc.NewBlockBlobClient("b")
	var ids []string
	for _, s := range []string{"one", "two", "three"} {
		r, err := bb.UploadBuffer(e.ctx, []byte(s), nil)
		must(t, err)
		ids = append(ids, *r.VersionID)
	}
	_, err := bb.Delete(e.ctx, nil)
	must(t, err)
	_, err = bb.GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, "")
	got := e.listVersions("vdver", "", false, 0)
	if strings.Join(got, " ") != "b@"+ids[0]+" b@"+ids[1]+" b@"+ids[2] {
		t.Fatalf("after deleting the base: %v", got)
	}
	if s := e.readVersion("vdver", "b", ids[2]); s != "three" {
		t.Fatalf("last version reads %q", s)
	}
	// Delete one version.
	_, err = must2(bb.WithVersionID(ids[1])).Delete(e.ctx, nil)
	must(t, err)
	_, err = must2(bb.WithVersionID(ids[1])).GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, "")
	// Restore version one with Copy Blob (the version's URL as source).
	src := bb.URL() + "?versionid=" + ids[0]
	cp, err := bb.StartCopyFromURL(e.ctx, src, nil)
	must(t, err)
	if cp.VersionID == nil || *cp.VersionID <= ids[2] {
		t.Fatalf("copy version id %v, want one after %s", cp.VersionID, ids[2])
	}
	dl, err := bb.DownloadStream(e.ctx, nil)
	must(t, err)
	body, _ := io.ReadAll(dl.Body)
	dl.Body.Close()
	if string(body) != "one" || *dl.VersionID != *cp.VersionID || !*dl.IsCurrentVersion {
		t.Fatalf("restored blob %q version %v", body, dl.VersionID)
	}
	// And version three onto another name with the sync copy.
	sc, err := cc.NewBlockBlobClient("c").CopyFromURL(e.ctx, bb.URL()+"?versionid="+ids[2], nil)
	must(t, err)
	if sc.VersionID == nil {
		t.Fatal("Copy Blob From URL answered no version id")
	}
	if s := e.readVersion("vdver", "c", *sc.VersionID); s != "three" {
		t.Fatalf("copied version reads %q", s)
	}
	got = e.listVersions("vdver", "", false, 0)
	want := []string{"b@" + ids[0], "b@" + ids[2], "b@" + *cp.VersionID + "*", "c@" + *sc.VersionID + "*"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("listing\n got %v\nwant %v", got, want)
	}
}

// TestVersioningListOrderAndPaging: include=versions,snapshots lists per
// name the snapshots, then the previous versions oldest first, then the
// current version; with a delimiter the folded names are one prefix;
// paging by one item gives the same sequence.
func TestVersioningListOrderAndPaging(t *testing.T) {
	e := startVersioning(t)
	e.container("vlver")
	cc := e.c.ServiceClient().NewContainerClient("vlver")
	a := cc.NewBlockBlobClient("a")
	var av []string
	for _, s := range []string{"1", "2"} {
		r, err := a.UploadBuffer(e.ctx, []byte(s), nil)
		must(t, err)
		av = append(av, *r.VersionID)
	}
	snap, err := a.CreateSnapshot(e.ctx, nil)
	must(t, err)
	r, err := a.UploadBuffer(e.ctx, []byte("3"), nil)
	must(t, err)
	av = append(av, *r.VersionID)
	r, err = cc.NewBlockBlobClient("d/x").UploadBuffer(e.ctx, []byte("x"), nil)
	must(t, err)
	dx := *r.VersionID
	r, err = cc.NewBlockBlobClient("z").UploadBuffer(e.ctx, []byte("z"), nil)
	must(t, err)
	z1 := *r.VersionID
	r, err = cc.NewBlockBlobClient("z").UploadBuffer(e.ctx, []byte("zz"), nil)
	must(t, err)
	z2 := *r.VersionID
	want := []string{"a#" + *snap.Snapshot, "a@" + av[0], "a@" + av[1], "a@" + av[2] + "*", "d/x@" + dx + "*", "z@" + z1, "z@" + z2 + "*"}
	for _, page := range []int32{0, 1, 2, 3} {
		got := e.listVersions("vlver", "", true, page)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("page size %d\n got %v\nwant %v", page, got, want)
		}
	}
	// Prefix.
	if got := e.listVersions("vlver", "z", false, 1); strings.Join(got, " ") != "z@"+z1+" z@"+z2+"*" {
		t.Fatalf("prefix z: %v", got)
	}
	// Hierarchy: d/ is one prefix.
	pager := cc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{Include: container.ListBlobsInclude{Versions: true}})
	var names []string
	for pager.More() {
		resp, err := pager.NextPage(e.ctx)
		must(t, err)
		for _, p := range resp.Segment.BlobPrefixes {
			names = append(names, *p.Name)
		}
		for _, it := range resp.Segment.BlobItems {
			names = append(names, *it.Name+"@"+*it.VersionID)
		}
	}
	wantH := []string{"d/", "a@" + av[0], "a@" + av[1], "a@" + av[2], "z@" + z1, "z@" + z2}
	if strings.Join(names, " ") != strings.Join(wantH, " ") {
		t.Fatalf("hierarchy\n got %v\nwant %v", names, wantH)
	}
}

// TestVersioningOff: without versioning no write answers a version id and
// versionid= finds nothing.
func TestVersioningOff(t *testing.T) {
	e := start(t)
	e.container("vover")
	bb := e.c.ServiceClient().NewContainerClient("vover").NewBlockBlobClient("b")
	r, err := bb.UploadBuffer(e.ctx, []byte("one"), nil)
	must(t, err)
	if r.VersionID != nil {
		t.Fatalf("version id %q with versioning off", *r.VersionID)
	}
	p, err := bb.GetProperties(e.ctx, nil)
	must(t, err)
	if p.VersionID != nil || p.IsCurrentVersion != nil {
		t.Fatalf("versioning off: version %v current %v", p.VersionID, p.IsCurrentVersion)
	}
}

// TestVersioningConcurrentOverwrites: several clients overwrite one blob
// at once; every acknowledged version id is listed with its content, and
// the ids are distinct and strictly increasing in listing order.
func TestVersioningConcurrentOverwrites(t *testing.T) {
	e := startVersioning(t)
	e.container("vxver")
	bb := e.c.ServiceClient().NewContainerClient("vxver").NewBlockBlobClient("hot")
	const writers, each = 4, 8
	type ack struct{ id, body string }
	acks := make(chan ack, writers*each)
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		go func(w int) {
			for i := 0; i < each; i++ {
				body := string(rune('a'+w)) + strings.Repeat("x", i)
				r, err := bb.UploadBuffer(e.ctx, []byte(body), nil)
				if err != nil {
					errs <- err
					return
				}
				acks <- ack{*r.VersionID, body}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < writers; w++ {
		must(t, <-errs)
	}
	close(acks)
	bodies := map[string]string{}
	for a := range acks {
		if _, dup := bodies[a.id]; dup {
			t.Fatalf("version id %s acknowledged twice", a.id)
		}
		bodies[a.id] = a.body
	}
	got := e.listVersions("vxver", "", false, 5)
	if len(got) != writers*each {
		t.Fatalf("%d versions listed, %d acknowledged", len(got), writers*each)
	}
	prev := ""
	for _, s := range got {
		id := strings.TrimSuffix(strings.TrimPrefix(s, "hot@"), "*")
		if id <= prev {
			t.Fatalf("ids not increasing: %s after %s", id, prev)
		}
		prev = id
		want, ok := bodies[id]
		if !ok {
			t.Fatalf("listed version %s was never acknowledged", id)
		}
		if b := e.readVersion("vxver", "hot", id); b != want {
			t.Fatalf("version %s reads %q, want %q", id, b, want)
		}
	}
}

func streamOf(s string) io.ReadSeekCloser { return streaming.NopCloser(bytes.NewReader([]byte(s))) }

func must2[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// startAppWith is startApp (Blob only) with tune applied to the config.
func startAppWith(t testing.TB, tune func(*app.Config)) (*app.App, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Now())
	cfg := backendConfig(t)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort = 0, -1, -1, -1
	cfg.Clock, cfg.GCEvery = clk, time.Hour
	tune(&cfg)
	a, err := app.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return a, clk
}

// TestVersioningSoftDelete: with soft delete on, an overwrite makes a
// version (no soft-deleted snapshot); Delete Blob of a version
// soft-deletes it (not read, listed with include=deleted as Deleted);
// Undelete Blob restores it.
func TestVersioningSoftDelete(t *testing.T) {
	e := startVersioning(t)
	e.sdPolicy(true, 7, false)
	e.container("vsoft")
	cc := e.c.ServiceClient().NewContainerClient("vsoft")
	bb := cc.NewBlockBlobClient("b")
	var ids []string
	for _, s := range []string{"one", "two"} {
		r, err := bb.UploadBuffer(e.ctx, []byte(s), nil)
		must(t, err)
		ids = append(ids, *r.VersionID)
	}
	// No soft-deleted snapshot of the overwrite: the version keeps it.
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Deleted: true, Snapshots: true}})
	resp, err := pager.NextPage(e.ctx)
	must(t, err)
	if len(resp.Segment.BlobItems) != 1 {
		t.Fatalf("%d items with include=deleted,snapshots, want the blob alone", len(resp.Segment.BlobItems))
	}
	old := must2(bb.WithVersionID(ids[0]))
	_, err = old.Delete(e.ctx, nil)
	must(t, err)
	_, err = old.GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, "")
	if got := e.listVersions("vsoft", "", false, 0); strings.Join(got, " ") != "b@"+ids[1]+"*" {
		t.Fatalf("after the soft delete: %v", got)
	}
	pager = cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Deleted: true, Versions: true}})
	resp, err = pager.NextPage(e.ctx)
	must(t, err)
	if n := len(resp.Segment.BlobItems); n != 2 || !*resp.Segment.BlobItems[0].Deleted || *resp.Segment.BlobItems[0].VersionID != ids[0] {
		t.Fatalf("include=deleted,versions: %d items, first %+v", n, resp.Segment.BlobItems[0])
	}
	_, err = bb.Undelete(e.ctx, nil)
	must(t, err)
	if s := e.readVersion("vsoft", "b", ids[0]); s != "one" {
		t.Fatalf("undeleted version reads %q", s)
	}
}

// TestVersioningOtherWrites: creating a page or append blob and Put Blob
// From URL make versions; Put Page, Append Block and Snapshot Blob do not
// (Snapshot Blob answers the blob's current version id).
func TestVersioningOtherWrites(t *testing.T) {
	e := startVersioning(t)
	e.container("vother")
	cc := e.c.ServiceClient().NewContainerClient("vother")
	pb := cc.NewPageBlobClient("p")
	pc, err := pb.Create(e.ctx, 1024, nil)
	must(t, err)
	if pc.VersionID == nil {
		t.Fatal("Create page blob answered no version id")
	}
	_, err = pb.UploadPages(e.ctx, streamOf(strings.Repeat("p", 512)), blob.HTTPRange{Offset: 0, Count: 512}, nil)
	must(t, err)
	ab := cc.NewAppendBlobClient("a")
	ac, err := ab.Create(e.ctx, nil)
	must(t, err)
	if ac.VersionID == nil {
		t.Fatal("Create append blob answered no version id")
	}
	_, err = ab.AppendBlock(e.ctx, streamOf("more"), nil)
	must(t, err)
	snap, err := ab.CreateSnapshot(e.ctx, nil)
	must(t, err)
	if snap.VersionID == nil || *snap.VersionID != *ac.VersionID {
		t.Fatalf("Snapshot Blob version id %v, want the current %s", snap.VersionID, *ac.VersionID)
	}
	fu, err := cc.NewBlockBlobClient("u").UploadBlobFromURL(e.ctx, ab.URL(), nil)
	must(t, err)
	if fu.VersionID == nil {
		t.Fatal("Put Blob From URL answered no version id")
	}
	got := e.listVersions("vother", "", false, 0)
	want := []string{"a@" + *ac.VersionID + "*", "p@" + *pc.VersionID + "*", "u@" + *fu.VersionID + "*"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("listing\n got %v\nwant %v", got, want)
	}
	// A second Create replaces the page blob: its first state is a version.
	pc2, err := pb.Create(e.ctx, 512, nil)
	must(t, err)
	vp, err := must2(pb.WithVersionID(*pc.VersionID)).GetProperties(e.ctx, nil)
	must(t, err)
	if *vp.ContentLength != 1024 || *pc2.VersionID <= *pc.VersionID {
		t.Fatalf("previous page blob version: size %d, ids %s then %s", *vp.ContentLength, *pc.VersionID, *pc2.VersionID)
	}
}

// TestVersioningListArrowIsXML: the Arrow listing has no version column,
// so a listing with include=versions that offers Arrow is answered in
// XML, versions and all.
func TestVersioningListArrowIsXML(t *testing.T) {
	e := startVersioning(t)
	e.container("varrow")
	bb := e.c.ServiceClient().NewContainerClient("varrow").NewBlockBlobClient("b")
	for _, s := range []string{"one", "two"} {
		_, err := bb.UploadBuffer(e.ctx, []byte(s), nil)
		must(t, err)
	}
	items, _ := e.arwFlatRaw("varrow", container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Versions: true},
		ResponseFormat: container.StorageResponseFormatArrow})
	if len(items) != 2 || items[0].VersionID == nil || items[1].IsCurrentVersion == nil || !*items[1].IsCurrentVersion {
		t.Fatalf("versions listed: %d items", len(items))
	}
}

// arwFlatRaw lists cont with o and checks every page is XML.
func (e *env) arwFlatRaw(cont string, o container.ListBlobsFlatOptions) ([]*container.BlobItem, int) {
	e.t.Helper()
	var out []*container.BlobItem
	pages := 0
	pager := e.c.ServiceClient().NewContainerClient(cont).NewListBlobsFlatPager(&o)
	for pager.More() {
		ctx, raw := e.arwCapture()
		page, err := pager.NextPage(ctx)
		must(e.t, err)
		e.arwWantCT(*raw, false)
		pages++
		out = append(out, page.Segment.BlobItems...)
	}
	return out, pages
}

// TestVersioningDeletedWithVersions: include=deletedwithversions lists a
// blob whose base was deleted but whose versions remain, once, with
// HasVersionsOnly (azblob's recorded
// TestContainerListBlobsIncludeTypeDeletedWithVersion), a live blob as
// usual, paged and under a delimiter alike.
func TestVersioningDeletedWithVersions(t *testing.T) {
	e := startVersioning(t)
	e.container("vdwv")
	cc := e.c.ServiceClient().NewContainerClient("vdwv")
	for _, n := range []string{"a", "gone", "gone2", "d/gone", "live"} {
		for _, s := range []string{"1", "2"} {
			_, err := cc.NewBlockBlobClient(n).UploadBuffer(e.ctx, []byte(s), nil)
			must(t, err)
		}
	}
	for _, n := range []string{"gone", "gone2", "d/gone"} {
		_, err := cc.NewBlockBlobClient(n).Delete(e.ctx, nil)
		must(t, err)
	}
	list := func(page int32, delim bool) []string {
		var out []string
		inc := container.ListBlobsInclude{DeletedWithVersions: true}
		add := func(items []*container.BlobItem, prefixes []*container.BlobPrefix) {
			for _, p := range prefixes {
				out = append(out, *p.Name)
			}
			for _, it := range items {
				s := *it.Name
				if it.HasVersionsOnly != nil && *it.HasVersionsOnly {
					s += "(versions only)"
				}
				out = append(out, s)
			}
		}
		if delim {
			pager := cc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{Include: inc, MaxResults: &page})
			for pager.More() {
				r, err := pager.NextPage(e.ctx)
				must(t, err)
				add(r.Segment.BlobItems, r.Segment.BlobPrefixes)
			}
			return out
		}
		pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: inc, MaxResults: &page})
		for pager.More() {
			r, err := pager.NextPage(e.ctx)
			must(t, err)
			add(r.Segment.BlobItems, nil)
		}
		return out
	}
	want := "a d/gone(versions only) gone(versions only) gone2(versions only) live"
	for _, page := range []int32{1, 2, 100} {
		if got := strings.Join(list(page, false), " "); got != want {
			t.Fatalf("page %d\n got %s\nwant %s", page, got, want)
		}
	}
	if got := strings.Join(list(100, true), " "); got != "d/ a gone(versions only) gone2(versions only) live" {
		t.Fatalf("hierarchy: %s", got)
	}
	// Without the include: the live blobs only.
	pager := cc.NewListBlobsFlatPager(nil)
	r, err := pager.NextPage(e.ctx)
	must(t, err)
	if len(r.Segment.BlobItems) != 2 {
		t.Fatalf("%d live blobs listed, want 2", len(r.Segment.BlobItems))
	}
}

// TestVersioningPermanentDelete: with AllowPermanentDelete, Delete Blob
// deletetype=permanent removes a soft-deleted version for good (Undelete
// no longer brings it back); a live version is refused 409.
func TestVersioningPermanentDelete(t *testing.T) {
	e := startVersioning(t)
	e.sdPolicy(true, 7, true)
	e.container("vperm")
	bb := e.c.ServiceClient().NewContainerClient("vperm").NewBlockBlobClient("b")
	var ids []string
	for _, s := range []string{"one", "two", "three"} {
		r, err := bb.UploadBuffer(e.ctx, []byte(s), nil)
		must(t, err)
		ids = append(ids, *r.VersionID)
	}
	perm := &blob.DeleteOptions{BlobDeleteType: to.Ptr(blob.DeleteTypePermanent)}
	_, err := must2(bb.WithVersionID(ids[1])).Delete(e.ctx, perm)
	wantCode(t, err, http.StatusConflict, bloberror.InvalidOperation)
	for _, id := range ids[:2] {
		_, err = must2(bb.WithVersionID(id)).Delete(e.ctx, nil)
		must(t, err)
	}
	_, err = must2(bb.WithVersionID(ids[0])).Delete(e.ctx, perm)
	must(t, err)
	_, err = bb.Undelete(e.ctx, nil)
	must(t, err)
	if got := e.listVersions("vperm", "", false, 0); strings.Join(got, " ") != "b@"+ids[1]+" b@"+ids[2]+"*" {
		t.Fatalf("after permanent delete and undelete: %v", got)
	}
}

package e2e

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
)

// btRanges lists a page blob's page ranges as "start-end" strings.
func (e *env) btRanges(pb *pageblob.Client, o *pageblob.GetPageRangesOptions) string {
	e.t.Helper()
	var out []string
	pager := pb.NewGetPageRangesPager(o)
	for pager.More() {
		resp, err := pager.NextPage(e.ctx)
		must(e.t, err)
		for _, r := range resp.PageRange {
			out = append(out, fmt.Sprintf("%d-%d", *r.Start, *r.End))
		}
		if len(resp.ClearRange) != 0 {
			e.t.Fatalf("Get Page Ranges returned clear ranges")
		}
	}
	return fmt.Sprint(out)
}

// btDiff lists a page-range diff as "page ..." and "clear ..." strings.
func (e *env) btDiff(pb *pageblob.Client, o *pageblob.GetPageRangesDiffOptions) (pages, clears string) {
	e.t.Helper()
	var p, c []string
	pager := pb.NewGetPageRangesDiffPager(o)
	for pager.More() {
		resp, err := pager.NextPage(e.ctx)
		must(e.t, err)
		for _, r := range resp.PageRange {
			p = append(p, fmt.Sprintf("%d-%d", *r.Start, *r.End))
		}
		for _, r := range resp.ClearRange {
			c = append(c, fmt.Sprintf("%d-%d", *r.Start, *r.End))
		}
	}
	return fmt.Sprint(p), fmt.Sprint(c)
}

func btWantString(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %s, want %s", what, got, want)
	}
}

func (e *env) btUpload(pb *pageblob.Client, off int64, data []byte) {
	e.t.Helper()
	_, err := pb.UploadPages(e.ctx, btBody(data), blob.HTTPRange{Offset: off, Count: int64(len(data))}, nil)
	must(e.t, err)
}

func TestPageCreateAndSize(t *testing.T) {
	e := start(t)
	cc := e.btContainer("pages")
	for _, size := range []int64{1000, 511, 513} {
		_, err := cc.NewPageBlobClient("bad").Create(e.ctx, size, nil)
		wantCode(t, err, 400, bloberror.InvalidHeaderValue)
	}
	_, err := cc.NewPageBlobClient("bad").GetProperties(e.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)

	pb := cc.NewPageBlobClient("p")
	_, err = pb.Create(e.ctx, 4096, &pageblob.CreateOptions{SequenceNumber: to.Ptr(int64(7))})
	must(t, err)
	p, err := pb.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ContentLength != 4096 || *p.BlobType != blob.BlobTypePageBlob || *p.BlobSequenceNumber != 7 {
		t.Fatalf("properties: size %d type %s seq %d", *p.ContentLength, *p.BlobType, *p.BlobSequenceNumber)
	}
	// A new page blob reads as zeros and has no page ranges.
	btEqual(t, "new blob", e.btRead(pb.BlobClient()), make([]byte, 4096))
	btWantString(t, "ranges of new blob", e.btRanges(pb, nil), "[]")
	// A zero-size page blob is valid.
	_, err = cc.NewPageBlobClient("empty").Create(e.ctx, 0, nil)
	must(t, err)
}

func TestPageWriteClearRanges(t *testing.T) {
	e := start(t)
	cc := e.btContainer("pages")
	pb := cc.NewPageBlobClient("p")
	const size = 8192
	_, err := pb.Create(e.ctx, size, nil)
	must(t, err)
	want := make([]byte, size)
	write := func(off int64, d []byte) {
		t.Helper()
		e.btUpload(pb, off, d)
		copy(want[off:], d)
	}
	a := btFill(1024, 1)
	write(512, a)
	btWantString(t, "one write", e.btRanges(pb, nil), "[512-1535]")
	// An adjacent write merges; a distant one does not.
	write(1536, btFill(512, 2))
	write(4096, btFill(512, 3))
	btWantString(t, "merged", e.btRanges(pb, nil), "[512-2047 4096-4607]")
	// An overwrite inside an existing range changes content, not ranges.
	write(1024, btFill(512, 4))
	btWantString(t, "overwrite", e.btRanges(pb, nil), "[512-2047 4096-4607]")
	btEqual(t, "content with holes", e.btRead(pb.BlobClient()), want)

	// Clear the middle of a range.
	_, err = pb.ClearPages(e.ctx, blob.HTTPRange{Offset: 1024, Count: 512}, nil)
	must(t, err)
	clear(want[1024:1536])
	btWantString(t, "after clear", e.btRanges(pb, nil), "[512-1023 1536-2047 4096-4607]")
	btEqual(t, "content after clear", e.btRead(pb.BlobClient()), want)
	// Clearing an unwritten range is fine and changes nothing.
	_, err = pb.ClearPages(e.ctx, blob.HTTPRange{Offset: 6144, Count: 1024}, nil)
	must(t, err)
	btWantString(t, "clear of a hole", e.btRanges(pb, nil), "[512-1023 1536-2047 4096-4607]")

	// Ranged Get Page Ranges clips to the range.
	btWantString(t, "ranged", e.btRanges(pb, &pageblob.GetPageRangesOptions{Range: blob.HTTPRange{Offset: 1536, Count: 3072}}), "[1536-2047 4096-4607]")

	// Sparse reads: a ranged download inside a hole is zeros.
	resp, err := pb.DownloadStream(e.ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 2048, Count: 2048}})
	must(t, err)
	buf := new(bytes.Buffer)
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	must(t, err)
	btEqual(t, "hole", buf.Bytes(), make([]byte, 2048))

	// A large write (chunk store path) over existing pages.
	big := btFill(6144, 9)
	write(1024, big)
	btWantString(t, "after big write", e.btRanges(pb, nil), "[512-7167]")
	btEqual(t, "content after big write", e.btRead(pb.BlobClient()), want)
	big2 := btFill(128<<10, 11)
	_, err = pb.Resize(e.ctx, 256<<10, nil)
	must(t, err)
	want = append(want, make([]byte, 256<<10-size)...)
	write(64<<10, big2)
	btEqual(t, "content after chunk write", e.btRead(pb.BlobClient()), want)
	btWantString(t, "ranges after chunk write", e.btRanges(pb, nil), "[512-7167 65536-196607]")
}

func TestPageRangeErrors(t *testing.T) {
	e := start(t)
	cc := e.btContainer("pages")
	pb := cc.NewPageBlobClient("p")
	_, err := pb.Create(e.ctx, 4096, nil)
	must(t, err)
	d := btFill(512, 1)
	for _, r := range []blob.HTTPRange{
		{Offset: 100, Count: 512},  // unaligned start
		{Offset: 4096, Count: 512}, // past the end
		{Offset: 3584, Count: 1024},
	} {
		body := btFill(int(r.Count), 1)
		_, err := pb.UploadPages(e.ctx, btBody(body), r, nil)
		wantCode(t, err, 416, bloberror.InvalidPageRange)
		_, err = pb.ClearPages(e.ctx, r, nil)
		wantCode(t, err, 416, bloberror.InvalidPageRange)
	}
	// Unaligned end (a body of the same length).
	_, err = pb.UploadPages(e.ctx, btBody(btFill(500, 1)), blob.HTTPRange{Offset: 0, Count: 500}, nil)
	wantCode(t, err, 416, bloberror.InvalidPageRange)
	_, err = pb.ClearPages(e.ctx, blob.HTTPRange{Offset: 512, Count: 100}, nil)
	wantCode(t, err, 416, bloberror.InvalidPageRange)
	// Body length differs from the range.
	_, err = pb.UploadPages(e.ctx, btBody(btFill(1024, 1)), blob.HTTPRange{Offset: 0, Count: 512}, nil)
	wantCode(t, err, 416, bloberror.InvalidPageRange)
	// Nothing was written.
	btWantString(t, "ranges", e.btRanges(pb, nil), "[]")
	e.btUpload(pb, 3584, d)
	btWantString(t, "last page", e.btRanges(pb, nil), "[3584-4095]")

	// Put Page on a block or append blob.
	_, err = e.c.UploadBuffer(e.ctx, "pages", "block", make([]byte, 1024), nil)
	must(t, err)
	_, err = cc.NewPageBlobClient("block").UploadPages(e.ctx, btBody(d), blob.HTTPRange{Offset: 0, Count: 512}, nil)
	wantCode(t, err, 409, bloberror.InvalidBlobType)
	_, err = cc.NewPageBlobClient("block").ClearPages(e.ctx, blob.HTTPRange{Offset: 0, Count: 512}, nil)
	wantCode(t, err, 409, bloberror.InvalidBlobType)
	_, err = cc.NewPageBlobClient("block").Resize(e.ctx, 512, nil)
	wantCode(t, err, 409, bloberror.InvalidBlobType)
	_, err = cc.NewAppendBlobClient("app").Create(e.ctx, nil)
	must(t, err)
	_, err = cc.NewPageBlobClient("app").UploadPages(e.ctx, btBody(d), blob.HTTPRange{Offset: 0, Count: 512}, nil)
	wantCode(t, err, 409, bloberror.InvalidBlobType)
	pager := cc.NewPageBlobClient("block").NewGetPageRangesPager(nil)
	_, err = pager.NextPage(e.ctx)
	wantCode(t, err, 409, bloberror.InvalidBlobType)
	// Put Page on a missing blob.
	_, err = cc.NewPageBlobClient("missing").UploadPages(e.ctx, btBody(d), blob.HTTPRange{Offset: 0, Count: 512}, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
}

func TestPageResize(t *testing.T) {
	e := start(t)
	cc := e.btContainer("pages")
	pb := cc.NewPageBlobClient("p")
	_, err := pb.Create(e.ctx, 4096, nil)
	must(t, err)
	a, b := btFill(1024, 5), btFill(1024, 6)
	e.btUpload(pb, 512, a)
	e.btUpload(pb, 2560, b)

	// Shrink through the middle of a range: data past the size is gone.
	_, err = pb.Resize(e.ctx, 1024, nil)
	must(t, err)
	p, err := pb.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ContentLength != 1024 {
		t.Fatalf("size %d", *p.ContentLength)
	}
	btWantString(t, "after shrink", e.btRanges(pb, nil), "[512-1023]")
	want := append(make([]byte, 512), a[:512]...)
	btEqual(t, "after shrink", e.btRead(pb.BlobClient()), want)

	// Grow: the new space reads as zeros, the old data does not come back.
	_, err = pb.Resize(e.ctx, 8192, nil)
	must(t, err)
	btWantString(t, "after grow", e.btRanges(pb, nil), "[512-1023]")
	want = append(want, make([]byte, 8192-1024)...)
	btEqual(t, "after grow", e.btRead(pb.BlobClient()), want)
	e.btUpload(pb, 7680, b[:512])
	copy(want[7680:], b[:512])
	btEqual(t, "write after grow", e.btRead(pb.BlobClient()), want)

	// Unaligned sizes are rejected.
	_, err = pb.Resize(e.ctx, 1000, nil)
	wantCode(t, err, 400, bloberror.InvalidHeaderValue)
	// Resize to zero drops everything.
	_, err = pb.Resize(e.ctx, 0, nil)
	must(t, err)
	btWantString(t, "after resize to 0", e.btRanges(pb, nil), "[]")
	_, err = pb.Resize(e.ctx, 1024, nil)
	must(t, err)
	btEqual(t, "regrown", e.btRead(pb.BlobClient()), make([]byte, 1024))
}

func TestPageSequenceNumbers(t *testing.T) {
	e := start(t)
	cc := e.btContainer("pages")
	pb := cc.NewPageBlobClient("p")
	_, err := pb.Create(e.ctx, 2048, &pageblob.CreateOptions{SequenceNumber: to.Ptr(int64(5))})
	must(t, err)
	seq := func() int64 {
		t.Helper()
		p, err := pb.GetProperties(e.ctx, nil)
		must(t, err)
		return *p.BlobSequenceNumber
	}
	set := func(action pageblob.SequenceNumberActionType, n *int64, want int64) {
		t.Helper()
		resp, err := pb.UpdateSequenceNumber(e.ctx, &pageblob.UpdateSequenceNumberOptions{ActionType: &action, SequenceNumber: n})
		must(t, err)
		if *resp.BlobSequenceNumber != want || seq() != want {
			t.Fatalf("%s %v: response %d, stored %d, want %d", action, n, *resp.BlobSequenceNumber, seq(), want)
		}
	}
	set(pageblob.SequenceNumberActionTypeMax, to.Ptr(int64(3)), 5)
	set(pageblob.SequenceNumberActionTypeMax, to.Ptr(int64(10)), 10)
	set(pageblob.SequenceNumberActionTypeUpdate, to.Ptr(int64(2)), 2)
	set(pageblob.SequenceNumberActionTypeIncrement, nil, 3)
	set(pageblob.SequenceNumberActionTypeIncrement, nil, 4)

	d := btFill(512, 1)
	cond := func(c pageblob.SequenceNumberAccessConditions) *pageblob.UploadPagesOptions {
		return &pageblob.UploadPagesOptions{SequenceNumberAccessConditions: &c}
	}
	// Sequence number is 4.
	for _, c := range []pageblob.SequenceNumberAccessConditions{
		{IfSequenceNumberEqualTo: to.Ptr(int64(3))},
		{IfSequenceNumberLessThan: to.Ptr(int64(4))},
		{IfSequenceNumberLessThanOrEqualTo: to.Ptr(int64(3))},
		{IfSequenceNumberEqualTo: to.Ptr(int64(4)), IfSequenceNumberLessThan: to.Ptr(int64(2))},
	} {
		_, err := pb.UploadPages(e.ctx, btBody(d), blob.HTTPRange{Offset: 0, Count: 512}, cond(c))
		wantCode(t, err, 412, bloberror.SequenceNumberConditionNotMet)
		_, err = pb.ClearPages(e.ctx, blob.HTTPRange{Offset: 0, Count: 512}, &pageblob.ClearPagesOptions{SequenceNumberAccessConditions: &c})
		wantCode(t, err, 412, bloberror.SequenceNumberConditionNotMet)
	}
	btWantString(t, "ranges after failed writes", e.btRanges(pb, nil), "[]")
	for i, c := range []pageblob.SequenceNumberAccessConditions{
		{IfSequenceNumberEqualTo: to.Ptr(int64(4))},
		{IfSequenceNumberLessThan: to.Ptr(int64(5))},
		{IfSequenceNumberLessThanOrEqualTo: to.Ptr(int64(4))},
		{IfSequenceNumberEqualTo: to.Ptr(int64(4)), IfSequenceNumberLessThan: to.Ptr(int64(5)), IfSequenceNumberLessThanOrEqualTo: to.Ptr(int64(4))},
	} {
		resp, err := pb.UploadPages(e.ctx, btBody(d), blob.HTTPRange{Offset: int64(i) * 512, Count: 512}, cond(c))
		must(t, err)
		if *resp.BlobSequenceNumber != 4 {
			t.Fatalf("Put Page sequence number %d", *resp.BlobSequenceNumber)
		}
	}
	btWantString(t, "ranges after writes", e.btRanges(pb, nil), "[0-2047]")
	// Writes do not change the sequence number.
	if seq() != 4 {
		t.Fatalf("seq %d", seq())
	}
	// Sequence number actions need a page blob.
	_, err = e.c.UploadBuffer(e.ctx, "pages", "block", []byte("x"), nil)
	must(t, err)
	_, err = cc.NewPageBlobClient("block").UpdateSequenceNumber(e.ctx, &pageblob.UpdateSequenceNumberOptions{
		ActionType: to.Ptr(pageblob.SequenceNumberActionTypeIncrement)})
	wantCode(t, err, 409, bloberror.InvalidBlobType)
}

func TestPageSnapshotDiff(t *testing.T) {
	e := start(t)
	cc := e.btContainer("pages")
	pb := cc.NewPageBlobClient("p")
	_, err := pb.Create(e.ctx, 8192, nil)
	must(t, err)
	e.btUpload(pb, 0, btFill(2048, 1))
	e.btUpload(pb, 4096, btFill(1024, 2))
	s1, err := pb.CreateSnapshot(e.ctx, nil)
	must(t, err)
	snap1 := *s1.Snapshot

	// No change since the snapshot: an empty diff.
	pages, clears := e.btDiff(pb, &pageblob.GetPageRangesDiffOptions{PrevSnapshot: &snap1})
	btWantString(t, "empty diff pages", pages, "[]")
	btWantString(t, "empty diff clears", clears, "[]")

	// Overwrite part of a range, write a new range, clear parts of both
	// old ranges.
	e.btUpload(pb, 1024, btFill(512, 3))
	e.btUpload(pb, 6144, btFill(1024, 4))
	_, err = pb.ClearPages(e.ctx, blob.HTTPRange{Offset: 0, Count: 512}, nil)
	must(t, err)
	_, err = pb.ClearPages(e.ctx, blob.HTTPRange{Offset: 4608, Count: 512}, nil)
	must(t, err)
	// Clearing an area that was a hole in the snapshot is no change.
	_, err = pb.ClearPages(e.ctx, blob.HTTPRange{Offset: 7680, Count: 512}, nil)
	must(t, err)
	btWantString(t, "ranges now", e.btRanges(pb, nil), "[512-2047 4096-4607 6144-7167]")

	pages, clears = e.btDiff(pb, &pageblob.GetPageRangesDiffOptions{PrevSnapshot: &snap1})
	btWantString(t, "diff pages", pages, "[1024-1535 6144-7167]")
	btWantString(t, "diff clears", clears, "[0-511 4608-5119]")
	// The snapshot keeps its ranges and content.
	btWantString(t, "snapshot ranges", e.btRanges(pb, &pageblob.GetPageRangesOptions{Snapshot: &snap1}), "[0-2047 4096-5119]")
	sc, err := pb.WithSnapshot(snap1)
	must(t, err)
	want := make([]byte, 8192)
	copy(want, btFill(2048, 1))
	copy(want[4096:], btFill(1024, 2))
	btEqual(t, "snapshot content", e.btRead(sc.BlobClient()), want)

	// Diff between two snapshots.
	s2, err := pb.CreateSnapshot(e.ctx, nil)
	must(t, err)
	snap2 := *s2.Snapshot
	e.btUpload(pb, 2048, btFill(512, 5))
	pages, clears = e.btDiff(pb, &pageblob.GetPageRangesDiffOptions{PrevSnapshot: &snap1, Snapshot: &snap2})
	btWantString(t, "snap diff pages", pages, "[1024-1535 6144-7167]")
	btWantString(t, "snap diff clears", clears, "[0-511 4608-5119]")
	pages, clears = e.btDiff(pb, &pageblob.GetPageRangesDiffOptions{PrevSnapshot: &snap2})
	btWantString(t, "diff since snap2 pages", pages, "[2048-2559]")
	btWantString(t, "diff since snap2 clears", clears, "[]")
	// Ranged diff.
	pages, clears = e.btDiff(pb, &pageblob.GetPageRangesDiffOptions{PrevSnapshot: &snap1, Range: blob.HTTPRange{Offset: 0, Count: 4096}})
	btWantString(t, "ranged diff pages", pages, "[1024-1535 2048-2559]")
	btWantString(t, "ranged diff clears", clears, "[0-511]")

	// Errors: an unknown previous snapshot, a previous snapshot newer
	// than the target.
	missing := "2001-01-01T00:00:00.0000000Z"
	_, err = pb.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{PrevSnapshot: &missing}).NextPage(e.ctx)
	wantCode(t, err, 409, bloberror.PreviousSnapshotNotFound)
	_, err = pb.NewGetPageRangesDiffPager(&pageblob.GetPageRangesDiffOptions{PrevSnapshot: &snap2, Snapshot: &snap1}).NextPage(e.ctx)
	wantCode(t, err, 400, bloberror.PreviousSnapshotCannotBeNewer)
}

package e2e

import (
	"bytes"
	"encoding/binary"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
)

// fidPageRanges lists the page ranges of pb within rng (whole blob when
// rng is zero) as [start, end] pairs.
func fidPageRanges(t *testing.T, b *blobT, pb *pageblob.Client, rng blob.HTTPRange) [][2]int64 {
	t.Helper()
	var out [][2]int64
	pager := pb.NewGetPageRangesPager(&pageblob.GetPageRangesOptions{Range: rng})
	for pager.More() {
		page, err := pager.NextPage(b.ctx)
		must(t, err)
		for _, r := range page.PageRange {
			out = append(out, [2]int64{bxVal(r.Start), bxVal(r.End)})
		}
	}
	return out
}

// TestFidBlobSettlePageRangesMerged: two Put Page calls on adjacent
// ranges (0-511, then 512-1023) read back from Get Page Ranges as one
// range 0-1023; ranges with a gap stay apart. A Range on the request cuts
// the answer to it, as in the azure-sdk-for-js recording "getPageRanges"
// (the same two writes; x-ms-range 0-511 answers 0-511 and 512-1023
// answers 512-1023). The Get Page Ranges reference promises
// non-overlapping ranges sorted by address; no recorded test splits
// adjacent writes.
func TestFidBlobSettlePageRangesMerged(t *testing.T) {
	b := newBlobT(t)
	pb := b.cli.ServiceClient().NewContainerClient(b.cont).NewPageBlobClient("p")
	_, err := pb.Create(b.ctx, 4096, nil)
	must(t, err)
	_, err = pb.UploadPages(b.ctx, bxBody(bytes.Repeat([]byte{'a'}, 512)), blob.HTTPRange{Offset: 0, Count: 512}, nil)
	must(t, err)
	_, err = pb.UploadPages(b.ctx, bxBody(bytes.Repeat([]byte{'b'}, 512)), blob.HTTPRange{Offset: 512, Count: 512}, nil)
	must(t, err)
	if got := fidPageRanges(t, b, pb, blob.HTTPRange{}); len(got) != 1 || got[0] != [2]int64{0, 1023} {
		t.Fatalf("adjacent writes: %v, want [[0 1023]]", got)
	}
	if got := fidPageRanges(t, b, pb, blob.HTTPRange{Offset: 0, Count: 512}); len(got) != 1 || got[0] != [2]int64{0, 511} {
		t.Fatalf("x-ms-range 0-511: %v", got)
	}
	if got := fidPageRanges(t, b, pb, blob.HTTPRange{Offset: 512, Count: 512}); len(got) != 1 || got[0] != [2]int64{512, 1023} {
		t.Fatalf("x-ms-range 512-1023: %v", got)
	}
	// A gap keeps two ranges; filling it joins them.
	_, err = pb.UploadPages(b.ctx, bxBody(bytes.Repeat([]byte{'c'}, 512)), blob.HTTPRange{Offset: 2048, Count: 512}, nil)
	must(t, err)
	if got := fidPageRanges(t, b, pb, blob.HTTPRange{}); len(got) != 2 || got[0] != [2]int64{0, 1023} || got[1] != [2]int64{2048, 2559} {
		t.Fatalf("with a gap: %v", got)
	}
	_, err = pb.UploadPages(b.ctx, bxBody(bytes.Repeat([]byte{'d'}, 1024)), blob.HTTPRange{Offset: 1024, Count: 1024}, nil)
	must(t, err)
	if got := fidPageRanges(t, b, pb, blob.HTTPRange{}); len(got) != 1 || got[0] != [2]int64{0, 2559} {
		t.Fatalf("gap filled: %v", got)
	}
}

// TestFidBlobSettleBlockIDLength: the one-length rule of block ids is
// checked at Put Block against the uncommitted blocks only (Put Block
// reference: "If a block is uploaded with a block ID of a different
// length than the block IDs for any existing uncommitted blocks, the
// service returns error response code 400"): a blob committed with
// 3-byte ids takes a 5-byte id when nothing is staged, and can be
// rewritten with such ids; a list mixing the lengths is still refused.
func TestFidBlobSettleBlockIDLength(t *testing.T) {
	b := newBlobT(t)
	bb := b.bb("ids")
	id := func(s string) string { return btID(s) }
	_, err := bb.StageBlock(b.ctx, id("abc"), bxBody([]byte("one")), nil)
	must(t, err)
	_, err = bb.CommitBlockList(b.ctx, []string{id("abc")}, nil)
	must(t, err)

	// No uncommitted blocks: another length is accepted.
	_, err = bb.StageBlock(b.ctx, id("vwxyz"), bxBody([]byte("two")), nil)
	must(t, err)
	// Now the uncommitted block sets the length.
	_, err = bb.StageBlock(b.ctx, id("def"), bxBody([]byte("x")), nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidBlobOrBlock)
	// A list mixing the committed 3-byte id and the 5-byte one fails and
	// leaves the blob as it was.
	_, err = bb.CommitBlockList(b.ctx, []string{id("abc"), id("vwxyz")}, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidBlockList)
	if got := b.read(bb); string(got) != "one" {
		t.Fatalf("after the refused list: %q", got)
	}
	// The new blocks alone replace the blob.
	_, err = bb.CommitBlockList(b.ctx, []string{id("vwxyz")}, nil)
	must(t, err)
	if got := b.read(bb); string(got) != "two" {
		t.Fatalf("rewritten: %q", got)
	}
	bl, err := bb.GetBlockList(b.ctx, blockblob.BlockListTypeAll, nil)
	must(t, err)
	if len(bl.CommittedBlocks) != 1 || bxVal(bl.CommittedBlocks[0].Name) != id("vwxyz") || len(bl.UncommittedBlocks) != 0 {
		t.Fatalf("block list %+v", bl.BlockList)
	}
}

// TestFidBlobSettleLeaseDuration: Acquire Lease takes 15 to 60 seconds
// or -1; 14, 61 and 0 are 400 InvalidHeaderValue (Lease Blob and Lease
// Container references; azure-sdk-for-net's recorded test
// AcquireLeaseAsync_ErrorDurationTooLarge gets InvalidHeaderValue for a
// too-long duration on a container that was never created, so the value
// is checked before the resource). A fixed lease is not rounded: it
// holds for exactly its duration from the acquire (the service reports no
// expiry time; only its effect is visible).
func TestFidBlobSettleLeaseDuration(t *testing.T) {
	b := newBlobT(t)
	b.put("l", []byte("leased"), nil)
	for _, d := range []string{"14", "61", "0", "-2"} {
		ctx := bxWithHeader(b.ctx, "x-ms-lease-duration", d)
		_, err := b.lc("l", "").AcquireLease(ctx, 15, nil)
		wantCode(t, err, http.StatusBadRequest, bloberror.InvalidHeaderValue)
	}
	b.wantLease("l", lease.StatusTypeUnlocked, lease.StateTypeAvailable, "")
	cl, err := lease.NewContainerClient(b.cli.ServiceClient().NewContainerClient("never-created"), nil)
	must(t, err)
	_, err = cl.AcquireLease(bxWithHeader(b.ctx, "x-ms-lease-duration", "61"), 15, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidHeaderValue)
	_, err = b.lc("never-written", "").AcquireLease(bxWithHeader(b.ctx, "x-ms-lease-duration", "14"), 15, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidHeaderValue)

	// The bounds and -1 are accepted.
	for _, d := range []int32{60, -1} {
		lc := b.lc("l", "")
		_, err := lc.AcquireLease(b.ctx, d, nil)
		must(t, err)
		_, err = lc.ReleaseLease(b.ctx, nil)
		must(t, err)
	}
	lc := b.lc("l", "")
	_, err = lc.AcquireLease(b.ctx, 15, nil)
	must(t, err)
	b.clock.Advance(15*time.Second - time.Millisecond)
	b.wantLeased("l", lease.DurationTypeFixed)
	_, err = b.bb("l").Upload(b.ctx, bxBody([]byte("no lease")), nil)
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.LeaseIDMissing)
	b.clock.Advance(time.Millisecond)
	b.wantLease("l", lease.StatusTypeUnlocked, lease.StateTypeExpired, "")
	b.put("l", []byte("after expiry"), nil)
}

// TestFidBlobSettleCRC64Codes: a malformed x-ms-content-crc64 (not 8
// Base64-encoded bytes) is 400 InvalidCrc64 on Put Blob and Put Block,
// and nothing is written (File's Put Range shares the check; see
// internal/extent TestDigests); and File's Upload Range From URL names the
// values of its Crc64Mismatch as Blob does (UserSpecifiedCrc,
// ServerCalculatedCrc; azure-sdk-for-js recording "stageBlock with
// invalid CRC64 should fail").
func TestFidBlobSettleCRC64Codes(t *testing.T) {
	b := newBlobT(t)
	b.put("keep", []byte("kept"), nil)
	for _, v := range []string{"AAAA", "not base64!", "AAAAAAAAAAAAAA=="} {
		ctx := fidWithHeader(b.ctx, "x-ms-content-crc64", v)
		_, err := b.bb("keep").Upload(ctx, bxBody([]byte("new")), nil)
		wantCode(t, err, http.StatusBadRequest, "InvalidCrc64")
		_, err = b.bb("keep").StageBlock(ctx, "MQ==", bxBody([]byte("new")), nil)
		wantCode(t, err, http.StatusBadRequest, "InvalidCrc64")
	}
	if got := b.read(b.bb("keep")); string(got) != "kept" {
		t.Fatalf("content %q", got)
	}
	bl, err := b.bb("keep").GetBlockList(b.ctx, blockblob.BlockListTypeUncommitted, nil)
	must(t, err)
	if len(bl.UncommittedBlocks) != 0 {
		t.Fatalf("%d blocks staged", len(bl.UncommittedBlocks))
	}

	e := startFile(t)
	s := e.share()
	content := bytes.Repeat([]byte("Hello World!"), 100)
	src := e.mkfile(s, "src", 4096)
	e.put(src, 0, content)
	dst := e.mkfile(s, "dst", 4096)
	srcSAS := fiSourceSAS(t, s, "src", sas.FilePermissions{Read: true})
	_, err = dst.UploadRangeFromURL(e.ctx, srcSAS, 0, 0, int64(len(content)), &file.UploadRangeFromURLOptions{
		SourceContentValidation: file.SourceContentValidationTypeCRC64(binary.LittleEndian.Uint64([]byte{1, 2, 3, 4, 5, 6, 7, 8}))})
	wantFileCode(t, err, http.StatusBadRequest, "Crc64Mismatch")
	msg := err.Error()
	for _, want := range []string{"<UserSpecifiedCrc>AQIDBAUGBwg=</UserSpecifiedCrc>", "<ServerCalculatedCrc>"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("no %s in %s", want, msg)
		}
	}
	if strings.Contains(msg, "Crc64>") {
		t.Fatalf("old detail names in %s", msg)
	}
}

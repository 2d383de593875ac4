package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc64"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
)

func bxCRC64(b []byte) []byte {
	return binary.LittleEndian.AppendUint64(nil, crc64.Checksum(b, crc64.MakeTable(0x9A6C9329AC4BC9B5)))
}

func TestPutBlobFromURL(t *testing.T) {
	b := newBlobT(t)
	data := bxRand(100 << 10)
	b.put("src", data, &blockblob.UploadOptions{
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/src"), BlobContentMD5: bxMD5(data)},
		Metadata:    bxMeta("origin", "src"), Tags: map[string]string{"t": "src"},
	})
	src := b.bb("src").URL()
	var raw *http.Response
	r, err := b.bb("dst").UploadBlobFromURL(policy.WithCaptureResponse(b.ctx, &raw), src, &blockblob.UploadBlobFromURLOptions{Metadata: bxMeta("own", "yes")})
	must(t, err)
	if raw.StatusCode != http.StatusCreated || r.ETag == nil || !bytes.Equal(r.ContentMD5, bxMD5(data)) {
		t.Fatalf("Put Blob From URL: status %d etag %v md5 %x", raw.StatusCode, r.ETag, r.ContentMD5)
	}
	if got := b.read(b.bb("dst")); !bytes.Equal(got, data) {
		t.Fatal("content differs from the source")
	}
	p := b.props(b.bb("dst"))
	bxWantStr(t, "copied Content-Type", p.ContentType, "text/src")
	bxWantMeta(t, p.Metadata, map[string]string{"own": "yes"})
	if p.TagCount != nil || p.CopyID != nil {
		t.Fatalf("tags %v, copy id %v: Put Blob From URL is not a copy", p.TagCount, p.CopyID)
	}
	// The destination is independent of later writes to the source.
	b.put("src", []byte("changed"), nil)
	if got := b.read(b.bb("dst")); !bytes.Equal(got, data) {
		t.Fatal("a write to the source reached the destination")
	}

	// Own properties instead of the source's; tags copied; MD5 checked.
	b.put("src", data, &blockblob.UploadOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/src")}, Tags: map[string]string{"t": "src"}})
	_, err = b.bb("dst2").UploadBlobFromURL(b.ctx, src, &blockblob.UploadBlobFromURLOptions{
		CopySourceBlobProperties: to.Ptr(false), HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/own")},
		CopySourceTags: to.Ptr(blockblob.BlobCopySourceTagsCopy), SourceContentMD5: bxMD5(data),
	})
	must(t, err)
	p = b.props(b.bb("dst2"))
	bxWantStr(t, "own Content-Type", p.ContentType, "text/own")
	if got := b.tags(b.bb("dst2")); got != "t=src" {
		t.Fatalf("copied tags %q", got)
	}
	_, err = b.bb("dst3").UploadBlobFromURL(b.ctx, src, &blockblob.UploadBlobFromURLOptions{SourceContentMD5: bxMD5([]byte("other"))})
	wantCode(t, err, http.StatusBadRequest, bloberror.MD5Mismatch)
	// Destination rules: If-None-Match: * on an existing blob, a lease.
	_, err = b.bb("dst").UploadBlobFromURL(b.ctx, src, &blockblob.UploadBlobFromURLOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}})
	wantCode(t, err, http.StatusConflict, bloberror.BlobAlreadyExists)
	// Source rules: a missing source, an unmet source condition.
	_, err = b.bb("dst4").UploadBlobFromURL(b.ctx, b.bb("nope").URL(), nil)
	wantCode(t, err, http.StatusNotFound, bloberror.CannotVerifyCopySource)
	_, err = b.bb("dst4").UploadBlobFromURL(b.ctx, src, &blockblob.UploadBlobFromURLOptions{SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{SourceIfMatch: to.Ptr(azcore.ETag(`"0x1"`))}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.SourceConditionNotMet)
	_, err = b.bb("dst4").GetProperties(b.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
}

func TestStageBlockFromURL(t *testing.T) {
	b := newBlobT(t)
	data := bxRand(300 << 10)
	b.put("src", data, nil)
	src := b.bb("src").URL()
	id := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	dst := b.bb("dst")
	// Three blocks: two ranges and the whole source.
	r, err := dst.StageBlockFromURL(b.ctx, id("b1"), src, &blockblob.StageBlockFromURLOptions{
		Range: blob.HTTPRange{Offset: 1000, Count: 5000}, SourceContentValidation: blob.SourceContentValidationTypeMD5(bxMD5(data[1000:6000])),
	})
	must(t, err)
	if !bytes.Equal(r.ContentMD5, bxMD5(data[1000:6000])) {
		t.Fatalf("block MD5 %x", r.ContentMD5)
	}
	_, err = dst.StageBlockFromURL(b.ctx, id("b2"), src, &blockblob.StageBlockFromURLOptions{
		Range: blob.HTTPRange{Offset: 200 << 10, Count: 100 << 10}, SourceContentValidation: blob.SourceContentValidationTypeCRC64(bxCRC64(data[200<<10:])),
	})
	must(t, err)
	_, err = dst.StageBlockFromURL(b.ctx, id("b3"), src, nil)
	must(t, err)
	bl, err := dst.GetBlockList(b.ctx, blockblob.BlockListTypeUncommitted, nil)
	must(t, err)
	if len(bl.UncommittedBlocks) != 3 || *bl.UncommittedBlocks[0].Size != 5000 || *bl.UncommittedBlocks[2].Size != int64(len(data)) {
		t.Fatalf("uncommitted blocks: %d", len(bl.UncommittedBlocks))
	}
	_, err = dst.CommitBlockList(b.ctx, []string{id("b2"), id("b1"), id("b3")}, nil)
	must(t, err)
	want := append(append(append([]byte(nil), data[200<<10:]...), data[1000:6000]...), data...)
	if got := b.read(dst); !bytes.Equal(got, want) {
		t.Fatalf("committed content differs (%d bytes, want %d)", len(got), len(want))
	}
	// Errors: a wrong digest, a range past the end, a missing source.
	_, err = dst.StageBlockFromURL(b.ctx, id("b4"), src, &blockblob.StageBlockFromURLOptions{
		Range: blob.HTTPRange{Offset: 0, Count: 10}, SourceContentValidation: blob.SourceContentValidationTypeMD5(bxMD5([]byte("x"))),
	})
	wantCode(t, err, http.StatusBadRequest, bloberror.MD5Mismatch)
	_, err = dst.StageBlockFromURL(b.ctx, id("b4"), src, &blockblob.StageBlockFromURLOptions{Range: blob.HTTPRange{Offset: int64(len(data)) + 10, Count: 10}})
	wantCode(t, err, http.StatusRequestedRangeNotSatisfiable, bloberror.InvalidRange)
	_, err = dst.StageBlockFromURL(b.ctx, id("b4"), b.bb("nope").URL(), nil)
	wantCode(t, err, http.StatusNotFound, bloberror.CannotVerifyCopySource)
	bl, err = dst.GetBlockList(b.ctx, blockblob.BlockListTypeUncommitted, nil)
	must(t, err)
	if len(bl.UncommittedBlocks) != 0 {
		t.Fatalf("a failed Put Block From URL staged a block: %d", len(bl.UncommittedBlocks))
	}
}

func TestAppendBlockFromURL(t *testing.T) {
	b := newBlobT(t)
	data := bxRand(10 << 10)
	b.put("src", data, nil)
	src := b.bb("src").URL()
	ab := b.cli.ServiceClient().NewContainerClient(b.cont).NewAppendBlobClient("app")
	_, err := ab.Create(b.ctx, nil)
	must(t, err)
	_, err = ab.AppendBlock(b.ctx, bxBody([]byte("head:")), nil)
	must(t, err)
	r, err := ab.AppendBlockFromURL(b.ctx, src, &appendblob.AppendBlockFromURLOptions{
		Range: blob.HTTPRange{Offset: 100, Count: 900}, SourceContentValidation: blob.SourceContentValidationTypeMD5(bxMD5(data[100:1000])),
	})
	must(t, err)
	if bxVal(r.BlobAppendOffset) != "5" || bxVal(r.BlobCommittedBlockCount) != 2 {
		t.Fatalf("append offset %s count %d", bxVal(r.BlobAppendOffset), bxVal(r.BlobCommittedBlockCount))
	}
	_, err = ab.AppendBlockFromURL(b.ctx, src, nil) // all of it
	must(t, err)
	want := append(append([]byte("head:"), data[100:1000]...), data...)
	if got := b.read(b.bb("app")); !bytes.Equal(got, want) {
		t.Fatal("appended content differs")
	}
	// The append position condition holds as for Append Block.
	_, err = ab.AppendBlockFromURL(b.ctx, src, &appendblob.AppendBlockFromURLOptions{AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: to.Ptr[int64](3)}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.AppendPositionConditionNotMet)
	_, err = b.cli.ServiceClient().NewContainerClient(b.cont).NewAppendBlobClient("src").AppendBlockFromURL(b.ctx, src, nil)
	wantCode(t, err, http.StatusConflict, bloberror.InvalidBlobType)
}

func TestUploadPagesFromURL(t *testing.T) {
	b := newBlobT(t)
	data := bxRand(8 << 10)
	b.put("src", data, nil)
	src := b.bb("src").URL()
	pb := b.cli.ServiceClient().NewContainerClient(b.cont).NewPageBlobClient("pages")
	_, err := pb.Create(b.ctx, 16<<10, nil)
	must(t, err)
	_, err = pb.UploadPagesFromURL(b.ctx, src, 1024, 4096, 2048, &pageblob.UploadPagesFromURLOptions{SourceContentValidation: blob.SourceContentValidationTypeMD5(bxMD5(data[1024:3072]))})
	must(t, err)
	got := b.read(b.bb("pages"))
	want := make([]byte, 16<<10)
	copy(want[4096:], data[1024:3072])
	if !bytes.Equal(got, want) {
		t.Fatal("page content differs")
	}
	// Unaligned destination, source range of another length.
	_, err = pb.UploadPagesFromURL(b.ctx, src, 0, 100, 512, nil)
	if err == nil {
		t.Fatal("an unaligned page range was accepted")
	}
	_, err = pb.UploadPagesFromURL(bxWithHeader(b.ctx, "x-ms-source-range", "bytes=0-1023"), src, 0, 0, 512, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidHeaderValue)
}

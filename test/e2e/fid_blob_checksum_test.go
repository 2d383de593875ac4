package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
)

// TestFidBlobStoredMD5AnyLength: x-ms-blob-content-md5 is a stored
// property, kept and returned as given whatever its length
// (azure-sdk-for-js "setHTTPHeaders with all parameters set" stores the
// 4 bytes 01020304), on Get Blob Properties, Get Blob and List Blobs.
func TestFidBlobStoredMD5AnyLength(t *testing.T) {
	b := newBlobT(t)
	b.put("m", []byte("Hello World"), nil)
	four := []byte{1, 2, 3, 4}
	_, err := b.bb("m").SetHTTPHeaders(b.ctx, blob.HTTPHeaders{BlobContentMD5: four, BlobContentType: to.Ptr("blobContentType")}, nil)
	must(t, err)
	p := b.props(b.bb("m"))
	if !bytes.Equal(p.ContentMD5, four) || *p.ContentType != "blobContentType" {
		t.Fatalf("Content-MD5 %x, Content-Type %v", p.ContentMD5, p.ContentType)
	}
	r, err := b.bb("m").DownloadStream(b.ctx, nil)
	must(t, err)
	r.Body.Close()
	if !bytes.Equal(r.ContentMD5, four) {
		t.Fatalf("Get Blob Content-MD5 %x", r.ContentMD5)
	}
	page, err := b.cli.ServiceClient().NewContainerClient(b.cont).NewListBlobsFlatPager(nil).NextPage(b.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 1 || !bytes.Equal(page.Segment.BlobItems[0].Properties.ContentMD5, four) {
		t.Fatalf("listed Content-MD5 %x", page.Segment.BlobItems[0].Properties.ContentMD5)
	}
	// Not base64 at all is 400 InvalidMd5 (Common REST API error codes:
	// "The MD5 value specified in the request is invalid").
	_, err = b.bb("m").SetHTTPHeaders(bxWithHeader(b.ctx, "x-ms-blob-content-md5", "not base64!"), blob.HTTPHeaders{}, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidMD5)
}

// TestFidBlobTransactionalChecksums: a malformed Content-MD5 is 400
// InvalidMd5 and Content-MD5 with x-ms-content-crc64 is 400 on Put Blob,
// Put Block, Append Block and Put Page, with nothing written.
func TestFidBlobTransactionalChecksums(t *testing.T) {
	b := newBlobT(t)
	data := []byte("0123456789abcdef")
	sum := md5.Sum(data)
	goodMD5 := base64.StdEncoding.EncodeToString(sum[:])
	crc := base64.StdEncoding.EncodeToString(make([]byte, 8))
	cc := b.cli.ServiceClient().NewContainerClient(b.cont)
	ab := cc.NewAppendBlobClient("ap")
	_, err := ab.Create(b.ctx, nil)
	must(t, err)
	pb := cc.NewPageBlobClient("pg")
	_, err = pb.Create(b.ctx, 1024, nil)
	must(t, err)
	page := bytes.Repeat([]byte("p"), 512)

	do := func(name, h, v string) error {
		ctx := fidWithHeader(b.ctx, h, v)
		if h == "both" {
			ctx = bxWithHeaders(b.ctx, func(hd http.Header) {
				fidSetHeader(hd, "Content-MD5", goodMD5)
				fidSetHeader(hd, "x-ms-content-crc64", crc)
			})
		}
		var err error
		switch name {
		case "putBlob":
			_, err = b.bb("pb").Upload(ctx, bxBody(data), nil)
		case "putBlock":
			_, err = b.bb("blk").StageBlock(ctx, "YmxvY2sx", bxBody(data), nil)
		case "appendBlock":
			_, err = ab.AppendBlock(ctx, bxBody(data), nil)
		case "putPage":
			_, err = pb.UploadPages(ctx, bxBody(page), blob.HTTPRange{Offset: 0, Count: 512}, nil)
		}
		return err
	}
	for _, op := range []string{"putBlob", "putBlock", "appendBlock", "putPage"} {
		for _, bad := range []string{"AAAA", "not-base64", base64.StdEncoding.EncodeToString([]byte("fifteen bytes!!"))} {
			wantCode(t, do(op, "Content-MD5", bad), http.StatusBadRequest, bloberror.InvalidMD5)
		}
		wantCode(t, do(op, "both", ""), http.StatusBadRequest, "BothCrc64AndMd5HeaderPresent")
	}
	_, err = b.bb("pb").GetProperties(b.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	_, err = b.bb("blk").GetBlockList(b.ctx, blockblob.BlockListTypeAll, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	ap, err := ab.GetProperties(b.ctx, nil)
	must(t, err)
	if *ap.ContentLength != 0 {
		t.Fatalf("append blob grew to %d", *ap.ContentLength)
	}
	rs, err := pb.NewGetPageRangesPager(nil).NextPage(b.ctx)
	must(t, err)
	if len(rs.PageRange) != 0 {
		t.Fatalf("pages written: %v", rs.PageRange)
	}
	// Each alone is fine.
	for _, op := range []string{"putBlob", "putBlock", "appendBlock"} {
		must(t, do(op, "Content-MD5", goodMD5))
	}
}

// TestFidBlobPutBlobMD5Headers: on Put Blob, x-ms-blob-content-md5 is
// checked against the content like Content-MD5 and wins over it
// (Azure/azure-storage-ruby#64, answered by the service team: the two are
// interchangeable when creating a block blob); the stored MD5 is the
// content's. Put Blob answers with Content-MD5 and x-ms-content-crc64
// even when no checksum was sent: the azure-sdk-for-js recording
// "setHTTPHeaders with default parameters" has, for "Hello World",
// Content-MD5 sQqNsWTgdUEFt6mb5y4/5Q== and x-ms-content-crc64
// YeJLfssylmU=.
func TestFidBlobPutBlobMD5Headers(t *testing.T) {
	b := newBlobT(t)
	data := []byte("Hello World")
	resp := b.put("h", data, nil)
	if got := base64.StdEncoding.EncodeToString(resp.ContentMD5); got != "sQqNsWTgdUEFt6mb5y4/5Q==" {
		t.Fatalf("Content-MD5 %s", got)
	}
	if got := base64.StdEncoding.EncodeToString(resp.ContentCRC64); got != "YeJLfssylmU=" {
		t.Fatalf("x-ms-content-crc64 %s", got)
	}
	sum := md5.Sum(data)
	wrong := md5.Sum([]byte("other"))
	// A matching x-ms-blob-content-md5 is stored; a wrong one is refused.
	_, err := b.bb("h2").Upload(b.ctx, bxBody(data), &blockblob.UploadOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentMD5: sum[:]}})
	must(t, err)
	if p := b.props(b.bb("h2")); !bytes.Equal(p.ContentMD5, sum[:]) {
		t.Fatalf("stored %x", p.ContentMD5)
	}
	_, err = b.bb("h3").Upload(b.ctx, bxBody(data), &blockblob.UploadOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentMD5: wrong[:]}})
	wantCode(t, err, http.StatusBadRequest, bloberror.MD5Mismatch)
	// x-ms-blob-content-md5 is what is checked when both are sent.
	ctx := fidWithHeader(b.ctx, "Content-MD5", base64.StdEncoding.EncodeToString(wrong[:]))
	_, err = b.bb("h4").Upload(ctx, bxBody(data), &blockblob.UploadOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentMD5: sum[:]}})
	must(t, err)
	// Checked against the content, it must be 128 bits: 400 InvalidMd5
	// ("The MD5 value must be 128 bits and Base64-encoded").
	_, err = b.bb("h5").Upload(b.ctx, bxBody(data), &blockblob.UploadOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentMD5: []byte{1, 2, 3, 4}}})
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidMD5)
	ctx = bxWithHeader(b.ctx, "x-ms-content-crc64", base64.StdEncoding.EncodeToString(resp.ContentCRC64))
	_, err = b.bb("h6").Upload(ctx, bxBody(data), &blockblob.UploadOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentMD5: sum[:]}})
	wantCode(t, err, http.StatusBadRequest, "BothCrc64AndMsMd5HeaderPresent")
	for _, n := range []string{"h3", "h5", "h6"} {
		_, err = b.bb(n).GetProperties(b.ctx, nil)
		wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	}
	// Page and append blobs keep any x-ms-blob-content-md5 as given.
	cc := b.cli.ServiceClient().NewContainerClient(b.cont)
	_, err = cc.NewAppendBlobClient("a").Create(b.ctx, &appendblob.CreateOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentMD5: []byte{9, 9}}})
	must(t, err)
	_, err = cc.NewPageBlobClient("p").Create(b.ctx, 512, &pageblob.CreateOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentMD5: []byte{7}}})
	must(t, err)
	ap, err := cc.NewAppendBlobClient("a").GetProperties(b.ctx, nil)
	must(t, err)
	pp, err := cc.NewPageBlobClient("p").GetProperties(b.ctx, nil)
	must(t, err)
	if !bytes.Equal(ap.ContentMD5, []byte{9, 9}) || !bytes.Equal(pp.ContentMD5, []byte{7}) {
		t.Fatalf("append %x page %x", ap.ContentMD5, pp.ContentMD5)
	}
}

// TestFidBlobCopyFromURLSourceMD5: Copy Blob From URL checks the source
// against x-ms-source-content-md5 and answers with it in Content-MD5
// (azure-sdk-for-go TestCopyBlockBlobFromURL); a wrong one is 400
// Md5Mismatch and copies nothing.
func TestFidBlobCopyFromURLSourceMD5(t *testing.T) {
	b := newBlobT(t)
	data := []byte("copy me, checked")
	b.put("src", data, nil)
	sum := md5.Sum(data)
	src := b.bb("src").URL()
	resp, err := b.bb("dst").CopyFromURL(b.ctx, src, &blob.CopyFromURLOptions{SourceContentMD5: sum[:]})
	must(t, err)
	if !bytes.Equal(resp.ContentMD5, sum[:]) || *resp.CopyStatus != "success" {
		t.Fatalf("Content-MD5 %x status %v", resp.ContentMD5, resp.CopyStatus)
	}
	if !bytes.Equal(b.read(b.bb("dst")), data) {
		t.Fatal("copied content differs")
	}
	wrong := md5.Sum([]byte("x"))
	_, err = b.bb("dst2").CopyFromURL(b.ctx, src, &blob.CopyFromURLOptions{SourceContentMD5: wrong[:]})
	wantCode(t, err, http.StatusBadRequest, bloberror.MD5Mismatch)
	_, err = b.bb("dst2").GetProperties(b.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
}

// fidSetHeader sets a header under the key spelled as given: the SDK's
// Shared Key signer looks standard headers up by their exact spelling
// ("Content-MD5"), not the canonical one.
func fidSetHeader(h http.Header, name, value string) {
	bxDelHeader(h, name)
	h[name] = []string{value}
}

func fidWithHeader(ctx context.Context, name, value string) context.Context {
	return bxWithHeaders(ctx, func(h http.Header) { fidSetHeader(h, name, value) })
}

// TestFidBlobWriteCRC64Echo: Put Block, Put Page and Append Block answer
// x-ms-content-crc64 when the client sent no checksum, as the service
// does in the azure-sdk-for-js recordings: "stageBlock" (10 bytes
// "HelloWorld": 8R2aIe9T07E=) and "verify PagedAsyncIterableIterator for
// listPageRanges" (512 bytes 'a': u661BimQ84c=). With a Content-MD5 the
// answer carries the MD5.
func TestFidBlobWriteCRC64Echo(t *testing.T) {
	b := newBlobT(t)
	crc := func(v []byte) string { return base64.StdEncoding.EncodeToString(v) }
	sb, err := b.bb("blk").StageBlock(b.ctx, "MQ==", bxBody([]byte("HelloWorld")), nil)
	must(t, err)
	if got := crc(sb.ContentCRC64); got != "8R2aIe9T07E=" || sb.ContentMD5 != nil {
		t.Fatalf("Put Block crc64 %q md5 %x", got, sb.ContentMD5)
	}
	cc := b.cli.ServiceClient().NewContainerClient(b.cont)
	pb := cc.NewPageBlobClient("pg")
	_, err = pb.Create(b.ctx, 4096, nil)
	must(t, err)
	up, err := pb.UploadPages(b.ctx, bxBody(bytes.Repeat([]byte("a"), 512)), blob.HTTPRange{Offset: 1024, Count: 512}, nil)
	must(t, err)
	if got := crc(up.ContentCRC64); got != "u661BimQ84c=" {
		t.Fatalf("Put Page crc64 %q", got)
	}
	ab := cc.NewAppendBlobClient("ap")
	_, err = ab.Create(b.ctx, nil)
	must(t, err)
	ar, err := ab.AppendBlock(b.ctx, bxBody([]byte("HelloWorld")), nil)
	must(t, err)
	if got := crc(ar.ContentCRC64); got != "8R2aIe9T07E=" {
		t.Fatalf("Append Block crc64 %q", got)
	}
	sum := md5.Sum([]byte("HelloWorld"))
	sb, err = b.bb("blk").StageBlock(fidWithHeader(b.ctx, "Content-MD5", base64.StdEncoding.EncodeToString(sum[:])), "Mg==", bxBody([]byte("HelloWorld")), nil)
	must(t, err)
	if !bytes.Equal(sb.ContentMD5, sum[:]) || sb.ContentCRC64 != nil {
		t.Fatalf("Put Block with Content-MD5: md5 %x crc64 %x", sb.ContentMD5, sb.ContentCRC64)
	}
}

// TestFidBlobCRC64MismatchDetail: a wrong x-ms-content-crc64 is 400
// Crc64Mismatch whose body names the two values UserSpecifiedCrc and
// ServerCalculatedCrc, as in the azure-sdk-for-js recording "stageBlock
// with invalid CRC64 should fail" ("Hello World!" with AQIDBAUGBwg=:
// the service computed peH8Xsgc5QI=).
func TestFidBlobCRC64MismatchDetail(t *testing.T) {
	b := newBlobT(t)
	ctx := fidWithHeader(b.ctx, "x-ms-content-crc64", "AQIDBAUGBwg=")
	_, err := b.bb("blk").StageBlock(ctx, "MQ==", bxBody([]byte("Hello World!")), nil)
	wantCode(t, err, http.StatusBadRequest, "Crc64Mismatch")
	msg := err.Error()
	for _, want := range []string{"<UserSpecifiedCrc>AQIDBAUGBwg=</UserSpecifiedCrc>", "<ServerCalculatedCrc>peH8Xsgc5QI=</ServerCalculatedCrc>"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("no %s in %s", want, msg)
		}
	}
}

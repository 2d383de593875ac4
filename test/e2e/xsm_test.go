package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc64"
	"io"
	"math/rand"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"

	"github.com/cerulean-storage/cerulean/internal/xsm"
)

func smData(n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(int64(n) + 7)).Read(b)
	return b
}

func smCRC(b []byte) []byte {
	return binary.LittleEndian.AppendUint64(nil, crc64.Checksum(b, azCRC64))
}

// TestStructuredUpload uploads through azblob v1.8.3's structured-message
// CRC64 validation (Put Blob) at several sizes and segment sizes, and
// reads every blob back, plainly and as a structured response: the
// content is stored without its framing, and the answer carries the
// content's CRC64. Before the decoder, every upload was 400
// UnsupportedHeader.
func TestStructuredUpload(t *testing.T) {
	e := start(t)
	e.container("smc")
	cc := e.c.ServiceClient().NewContainerClient("smc")
	for _, n := range []int{0, 1, 4 << 10, 300 << 10, 9 << 20} {
		for _, seg := range []int{0, 1 << 10, 64 << 10} {
			if n == 9<<20 && seg == 1<<10 {
				continue // 9216 segments: covered by the smaller sizes
			}
			name := fmt.Sprintf("b-%d-%d", n, seg)
			data := smData(n)
			bb := cc.NewBlockBlobClient(name)
			resp, err := bb.Upload(e.ctx, btBody(data), &blockblob.UploadOptions{
				TransactionalValidation: blob.TransferValidationTypeComputeStructuredMessageCRC64(seg),
			})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !bytes.Equal(resp.ContentCRC64, smCRC(data)) {
				t.Fatalf("%s: answered CRC64 %x, want %x", name, resp.ContentCRC64, smCRC(data))
			}
			got := smDownload(t, e, bb.BlobClient(), nil)
			if !bytes.Equal(got, data) {
				t.Fatalf("%s: read back %d bytes, want the %d sent", name, len(got), n)
			}
			got = smDownload(t, e, bb.BlobClient(), &blob.DownloadStreamOptions{
				TransactionalValidation: blob.TransferValidationTypeComputeStructuredMessageCRC64(0),
			})
			if !bytes.Equal(got, data) {
				t.Fatalf("%s: structured read back %d bytes, want the %d sent", name, len(got), n)
			}
		}
	}
}

func smDownload(t *testing.T, e *env, b *blob.Client, o *blob.DownloadStreamOptions) []byte {
	t.Helper()
	r, err := b.DownloadStream(e.ctx, o)
	must(t, err)
	defer r.Body.Close()
	got, err := io.ReadAll(r.Body)
	must(t, err)
	// A structured read is answered as one (the SDK then decoded it and
	// checked its CRC64s), a plain read plainly.
	if structured := o != nil && o.TransactionalValidation != nil; structured != (r.StructuredBodyType != nil) {
		t.Fatalf("structured read %v answered x-ms-structured-body %v", structured, r.StructuredBodyType)
	} else if structured && (*r.StructuredBodyType != xsm.HeaderValue || r.StructuredContentLength == nil || *r.StructuredContentLength != int64(len(got))) {
		t.Fatalf("structured read: x-ms-structured-body %q, x-ms-structured-content-length %v for %d bytes", *r.StructuredBodyType, r.StructuredContentLength, len(got))
	}
	return got
}

// TestStructuredBlockAppendPage covers the other Blob writes that take a
// structured body: Put Block (UploadBuffer in blocks, committed), Append
// Block and Put Page.
func TestStructuredBlockAppendPage(t *testing.T) {
	e := start(t)
	e.container("smc")
	cc := e.c.ServiceClient().NewContainerClient("smc")
	sm := blob.TransferValidationTypeComputeStructuredMessageCRC64(2 << 10)

	data := smData(40 << 10)
	bb := cc.NewBlockBlobClient("blocks")
	_, err := bb.UploadBuffer(e.ctx, data, &blockblob.UploadBufferOptions{TransactionalValidation: sm, BlockSize: 8 << 10, Concurrency: 2})
	must(t, err)
	if got := smDownload(t, e, bb.BlobClient(), nil); !bytes.Equal(got, data) {
		t.Fatalf("UploadBuffer: read back %d bytes", len(got))
	}

	ab := cc.NewAppendBlobClient("append")
	_, err = ab.Create(e.ctx, nil)
	must(t, err)
	var all []byte
	for i := 0; i < 3; i++ {
		chunk := smData(5000 + i)
		resp, err := ab.AppendBlock(e.ctx, btBody(chunk), &appendblob.AppendBlockOptions{TransactionalValidation: sm})
		must(t, err)
		if !bytes.Equal(resp.ContentCRC64, smCRC(chunk)) {
			t.Fatalf("AppendBlock answered CRC64 %x", resp.ContentCRC64)
		}
		all = append(all, chunk...)
	}
	if got := smDownload(t, e, ab.BlobClient(), nil); !bytes.Equal(got, all) {
		t.Fatalf("AppendBlock: read back %d bytes, want %d", len(got), len(all))
	}

	pb := cc.NewPageBlobClient("pages")
	_, err = pb.Create(e.ctx, 16<<10, nil)
	must(t, err)
	pages := smData(8 << 10)
	_, err = pb.UploadPages(e.ctx, btBody(pages), blob.HTTPRange{Offset: 4 << 10, Count: 8 << 10}, &pageblob.UploadPagesOptions{TransactionalValidation: sm})
	must(t, err)
	want := make([]byte, 16<<10)
	copy(want[4<<10:], pages)
	if got := smDownload(t, e, pb.BlobClient(), nil); !bytes.Equal(got, want) {
		t.Fatal("UploadPages: pages read back differ")
	}
}

// TestStructuredDownloadRanges reads ranges of a blob as structured
// responses: DownloadStream with a range, and DownloadBuffer in blocks
// (each a ranged Get Blob the SDK decodes and checks).
func TestStructuredDownloadRanges(t *testing.T) {
	e := start(t)
	e.container("smc")
	data := smData(5<<20 + 123)
	bb := e.c.ServiceClient().NewContainerClient("smc").NewBlockBlobClient("big")
	_, err := bb.Upload(e.ctx, btBody(data), nil)
	must(t, err)
	sm := blob.TransferValidationTypeComputeStructuredMessageCRC64(0)
	for _, r := range []blob.HTTPRange{{Offset: 0, Count: 1}, {Offset: 1000, Count: 4 << 20}, {Offset: 4<<20 - 5, Count: 1 << 20}, {Offset: 5 << 20}} {
		got := smDownload(t, e, bb.BlobClient(), &blob.DownloadStreamOptions{Range: r, TransactionalValidation: sm})
		end := int64(len(data))
		if r.Count > 0 {
			end = r.Offset + r.Count
		}
		if !bytes.Equal(got, data[r.Offset:end]) {
			t.Fatalf("range %+v: %d bytes differ", r, len(got))
		}
	}
	buf := make([]byte, len(data))
	n, err := bb.DownloadBuffer(e.ctx, buf, &blob.DownloadBufferOptions{BlockSize: 1 << 20, Concurrency: 3, TransactionalValidation: sm})
	must(t, err)
	if n != int64(len(data)) || !bytes.Equal(buf, data) {
		t.Fatalf("DownloadBuffer: %d bytes, equal %v", n, bytes.Equal(buf, data))
	}
}

// smRawPut sends a Put Blob (block blob) whose body is msg, framed as a
// structured message of contentLen bytes.
func smRawPut(t *testing.T, e *env, path string, msg []byte, hdr map[string]string) *http.Response {
	t.Helper()
	var body io.Reader = bytes.NewReader(msg)
	chunked := hdr["chunked"] != ""
	if chunked {
		body = io.MultiReader(body) // no length: sent chunked
	}
	req, err := http.NewRequest(http.MethodPut, e.app.BlobURL+path, body)
	must(t, err)
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2026-12-06")
	req.Header.Set("x-ms-blob-type", "BlockBlob")
	if !chunked {
		req.Header.Set("Content-Length", strconv.Itoa(len(msg)))
	}
	for k, v := range hdr {
		if k == "chunked" {
			continue
		}
		req.Header.Set(k, v)
	}
	signRaw(req)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestStructuredCorruptRefused sends corrupt, truncated and mislabelled
// structured messages by raw HTTP: each is refused with Azure's code and
// stores nothing, neither a new blob nor over an existing one.
func TestStructuredCorruptRefused(t *testing.T) {
	e := start(t)
	e.container("smc")
	cc := e.c.ServiceClient().NewContainerClient("smc")
	old := []byte("the old content")
	_, err := cc.NewBlockBlobClient("kept").Upload(e.ctx, btBody(old), nil)
	must(t, err)

	data := smData(300 << 10)
	good := xsm.Encode(data, 64<<10)
	sm := map[string]string{"x-ms-structured-body": "XSM/1.0; properties=crc64", "x-ms-structured-content-length": strconv.Itoa(len(data))}
	flip := func(at int) []byte { b := bytes.Clone(good); b[at] ^= 0x40; return b }
	cases := []struct {
		name string
		msg  []byte
		hdr  map[string]string
		code string
	}{
		{"data byte", flip(13 + 10 + 70000), sm, "Crc64Mismatch"},
		{"segment footer", flip(13 + 10 + 64<<10), sm, "Crc64Mismatch"},
		{"trailer", flip(len(good) - 2), sm, "Crc64Mismatch"},
		{"truncated", good[:len(good)-9], sm, "InvalidInput"},
		{"truncated, chunked", good[:len(good)-9], smWith(sm, "chunked", "1"), "InvalidInput"},
		{"trailing byte, chunked", append(bytes.Clone(good), 0), smWith(sm, "chunked", "1"), "InvalidInput"},
		{"corrupt, chunked", flip(13 + 10 + 5), smWith(sm, "chunked", "1"), "Crc64Mismatch"},
		{"wrong content length", good, map[string]string{"x-ms-structured-body": sm["x-ms-structured-body"], "x-ms-structured-content-length": strconv.Itoa(len(data) - 1)}, "InvalidInput"},
		{"no content length", good, map[string]string{"x-ms-structured-body": sm["x-ms-structured-body"]}, "MissingRequiredHeader"},
		{"other version", good, map[string]string{"x-ms-structured-body": "XSM/2.0; properties=crc64", "x-ms-structured-content-length": sm["x-ms-structured-content-length"]}, "InvalidHeaderValue"},
	}
	for _, c := range cases {
		for _, blobName := range []string{"new", "kept"} {
			resp := smRawPut(t, e, "/smc/"+blobName, c.msg, c.hdr)
			if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != c.code {
				t.Fatalf("%s on %s: %d %s, want 400 %s", c.name, blobName, resp.StatusCode, resp.Header.Get("x-ms-error-code"), c.code)
			}
		}
		_, err := cc.NewBlobClient("new").GetProperties(e.ctx, nil)
		wantCode(t, err, 404, bloberror.BlobNotFound)
		if got := smDownload(t, e, cc.NewBlobClient("kept"), nil); !bytes.Equal(got, old) {
			t.Fatalf("%s: the existing blob now holds %q", c.name, got)
		}
	}
	// The good message is stored as its content and acknowledged.
	resp := smRawPut(t, e, "/smc/new", good, sm)
	if resp.StatusCode != 201 || resp.Header.Get("x-ms-structured-body") != xsm.HeaderValue ||
		resp.Header.Get("x-ms-content-crc64") != base64.StdEncoding.EncodeToString(smCRC(data)) {
		t.Fatalf("good message: %d, x-ms-structured-body %q, crc64 %q", resp.StatusCode, resp.Header.Get("x-ms-structured-body"), resp.Header.Get("x-ms-content-crc64"))
	}
	if got := smDownload(t, e, cc.NewBlobClient("new"), nil); !bytes.Equal(got, data) {
		t.Fatal("good message: content differs")
	}
	// And sent chunked, without a Content-Length.
	if resp := smRawPut(t, e, "/smc/chunked", good, smWith(sm, "chunked", "1")); resp.StatusCode != 201 {
		t.Fatalf("good message, chunked: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	if got := smDownload(t, e, cc.NewBlobClient("chunked"), nil); !bytes.Equal(got, data) {
		t.Fatal("good message, chunked: content differs")
	}
}

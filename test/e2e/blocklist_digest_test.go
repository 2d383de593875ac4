package e2e

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// TestPutBlockListRequestDigest: Put Block List answers the digest of
// its request body, the block list (Put Block List, response headers:
// "This header refers to the content of the request, meaning, in this
// case, the list of blocks"): x-ms-content-crc64 when no Content-MD5 was
// sent — the azure-sdk-for-js recording "stageBlockFromURL - destination
// bearer token" commits the body below and gets x-ms-content-crc64
// GFi/o1BSQtU= and no Content-MD5 — and the Content-MD5 when one was.
// A wrong x-ms-content-crc64 is 400 Crc64Mismatch and commits nothing.
func TestPutBlockListRequestDigest(t *testing.T) {
	b := newBlobT(t)
	bb := b.cli.ServiceClient().NewContainerClient(b.cont).NewBlockBlobClient("bl")
	for _, id := range []string{"MQ==", "Mg=="} {
		_, err := bb.StageBlock(b.ctx, id, bxBody([]byte("0123456789")), nil)
		must(t, err)
	}
	body := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><BlockList><Latest>MQ==</Latest><Latest>Mg==</Latest></BlockList>`
	commit := func(h map[string]string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPut, b.app.BlobURL+"/"+b.cont+"/bl?comp=blocklist", strings.NewReader(body))
		must(t, err)
		req.Header.Set("x-ms-version", "2021-02-12")
		req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		req.Header.Set("Content-Length", fmt.Sprint(len(body)))
		for k, v := range h {
			req.Header.Set(k, v)
		}
		signRaw(req)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		return resp
	}
	resp := commit(nil)
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("x-ms-content-crc64") != "GFi/o1BSQtU=" || resp.Header.Get("Content-MD5") != "" {
		t.Fatalf("without Content-MD5: %d crc64 %q md5 %q", resp.StatusCode, resp.Header.Get("x-ms-content-crc64"), resp.Header.Get("Content-MD5"))
	}
	sum := md5.Sum([]byte(body))
	md := base64.StdEncoding.EncodeToString(sum[:])
	for _, id := range []string{"MQ==", "Mg=="} {
		_, err := bb.StageBlock(b.ctx, id, bxBody([]byte("0123456789")), nil)
		must(t, err)
	}
	resp = commit(map[string]string{"Content-MD5": md})
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("Content-MD5") != md || resp.Header.Get("x-ms-content-crc64") != "" {
		t.Fatalf("with Content-MD5: %d md5 %q crc64 %q", resp.StatusCode, resp.Header.Get("Content-MD5"), resp.Header.Get("x-ms-content-crc64"))
	}
	resp = commit(map[string]string{"x-ms-content-crc64": base64.StdEncoding.EncodeToString(make([]byte, 8))})
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "Crc64Mismatch" {
		t.Fatalf("wrong crc64: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	// Through the SDK (the committed blocks again): the answer carries
	// the list's CRC64.
	r, err := bb.CommitBlockList(b.ctx, []string{"MQ==", "Mg=="}, nil)
	must(t, err)
	if len(r.ContentCRC64) != 8 || r.ContentMD5 != nil {
		t.Fatalf("SDK commit: x-ms-content-crc64 %x Content-MD5 %x", r.ContentCRC64, r.ContentMD5)
	}
}

// TestGetBlockListUncommittedOnly: Get Block List of a blob that has
// only uncommitted blocks answers x-ms-blob-content-length 0 (the
// committed blob's length), with the blocks listed.
func TestGetBlockListUncommittedOnly(t *testing.T) {
	b := newBlobT(t)
	bb := b.cli.ServiceClient().NewContainerClient(b.cont).NewBlockBlobClient("staged")
	_, err := bb.StageBlock(b.ctx, "MQ==", bxBody(bytes.Repeat([]byte("x"), 7)), nil)
	must(t, err)
	r, err := bb.GetBlockList(b.ctx, blockblob.BlockListTypeAll, nil)
	must(t, err)
	if r.BlobContentLength == nil || *r.BlobContentLength != 0 {
		t.Fatalf("x-ms-blob-content-length %v", r.BlobContentLength)
	}
	if len(r.UncommittedBlocks) != 1 || len(r.CommittedBlocks) != 0 {
		t.Fatalf("blocks %d uncommitted, %d committed", len(r.UncommittedBlocks), len(r.CommittedBlocks))
	}
}

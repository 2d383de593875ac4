package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// newCPK returns a random customer-provided key as the SDK sends it.
func newCPK(t *testing.T) blob.CPKInfo {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	sum := sha256.Sum256(key)
	return blob.CPKInfo{
		EncryptionKey:       to.Ptr(base64.StdEncoding.EncodeToString(key)),
		EncryptionKeySHA256: to.Ptr(base64.StdEncoding.EncodeToString(sum[:])),
		EncryptionAlgorithm: to.Ptr(blob.EncryptionAlgorithmTypeAES256),
	}
}

// cpkContainer starts an HTTPS server (a key travels over HTTPS only)
// on the store CERULEAN_TEST_BACKEND selects and returns a container
// client of it, and the server's data directory ("" in memory).
func cpkContainer(t *testing.T) (*container.Client, *app.App, string) {
	t.Helper()
	cert, pool := selfSigned(t)
	cfg := backendConfig(t)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort, cfg.SMBPort, cfg.MetricsPort = 0, -1, -1, -1, -1, -1
	cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	a, err := app.Start(cfg)
	must(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(tr.CloseIdleConnections)
	opts := azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: &http.Client{Timeout: 60 * time.Second, Transport: tr}, PerCallPolicies: []policy.Policy{fiHeaderPolicy{}}}
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	cli, err := azblob.NewClientWithSharedKeyCredential(a.BlobURL, cred, &azblob.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = cli.CreateContainer(context.Background(), "cpk", nil)
	must(t, err)
	return cli.ServiceClient().NewContainerClient("cpk"), a, cfg.DataDir
}

// TestCPKBlockBlob: a block blob written with a customer-provided key
// (Put Blob, and Put Block + Put Block List) reads back with the key and
// answers its SHA-256; without the key, or with another, reads, Get Blob
// Properties, Set Blob Metadata and Snapshot Blob are 409
// BlobUsesCustomerSpecifiedEncryption / BlobCustomerSpecifiedEncryptionMismatch
// (the service's codes in the azure-sdk-for-js recordings), a key on a
// blob written without one is 409 BlobDoesNotUseCustomerSpecifiedEncryption,
// List Blobs shows CustomerProvidedKeySha256, a snapshot keeps the key it
// was taken with, and the bytes at rest are not the plaintext.
func TestCPKBlockBlob(t *testing.T) {
	cc, _, dataDir := cpkContainer(t)
	ctx := context.Background()
	k1, k2 := newCPK(t), newCPK(t)
	marker := []byte("cerulean-cpk-plaintext-marker-")
	data := bytes.Repeat(marker, 200000/len(marker)) // over one inline item: a chunk
	bb := cc.NewBlockBlobClient("b")
	up, err := bb.Upload(ctx, bxBody(data), &blockblob.UploadOptions{CPKInfo: &k1})
	must(t, err)
	if up.EncryptionKeySHA256 == nil || *up.EncryptionKeySHA256 != *k1.EncryptionKeySHA256 || up.IsServerEncrypted == nil || !*up.IsServerEncrypted {
		t.Fatalf("Put Blob: x-ms-encryption-key-sha256 %v", up.EncryptionKeySHA256)
	}
	read := func(c blob.Client, k *blob.CPKInfo, r blob.HTTPRange) ([]byte, error) {
		d, err := c.DownloadStream(ctx, &blob.DownloadStreamOptions{CPKInfo: k, Range: r})
		if err != nil {
			return nil, err
		}
		defer d.Body.Close()
		if k != nil && (d.EncryptionKeySHA256 == nil || *d.EncryptionKeySHA256 != *k.EncryptionKeySHA256) {
			t.Fatalf("Get Blob: x-ms-encryption-key-sha256 %v", d.EncryptionKeySHA256)
		}
		return io.ReadAll(d.Body)
	}
	got, err := read(*bb.BlobClient(), &k1, blob.HTTPRange{})
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read with the key: %d bytes, %v", len(got), err)
	}
	got, err = read(*bb.BlobClient(), &k1, blob.HTTPRange{Offset: 70001, Count: 1234})
	if err != nil || !bytes.Equal(got, data[70001:70001+1234]) {
		t.Fatalf("ranged read with the key: %v", err)
	}
	_, err = read(*bb.BlobClient(), nil, blob.HTTPRange{})
	wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
	_, err = read(*bb.BlobClient(), &k2, blob.HTTPRange{})
	wantCode(t, err, http.StatusConflict, "BlobCustomerSpecifiedEncryptionMismatch")
	_, err = bb.GetProperties(ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
	p, err := bb.GetProperties(ctx, &blob.GetPropertiesOptions{CPKInfo: &k1})
	must(t, err)
	if p.EncryptionKeySHA256 == nil || *p.EncryptionKeySHA256 != *k1.EncryptionKeySHA256 || *p.ContentLength != int64(len(data)) {
		t.Fatalf("Get Blob Properties: %v", p.EncryptionKeySHA256)
	}
	_, err = bb.SetMetadata(ctx, map[string]*string{"a": to.Ptr("1")}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
	_, err = bb.SetMetadata(ctx, map[string]*string{"a": to.Ptr("1")}, &blob.SetMetadataOptions{CPKInfo: &k2})
	wantCode(t, err, http.StatusConflict, "BlobCustomerSpecifiedEncryptionMismatch")
	_, err = bb.SetMetadata(ctx, map[string]*string{"a": to.Ptr("1")}, &blob.SetMetadataOptions{CPKInfo: &k1})
	must(t, err)

	// Snapshots keep their own key.
	_, err = bb.CreateSnapshot(ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
	snap, err := bb.CreateSnapshot(ctx, &blob.CreateSnapshotOptions{CPKInfo: &k1})
	must(t, err)
	_, err = bb.Upload(ctx, bxBody([]byte("new content")), &blockblob.UploadOptions{CPKInfo: &k2})
	must(t, err)
	sc, err := bb.BlobClient().WithSnapshot(*snap.Snapshot)
	must(t, err)
	if got, err := read(*sc, &k1, blob.HTTPRange{}); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("snapshot with its key: %v", err)
	}
	_, err = read(*sc, &k2, blob.HTTPRange{})
	wantCode(t, err, http.StatusConflict, "BlobCustomerSpecifiedEncryptionMismatch")
	if got, err := read(*bb.BlobClient(), &k2, blob.HTTPRange{}); err != nil || string(got) != "new content" {
		t.Fatalf("the base blob with its new key: %q %v", got, err)
	}

	// Put Block and Put Block List: blocks are committed with the key
	// they were written with.
	bl := cc.NewBlockBlobClient("blocks")
	for _, id := range []string{"MDA=", "MDE="} {
		_, err := bl.StageBlock(ctx, id, bxBody([]byte("block "+id)), &blockblob.StageBlockOptions{CPKInfo: &k1})
		must(t, err)
	}
	_, err = bl.CommitBlockList(ctx, []string{"MDA=", "MDE="}, &blockblob.CommitBlockListOptions{CPKInfo: &k2})
	wantCode(t, err, http.StatusConflict, "BlobCustomerSpecifiedEncryptionMismatch")
	_, err = bl.CommitBlockList(ctx, []string{"MDA=", "MDE="}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
	cr, err := bl.CommitBlockList(ctx, []string{"MDA=", "MDE="}, &blockblob.CommitBlockListOptions{CPKInfo: &k1})
	must(t, err)
	if cr.EncryptionKeySHA256 == nil || *cr.EncryptionKeySHA256 != *k1.EncryptionKeySHA256 {
		t.Fatalf("Put Block List: %v", cr.EncryptionKeySHA256)
	}
	if got, err := read(*bl.BlobClient(), &k1, blob.HTTPRange{}); err != nil || string(got) != "block MDA=block MDE=" {
		t.Fatalf("committed blocks: %q %v", got, err)
	}

	// A key on a blob written without one.
	plain := cc.NewBlockBlobClient("plain")
	_, err = plain.Upload(ctx, bxBody([]byte("clear")), nil)
	must(t, err)
	_, err = read(*plain.BlobClient(), &k1, blob.HTTPRange{})
	wantCode(t, err, http.StatusConflict, "BlobDoesNotUseCustomerSpecifiedEncryption")

	// List Blobs names each blob's key by its SHA-256.
	page, err := cc.NewListBlobsFlatPager(nil).NextPage(ctx)
	must(t, err)
	keys := map[string]string{}
	for _, it := range page.Segment.BlobItems {
		if it.Properties.CustomerProvidedKeySHA256 != nil {
			keys[*it.Name] = *it.Properties.CustomerProvidedKeySHA256
		}
	}
	if keys["b"] != *k2.EncryptionKeySHA256 || keys["blocks"] != *k1.EncryptionKeySHA256 || keys["plain"] != "" {
		t.Fatalf("listed keys %v", keys)
	}

	// At rest: no file of the data directory holds the plaintext (the
	// snapshot still holds the 200 kB written first).
	noPlaintext(t, dataDir, marker)
}

// TestCPKAppendAndPage: Append Block and Put Page write with the blob's
// key and are refused without it; the content reads back with it.
func TestCPKAppendAndPage(t *testing.T) {
	cc, _, _ := cpkContainer(t)
	ctx := context.Background()
	k1, k2 := newCPK(t), newCPK(t)
	ab := cc.NewAppendBlobClient("a")
	_, err := ab.Create(ctx, &appendblob.CreateOptions{CPKInfo: &k1})
	must(t, err)
	for _, w := range []string{"AAA ", "BBB ", "CCC "} {
		r, err := ab.AppendBlock(ctx, bxBody([]byte(w)), &appendblob.AppendBlockOptions{CPKInfo: &k1})
		must(t, err)
		if r.EncryptionKeySHA256 == nil || *r.EncryptionKeySHA256 != *k1.EncryptionKeySHA256 {
			t.Fatalf("Append Block: %v", r.EncryptionKeySHA256)
		}
	}
	_, err = ab.AppendBlock(ctx, bxBody([]byte("x")), nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
	_, err = ab.AppendBlock(ctx, bxBody([]byte("x")), &appendblob.AppendBlockOptions{CPKInfo: &k2})
	wantCode(t, err, http.StatusConflict, "BlobCustomerSpecifiedEncryptionMismatch")
	d, err := ab.DownloadStream(ctx, &blob.DownloadStreamOptions{CPKInfo: &k1})
	must(t, err)
	got, _ := io.ReadAll(d.Body)
	d.Body.Close()
	if string(got) != "AAA BBB CCC " {
		t.Fatalf("append blob: %q", got)
	}

	pb := cc.NewPageBlobClient("p")
	_, err = pb.Create(ctx, 4096, &pageblob.CreateOptions{CPKInfo: &k1})
	must(t, err)
	page := bytes.Repeat([]byte("p"), 512)
	_, err = pb.UploadPages(ctx, bxBody(page), blob.HTTPRange{Offset: 1024, Count: 512}, &pageblob.UploadPagesOptions{CPKInfo: &k1})
	must(t, err)
	_, err = pb.UploadPages(ctx, bxBody(page), blob.HTTPRange{Offset: 0, Count: 512}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
	d, err = pb.DownloadStream(ctx, &blob.DownloadStreamOptions{CPKInfo: &k1, Range: blob.HTTPRange{Offset: 512, Count: 1536}})
	must(t, err)
	got, _ = io.ReadAll(d.Body)
	d.Body.Close()
	want := append(make([]byte, 512), page...)
	want = append(want, make([]byte, 512)...)
	if !bytes.Equal(got, want) {
		t.Fatalf("page blob range: %q", got)
	}
}

// TestCPKFromURLAndCopy: a From URL source written with a key is read
// with x-ms-source-encryption-key (without it, or with another: 409
// CannotVerifyCopySource, as the .NET SDK's recorded StageBlockFromUri
// test expects); the destination is written under its own key, or none:
// the same key shares the source's encrypted bytes, another one
// re-encrypts them. Put Blob, Put Block, Append Block and Put Page From
// URL. Copy Blob, which takes no source key, refuses such a source: 409
// CannotVerifyCopySource with BlobUsesCustomerSpecifiedEncryption's
// message (the service's answer quoted in Azure/azure-sdk-for-java#18072).
func TestCPKFromURLAndCopy(t *testing.T) {
	cc, _, _ := cpkContainer(t)
	ctx := context.Background()
	k1, k2 := newCPK(t), newCPK(t)
	data := bytes.Repeat([]byte("source bytes "), 10000) // 130 kB: chunks
	src := cc.NewBlockBlobClient("src")
	_, err := src.Upload(ctx, bxBody(data), &blockblob.UploadOptions{CPKInfo: &k1})
	must(t, err)
	plainSrc := cc.NewBlockBlobClient("plainsrc")
	_, err = plainSrc.Upload(ctx, bxBody(data), nil)
	must(t, err)
	srcKey := &blob.SourceCPKInfo{SourceEncryptionKey: k1.EncryptionKey, SourceEncryptionKeySHA256: k1.EncryptionKeySHA256, SourceEncryptionAlgorithm: k1.EncryptionAlgorithm}
	wrongKey := &blob.SourceCPKInfo{SourceEncryptionKey: k2.EncryptionKey, SourceEncryptionKeySHA256: k2.EncryptionKeySHA256, SourceEncryptionAlgorithm: k2.EncryptionAlgorithm}
	readAll := func(c *blob.Client, k *blob.CPKInfo) string {
		t.Helper()
		d, err := c.DownloadStream(ctx, &blob.DownloadStreamOptions{CPKInfo: k})
		must(t, err)
		defer d.Body.Close()
		b, err := io.ReadAll(d.Body)
		must(t, err)
		return string(b)
	}
	dst := cc.NewBlockBlobClient("dst")
	for _, c := range []struct {
		name   string
		url    string
		srcKey *blob.SourceCPKInfo
		dstKey *blob.CPKInfo
	}{
		{"same key", src.URL(), srcKey, &k1},
		{"another key", src.URL(), srcKey, &k2},
		{"to no key", src.URL(), srcKey, nil},
		{"from no key", plainSrc.URL(), nil, &k2},
	} {
		_, err = dst.UploadBlobFromURL(ctx, c.url, &blockblob.UploadBlobFromURLOptions{SourceCustomerProvidedKey: c.srcKey, CPKInfo: c.dstKey})
		must(t, err)
		if got := readAll(dst.BlobClient(), c.dstKey); got != string(data) {
			t.Fatalf("Put Blob From URL, %s: %d bytes", c.name, len(got))
		}
		if c.dstKey != nil {
			_, err = dst.DownloadStream(ctx, nil)
			wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
		}
	}
	_, err = dst.UploadBlobFromURL(ctx, src.URL(), &blockblob.UploadBlobFromURLOptions{CPKInfo: &k1})
	wantCode(t, err, http.StatusConflict, bloberror.CannotVerifyCopySource)
	_, err = dst.UploadBlobFromURL(ctx, src.URL(), &blockblob.UploadBlobFromURLOptions{SourceCustomerProvidedKey: wrongKey, CPKInfo: &k1})
	wantCode(t, err, http.StatusConflict, bloberror.CannotVerifyCopySource)

	// Put Block From URL: the block takes the destination's key.
	_, err = dst.StageBlockFromURL(ctx, "MDA=", src.URL(), &blockblob.StageBlockFromURLOptions{SourceCustomerProvidedKey: srcKey, CPKInfo: &k2})
	must(t, err)
	_, err = dst.CommitBlockList(ctx, []string{"MDA="}, &blockblob.CommitBlockListOptions{CPKInfo: &k1})
	wantCode(t, err, http.StatusConflict, "BlobCustomerSpecifiedEncryptionMismatch")
	_, err = dst.CommitBlockList(ctx, []string{"MDA="}, &blockblob.CommitBlockListOptions{CPKInfo: &k2})
	must(t, err)
	if got := readAll(dst.BlobClient(), &k2); got != string(data) {
		t.Fatalf("Put Block From URL: %d bytes", len(got))
	}
	// Append Block From URL and Put Page From URL into blobs of another key.
	ab := cc.NewAppendBlobClient("ab")
	_, err = ab.Create(ctx, &appendblob.CreateOptions{CPKInfo: &k2})
	must(t, err)
	_, err = ab.AppendBlockFromURL(ctx, src.URL(), &appendblob.AppendBlockFromURLOptions{SourceCustomerProvidedKey: srcKey, CPKInfo: &k2, Range: blob.HTTPRange{Offset: 0, Count: 13}})
	must(t, err)
	if got := readAll(ab.BlobClient(), &k2); got != "source bytes " {
		t.Fatalf("Append Block From URL: %q", got)
	}
	pb := cc.NewPageBlobClient("pb")
	_, err = pb.Create(ctx, 1024, &pageblob.CreateOptions{CPKInfo: &k2})
	must(t, err)
	_, err = pb.UploadPagesFromURL(ctx, src.URL(), 0, 512, 512, &pageblob.UploadPagesFromURLOptions{SourceCustomerProvidedKey: srcKey, CPKInfo: &k2})
	must(t, err)
	if got := readAll(pb.BlobClient(), &k2); got[512:] != string(data[:512]) {
		t.Fatalf("Put Page From URL: %q", got[:40])
	}

	_, err = cc.NewBlockBlobClient("copy").CopyFromURL(ctx, src.URL(), nil)
	wantCode(t, err, http.StatusConflict, bloberror.CannotVerifyCopySource)
	if !strings.Contains(err.Error(), "The blob is encrypted with customer specified encryption, but it was not provided in the request.") {
		t.Fatalf("Copy Blob From URL: %v", err)
	}
	_, err = cc.NewBlockBlobClient("copy").StartCopyFromURL(ctx, src.URL(), nil)
	wantCode(t, err, http.StatusConflict, bloberror.CannotVerifyCopySource)
}

// TestCPKCopyBlobRefused: Copy Blob (asynchronous, and synchronous with
// x-ms-requires-sync) is not among the operations that take a
// customer-provided key ("Provide an encryption key on a request to Blob
// storage", the list of Blob operations that support it), and the SDKs
// send none on it; a key sent anyway is refused with 400
// UnsupportedHeader and nothing is written, rather than the copy being
// stored unencrypted under an answer that echoes the key's hash.
func TestCPKCopyBlobRefused(t *testing.T) {
	cc, _, _ := cpkContainer(t)
	ctx := context.Background()
	k := newCPK(t)
	src := cc.NewBlockBlobClient("plainsrc")
	_, err := src.Upload(ctx, bxBody([]byte("plain source")), nil)
	must(t, err)
	keyed := fiHeader(ctx, "x-ms-encryption-key", *k.EncryptionKey, "x-ms-encryption-key-sha256", *k.EncryptionKeySHA256, "x-ms-encryption-algorithm", string(*k.EncryptionAlgorithm))
	dst := cc.NewBlockBlobClient("dst")
	_, err = dst.StartCopyFromURL(keyed, src.URL(), nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.UnsupportedHeader)
	_, err = dst.CopyFromURL(keyed, src.URL(), nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.UnsupportedHeader)
	_, err = dst.GetProperties(ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
}

// TestCPKNeedsHTTPS: a key sent over plain HTTP is refused (400), and
// nothing is written.
func TestCPKNeedsHTTPS(t *testing.T) {
	b := newBlobT(t)
	k := newCPK(t)
	_, err := b.bb("k").Upload(b.ctx, bxBody([]byte("x")), &blockblob.UploadOptions{CPKInfo: &k})
	if err == nil || !strings.Contains(err.Error(), "HTTPS") && !strings.Contains(err.Error(), "InvalidInput") {
		t.Fatalf("a key over HTTP: %v", err)
	}
	_, err = b.bb("k").GetProperties(b.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
}

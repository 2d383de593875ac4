package e2e

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
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
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// Customer-provided keys on a hierarchical account (Data Lake Storage
// Gen2): Path - Create, Path - Update append and flush on the dfs
// endpoint, and the Blob API's writes and reads of the same files.

// cpkDL is a hierarchical server over HTTPS (a key travels over HTTPS
// only) on the store CERULEAN_TEST_BACKEND selects, with a filesystem
// "cpk", its azdatalake client, an azblob client of the Blob endpoint
// and the data directory ("" in memory).
type cpkDL struct {
	e       *dlEnv
	fs      *filesystem.Client
	bc      *container.Client
	dataDir string
}

func startCPKDL(t *testing.T) *cpkDL {
	t.Helper()
	var dataDir string
	var hc *http.Client
	e := startDLWith(t, true, func(cfg *app.Config) *http.Client {
		cert, pool := selfSigned(t)
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		dataDir = cfg.DataDir
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		t.Cleanup(tr.CloseIdleConnections)
		hc = &http.Client{Timeout: time.Minute, Transport: tr}
		return hc
	})
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	bs, err := azblob.NewClientWithSharedKeyCredential(e.app.BlobURL, cred, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}})
	must(t, err)
	return &cpkDL{e: e, fs: e.mkfs("cpk"), bc: bs.ServiceClient().NewContainerClient("cpk"), dataDir: dataDir}
}

// dlCPK is k as azdatalake takes it.
func dlCPK(k blob.CPKInfo) *file.CPKInfo {
	return &file.CPKInfo{EncryptionKey: k.EncryptionKey, EncryptionKeySHA256: k.EncryptionKeySHA256, EncryptionAlgorithm: to.Ptr(file.EncryptionAlgorithmTypeAES256)}
}

// read downloads f through azdatalake (Get Blob) with key k (nil: none).
func (c *cpkDL) read(t *testing.T, f *file.Client, k *file.CPKInfo) ([]byte, error) {
	t.Helper()
	d, err := f.DownloadStream(c.e.ctx, &file.DownloadStreamOptions{CPKInfo: k})
	if err != nil {
		return nil, err
	}
	defer d.Body.Close()
	if k != nil && (d.EncryptionKeySHA256 == nil || *d.EncryptionKeySHA256 != *k.EncryptionKeySHA256) {
		t.Fatalf("Path - Read: x-ms-encryption-key-sha256 %v", d.EncryptionKeySHA256)
	}
	return io.ReadAll(d.Body)
}

// wantKeyErr checks that err is 409 with x-ms-error-code code as the
// service sent it (azdatalake reports the code with "Blob" made "Path":
// exported.ConvertToDFSError).
func wantKeyErr(t *testing.T, err error, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.RawResponse == nil {
		t.Fatalf("want 409 %s, got %v", code, err)
	}
	if got := re.RawResponse.Header.Get("x-ms-error-code"); re.StatusCode != http.StatusConflict || got != code {
		t.Fatalf("want 409 %s, got %d %s", code, re.StatusCode, got)
	}
}

// noPlaintext fails when a file of dir holds marker.
func noPlaintext(t *testing.T, dir string, marker []byte) {
	t.Helper()
	if dir == "" {
		return
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, marker) {
			t.Errorf("%s holds the plaintext", path)
		}
		return nil
	})
	must(t, err)
}

// TestCPKDataLakeFile: a file of a hierarchical account created with a
// customer-provided key (Path - Create) and written with it (append,
// flush, in chunks as UploadBuffer sends them) reads back with the key
// and answers its SHA-256; without the key, reads, Get Properties,
// appends, flushes and Set Metadata are 409
// BlobUsesCustomerSpecifiedEncryption, with another key 409
// BlobCustomerSpecifiedEncryptionMismatch; getStatus, which takes no
// key, names it; a rename keeps it (and a rename sending a key is
// accepted: azdatalake's recorded TestRenameFileWithCPK); the bytes at
// rest are not the plaintext.
func TestCPKDataLakeFile(t *testing.T) {
	c := startCPKDL(t)
	ctx := c.e.ctx
	k1, k2 := dlCPK(newCPK(t)), dlCPK(newCPK(t))
	marker := []byte("cerulean-dl-cpk-plaintext-marker-")
	data := bytes.Repeat(marker, 300000/len(marker))

	f := c.fs.NewFileClient("dir/f")
	cr, err := f.Create(ctx, &file.CreateOptions{CPKInfo: k1})
	must(t, err)
	if cr.EncryptionKeySHA256 == nil || *cr.EncryptionKeySHA256 != *k1.EncryptionKeySHA256 || cr.IsServerEncrypted == nil || !*cr.IsServerEncrypted {
		t.Fatalf("Path - Create: x-ms-encryption-key-sha256 %v", cr.EncryptionKeySHA256)
	}
	must(t, f.UploadBuffer(ctx, data, &file.UploadBufferOptions{CPKInfo: k1, ChunkSize: 64 << 10}))
	got, err := c.read(t, f, k1)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read with the key: %d bytes, %v", len(got), err)
	}
	d, err := f.DownloadStream(ctx, &file.DownloadStreamOptions{CPKInfo: k1, Range: &file.HTTPRange{Offset: 70001, Count: 1234}})
	must(t, err)
	got, _ = io.ReadAll(d.Body)
	d.Body.Close()
	if !bytes.Equal(got, data[70001:70001+1234]) {
		t.Fatalf("ranged read with the key: %d bytes", len(got))
	}
	_, err = c.read(t, f, nil)
	wantKeyErr(t, err, string(bloberror.BlobUsesCustomerSpecifiedEncryption))
	_, err = c.read(t, f, k2)
	wantKeyErr(t, err, "BlobCustomerSpecifiedEncryptionMismatch")
	_, err = f.GetProperties(ctx, nil)
	wantKeyErr(t, err, string(bloberror.BlobUsesCustomerSpecifiedEncryption))
	p, err := f.GetProperties(ctx, &file.GetPropertiesOptions{CPKInfo: k1})
	must(t, err)
	if p.EncryptionKeySHA256 == nil || *p.EncryptionKeySHA256 != *k1.EncryptionKeySHA256 || *p.ContentLength != int64(len(data)) {
		t.Fatalf("Get Properties: %v %v", p.EncryptionKeySHA256, p.ContentLength)
	}

	// Appends and flushes take the file's key only; nothing is written
	// otherwise.
	n := int64(len(data))
	_, err = f.AppendData(ctx, n, bxBody([]byte("tail")), nil)
	wantKeyErr(t, err, string(bloberror.BlobUsesCustomerSpecifiedEncryption))
	_, err = f.AppendData(ctx, n, bxBody([]byte("tail")), &file.AppendDataOptions{CPKInfo: k2})
	wantKeyErr(t, err, "BlobCustomerSpecifiedEncryptionMismatch")
	ar, err := f.AppendData(ctx, n, bxBody([]byte("tail")), &file.AppendDataOptions{CPKInfo: k1})
	must(t, err)
	if ar.EncryptionKeySHA256 == nil || *ar.EncryptionKeySHA256 != *k1.EncryptionKeySHA256 {
		t.Fatalf("append: x-ms-encryption-key-sha256 %v", ar.EncryptionKeySHA256)
	}
	_, err = f.FlushData(ctx, n+4, nil)
	wantKeyErr(t, err, string(bloberror.BlobUsesCustomerSpecifiedEncryption))
	_, err = f.FlushData(ctx, n+4, &file.FlushDataOptions{CPKInfo: k2})
	wantKeyErr(t, err, "BlobCustomerSpecifiedEncryptionMismatch")
	fr, err := f.FlushData(ctx, n+4, &file.FlushDataOptions{CPKInfo: k1})
	must(t, err)
	if fr.EncryptionKeySHA256 == nil || *fr.EncryptionKeySHA256 != *k1.EncryptionKeySHA256 || fr.IsServerEncrypted == nil || !*fr.IsServerEncrypted {
		t.Fatalf("flush: x-ms-encryption-key-sha256 %v, x-ms-request-server-encrypted %v", fr.EncryptionKeySHA256, fr.IsServerEncrypted)
	}
	data = append(data, "tail"...)
	if got, err := c.read(t, f, k1); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after the flush: %d bytes, %v", len(got), err)
	}

	// Metadata is written under the key.
	md := map[string]*string{"a": to.Ptr("1")}
	_, err = f.SetMetadata(ctx, md, nil)
	wantKeyErr(t, err, string(bloberror.BlobUsesCustomerSpecifiedEncryption))
	_, err = f.SetMetadata(ctx, md, &file.SetMetadataOptions{CPKInfo: k2})
	wantKeyErr(t, err, "BlobCustomerSpecifiedEncryptionMismatch")
	_, err = f.SetMetadata(ctx, md, &file.SetMetadataOptions{CPKInfo: k1})
	must(t, err)

	// getStatus takes no key and names the file's, without the
	// metadata written under it; getAccessControl and List Paths take
	// none either.
	resp, _ := c.e.raw(http.MethodHead, "/cpk/dir/f?action=getStatus", nil, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("x-ms-encryption-key-sha256") != *k1.EncryptionKeySHA256 || resp.Header.Get("x-ms-properties") != "" {
		t.Fatalf("getStatus: %d, x-ms-encryption-key-sha256 %q, x-ms-properties %q", resp.StatusCode, resp.Header.Get("x-ms-encryption-key-sha256"), resp.Header.Get("x-ms-properties"))
	}
	_, err = f.GetAccessControl(ctx, nil)
	must(t, err)
	lp, err := c.fs.NewListPathsPager(true, nil).NextPage(ctx)
	must(t, err)
	if len(lp.Paths) != 2 { // dir, dir/f
		t.Fatalf("List Paths: %d paths", len(lp.Paths))
	}

	// A rename moves the file with its key; one sending a key is accepted.
	_, err = f.Rename(ctx, "dir/moved", &file.RenameOptions{CPKInfo: k2})
	must(t, err)
	mv := c.fs.NewFileClient("dir/moved")
	if got, err := c.read(t, mv, k1); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("renamed, with the key: %d bytes, %v", len(got), err)
	}
	_, err = c.read(t, mv, nil)
	wantKeyErr(t, err, string(bloberror.BlobUsesCustomerSpecifiedEncryption))
	_, err = mv.AppendData(ctx, int64(len(data)), bxBody([]byte("x")), &file.AppendDataOptions{CPKInfo: k2})
	wantKeyErr(t, err, "BlobCustomerSpecifiedEncryptionMismatch")
	_, err = mv.Rename(ctx, "back", nil)
	must(t, err)
	if got, err := c.read(t, c.fs.NewFileClient("back"), k1); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("renamed without a key: %d bytes, %v", len(got), err)
	}

	// A key on a file created without one.
	plain := c.fs.NewFileClient("plain")
	_, err = plain.Create(ctx, nil)
	must(t, err)
	must(t, plain.UploadBuffer(ctx, []byte("clear"), nil))
	_, err = c.read(t, plain, k1)
	wantKeyErr(t, err, "BlobDoesNotUseCustomerSpecifiedEncryption")
	_, err = plain.AppendData(ctx, 5, bxBody([]byte("x")), &file.AppendDataOptions{CPKInfo: k1})
	wantKeyErr(t, err, "BlobDoesNotUseCustomerSpecifiedEncryption")
	_, err = plain.FlushData(ctx, 5, &file.FlushDataOptions{CPKInfo: k1})
	wantKeyErr(t, err, "BlobDoesNotUseCustomerSpecifiedEncryption")
	if got, err := c.read(t, plain, nil); err != nil || string(got) != "clear" {
		t.Fatalf("plain file: %q %v", got, err)
	}

	// A directory keeps the key it was created with for its metadata
	// (azdatalake's recorded TestDirSetMetadataWithCPK and
	// TestDirSetMetadataWithCPKNegative).
	dk := &directory.CPKInfo{EncryptionKey: k1.EncryptionKey, EncryptionKeySHA256: k1.EncryptionKeySHA256, EncryptionAlgorithm: k1.EncryptionAlgorithm}
	dir := c.fs.NewDirectoryClient("keyed")
	dr, err := dir.Create(ctx, &directory.CreateOptions{CPKInfo: dk})
	must(t, err)
	if dr.EncryptionKeySHA256 == nil || *dr.EncryptionKeySHA256 != *k1.EncryptionKeySHA256 {
		t.Fatalf("Create Directory: %v", dr.EncryptionKeySHA256)
	}
	_, err = dir.SetMetadata(ctx, md, &directory.SetMetadataOptions{CPKInfo: dk})
	must(t, err)
	_, err = c.fs.NewDirectoryClient("dir").SetMetadata(ctx, md, &directory.SetMetadataOptions{CPKInfo: dk})
	wantKeyErr(t, err, "BlobDoesNotUseCustomerSpecifiedEncryption")

	noPlaintext(t, c.dataDir, marker)
}

// TestCPKDataLakeBlobAPI: the Blob API on a hierarchical account with
// customer-provided keys: Put Blob, Put Block and Put Block List write
// a file under the key (a block is committed with the key it was staged
// with), which the dfs endpoint then appends to and reads with the same
// key only; Get Blob Properties, Snapshot Blob and Append Block need
// it; Put Blob and Put Block From URL read an encrypted source with
// its key and write the path under their own; List Blobs names the key;
// Copy Blob refuses such a source (409 CannotVerifyCopySource, as on a
// flat account).
func TestCPKDataLakeBlobAPI(t *testing.T) {
	c := startCPKDL(t)
	ctx := c.e.ctx
	bk1, bk2 := newCPK(t), newCPK(t)
	k1 := dlCPK(bk1)
	marker := []byte("cerulean-hns-blob-cpk-marker-")
	data := bytes.Repeat(marker, 200000/len(marker))

	bb := c.bc.NewBlockBlobClient("a/b")
	up, err := bb.Upload(ctx, bxBody(data), &blockblob.UploadOptions{CPKInfo: &bk1})
	must(t, err)
	if up.EncryptionKeySHA256 == nil || *up.EncryptionKeySHA256 != *bk1.EncryptionKeySHA256 {
		t.Fatalf("Put Blob: %v", up.EncryptionKeySHA256)
	}
	f := c.fs.NewFileClient("a/b")
	if got, err := c.read(t, f, k1); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read through azdatalake: %d bytes, %v", len(got), err)
	}
	_, err = bb.DownloadStream(ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
	_, err = bb.DownloadStream(ctx, &blob.DownloadStreamOptions{CPKInfo: &bk2})
	wantCode(t, err, http.StatusConflict, "BlobCustomerSpecifiedEncryptionMismatch")
	_, err = bb.GetProperties(ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
	p, err := bb.GetProperties(ctx, &blob.GetPropertiesOptions{CPKInfo: &bk1})
	must(t, err)
	if p.EncryptionKeySHA256 == nil || *p.EncryptionKeySHA256 != *bk1.EncryptionKeySHA256 || *p.ContentLength != int64(len(data)) {
		t.Fatalf("Get Blob Properties: %v", p.EncryptionKeySHA256)
	}
	// The dfs endpoint appends to the file the Blob API wrote, under its key.
	_, err = f.AppendData(ctx, int64(len(data)), bxBody([]byte("+dfs")), &file.AppendDataOptions{CPKInfo: dlCPK(bk2), Flush: to.Ptr(true)})
	wantKeyErr(t, err, "BlobCustomerSpecifiedEncryptionMismatch")
	_, err = f.AppendData(ctx, int64(len(data)), bxBody([]byte("+dfs")), &file.AppendDataOptions{CPKInfo: k1, Flush: to.Ptr(true)})
	must(t, err)
	d, err := bb.DownloadStream(ctx, &blob.DownloadStreamOptions{CPKInfo: &bk1})
	must(t, err)
	got, _ := io.ReadAll(d.Body)
	d.Body.Close()
	if !bytes.Equal(got, append(append([]byte(nil), data...), "+dfs"...)) {
		t.Fatalf("Get Blob after the dfs append: %d bytes", len(got))
	}

	// Snapshots need and keep the key.
	_, err = bb.CreateSnapshot(ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
	snap, err := bb.CreateSnapshot(ctx, &blob.CreateSnapshotOptions{CPKInfo: &bk1})
	must(t, err)
	sc, err := bb.BlobClient().WithSnapshot(*snap.Snapshot)
	must(t, err)
	_, err = sc.DownloadStream(ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
	d, err = sc.DownloadStream(ctx, &blob.DownloadStreamOptions{CPKInfo: &bk1})
	must(t, err)
	got, _ = io.ReadAll(d.Body)
	d.Body.Close()
	if len(got) != len(data)+4 {
		t.Fatalf("snapshot with its key: %d bytes", len(got))
	}

	// Put Block and Put Block List.
	bl := c.bc.NewBlockBlobClient("a/blocks")
	for _, id := range []string{"MDA=", "MDE="} {
		_, err := bl.StageBlock(ctx, id, bxBody([]byte("block "+id)), &blockblob.StageBlockOptions{CPKInfo: &bk1})
		must(t, err)
	}
	_, err = bl.CommitBlockList(ctx, []string{"MDA=", "MDE="}, &blockblob.CommitBlockListOptions{CPKInfo: &bk2})
	wantCode(t, err, http.StatusConflict, "BlobCustomerSpecifiedEncryptionMismatch")
	_, err = bl.CommitBlockList(ctx, []string{"MDA=", "MDE="}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
	cr, err := bl.CommitBlockList(ctx, []string{"MDA=", "MDE="}, &blockblob.CommitBlockListOptions{CPKInfo: &bk1})
	must(t, err)
	if cr.EncryptionKeySHA256 == nil || *cr.EncryptionKeySHA256 != *bk1.EncryptionKeySHA256 {
		t.Fatalf("Put Block List: %v", cr.EncryptionKeySHA256)
	}
	if got, err := c.read(t, c.fs.NewFileClient("a/blocks"), k1); err != nil || string(got) != "block MDA=block MDE=" {
		t.Fatalf("committed blocks: %q %v", got, err)
	}
	// The committed content is reused only under the file's key.
	bl2, err := bl.GetBlockList(ctx, blockblob.BlockListTypeCommitted, nil)
	must(t, err)
	var ids []string
	for _, b := range bl2.CommittedBlocks {
		ids = append(ids, *b.Name)
	}
	_, err = bl.CommitBlockList(ctx, ids, &blockblob.CommitBlockListOptions{CPKInfo: &bk2})
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidBlockList)
	_, err = bl.CommitBlockList(ctx, ids, &blockblob.CommitBlockListOptions{CPKInfo: &bk1})
	must(t, err)
	if got, err := c.read(t, c.fs.NewFileClient("a/blocks"), k1); err != nil || string(got) != "block MDA=block MDE=" {
		t.Fatalf("recommitted blocks: %q %v", got, err)
	}

	// Put Blob From URL and Put Block From URL onto paths: the source is
	// read with its key, the destination written under its own.
	srcKey := &blob.SourceCPKInfo{SourceEncryptionKey: bk1.EncryptionKey, SourceEncryptionKeySHA256: bk1.EncryptionKeySHA256, SourceEncryptionAlgorithm: bk1.EncryptionAlgorithm}
	fu := c.bc.NewBlockBlobClient("a/fromurl")
	_, err = fu.UploadBlobFromURL(ctx, bl.URL(), &blockblob.UploadBlobFromURLOptions{CPKInfo: &bk2})
	wantCode(t, err, http.StatusConflict, bloberror.CannotVerifyCopySource)
	_, err = fu.UploadBlobFromURL(ctx, bl.URL(), &blockblob.UploadBlobFromURLOptions{SourceCustomerProvidedKey: srcKey, CPKInfo: &bk2})
	must(t, err)
	if got, err := c.read(t, c.fs.NewFileClient("a/fromurl"), dlCPK(bk2)); err != nil || string(got) != "block MDA=block MDE=" {
		t.Fatalf("Put Blob From URL: %q %v", got, err)
	}
	_, err = c.read(t, c.fs.NewFileClient("a/fromurl"), k1)
	wantKeyErr(t, err, "BlobCustomerSpecifiedEncryptionMismatch")
	_, err = fu.StageBlockFromURL(ctx, "MDA=", bl.URL(), &blockblob.StageBlockFromURLOptions{SourceCustomerProvidedKey: srcKey, CPKInfo: &bk2})
	must(t, err)
	_, err = fu.CommitBlockList(ctx, []string{"MDA="}, &blockblob.CommitBlockListOptions{CPKInfo: &bk1})
	wantCode(t, err, http.StatusConflict, "BlobCustomerSpecifiedEncryptionMismatch")
	_, err = fu.CommitBlockList(ctx, []string{"MDA="}, &blockblob.CommitBlockListOptions{CPKInfo: &bk2})
	must(t, err)
	if got, err := c.read(t, c.fs.NewFileClient("a/fromurl"), dlCPK(bk2)); err != nil || string(got) != "block MDA=block MDE=" {
		t.Fatalf("Put Block From URL: %q %v", got, err)
	}

	// An append blob file.
	ab := c.bc.NewAppendBlobClient("a/log")
	_, err = ab.Create(ctx, &appendblob.CreateOptions{CPKInfo: &bk1})
	must(t, err)
	_, err = ab.AppendBlock(ctx, bxBody([]byte("one ")), &appendblob.AppendBlockOptions{CPKInfo: &bk1})
	must(t, err)
	_, err = ab.AppendBlock(ctx, bxBody([]byte("x")), nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
	_, err = ab.AppendBlock(ctx, bxBody([]byte("x")), &appendblob.AppendBlockOptions{CPKInfo: &bk2})
	wantCode(t, err, http.StatusConflict, "BlobCustomerSpecifiedEncryptionMismatch")
	if got, err := c.read(t, c.fs.NewFileClient("a/log"), k1); err != nil || string(got) != "one " {
		t.Fatalf("append blob file: %q %v", got, err)
	}

	// List Blobs names each file's key.
	keys := map[string]string{}
	pager := c.bc.NewListBlobsFlatPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		must(t, err)
		for _, it := range page.Segment.BlobItems {
			if it.Properties.CustomerProvidedKeySHA256 != nil {
				keys[*it.Name] = *it.Properties.CustomerProvidedKeySHA256
			}
		}
	}
	if keys["a/b"] != *bk1.EncryptionKeySHA256 || keys["a/blocks"] != *bk1.EncryptionKeySHA256 || keys["a"] != "" {
		t.Fatalf("listed keys %v", keys)
	}

	// Copy Blob takes no source key.
	_, err = c.bc.NewBlockBlobClient("copy").StartCopyFromURL(ctx, bb.URL(), nil)
	wantCode(t, err, http.StatusConflict, bloberror.CannotVerifyCopySource)
	if err == nil || !strings.Contains(err.Error(), "customer specified encryption") {
		t.Fatalf("Copy Blob: %v", err)
	}

	noPlaintext(t, c.dataDir, marker)
}

// TestCPKDataLakeNeedsHTTPS: a key sent to the dfs endpoint over plain
// HTTP is refused (400) and no file is created.
func TestCPKDataLakeNeedsHTTPS(t *testing.T) {
	e := startDL(t, true)
	fsc := e.mkfs("plain")
	f := fsc.NewFileClient("f")
	_, err := f.Create(e.ctx, &file.CreateOptions{CPKInfo: dlCPK(newCPK(t))})
	wantDL(t, err, http.StatusBadRequest, "InvalidInput")
	resp, _ := e.raw(http.MethodHead, "/plain/f?action=getStatus", nil, nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("getStatus after a refused create: %d", resp.StatusCode)
	}
}

// TestCPKDataLakeFlatAccount: the dfs endpoint of a flat account with a
// customer-provided key: Path - Create writes the blob under the key
// (read through the Blob API only with it), and getStatus, Path - List
// and Path - Delete, which take no key, still serve it (getStatus names
// the key and leaves out the metadata written under it).
func TestCPKDataLakeFlatAccount(t *testing.T) {
	var hc *http.Client
	e := startDLWith(t, false, func(cfg *app.Config) *http.Client {
		cert, pool := selfSigned(t)
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		t.Cleanup(tr.CloseIdleConnections)
		hc = &http.Client{Timeout: time.Minute, Transport: tr}
		return hc
	})
	bk := newCPK(t)
	k := dlCPK(bk)
	fsc := e.mkfs("flat")
	f := fsc.NewFileClient("d/f")
	cr, err := f.Create(e.ctx, &file.CreateOptions{CPKInfo: k})
	must(t, err)
	if cr.EncryptionKeySHA256 == nil || *cr.EncryptionKeySHA256 != *k.EncryptionKeySHA256 {
		t.Fatalf("Path - Create: %v", cr.EncryptionKeySHA256)
	}
	_, err = f.SetMetadata(e.ctx, map[string]*string{"secret": to.Ptr("v")}, &file.SetMetadataOptions{CPKInfo: k})
	must(t, err)
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	bs, err := azblob.NewClientWithSharedKeyCredential(e.app.BlobURL, cred, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}})
	must(t, err)
	bb := bs.ServiceClient().NewContainerClient("flat").NewBlobClient("d/f")
	_, err = bb.GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobUsesCustomerSpecifiedEncryption)
	p, err := bb.GetProperties(e.ctx, &blob.GetPropertiesOptions{CPKInfo: &bk})
	must(t, err)
	if p.EncryptionKeySHA256 == nil || *p.EncryptionKeySHA256 != *bk.EncryptionKeySHA256 {
		t.Fatalf("Get Blob Properties: %v", p.EncryptionKeySHA256)
	}
	resp, _ := e.raw(http.MethodHead, "/flat/d/f?action=getStatus", nil, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("x-ms-encryption-key-sha256") != *k.EncryptionKeySHA256 || resp.Header.Get("x-ms-properties") != "" {
		t.Fatalf("getStatus: %d, key %q, properties %q", resp.StatusCode, resp.Header.Get("x-ms-encryption-key-sha256"), resp.Header.Get("x-ms-properties"))
	}
	page, err := fsc.NewListPathsPager(true, nil).NextPage(e.ctx)
	must(t, err)
	if len(page.Paths) != 1 || *page.Paths[0].Name != "d/f" {
		t.Fatalf("Path - List: %d paths", len(page.Paths))
	}
	_, err = f.Delete(e.ctx, nil)
	must(t, err)
	_, err = bb.GetProperties(e.ctx, &blob.GetPropertiesOptions{CPKInfo: &bk})
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
}

package e2e

// Copies between the Blob and File services of one server, as azcopy makes
// them between Blob Storage and Azure Files: Copy File and Put Range From URL
// from a blob, Copy Blob, Put Blob From URL and Put Block From URL from a
// file (Copy File,
// https://learn.microsoft.com/en-us/rest/api/storageservices/copy-file
// "copies a blob or file"; Copy Blob "the source ... can be an Azure file").

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	blobsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	filesas "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/cerulean-storage/cerulean/internal/app"
	cfile "github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/smbfs"
)

type xcEnv struct {
	t    *testing.T
	ctx  context.Context
	blob *azblob.Client
	file *fileEnv
}

// xcStart runs a server with both the Blob and File services.
func xcStart(t *testing.T) *xcEnv {
	a, clk := startApp4(t, 0, -1, -1, 0)
	fe := &fileEnv{t: t, app: a, clock: clk, svc: fileClient(t, a.FileURL, app.DevKey), ctx: context.Background()}
	return &xcEnv{t: t, ctx: context.Background(), blob: client(t, a.BlobURL, app.DevKey), file: fe}
}

// blobSAS is the URL of blob c/name with a service SAS granting read.
func (e *xcEnv) blobSAS(c, name string) string {
	e.t.Helper()
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(e.t, err)
	qp, err := blobsas.BlobSignatureValues{
		Protocol: blobsas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().UTC().Add(time.Hour),
		ContainerName: c, BlobName: name, Permissions: (&blobsas.BlobPermissions{Read: true}).String(),
	}.SignWithSharedKey(cred)
	must(e.t, err)
	return e.blob.ServiceClient().NewContainerClient(c).NewBlobClient(name).URL() + "?" + qp.Encode()
}

func TestCopyBlobToFile(t *testing.T) {
	e := xcStart(t)
	_, err := e.blob.CreateContainer(e.ctx, "src", nil)
	must(t, err)
	data := fiRand(300 << 10)
	_, err = e.blob.UploadBuffer(e.ctx, "src", "dir/a blob.bin", data, &blockblob.UploadBufferOptions{
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("application/x-blob")},
		Metadata:    map[string]*string{"origin": to.Ptr("blob")},
	})
	must(t, err)
	bc := e.blob.ServiceClient().NewContainerClient("src").NewBlobClient("dir/a blob.bin")
	s := e.file.share()

	// Copy File from the blob, authorized by the request's Shared Key.
	dst := fileAt(s, "copied.bin")
	cr, err := dst.StartCopyFromURL(e.ctx, bc.URL(), nil)
	must(t, err)
	if cr.CopyStatus == nil || *cr.CopyStatus != file.CopyStatusTypeSuccess {
		t.Fatalf("copy status %v", cr.CopyStatus)
	}
	p := e.file.props(dst)
	if *p.ContentLength != int64(len(data)) || fiStr(p.ContentType) != "application/x-blob" || fiStr(p.Metadata["Origin"]) != "blob" || fiStr(p.CopySource) != bc.URL() {
		t.Fatalf("copied file: len %d type %s meta %v source %s", *p.ContentLength, fiStr(p.ContentType), p.Metadata, fiStr(p.CopySource))
	}
	if got := e.file.read(dst, 0, 0); !bytes.Equal(got, data) {
		t.Fatal("copied file content differs from the blob")
	}
	// Later writes to the blob do not reach the copy.
	_, err = e.blob.UploadBuffer(e.ctx, "src", "dir/a blob.bin", []byte("changed"), nil)
	must(t, err)
	if got := e.file.read(dst, 0, 7); !bytes.Equal(got, data[:7]) {
		t.Fatal("a write to the blob reached the file")
	}
	_, err = e.blob.UploadBuffer(e.ctx, "src", "dir/a blob.bin", data, nil)
	must(t, err)

	// With a SAS on the blob URL; a tampered SAS fails as the source's.
	_, err = fileAt(s, "sas.bin").StartCopyFromURL(e.ctx, e.blobSAS("src", "dir/a blob.bin"), nil)
	must(t, err)
	_, err = fileAt(s, "bad.bin").StartCopyFromURL(e.ctx, e.blobSAS("src", "dir/a blob.bin")+"x", nil)
	wantFileCode(t, err, http.StatusForbidden, "CannotVerifyCopySource")
	// A missing blob.
	_, err = fileAt(s, "none.bin").StartCopyFromURL(e.ctx, e.blob.ServiceClient().NewContainerClient("src").NewBlobClient("nope").URL(), nil)
	wantFileCode(t, err, http.StatusNotFound, "CannotVerifyCopySource")

	// A small blob keeps its bytes in its own record; the copy takes
	// them, and a later write to part of the file splices them.
	_, err = e.blob.UploadBuffer(e.ctx, "src", "small", []byte("0123456789"), nil)
	must(t, err)
	small := fileAt(s, "small.txt")
	_, err = small.StartCopyFromURL(e.ctx, e.blob.ServiceClient().NewContainerClient("src").NewBlobClient("small").URL(), nil)
	must(t, err)
	e.file.put(small, 3, []byte("abc"))
	if got := e.file.read(small, 0, 0); string(got) != "012abc6789" {
		t.Fatalf("small copy after a write: %q", got)
	}

	// Put Range From URL from the blob: the source needs a SAS.
	f := e.file.mkfile(s, "ranges.bin", 8<<10)
	_, err = f.UploadRangeFromURL(e.ctx, e.blobSAS("src", "dir/a blob.bin"), 1024, 4096, 2048, nil)
	must(t, err)
	if got := e.file.read(f, 4096, 2048); !bytes.Equal(got, data[1024:3072]) {
		t.Fatal("Put Range From URL wrote the wrong bytes")
	}
	_, err = f.UploadRangeFromURL(e.ctx, bc.URL(), 0, 0, 512, nil)
	wantFileCode(t, err, http.StatusUnauthorized, "CannotVerifyCopySource")
}

func TestCopyFileToBlob(t *testing.T) {
	e := xcStart(t)
	s := e.file.share()
	data := fiRand(200 << 10)
	src := fileAt(s, "it's a file.txt")
	_, err := src.Create(e.ctx, int64(len(data)), &file.CreateOptions{
		HTTPHeaders: &file.HTTPHeaders{ContentType: to.Ptr("text/x-file")},
		Metadata:    map[string]*string{"origin": to.Ptr("file")},
	})
	must(t, err)
	e.file.put(src, 0, data)
	_, err = e.blob.CreateContainer(e.ctx, "dst", nil)
	must(t, err)
	cc := e.blob.ServiceClient().NewContainerClient("dst")
	read := func(name string) []byte {
		r, err := cc.NewBlobClient(name).DownloadStream(e.ctx, nil)
		must(t, err)
		var b bytes.Buffer
		_, err = b.ReadFrom(r.Body)
		must(t, err)
		return b.Bytes()
	}

	// A sparse file (never-written ranges read as zeros) copies as a
	// blob whose gaps read as zeros.
	sparse := e.file.mkfile(s, "sparse", 3<<20)
	e.file.put(sparse, 1<<20, []byte("middle"))
	_, err = cc.NewBlobClient("sparse").StartCopyFromURL(e.ctx, sparse.URL(), nil)
	must(t, err)
	wantSparse := make([]byte, 3<<20)
	copy(wantSparse[1<<20:], "middle")
	if !bytes.Equal(read("sparse"), wantSparse) {
		t.Fatal("copy of a sparse file differs")
	}

	// Copy Blob from the file.
	cr, err := cc.NewBlobClient("copied").StartCopyFromURL(e.ctx, src.URL(), nil)
	must(t, err)
	if cr.CopyStatus == nil || *cr.CopyStatus != blob.CopyStatusTypeSuccess {
		t.Fatalf("copy status %v", cr.CopyStatus)
	}
	p, err := cc.NewBlobClient("copied").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.BlobType != blob.BlobTypeBlockBlob || *p.ContentLength != int64(len(data)) || *p.ContentType != "text/x-file" || *p.Metadata["Origin"] != "file" {
		t.Fatalf("copied blob: type %v len %d type %s meta %v", *p.BlobType, *p.ContentLength, *p.ContentType, p.Metadata)
	}
	if !bytes.Equal(read("copied"), data) {
		t.Fatal("copied blob content differs from the file")
	}

	// Put Blob From URL and Put Block From URL from a file SAS URL (what
	// azcopy sends for Files to Blob).
	sasURL := fiSourceSAS(t, s, "it's a file.txt", filesas.FilePermissions{Read: true})
	_, err = cc.NewBlockBlobClient("put").UploadBlobFromURL(e.ctx, sasURL, nil)
	must(t, err)
	if !bytes.Equal(read("put"), data) {
		t.Fatal("Put Blob From URL content differs")
	}
	bb := cc.NewBlockBlobClient("blocks")
	ids := []string{base64.StdEncoding.EncodeToString([]byte("b1")), base64.StdEncoding.EncodeToString([]byte("b2"))}
	half := int64(len(data) / 2)
	_, err = bb.StageBlockFromURL(e.ctx, ids[1], sasURL, &blockblob.StageBlockFromURLOptions{Range: blob.HTTPRange{Offset: 0, Count: half}})
	must(t, err)
	_, err = bb.StageBlockFromURL(e.ctx, ids[0], sasURL, &blockblob.StageBlockFromURLOptions{Range: blob.HTTPRange{Offset: half, Count: int64(len(data)) - half}})
	must(t, err)
	_, err = bb.CommitBlockList(e.ctx, ids, nil)
	must(t, err)
	want := append(append([]byte(nil), data[half:]...), data[:half]...)
	if !bytes.Equal(read("blocks"), want) {
		t.Fatal("Put Block From URL content differs")
	}

	// Append Block From URL and Put Page From URL read the file's ranges.
	ab := cc.NewAppendBlobClient("append")
	_, err = ab.Create(e.ctx, nil)
	must(t, err)
	_, err = ab.AppendBlockFromURL(e.ctx, sasURL, &appendblob.AppendBlockFromURLOptions{Range: blob.HTTPRange{Offset: 1000, Count: 500}})
	must(t, err)
	if !bytes.Equal(read("append"), data[1000:1500]) {
		t.Fatal("Append Block From URL content differs")
	}
	pb := cc.NewPageBlobClient("pages")
	_, err = pb.Create(e.ctx, 4096, nil)
	must(t, err)
	_, err = pb.UploadPagesFromURL(e.ctx, sasURL, 512, 1024, 1024, nil)
	must(t, err)
	wantPages := make([]byte, 4096)
	copy(wantPages[1024:2048], data[512:1536])
	if !bytes.Equal(read("pages"), wantPages) {
		t.Fatal("Put Page From URL content differs")
	}

	// A destination authorized by a SAS grants nothing on the source
	// file: without a SAS of its own, 401 CannotVerifyCopySource.
	sasCred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	qp, err := blobsas.BlobSignatureValues{
		Protocol: blobsas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().UTC().Add(time.Hour),
		ContainerName: "dst", Permissions: (&blobsas.ContainerPermissions{Read: true, Write: true, Create: true}).String(),
	}.SignWithSharedKey(sasCred)
	must(t, err)
	sasDst, err := container.NewClientWithNoCredential(cc.URL()+"?"+qp.Encode(), &container.ClientOptions{ClientOptions: clientOptions().ClientOptions})
	must(t, err)
	_, err = sasDst.NewBlobClient("viasas").StartCopyFromURL(e.ctx, src.URL(), nil)
	wantCode(t, err, http.StatusUnauthorized, bloberror.CannotVerifyCopySource)
	_, err = sasDst.NewBlobClient("viasas").StartCopyFromURL(e.ctx, sasURL, nil)
	must(t, err)

	// A file that does not exist; a SAS that does not verify.
	_, err = cc.NewBlobClient("none").StartCopyFromURL(e.ctx, fileAt(s, "missing").URL(), nil)
	wantCode(t, err, http.StatusNotFound, bloberror.CannotVerifyCopySource)
	_, err = cc.NewBlockBlobClient("bad").UploadBlobFromURL(e.ctx, sasURL+"x", nil)
	wantCode(t, err, http.StatusForbidden, bloberror.CannotVerifyCopySource)
	_, err = cc.NewBlobClient("bad").GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
}

// TestCopyFileToBlobLockedRange: an SMB client's exclusive byte-range
// lock on a file refuses the blob copies that read a locked byte and
// only those: a copy reads its source as Get File of the range it takes
// does, and Get File of an unlocked range of a file with locks succeeds.
func TestCopyFileToBlobLockedRange(t *testing.T) {
	e := xcStart(t)
	v := smbfs.New(e.file.app.File, "e2e-smb")
	must(t, v.Heartbeat(e.ctx, e.file.clock.Now().Add(time.Hour)))
	s := e.file.share()
	data := fiRand(4096)
	src := e.file.mkfile(s, "locked.bin", int64(len(data)))
	e.file.put(src, 0, data)
	const shareRWD = 7 // FILE_SHARE_READ|WRITE|DELETE
	o, err := v.Open(e.ctx, cfile.OpenRequest{Account: app.DevAccount, Share: fiShareName(t, s), Path: []string{"locked.bin"},
		DesiredAccess: cfile.FileAllAccess, ShareAccess: shareRWD, Disposition: cfile.DispOpen, SessionID: "e2e", ClientAddr: "127.0.0.1:445"})
	must(t, err)
	locked := []cfile.LockRange{{Offset: 1000, Length: 100, Exclusive: true}}
	must(t, v.Lock(e.ctx, o, locked))

	_, err = e.blob.CreateContainer(e.ctx, "dst", nil)
	must(t, err)
	cc := e.blob.ServiceClient().NewContainerClient("dst")
	sasURL := fiSourceSAS(t, s, "locked.bin", filesas.FilePermissions{Read: true})
	bb := cc.NewBlockBlobClient("blocks")
	stage := func(off, n int64) error {
		_, err := bb.StageBlockFromURL(e.ctx, base64.StdEncoding.EncodeToString([]byte("blk")), sasURL,
			&blockblob.StageBlockFromURLOptions{Range: blob.HTTPRange{Offset: off, Count: n}})
		return err
	}
	// Ranges beside the lock read; ranges touching it do not.
	must(t, stage(0, 1000))
	must(t, stage(1100, 2996))
	wantCode(t, stage(999, 2), http.StatusConflict, bloberror.CannotVerifyCopySource)
	wantCode(t, stage(1099, 10), http.StatusConflict, bloberror.CannotVerifyCopySource)
	ab := cc.NewAppendBlobClient("append")
	_, err = ab.Create(e.ctx, nil)
	must(t, err)
	_, err = ab.AppendBlockFromURL(e.ctx, sasURL, &appendblob.AppendBlockFromURLOptions{Range: blob.HTTPRange{Offset: 2048, Count: 1024}})
	must(t, err)
	_, err = ab.AppendBlockFromURL(e.ctx, sasURL, &appendblob.AppendBlockFromURLOptions{Range: blob.HTTPRange{Offset: 512, Count: 1024}})
	wantCode(t, err, http.StatusConflict, bloberror.CannotVerifyCopySource)
	// Whole-file copies read the locked bytes.
	_, err = cc.NewBlobClient("copied").StartCopyFromURL(e.ctx, src.URL(), nil)
	wantCode(t, err, http.StatusConflict, bloberror.CannotVerifyCopySource)
	_, err = cc.NewBlockBlobClient("put").UploadBlobFromURL(e.ctx, sasURL, nil)
	wantCode(t, err, http.StatusConflict, bloberror.CannotVerifyCopySource)

	// Unlocked, every copy reads.
	must(t, v.Unlock(e.ctx, o, locked))
	must(t, stage(999, 2))
	_, err = cc.NewBlobClient("copied").StartCopyFromURL(e.ctx, src.URL(), nil)
	must(t, err)
	_, err = v.Close(e.ctx, o)
	must(t, err)
}

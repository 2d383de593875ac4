package e2e

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"sync"
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
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/auth"
)

// TestDLAppendBlobOnPath: on a hierarchical account Put Blob of an
// append blob creates a file (with its missing parents) whose blob type
// is AppendBlob; Append Block commits at once under its conditions
// (appendpos, maxsize, If-*, the path's lease); the file's type, block
// count and seal are what Get Blob Properties and List Blobs report;
// the block blob APIs are refused on it with the flat account's
// InvalidBlobType, Append Block on a block blob file too; the dfs append
// commits at once at its length; Seal stops appends; a rename moves it
// with its type, a dfs Create over it makes a new (block blob) file, and
// Path - Create with blobtype=appendblob makes one.
func TestDLAppendBlobOnPath(t *testing.T) {
	e := startDL(t, true)
	e.mkfs("logs")
	bc := client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("logs")
	ab := bc.NewAppendBlobClient("app/2026/run.log")
	_, err := ab.Create(e.ctx, &appendblob.CreateOptions{Metadata: map[string]*string{"k": to.Ptr("v")}})
	must(t, err)
	if got := strings.Join(listAll(t, e, e.fs("logs"), "", true, 100), ","); got != "app/,app/2026/,app/2026/run.log" {
		t.Fatalf("paths after Put Blob of an append blob: %s", got)
	}
	p, err := ab.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.BlobType != blob.BlobTypeAppendBlob || *p.ContentLength != 0 || *p.BlobCommittedBlockCount != 0 || len(p.Metadata) != 1 {
		t.Fatalf("new append file: %s size %d count %d", *p.BlobType, *p.ContentLength, *p.BlobCommittedBlockCount)
	}

	r, err := ab.AppendBlock(e.ctx, body([]byte("hello ")), nil)
	must(t, err)
	if *r.BlobAppendOffset != "0" || *r.BlobCommittedBlockCount != 1 {
		t.Fatalf("first append: offset %s count %d", *r.BlobAppendOffset, *r.BlobCommittedBlockCount)
	}
	r, err = ab.AppendBlock(e.ctx, body([]byte("world")), btAppendPos(6))
	must(t, err)
	if *r.BlobAppendOffset != "6" || *r.BlobCommittedBlockCount != 2 {
		t.Fatalf("second append: offset %s count %d", *r.BlobAppendOffset, *r.BlobCommittedBlockCount)
	}
	// Committed at once: both APIs read it, no flush.
	if got := readBlob(t, e.ctx, ab.BlobClient()); string(got) != "hello world" {
		t.Fatalf("blob read %q", got)
	}
	if got := download(t, e, e.fs("logs").NewFileClient("app/2026/run.log")); string(got) != "hello world" {
		t.Fatalf("dfs read %q", got)
	}
	fp, err := e.fs("logs").NewFileClient("app/2026/run.log").GetProperties(e.ctx, nil)
	must(t, err)
	if *fp.ContentLength != 11 || *fp.ETag != *r.ETag {
		t.Fatalf("dfs properties: size %d etag %s, append answered %s", *fp.ContentLength, *fp.ETag, *r.ETag)
	}

	// The append conditions, as on a flat account.
	_, err = ab.AppendBlock(e.ctx, body([]byte("x")), btAppendPos(3))
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.AppendPositionConditionNotMet)
	_, err = ab.AppendBlock(e.ctx, body([]byte("xy")), &appendblob.AppendBlockOptions{AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{MaxSize: to.Ptr(int64(12))}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.MaxBlobSizeConditionNotMet)
	_, err = ab.AppendBlock(e.ctx, body([]byte("x")), &appendblob.AppendBlockOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag(`"0x1"`))}}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = ab.AppendBlock(e.ctx, body([]byte("!")), &appendblob.AppendBlockOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: r.ETag}}})
	must(t, err)

	// The path's lease guards Append Block.
	lc, err := lease.NewBlobClient(ab, &lease.BlobClientOptions{LeaseID: to.Ptr("11111111-1111-1111-1111-111111111111")})
	must(t, err)
	_, err = lc.AcquireLease(e.ctx, -1, nil)
	must(t, err)
	_, err = ab.AppendBlock(e.ctx, body([]byte("x")), nil)
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.LeaseIDMissing)
	_, err = ab.AppendBlock(e.ctx, body([]byte("?")), &appendblob.AppendBlockOptions{AccessConditions: &blob.AccessConditions{
		LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: lc.LeaseID()}}})
	must(t, err)
	_, err = lc.ReleaseLease(e.ctx, nil)
	must(t, err)

	// Listed with its type.
	pager := bc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr("app/2026/")})
	page, err := pager.NextPage(e.ctx)
	must(t, err)
	if n := len(page.Segment.BlobItems); n != 1 || *page.Segment.BlobItems[0].Properties.BlobType != blob.BlobTypeAppendBlob ||
		*page.Segment.BlobItems[0].Properties.ContentLength != 13 {
		t.Fatalf("listing of the append file: %d items", n)
	}

	// What an append blob is not: block blob writes, a tier, the dfs
	// append; and Append Block on a block blob file.
	_, err = bc.NewBlockBlobClient("app/2026/run.log").StageBlock(e.ctx, base64.StdEncoding.EncodeToString([]byte("b1")), body([]byte("x")), nil)
	wantCode(t, err, http.StatusConflict, bloberror.InvalidBlobType)
	_, err = bc.NewBlockBlobClient("app/2026/run.log").CommitBlockList(e.ctx, nil, nil)
	wantCode(t, err, http.StatusConflict, bloberror.InvalidBlobType)
	_, err = bc.NewBlockBlobClient("app/2026/run.log").GetBlockList(e.ctx, blockblob.BlockListTypeAll, nil)
	wantCode(t, err, http.StatusConflict, bloberror.InvalidBlobType)
	_, err = ab.BlobClient().SetTier(e.ctx, blob.AccessTierCool, nil)
	wantRaw(t, err, http.StatusBadRequest, "AccessTierNotSupportedForBlobType")
	_, err = bc.NewBlockBlobClient("block.txt").Upload(e.ctx, body([]byte("b")), nil)
	must(t, err)
	_, err = bc.NewAppendBlobClient("block.txt").AppendBlock(e.ctx, body([]byte("x")), nil)
	wantCode(t, err, http.StatusConflict, bloberror.InvalidBlobType)
	_, err = bc.NewAppendBlobClient("app").AppendBlock(e.ctx, body([]byte("x")), nil)
	wantCode(t, err, http.StatusConflict, bloberror.InvalidBlobType)
	_, err = bc.NewAppendBlobClient("missing.log").AppendBlock(e.ctx, body([]byte("x")), nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)

	// The dfs append commits at once on an append blob, at its length
	// only; a flush there only gives it a new ETag.
	fc := e.fs("logs").NewFileClient("app/2026/run.log")
	_, err = fc.AppendData(e.ctx, 12, body([]byte("#")), nil)
	wantDL(t, err, http.StatusBadRequest, "InvalidQueryParameterValue")
	_, err = fc.AppendData(e.ctx, 13, body([]byte("#")), nil)
	must(t, err)
	if got := readBlob(t, e.ctx, ab.BlobClient()); string(got) != "hello world!?#" {
		t.Fatalf("after a dfs append: %q", got)
	}
	_, err = fc.FlushData(e.ctx, 15, nil)
	wantDL(t, err, http.StatusBadRequest, "InvalidFlushPosition")
	_, err = fc.FlushData(e.ctx, 14, nil)
	must(t, err)

	// Seal: no more appends.
	_, err = ab.Seal(e.ctx, &appendblob.SealOptions{AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: to.Ptr(int64(5))}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.AppendPositionConditionNotMet)
	_, err = ab.Seal(e.ctx, nil)
	must(t, err)
	_, err = ab.AppendBlock(e.ctx, body([]byte("x")), nil)
	wantRaw(t, err, http.StatusConflict, "BlobIsSealed")
	_, err = fc.AppendData(e.ctx, 14, body([]byte("x")), nil)
	// The wire's BlobIsSealed, as the datalake SDK shows it (its
	// exported.ConvertToDFSError turns "Blob" into "Path").
	wantDL(t, err, http.StatusConflict, "PathIsSealed")
	if p, err = ab.GetProperties(e.ctx, nil); err != nil || p.IsSealed == nil || !*p.IsSealed || *p.BlobCommittedBlockCount != 5 {
		t.Fatalf("after Seal: sealed %v count %v err %v", p.IsSealed, p.BlobCommittedBlockCount, err)
	}

	// A rename moves it, type, seal and content; a dfs Create over it
	// makes a new, block blob, file.
	_, err = e.fs("logs").NewFileClient("app/2026/run.log").Rename(e.ctx, "app/moved.log", nil)
	must(t, err)
	moved := bc.NewAppendBlobClient("app/moved.log")
	if p, err = moved.GetProperties(e.ctx, nil); err != nil || *p.BlobType != blob.BlobTypeAppendBlob || !*p.IsSealed || *p.ContentLength != 14 {
		t.Fatalf("after the rename: %v", err)
	}
	if got := readBlob(t, e.ctx, moved.BlobClient()); string(got) != "hello world!?#" {
		t.Fatalf("after the rename: %q", got)
	}
	_, err = e.fs("logs").NewFileClient("app/moved.log").Create(e.ctx, nil)
	must(t, err)
	if p, err = moved.GetProperties(e.ctx, nil); err != nil || *p.BlobType != blob.BlobTypeBlockBlob || *p.ContentLength != 0 {
		t.Fatalf("after a dfs Create over it: %v", err)
	}
	// Path - Create with blobtype=appendblob (Hadoop ABFS's append blob
	// files) makes an append blob file, which the dfs append writes.
	resp, _ := e.raw(http.MethodPut, "/logs/abfs/part.log?resource=file&blobtype=appendblob", nil, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("Path - Create blobtype=appendblob: %d", resp.StatusCode)
	}
	resp, _ = e.raw(http.MethodPut, "/logs/abfs/dir?resource=directory&blobtype=appendblob", nil, nil)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "InvalidQueryParameterValue" {
		t.Fatalf("a directory with blobtype: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	part := e.fs("logs").NewFileClient("abfs/part.log")
	_, err = part.AppendData(e.ctx, 0, body([]byte("abc")), &file.AppendDataOptions{Flush: to.Ptr(true)})
	must(t, err)
	_, err = part.AppendData(e.ctx, 3, body([]byte("de")), nil)
	must(t, err)
	pb := bc.NewAppendBlobClient("abfs/part.log")
	if p, err = pb.GetProperties(e.ctx, nil); err != nil || *p.BlobType != blob.BlobTypeAppendBlob || *p.BlobCommittedBlockCount != 2 {
		t.Fatalf("the ABFS append blob file: %v", err)
	}
	if got := download(t, e, part); string(got) != "abcde" {
		t.Fatalf("the ABFS append blob file: %q", got)
	}
	// The append's lease actions: acquire keeps the lease for the next
	// append, acquire-release holds one for the write alone.
	lid := "22222222-2222-2222-2222-222222222222"
	_, err = part.AppendData(e.ctx, 5, body([]byte("f")), &file.AppendDataOptions{LeaseAction: to.Ptr(file.LeaseActionAcquire),
		ProposedLeaseID: to.Ptr(lid), LeaseDuration: to.Ptr(int64(-1))})
	must(t, err)
	_, err = pb.AppendBlock(e.ctx, body([]byte("x")), nil)
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.LeaseIDMissing)
	lp, err := lease.NewBlobClient(pb, &lease.BlobClientOptions{LeaseID: to.Ptr(lid)})
	must(t, err)
	_, err = lp.ReleaseLease(e.ctx, nil)
	must(t, err)
	_, err = part.AppendData(e.ctx, 6, body([]byte("g")), &file.AppendDataOptions{LeaseAction: to.Ptr(file.LeaseActionAcquireRelease),
		ProposedLeaseID: to.Ptr(lid), LeaseDuration: to.Ptr(int64(15))})
	must(t, err)
	if p, err = pb.GetProperties(e.ctx, nil); err != nil || *p.LeaseState != lease.StateTypeAvailable || *p.ContentLength != 7 {
		t.Fatalf("after acquire-release: %v %v", p.LeaseState, err)
	}

	// Put Blob of an append blob over a file replaces it, and Delete Blob
	// removes it.
	_, err = moved.Create(e.ctx, nil)
	must(t, err)
	_, err = moved.AppendBlock(e.ctx, body([]byte("again")), btAppendPos(0))
	must(t, err)
	_, err = moved.Delete(e.ctx, nil)
	must(t, err)
	_, err = moved.GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
}

// TestDLAppendRacingAppends: two Append Blocks at the same
// x-ms-blob-condition-appendpos on one path: exactly one wins each
// round, the other is 412 AppendPositionConditionNotMet, and the file
// holds exactly the winners' blocks.
func TestDLAppendRacingAppends(t *testing.T) {
	e := startDL(t, true)
	e.mkfs("race")
	bc := client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("race")
	ab := bc.NewAppendBlobClient("d/race.log")
	_, err := ab.Create(e.ctx, nil)
	must(t, err)
	const rounds = 15
	var want []byte
	for round := range rounds {
		pos := int64(len(want))
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[w] = ab.AppendBlock(e.ctx, body([]byte{byte('a' + w), byte('0' + round%10)}), btAppendPos(pos))
			}()
		}
		wg.Wait()
		won := -1
		for w, err := range errs {
			if err == nil {
				if won >= 0 {
					t.Fatalf("round %d: both appends at %d won", round, pos)
				}
				won = w
				continue
			}
			var re *azcore.ResponseError
			if !errors.As(err, &re) || re.ErrorCode != string(bloberror.AppendPositionConditionNotMet) {
				t.Fatalf("round %d: the loser got %v", round, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: no append won", round)
		}
		want = append(want, byte('a'+won), byte('0'+round%10))
	}
	if got := readBlob(t, e.ctx, ab.BlobClient()); !bytes.Equal(got, want) {
		t.Fatalf("content %q, want %q", got, want)
	}
	p, err := ab.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.BlobCommittedBlockCount != rounds {
		t.Fatalf("block count %d, want %d", *p.BlobCommittedBlockCount, rounds)
	}
}

// TestDLAppendFromURL: the From URL writes onto paths of a hierarchical
// account, from a path of the same account and from a blob of another
// (flat) account authorized by its SAS: Put Blob From URL, Put Block
// From URL with Put Block List, Append Block From URL and Copy Blob From
// URL create the file and its parents as Put Blob does, under the same
// conditions; and a path is a From URL source for a flat account.
func TestDLAppendFromURL(t *testing.T) {
	const other = "otherflat"
	otherKey := base64.StdEncoding.EncodeToString([]byte("key of the flat account, 32 byte"))
	e := startDLWith(t, false, func(cfg *app.Config) *http.Client {
		dev, _ := base64.StdEncoding.DecodeString(app.DevKey)
		ok, _ := base64.StdEncoding.DecodeString(otherKey)
		cfg.Accounts = []auth.Account{{Name: app.DevAccount, Keys: [][]byte{dev}}, {Name: other, Keys: [][]byte{ok}}}
		cfg.HierarchicalAccounts = []string{app.DevAccount}
		return &http.Client{Timeout: time.Minute}
	})
	e.mkfs("dst")
	dev := client(t, e.app.BlobURL, app.DevKey)
	bc := dev.ServiceClient().NewContainerClient("dst")
	data := []byte("0123456789abcdefghij")
	_, err := bc.NewBlockBlobClient("src/data.bin").Upload(e.ctx, body(data), nil)
	must(t, err)
	src := bc.NewBlobClient("src/data.bin").URL()

	// The flat account's blob, read with its SAS.
	root := e.app.BlobURL[:strings.LastIndex(e.app.BlobURL, "/")]
	ocred, err := azblob.NewSharedKeyCredential(other, otherKey)
	must(t, err)
	oc, err := azblob.NewClientWithSharedKeyCredential(root+"/"+other, ocred, clientOptions())
	must(t, err)
	_, err = oc.CreateContainer(e.ctx, "flat", nil)
	must(t, err)
	_, err = oc.UploadBuffer(e.ctx, "flat", "blob", []byte("from the flat account"), nil)
	must(t, err)
	qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ContainerName: "flat", BlobName: "blob",
		Permissions: "r", ExpiryTime: time.Now().Add(time.Hour)}.SignWithSharedKey(ocred)
	must(t, err)
	flatSrc := oc.ServiceClient().NewContainerClient("flat").NewBlobClient("blob").URL() + "?" + qp.Encode()

	// Put Blob From URL: parents created, content shared.
	_, err = bc.NewBlockBlobClient("put/a/b.bin").UploadBlobFromURL(e.ctx, src, nil)
	must(t, err)
	_, err = bc.NewBlockBlobClient("put/flat.bin").UploadBlobFromURL(e.ctx, flatSrc, nil)
	must(t, err)
	if got := readBlob(t, e.ctx, bc.NewBlobClient("put/a/b.bin")); !bytes.Equal(got, data) {
		t.Fatalf("Put Blob From URL of a path: %q", got)
	}
	if got := download(t, e, e.fs("dst").NewFileClient("put/flat.bin")); string(got) != "from the flat account" {
		t.Fatalf("Put Blob From URL from the flat account: %q", got)
	}
	// Its conditions: If-None-Match: * on an existing file.
	_, err = bc.NewBlockBlobClient("put/a/b.bin").UploadBlobFromURL(e.ctx, src, &blockblob.UploadBlobFromURLOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}})
	wantCode(t, err, http.StatusConflict, bloberror.BlobAlreadyExists)
	// A directory is no source, a missing path neither.
	_, err = bc.NewBlockBlobClient("put/c.bin").UploadBlobFromURL(e.ctx, bc.NewBlobClient("put/a").URL(), nil)
	wantCode(t, err, http.StatusNotFound, bloberror.CannotVerifyCopySource)

	// Put Block From URL, then Put Block List.
	bb := bc.NewBlockBlobClient("staged/x.bin")
	id1, id2 := base64.StdEncoding.EncodeToString([]byte("blk1")), base64.StdEncoding.EncodeToString([]byte("blk2"))
	_, err = bb.StageBlockFromURL(e.ctx, id1, src, &blockblob.StageBlockFromURLOptions{Range: blob.HTTPRange{Offset: 10, Count: 5}})
	must(t, err)
	_, err = bb.StageBlockFromURL(e.ctx, id2, flatSrc, &blockblob.StageBlockFromURLOptions{Range: blob.HTTPRange{Offset: 0, Count: 4}})
	must(t, err)
	_, err = bb.CommitBlockList(e.ctx, []string{id1, id2}, nil)
	must(t, err)
	if got := readBlob(t, e.ctx, bb.BlobClient()); string(got) != "abcdefrom" {
		t.Fatalf("Put Block From URL + Put Block List: %q", got)
	}

	// Append Block From URL onto an append file, with its conditions.
	ab := bc.NewAppendBlobClient("app/log")
	_, err = ab.Create(e.ctx, nil)
	must(t, err)
	r, err := ab.AppendBlockFromURL(e.ctx, src, &appendblob.AppendBlockFromURLOptions{Range: blob.HTTPRange{Offset: 0, Count: 3}})
	must(t, err)
	if *r.BlobAppendOffset != "0" || *r.BlobCommittedBlockCount != 1 {
		t.Fatalf("Append Block From URL: offset %s count %d", *r.BlobAppendOffset, *r.BlobCommittedBlockCount)
	}
	_, err = ab.AppendBlockFromURL(e.ctx, flatSrc, &appendblob.AppendBlockFromURLOptions{Range: blob.HTTPRange{Offset: 5, Count: 4},
		AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: to.Ptr(int64(3))}})
	must(t, err)
	_, err = ab.AppendBlockFromURL(e.ctx, src, &appendblob.AppendBlockFromURLOptions{Range: blob.HTTPRange{Offset: 0, Count: 3},
		AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: to.Ptr(int64(3))}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.AppendPositionConditionNotMet)
	_, err = bc.NewAppendBlobClient("put/a/b.bin").AppendBlockFromURL(e.ctx, src, nil)
	wantCode(t, err, http.StatusConflict, bloberror.InvalidBlobType)
	if got := readBlob(t, e.ctx, ab.BlobClient()); string(got) != "012the " {
		t.Fatalf("Append Block From URL: %q", got)
	}

	// Copy Blob From URL (synchronous) onto a path, of a path and of the
	// flat account's blob; an append blob is no source for it.
	_, err = bc.NewBlobClient("copy/a.bin").CopyFromURL(e.ctx, src, nil)
	must(t, err)
	_, err = bc.NewBlobClient("copy/flat.bin").CopyFromURL(e.ctx, flatSrc, nil)
	must(t, err)
	if got := readBlob(t, e.ctx, bc.NewBlobClient("copy/a.bin")); !bytes.Equal(got, data) {
		t.Fatalf("Copy Blob From URL: %q", got)
	}
	if got := readBlob(t, e.ctx, bc.NewBlobClient("copy/flat.bin")); string(got) != "from the flat account" {
		t.Fatalf("Copy Blob From URL of the flat blob: %q", got)
	}
	_, err = bc.NewBlobClient("copy/b.bin").CopyFromURL(e.ctx, ab.URL(), nil)
	wantCode(t, err, http.StatusConflict, bloberror.InvalidSourceBlobType)
	// Copy Blob (asynchronous) of an append file makes an append file.
	_, err = bc.NewBlobClient("copy/log").StartCopyFromURL(e.ctx, ab.URL(), nil)
	must(t, err)
	p, err := bc.NewBlobClient("copy/log").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.BlobType != blob.BlobTypeAppendBlob || *p.BlobCommittedBlockCount != 2 || *p.ContentLength != 7 {
		t.Fatalf("copy of an append file: %s count %d size %d", *p.BlobType, *p.BlobCommittedBlockCount, *p.ContentLength)
	}
	// Appending keeps the copy properties, as on a flat account.
	_, err = bc.NewAppendBlobClient("copy/log").AppendBlock(e.ctx, body([]byte("+")), nil)
	must(t, err)
	if p, err = bc.NewBlobClient("copy/log").GetProperties(e.ctx, nil); err != nil || p.CopyID == nil || *p.ContentLength != 8 {
		t.Fatalf("copy properties after an append: %v %v", p.CopyID, err)
	}
	// An asynchronous copy keeps the destination's blob type.
	_, err = bc.NewBlobClient("copy/log").StartCopyFromURL(e.ctx, src, nil)
	wantCode(t, err, http.StatusConflict, bloberror.InvalidBlobType)

	// A path as the source of the flat account's From URL writes, with
	// the hierarchical account's SAS.
	dcred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	dq, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ContainerName: "dst", BlobName: "app/log",
		Permissions: "r", ExpiryTime: time.Now().Add(time.Hour)}.SignWithSharedKey(dcred)
	must(t, err)
	pathSrc := ab.URL() + "?" + dq.Encode()
	fc := oc.ServiceClient().NewContainerClient("flat")
	_, err = fc.NewBlockBlobClient("from-path").UploadBlobFromURL(e.ctx, pathSrc, nil)
	must(t, err)
	if got := readBlob(t, e.ctx, fc.NewBlobClient("from-path")); string(got) != "012the " {
		t.Fatalf("flat Put Blob From URL of a path: %q", got)
	}
}

// TestDLAppendACL: with --oauth basic, the append blob and From URL
// writes on paths check a bearer caller against the ACLs as the other
// Blob writes do: write on the file to append or seal, write and execute
// on the parent to create, read on a path that is a From URL source; 403
// AuthorizationPermissionMismatch otherwise.
func TestDLAppendACL(t *testing.T) {
	e, hc := startDLBearer(t)
	su := e.mkfs("acl")
	if resp, out := e.raw(http.MethodPatch, "/acl/?action=setAccessControl", map[string]string{"x-ms-permissions": "0755"}, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("root permissions: %d %s", resp.StatusCode, out)
	}
	_, err := su.NewDirectoryClient("open").Create(e.ctx, &directory.CreateOptions{Permissions: to.Ptr("0777"), Umask: to.Ptr("0000")})
	must(t, err)
	_, err = su.NewDirectoryClient("closed").Create(e.ctx, &directory.CreateOptions{Permissions: to.Ptr("0755"), Umask: to.Ptr("0000")})
	must(t, err)
	fc := su.NewFileClient("closed/secret")
	_, err = fc.Create(e.ctx, &file.CreateOptions{Permissions: to.Ptr("0600"), Umask: to.Ptr("0000")})
	must(t, err)
	must(t, fc.UploadBuffer(e.ctx, []byte("secret"), nil))
	// An append blob file of the superuser's, 0600.
	if resp, out := e.raw(http.MethodPut, "/acl/open/su.log?resource=file&blobtype=appendblob", map[string]string{"x-ms-permissions": "0600", "x-ms-umask": "0000"}, nil); resp.StatusCode != http.StatusCreated {
		t.Fatalf("append blob file: %d %s", resp.StatusCode, out)
	}
	_, err = su.NewFileClient("open/su.log").AppendData(e.ctx, 0, body([]byte("su")), nil)
	must(t, err)
	u1, err := azblob.NewClient(e.app.BlobURL, principalToken{oid: "u1"}, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}})
	must(t, err)
	c := u1.ServiceClient().NewContainerClient("acl")

	// Its own append file in the open directory.
	mine := c.NewAppendBlobClient("open/mine.log")
	_, err = mine.Create(e.ctx, nil)
	must(t, err)
	_, err = mine.AppendBlock(e.ctx, body([]byte("mine")), nil)
	must(t, err)
	// Not in a directory it may not write.
	_, err = c.NewAppendBlobClient("closed/x.log").Create(e.ctx, nil)
	wantRaw(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	// Another's file it may not write: no append, no seal.
	_, err = c.NewAppendBlobClient("open/su.log").AppendBlock(e.ctx, body([]byte("x")), nil)
	wantRaw(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = c.NewAppendBlobClient("open/su.log").Seal(e.ctx, nil)
	wantRaw(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	// A source it may not read, a destination it may not create.
	_, err = c.NewBlockBlobClient("open/copy").UploadBlobFromURL(e.ctx, c.NewBlobClient("closed/secret").URL(), nil)
	wantRaw(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = mine.AppendBlockFromURL(e.ctx, c.NewBlobClient("closed/secret").URL(), nil)
	wantRaw(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = c.NewBlockBlobClient("closed/copy").UploadBlobFromURL(e.ctx, mine.URL(), nil)
	wantRaw(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	// Its own file as the source, into the open directory.
	_, err = c.NewBlockBlobClient("open/copy").UploadBlobFromURL(e.ctx, mine.URL(), nil)
	must(t, err)
	_, err = mine.AppendBlockFromURL(e.ctx, c.NewBlobClient("open/copy").URL(), nil)
	must(t, err)
	if got := download(t, e, su.NewFileClient("open/mine.log")); string(got) != "minemine" {
		t.Fatalf("read back %q", got)
	}
}

// TestDLAppendFlatCreate: on a flat account the dfs endpoint's Path -
// Create with blobtype=appendblob makes an append blob, as on a
// hierarchical one; another blobtype, or one on a directory, is 400
// InvalidQueryParameterValue.
func TestDLAppendFlatCreate(t *testing.T) {
	e := startDL(t, false)
	e.mkfs("flat")
	if resp, out := e.raw(http.MethodPut, "/flat/a.log?resource=file&blobtype=appendblob", nil, nil); resp.StatusCode != http.StatusCreated {
		t.Fatalf("Path - Create blobtype=appendblob: %d %s", resp.StatusCode, out)
	}
	for _, q := range []string{"resource=file&blobtype=pageblob", "resource=directory&blobtype=appendblob"} {
		if resp, _ := e.raw(http.MethodPut, "/flat/b?"+q, nil, nil); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "InvalidQueryParameterValue" {
			t.Fatalf("%s: %d %s", q, resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
	}
	ab := client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("flat").NewAppendBlobClient("a.log")
	_, err := ab.AppendBlock(e.ctx, body([]byte("x")), nil)
	must(t, err)
	p, err := ab.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.BlobType != blob.BlobTypeAppendBlob || *p.ContentLength != 1 {
		t.Fatalf("the file: %s %d", *p.BlobType, *p.ContentLength)
	}
}

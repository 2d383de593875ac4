package e2e

import (
	"encoding/base64"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestContainerWORMHierarchical: container-level WORM on an account with
// a hierarchical namespace (blob/hns_worm.go), through the Data Lake SDK
// and azblob, both dating their requests by the server's fake clock: a
// policy and a legal hold are accepted on a filesystem; new files and
// directories are created and ACLs changed; an overwrite, append and
// flush (without allowProtectedAppendWritesAll), delete, recursive
// delete (nothing removed), rename and move of a protected file or of a
// directory holding one, and the Blob API's overwrite, metadata,
// properties, snapshot and delete are refused by status and code; with
// allowProtectedAppendWritesAll (the policy's, the hold's) appends and
// flushes pass; past the retention, with the hold cleared, a file is
// deleted and renamed, and the filesystem is still not deleted while it
// holds paths.
func TestContainerWORMHierarchical(t *testing.T) {
	e := startDL(t, true)
	opts := *e.opts
	opts.PerCallPolicies = append(opts.PerCallPolicies, sdDatePolicy{e.clock})
	svc, err := service.NewClientWithSharedKeyCredential(e.app.DFSURL, e.cred, &opts)
	must(t, err)
	bopts := clientOptions()
	bopts.PerCallPolicies = append(bopts.PerCallPolicies, sdDatePolicy{e.clock})
	bcred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	bs, err := azblob.NewClientWithSharedKeyCredential(e.app.BlobURL, bcred, bopts)
	must(t, err)
	adm := newWORMAdmin(t, e.app.BlobURL, e.clock)
	fs := svc.NewFileSystemClient("hier")
	_, err = fs.Create(e.ctx, nil)
	must(t, err)
	bc := bs.ServiceClient().NewContainerClient("hier")

	a := fs.NewFileClient("d/a")
	_, err = a.Create(e.ctx, nil)
	must(t, err)
	_, err = a.AppendData(e.ctx, 0, body([]byte("abc")), &file.AppendDataOptions{Flush: to.Ptr(true)})
	must(t, err)

	pol := "hier/immutabilityPolicies/default"
	etag := adm.ok(http.MethodPut, pol, "", policyBody(2, nil))
	cp, err := bc.GetProperties(e.ctx, nil)
	must(t, err)
	if !*cp.HasImmutabilityPolicy || *cp.HasLegalHold {
		t.Fatalf("container properties: policy %v hold %v", *cp.HasImmutabilityPolicy, *cp.HasLegalHold)
	}
	const conflict = http.StatusConflict
	byPolicy, byHold := string(bloberror.BlobImmutableDueToPolicy), "BlobImmutableDueToLegalHold"

	// Creates pass.
	b := fs.NewFileClient("d/b")
	_, err = b.Create(e.ctx, nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("e").Create(e.ctx, nil)
	must(t, err)

	// Data Lake refusals.
	wantWire(t, get(a.Create(e.ctx, nil)), conflict, byPolicy)
	wantWire(t, get(a.AppendData(e.ctx, 3, body([]byte("x")), nil)), conflict, byPolicy)
	wantWire(t, get(a.FlushData(e.ctx, 3, nil)), conflict, byPolicy)
	wantWire(t, get(b.AppendData(e.ctx, 0, body([]byte("x")), nil)), conflict, byPolicy)
	wantWire(t, get(a.Delete(e.ctx, nil)), conflict, byPolicy)
	wantWire(t, get(fs.NewDirectoryClient("d").Delete(e.ctx, nil)), conflict, byPolicy)
	wantWire(t, get(a.Rename(e.ctx, "z", nil)), conflict, byPolicy)
	wantWire(t, get(fs.NewDirectoryClient("d").Rename(e.ctx, "e/d", nil)), conflict, byPolicy)
	wantWire(t, get(b.Rename(e.ctx, "d/a", nil)), conflict, byPolicy)
	wantWire(t, get(a.SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v")}, nil)), conflict, byPolicy)
	// Access control is neither content nor metadata.
	_, err = a.SetAccessControl(e.ctx, &file.SetAccessControlOptions{Permissions: to.Ptr("rwxr-x---")})
	must(t, err)
	// Nothing of d went.
	for _, p := range []string{"d/a", "d/b"} {
		if _, err := fs.NewFileClient(p).GetProperties(e.ctx, nil); err != nil {
			t.Fatalf("%s after the refusals: %v", p, err)
		}
	}
	if got := download(t, e, a); string(got) != "abc" {
		t.Fatalf("d/a: %q", got)
	}

	// Blob API refusals on the same file.
	ab := bc.NewBlockBlobClient("d/a")
	wantCode(t, get(ab.UploadBuffer(e.ctx, []byte("new"), nil)), conflict, bloberror.BlobImmutableDueToPolicy)
	wantCode(t, get(ab.SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v")}, nil)), conflict, bloberror.BlobImmutableDueToPolicy)
	wantCode(t, get(ab.SetHTTPHeaders(e.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain")}, nil)), conflict, bloberror.BlobImmutableDueToPolicy)
	wantCode(t, get(ab.CreateSnapshot(e.ctx, nil)), conflict, bloberror.BlobImmutableDueToPolicy)
	wantCode(t, get(ab.Delete(e.ctx, nil)), conflict, bloberror.BlobImmutableDueToPolicy)
	// A new blob is created; a copy of it and a block list onto d/a are
	// overwrites.
	_, err = bc.NewBlockBlobClient("d/c").UploadBuffer(e.ctx, []byte("c"), nil)
	must(t, err)
	wantCode(t, get(ab.CopyFromURL(e.ctx, bc.NewBlobClient("d/c").URL(), nil)), conflict, bloberror.BlobImmutableDueToPolicy)
	wantCode(t, get(ab.StartCopyFromURL(e.ctx, bc.NewBlobClient("d/c").URL(), nil)), conflict, bloberror.BlobImmutableDueToPolicy)
	blockID := base64.StdEncoding.EncodeToString([]byte("b1"))
	_, err = ab.StageBlock(e.ctx, blockID, body([]byte("staged")), nil)
	must(t, err)
	wantCode(t, get(ab.CommitBlockList(e.ctx, []string{blockID}, nil)), conflict, bloberror.BlobImmutableDueToPolicy)

	// allowProtectedAppendWritesAll: the Data Lake appends pass.
	etag = adm.ok(http.MethodPut, pol, etag, policyBody(2, map[string]any{"allowProtectedAppendWritesAll": true}))
	_, err = a.AppendData(e.ctx, 3, body([]byte("de")), &file.AppendDataOptions{Flush: to.Ptr(true)})
	must(t, err)
	_, err = b.AppendData(e.ctx, 0, body([]byte("x")), nil)
	must(t, err)
	_, err = b.FlushData(e.ctx, 1, nil)
	must(t, err)
	wantWire(t, get(a.Create(e.ctx, nil)), conflict, byPolicy)
	_ = etag

	// A legal hold: its code; its own allowProtectedAppendWritesAll.
	adm.ok(http.MethodPost, "hier/setLegalHold", "", map[string]any{"tags": []string{"case1"}})
	wantWire(t, get(a.AppendData(e.ctx, 5, body([]byte("f")), nil)), conflict, byHold)
	wantWire(t, get(a.Delete(e.ctx, nil)), conflict, byHold)
	adm.ok(http.MethodPost, "hier/setLegalHold", "", map[string]any{"tags": []string{"case1"}, "allowProtectedAppendWritesAll": true})
	_, err = a.AppendData(e.ctx, 5, body([]byte("f")), &file.AppendDataOptions{Flush: to.Ptr(true)})
	must(t, err)

	// Past the retention on the server's clock, still under the hold.
	e.clock.Advance(3 * 24 * time.Hour)
	wantWire(t, get(a.Delete(e.ctx, nil)), conflict, byHold)
	wantWire(t, get(fs.Delete(e.ctx, nil)), conflict, "ContainerHasLegalHold")
	adm.ok(http.MethodPost, "hier/clearLegalHold", "", map[string]any{"tags": []string{"case1"}})
	cp, err = bc.GetProperties(e.ctx, nil)
	must(t, err)
	if *cp.HasLegalHold {
		t.Fatal("hold still reported after clearLegalHold")
	}
	// The hold cleared: deletes and renames of files pass, an overwrite
	// does not, a directory that is not empty is not deleted.
	wantWire(t, get(fs.NewDirectoryClient("d").Delete(e.ctx, nil)), conflict, "DirectoryNotEmpty")
	wantWire(t, get(a.Create(e.ctx, nil)), conflict, byPolicy)
	_, err = b.Rename(e.ctx, "e/b", nil)
	must(t, err)
	_, err = a.Delete(e.ctx, nil)
	must(t, err)
	_, err = bc.NewBlockBlobClient("d/c").Delete(e.ctx, nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("d").Delete(e.ctx, nil)
	must(t, err)
	wantWire(t, get(fs.Delete(e.ctx, nil)), conflict, byPolicy)
}

// wantWire is wantDL on the code the server sent (x-ms-error-code): the
// Data Lake SDK renames the codes it returns (azdatalake
// internal/exported ConvertToDFSError: "Blob" to "Path", "Container" to
// "FileSystem"), so BlobImmutableDueToPolicy reaches its callers as
// PathImmutableDueToPolicy.
func wantWire(t *testing.T, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.RawResponse == nil {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
	if got := re.RawResponse.Header.Get("x-ms-error-code"); re.StatusCode != status || got != code {
		t.Fatalf("want %d %s, got %d %s", status, code, re.StatusCode, got)
	}
}

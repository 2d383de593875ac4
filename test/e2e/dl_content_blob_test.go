package e2e

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/datalakeerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// wantRaw asserts err is a response error with status and error code
// (codes the SDKs have no constant for).
func wantRaw(t *testing.T, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
}

// listFlat lists a container through azblob, pages of max, names with
// "(dir)" marking the hdi_isfolder blobs.
func listFlat(t *testing.T, e *dlEnv, c *container.Client, max int32) []string {
	t.Helper()
	pager := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{MaxResults: to.Ptr(max), Include: container.ListBlobsInclude{Metadata: true}})
	var out []string
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(t, err)
		if len(page.Segment.BlobItems) > int(max) {
			t.Fatalf("page of %d", len(page.Segment.BlobItems))
		}
		for _, b := range page.Segment.BlobItems {
			n := *b.Name
			if meta(b.Metadata, "hdi_isfolder") == "true" {
				n += "(dir)"
			}
			out = append(out, n)
		}
	}
	return out
}

// TestDLContentBlobInterop: one account, two views. azblob writes
// a/b/c.txt (Put Blob) and x/big.bin (Put Block, Put Block List) and the
// datalake SDK sees directories a, a/b and x; the datalake SDK writes a
// file that azblob reads, lists (flat, paged, and with a delimiter),
// changes and deletes.
func TestDLContentBlobInterop(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("interop")
	bs := client(t, e.app.BlobURL, app.DevKey)
	bc := bs.ServiceClient().NewContainerClient("interop")

	_, err := bs.UploadBuffer(e.ctx, "interop", "a/b/c.txt", []byte("from blob"), nil)
	must(t, err)
	big := randBytes(t, 3<<20+5)
	_, err = bs.UploadStream(e.ctx, "interop", "x/big.bin", bytes.NewReader(big), &azblob.UploadStreamOptions{BlockSize: 1 << 20, Concurrency: 3})
	must(t, err)
	if got := strings.Join(listAll(t, e, fs, "", true, 100), ","); got != "a/,a/b/,a/b/c.txt,x/,x/big.bin" {
		t.Fatalf("paths after blob writes: %s", got)
	}
	if got := download(t, e, fs.NewFileClient("a/b/c.txt")); string(got) != "from blob" {
		t.Fatalf("datalake read of a blob write: %q", got)
	}
	if got := download(t, e, fs.NewFileClient("x/big.bin")); !bytes.Equal(got, big) {
		t.Fatal("datalake read of a block list differs")
	}
	p, err := fs.NewFileClient("a/b/c.txt").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ResourceType != "file" || p.ContentMD5 == nil {
		t.Fatalf("properties of a blob write: %v %v", *p.ResourceType, p.ContentMD5)
	}

	// The datalake SDK writes; azblob reads and lists.
	_, err = fs.NewDirectoryClient("d").Create(e.ctx, nil)
	must(t, err)
	f := fs.NewFileClient("d/f.txt")
	_, err = f.Create(e.ctx, nil)
	must(t, err)
	must(t, f.UploadBuffer(e.ctx, []byte("from dfs"), nil))
	resp, err := bc.NewBlobClient("d/f.txt").DownloadStream(e.ctx, nil)
	must(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "from dfs" {
		t.Fatalf("blob read of a dfs write: %q", got)
	}
	want := "a(dir),a/b(dir),a/b/c.txt,d(dir),d/f.txt,x(dir),x/big.bin"
	for _, max := range []int32{1, 2, 3, 100} {
		if got := strings.Join(listFlat(t, e, bc, max), ","); got != want {
			t.Fatalf("flat list by %d: %s", max, got)
		}
	}
	var names []string
	pager := bc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{MaxResults: to.Ptr(int32(2))})
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(t, err)
		for _, b := range page.Segment.BlobItems {
			names = append(names, *b.Name)
		}
		for _, pr := range page.Segment.BlobPrefixes {
			names = append(names, *pr.Name)
		}
	}
	if got := strings.Join(names, ","); got != "a,a/,d,d/,x,x/" {
		t.Fatalf("list with delimiter: %s", got)
	}

	// The datalake SDK's ListDirectoryPaths and ListDeletedPaths (List
	// Blobs with showonly): directories only; no soft-deleted paths.
	var dirs []string
	dp := fs.NewListDirectoryPathsPager(&filesystem.ListDirectoryPathsOptions{MaxResults: to.Ptr(int32(2))})
	for dp.More() {
		page, err := dp.NextPage(e.ctx)
		must(t, err)
		for _, it := range page.Segment.PathItems {
			dirs = append(dirs, *it.Name)
		}
	}
	if got := strings.Join(dirs, ","); got != "a,a/b,d,x" {
		t.Fatalf("ListDirectoryPaths: %s", got)
	}
	dl := fs.NewListDeletedPathsPager(nil)
	for dl.More() {
		page, err := dl.NextPage(e.ctx)
		must(t, err)
		if len(page.Segment.PathItems) != 0 {
			t.Fatalf("deleted paths: %d", len(page.Segment.PathItems))
		}
	}
	// include=permissions shows the path properties.
	lp := bc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr("d/"), Include: container.ListBlobsInclude{Permissions: true}})
	page, err := lp.NextPage(e.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 1 || page.Segment.BlobItems[0].Properties.Owner == nil || *page.Segment.BlobItems[0].Properties.Owner != "$superuser" ||
		*page.Segment.BlobItems[0].Properties.ResourceType != "file" || *page.Segment.BlobItems[0].Properties.Permissions != "rw-r-----" {
		t.Fatalf("listed with permissions: %+v", page.Segment.BlobItems)
	}

	// azblob changes what the datalake SDK sees.
	_, err = bc.NewBlobClient("d/f.txt").SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v")}, nil)
	must(t, err)
	_, err = bc.NewBlobClient("d/f.txt").SetHTTPHeaders(e.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/x")}, nil)
	must(t, err)
	p, err = f.GetProperties(e.ctx, nil)
	must(t, err)
	if meta(p.Metadata, "k") != "v" || *p.ContentType != "text/x" {
		t.Fatalf("after blob set: %v %q", p.Metadata, *p.ContentType)
	}
	// The datalake SDK's own SetMetadata goes through the Blob API too.
	_, err = f.SetMetadata(e.ctx, map[string]*string{"k2": to.Ptr("v2")}, nil)
	must(t, err)
	p, err = f.GetProperties(e.ctx, nil)
	must(t, err)
	if meta(p.Metadata, "k2") != "v2" || meta(p.Metadata, "k") != "" {
		t.Fatalf("after datalake SetMetadata: %v", p.Metadata)
	}

	// Deletes: a file; a non-empty directory is refused.
	_, err = bc.NewBlobClient("a").Delete(e.ctx, nil)
	wantRaw(t, err, http.StatusConflict, "DirectoryNotEmpty")
	_, err = bc.NewBlobClient("d/f.txt").Delete(e.ctx, nil)
	must(t, err)
	_, err = f.GetProperties(e.ctx, nil)
	wantDL(t, err, 404, string(datalakeerror.PathNotFound))
	_, err = bc.NewBlobClient("d").Delete(e.ctx, nil)
	must(t, err)
	if got := strings.Join(listAll(t, e, fs, "", true, 100), ","); got != "a/,a/b/,a/b/c.txt,x/,x/big.bin" {
		t.Fatalf("paths after blob deletes: %s", got)
	}
	// An empty blob marked hdi_isfolder=true is a directory.
	_, err = bs.UploadBuffer(e.ctx, "interop", "made/by/blob", nil, &azblob.UploadBufferOptions{Metadata: map[string]*string{"hdi_isfolder": to.Ptr("true"), "k": to.Ptr("v")}})
	must(t, err)
	dprops, err := fs.NewDirectoryClient("made/by/blob").GetProperties(e.ctx, nil)
	must(t, err)
	if *dprops.ResourceType != "directory" || meta(dprops.Metadata, "k") != "v" {
		t.Fatalf("hdi_isfolder blob: %s %v", *dprops.ResourceType, dprops.Metadata)
	}
	_, err = fs.NewDirectoryClient("made").Delete(e.ctx, nil)
	must(t, err)
	// A name no path can have is 400 InvalidResourceName.
	_, err = bs.UploadBuffer(e.ctx, "interop", "a//b", []byte("x"), nil)
	wantRaw(t, err, http.StatusBadRequest, "InvalidResourceName")
	// Put Blob over a directory is refused; If-None-Match: * on a file is
	// BlobAlreadyExists.
	_, err = bs.UploadBuffer(e.ctx, "interop", "a/b", []byte("x"), nil)
	wantRaw(t, err, http.StatusConflict, "PathConflict")
	_, err = bs.UploadBuffer(e.ctx, "interop", "a/b/c.txt", []byte("x"), &azblob.UploadBufferOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}})
	wantCode(t, err, http.StatusConflict, bloberror.BlobAlreadyExists)
}

// TestDLContentBlobOnlyFeatures: Blob features a hierarchical account
// does not carry answer as Azure did there: page blobs are 400
// BlobTypeNotSupported (append blobs are served: dl_append_test.go); a lease id
// where there is no lease is 412 LeaseNotPresentWithBlobOperation. Copy
// Blob onto a path works and creates its parents.
func TestDLContentBlobOnlyFeatures(t *testing.T) {
	e := startDL(t, true)
	e.mkfs("only")
	bc := client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("only")
	_, err := bc.NewPageBlobClient("p").Create(e.ctx, 512, nil)
	wantRaw(t, err, http.StatusBadRequest, "BlobTypeNotSupported")
	_, err = bc.NewBlockBlobClient("b").Upload(e.ctx, body([]byte("x")), nil)
	must(t, err)
	_, err = bc.NewBlockBlobClient("b").SetMetadata(e.ctx, nil, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{
		LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: to.Ptr("00000000-0000-0000-0000-000000000001")}}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.LeaseNotPresentWithBlobOperation)
	// Copy Blob onto a path creates its parents and shares the content.
	cr, err := bc.NewBlockBlobClient("x/y/copy").StartCopyFromURL(e.ctx, bc.NewBlockBlobClient("b").URL(), nil)
	must(t, err)
	if cr.CopyStatus == nil || *cr.CopyStatus != "success" {
		t.Fatalf("copy status %v", cr.CopyStatus)
	}
	if got := strings.Join(listAll(t, e, e.fs("only"), "", true, 100), ","); got != "b,x/,x/y/,x/y/copy" {
		t.Fatalf("paths after the copy: %s", got)
	}
	if got := download(t, e, e.fs("only").NewFileClient("x/y/copy")); string(got) != "x" {
		t.Fatalf("copied content %q", got)
	}
	// Copying a directory: there is no such blob to copy.
	_, err = bc.NewBlockBlobClient("z").StartCopyFromURL(e.ctx, bc.NewBlockBlobClient("x").URL(), nil)
	wantCode(t, err, http.StatusNotFound, bloberror.CannotVerifyCopySource)
	// The file is the datalake SDK's too.
	p, err := e.fs("only").NewFileClient("b").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ContentLength != 1 {
		t.Fatalf("size %d", *p.ContentLength)
	}
}

// TestDLContentBlobViewACL: with --oauth basic, a bearer caller of the
// Blob API on a hierarchical account is checked against the paths' ACLs
// as on the dfs endpoint: traverse on the parents, read to download,
// write and execute on the parent to create; 403
// AuthorizationPermissionMismatch otherwise.
func TestDLContentBlobViewACL(t *testing.T) {
	e, hc := startDLBearer(t)
	su := e.mkfs("acl")
	resp, out := e.raw(http.MethodPatch, "/acl/?action=setAccessControl", map[string]string{"x-ms-permissions": "0755"}, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("root permissions: %d %s", resp.StatusCode, out)
	}
	for _, d := range []struct{ name, perm string }{{"private", "0700"}, {"open", "0777"}} {
		_, err := su.NewDirectoryClient(d.name).Create(e.ctx, &directory.CreateOptions{Permissions: to.Ptr(d.perm), Umask: to.Ptr("0000")})
		must(t, err)
	}
	for _, f := range []string{"private/f", "open/r"} {
		fc := su.NewFileClient(f)
		_, err := fc.Create(e.ctx, &file.CreateOptions{Permissions: to.Ptr("0640"), Umask: to.Ptr("0000")})
		must(t, err)
		must(t, fc.UploadBuffer(e.ctx, []byte("secret"), nil))
	}
	u1, err := azblob.NewClient(e.app.BlobURL, principalToken{oid: "u1"}, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}})
	must(t, err)
	c := u1.ServiceClient().NewContainerClient("acl")
	_, err = c.NewBlobClient("private/f").GetProperties(e.ctx, nil)
	wantRaw(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	// Traverse is enough for the properties; reading takes r.
	_, err = c.NewBlobClient("open/r").GetProperties(e.ctx, nil)
	must(t, err)
	_, err = c.NewBlobClient("open/r").DownloadStream(e.ctx, nil)
	wantRaw(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = c.NewBlobClient("open/r").SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v")}, nil)
	wantRaw(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = u1.UploadBuffer(e.ctx, "acl", "private/x", []byte("x"), nil)
	wantRaw(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	// A file of its own in the open directory: owned by u1, readable.
	_, err = u1.UploadBuffer(e.ctx, "acl", "open/mine", []byte("mine"), nil)
	must(t, err)
	ac, err := su.NewFileClient("open/mine").GetAccessControl(e.ctx, nil)
	must(t, err)
	if *ac.Owner != "u1" {
		t.Fatalf("owner %s", *ac.Owner)
	}
	dr, err := c.NewBlobClient("open/mine").DownloadStream(e.ctx, nil)
	must(t, err)
	got, _ := io.ReadAll(dr.Body)
	dr.Body.Close()
	if string(got) != "mine" {
		t.Fatalf("read back %q", got)
	}
	// A named group entry grants read to a caller whose token lists the
	// group in its groups claim, on the Blob API as on the dfs endpoint.
	_, err = su.NewFileClient("open/r").SetAccessControl(e.ctx, &file.SetAccessControlOptions{ACL: to.Ptr("user::rw-,group::---,group:g1:r--,mask::r--,other::---")})
	must(t, err)
	u2, err := azblob.NewClient(e.app.BlobURL, principalToken{oid: "u2", groups: []string{"g0", "g1"}}, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}})
	must(t, err)
	dr, err = u2.DownloadStream(e.ctx, "acl", "open/r", nil)
	must(t, err)
	got, _ = io.ReadAll(dr.Body)
	dr.Body.Close()
	if string(got) != "secret" {
		t.Fatalf("group member reads %q", got)
	}
	_, err = c.NewBlobClient("open/r").DownloadStream(e.ctx, nil)
	wantRaw(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	// Listing takes read and execute on every directory listed.
	var names []string
	pg := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr("open/")})
	for pg.More() {
		page, err := pg.NextPage(e.ctx)
		must(t, err)
		for _, b := range page.Segment.BlobItems {
			names = append(names, *b.Name)
		}
	}
	if got := strings.Join(names, ","); got != "open/mine,open/r" {
		t.Fatalf("u1 lists %s", got)
	}
	_, err = c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr("private/")}).NextPage(e.ctx)
	wantRaw(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = c.NewListBlobsFlatPager(nil).NextPage(e.ctx)
	wantRaw(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	// One level with a delimiter does not enter private.
	page, err := c.NewListBlobsHierarchyPager("/", nil).NextPage(e.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 2 || len(page.Segment.BlobPrefixes) != 2 {
		t.Fatalf("u1 lists the root: %d blobs, %d prefixes", len(page.Segment.BlobItems), len(page.Segment.BlobPrefixes))
	}
	// The dfs endpoint's append checks the same ACL.
	dl, err := service.NewClient(e.app.DFSURL, principalToken{oid: "u1"}, &service.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}})
	must(t, err)
	wantDL(t, get(dl.NewFileSystemClient("acl").NewFileClient("open/r").AppendData(e.ctx, 6, body([]byte("x")), nil)), 403, "AuthorizationPermissionMismatch")
}

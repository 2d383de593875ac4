package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
)

// listAll lists a filesystem (under dir, "" for all) through the SDK's
// pager, pages of max items, and returns the names ("name/" for
// directories).
func listAll(t *testing.T, e *dlEnv, fs *filesystem.Client, dir string, recursive bool, max int32) []string {
	t.Helper()
	opts := &filesystem.ListPathsOptions{MaxResults: to.Ptr(max)}
	if dir != "" {
		opts.Prefix = to.Ptr(dir)
	}
	pager := fs.NewListPathsPager(recursive, opts)
	var out []string
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(t, err)
		if len(page.Paths) > int(max) {
			t.Fatalf("page of %d paths, max %d", len(page.Paths), max)
		}
		for _, p := range page.Paths {
			n := *p.Name
			if p.IsDirectory != nil && *p.IsDirectory {
				n += "/"
			}
			out = append(out, n)
		}
	}
	return out
}

// TestDLPathCreateAndList: directories and files through the SDK, their
// access control on create, the create conditions, and List Paths in
// Azure's depth-first order, one level or all, paged.
func TestDLPathCreateAndList(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("paths")
	for _, d := range []string{"a", "a/x", "a-b", "b"} {
		_, err := fs.NewDirectoryClient(d).Create(e.ctx, nil)
		must(t, err)
	}
	for _, f := range []string{"a/x/f1", "a/f2", "top"} {
		_, err := fs.NewFileClient(f).Create(e.ctx, nil)
		must(t, err)
	}
	if got := strings.Join(listAll(t, e, fs, "", true, 2), ","); got != "a/,a/f2,a/x/,a/x/f1,a-b/,b/,top" {
		t.Fatalf("recursive list: %s", got)
	}
	if got := strings.Join(listAll(t, e, fs, "", false, 5000), ","); got != "a/,a-b/,b/,top" {
		t.Fatalf("one level: %s", got)
	}
	if got := strings.Join(listAll(t, e, fs, "a", true, 1), ","); got != "a/f2,a/x/,a/x/f1" {
		t.Fatalf("under a: %s", got)
	}
	_, err := fs.NewListPathsPager(true, &filesystem.ListPathsOptions{Prefix: to.Ptr("nope")}).NextPage(e.ctx)
	wantDL(t, err, 404, "PathNotFound")

	// Missing parents are created with the path (azcopy's BlobFS sender
	// relies on it); existing path with If-None-Match: *, a file in the
	// way of a directory.
	_, err = fs.NewFileClient("no/such/f").Create(e.ctx, nil)
	must(t, err)
	if p, err := fs.NewDirectoryClient("no/such").GetProperties(e.ctx, nil); err != nil || *p.ResourceType != "directory" {
		t.Fatalf("parent made by a file create: %v", err)
	}
	_, err = fs.NewDirectoryClient("no").Delete(e.ctx, nil)
	must(t, err)
	_, err = fs.NewFileClient("top").Create(e.ctx, &file.CreateOptions{AccessConditions: &file.AccessConditions{ModifiedAccessConditions: &file.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}})
	wantDL(t, err, 409, "PathAlreadyExists")
	_, err = fs.NewDirectoryClient("top").Create(e.ctx, nil)
	wantDL(t, err, 409, "PathConflict")

	// Permissions, umask, owner, group and ACL on create.
	_, err = fs.NewDirectoryClient("perm").Create(e.ctx, &directory.CreateOptions{Permissions: to.Ptr("0777"), Umask: to.Ptr("0022"), Owner: to.Ptr("u1"), Group: to.Ptr("g1")})
	must(t, err)
	ac, err := fs.NewDirectoryClient("perm").GetAccessControl(e.ctx, nil)
	must(t, err)
	if *ac.Permissions != "rwxr-xr-x" || *ac.Owner != "u1" || *ac.Group != "g1" || *ac.ACL != "user::rwx,group::r-x,other::r-x" {
		t.Fatalf("perm: %s %s %s %s", *ac.Permissions, *ac.Owner, *ac.Group, *ac.ACL)
	}
	_, err = fs.NewDirectoryClient("withdefault").Create(e.ctx, &directory.CreateOptions{ACL: to.Ptr("user::rwx,group::r-x,other::---,default:user::rwx,default:user:alice:r-x,default:group::r-x,default:other::---")})
	must(t, err)
	_, err = fs.NewFileClient("withdefault/child").Create(e.ctx, nil)
	must(t, err)
	fac, err := fs.NewFileClient("withdefault/child").GetAccessControl(e.ctx, nil)
	must(t, err)
	// The default ACL is inherited; a file's 0666 takes x away from the
	// owner and the mask (which limits alice and the group to r).
	if *fac.ACL != "user::rw-,user:alice:r-x,group::r-x,mask::r--,other::---" || *fac.Permissions != "rw-r-----+" || *fac.Owner != "$superuser" {
		t.Fatalf("inherited: %s %s %s", *fac.ACL, *fac.Permissions, *fac.Owner)
	}
	// Malformed permissions and ACLs: the codes of azure-sdk-for-net's
	// recorded SetPermissionsAsync_Error and SetAccessControlAsync_Error.
	_, err = fs.NewDirectoryClient("bad").Create(e.ctx, &directory.CreateOptions{Permissions: to.Ptr("rwxrwxrwz")})
	wantDL(t, err, 400, "InvalidPermission")
	_, err = fs.NewDirectoryClient("bad").Create(e.ctx, &directory.CreateOptions{ACL: to.Ptr("user::rwx")})
	wantDL(t, err, 400, "InvaldAccessControlList")
	_, err = fs.NewDirectoryClient("perm").SetAccessControl(e.ctx, &directory.SetAccessControlOptions{ACL: to.Ptr("asdf")})
	wantDL(t, err, 400, "InvaldAccessControlList")
	_, err = fs.NewDirectoryClient("perm").SetAccessControl(e.ctx, &directory.SetAccessControlOptions{Permissions: to.Ptr("asdf")})
	wantDL(t, err, 400, "InvalidPermission")
	_, err = fs.NewDirectoryClient("bad").Create(e.ctx, &directory.CreateOptions{Umask: to.Ptr("0999")})
	wantDL(t, err, 400, "InvalidHeaderValue")

	// getStatus and x-ms-properties through the dfs API.
	resp, _ := e.raw(http.MethodPut, "/paths/props?resource=file", map[string]string{"x-ms-properties": "k=dg==", "x-ms-content-type": "text/plain"}, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("create with properties: %d", resp.StatusCode)
	}
	resp, body := e.raw(http.MethodHead, "/paths/props?action=getStatus", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("x-ms-resource-type") != "file" || resp.Header.Get("x-ms-properties") != "k=dg==" ||
		resp.Header.Get("x-ms-permissions") != "rw-r-----" || resp.Header.Get("Content-Length") != "0" || len(body) != 0 {
		t.Fatalf("getStatus: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = e.raw(http.MethodHead, "/paths/a?action=getStatus", map[string]string{"If-None-Match": resp.Header.Get("ETag")}, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("getStatus of a with another ETag: %d", resp.StatusCode)
	}
	// The filesystem URL answers for its root (how ABFS tells a
	// hierarchical account).
	resp, _ = e.raw(http.MethodHead, "/paths/?action=getAccessControl&upn=false", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("x-ms-acl") != "user::rwx,group::r-x,other::---" || resp.Header.Get("x-ms-resource-type") != "directory" {
		t.Fatalf("root access control: %d %v", resp.StatusCode, resp.Header)
	}
	// So does the SDK's root directory client (azdatalake
	// TestDeleteDirWithPaginatedDelete reads the root's access control
	// through NewDirectoryClient("/")).
	rac, err := fs.NewDirectoryClient("/").GetAccessControl(e.ctx, nil)
	must(t, err)
	if *rac.ACL != "user::rwx,group::r-x,other::---" || *rac.Owner != "$superuser" {
		t.Fatalf("root through the SDK: %s %s", *rac.ACL, *rac.Owner)
	}
	// Expiry on create.
	resp, _ = e.raw(http.MethodPut, "/paths/exp?resource=file", map[string]string{"x-ms-expiry-option": "RelativeToNow", "x-ms-expiry-time": "60000"}, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("create with expiry: %d", resp.StatusCode)
	}
	// A directory: 400 ExpiryNotSupportedForDirectory (azure-sdk-for-js's
	// recording "DataLakeDirectoryClient create with absolute expiry").
	resp, body = e.raw(http.MethodPut, "/paths/expdir?resource=directory", map[string]string{"x-ms-expiry-option": "Absolute", "x-ms-expiry-time": time.Now().Add(time.Minute).UTC().Format(http.TimeFormat)}, nil)
	if code, msg := dfsError(t, body); resp.StatusCode != 400 || code != "ExpiryNotSupportedForDirectory" || !strings.HasPrefix(msg, "Set Expiry is not supported for a directory\n") {
		t.Fatalf("directory with expiry: %d %s", resp.StatusCode, body)
	}
	_, body = e.raw(http.MethodGet, "/paths?resource=filesystem&recursive=false", nil, nil)
	var listed struct {
		Paths []map[string]string `json:"paths"`
	}
	must(t, json.Unmarshal(body, &listed))
	for _, p := range listed.Paths {
		if (p["name"] == "exp") != (p["expiryTime"] != "0") || p["creationTime"] == "" || p["etag"] == "" || strings.HasPrefix(p["etag"], `"`) {
			t.Fatalf("listed %v", p)
		}
	}
}

// TestDLRenameAndDelete: renames through the SDK (mode=legacy, the
// source as the SDK names it), their conditions and errors, and
// recursive deletes.
func TestDLRenameAndDelete(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("mvfs")
	_, err := fs.NewDirectoryClient("src").Create(e.ctx, nil)
	must(t, err)
	for i := range 5 {
		_, err := fs.NewFileClient(fmt.Sprintf("src/f%d", i)).Create(e.ctx, nil)
		must(t, err)
	}
	_, err = fs.NewDirectoryClient("other").Create(e.ctx, nil)
	must(t, err)
	src := fs.NewDirectoryClient("src")
	// Source conditions.
	_, err = src.Rename(e.ctx, "dst", &directory.RenameOptions{SourceAccessConditions: &directory.SourceAccessConditions{SourceModifiedAccessConditions: &directory.SourceModifiedAccessConditions{SourceIfMatch: to.Ptr(azcore.ETag(`"0x1"`))}}})
	wantDL(t, err, 412, "SourceConditionNotMet")
	// Into its own subtree; to a missing parent; an existing directory
	// in legacy mode.
	_, err = src.Rename(e.ctx, "src/inner", nil)
	wantDL(t, err, 409, "InvalidRenameSourcePath")
	_, err = src.Rename(e.ctx, "nowhere/dst", nil)
	wantDL(t, err, 404, "RenameDestinationParentPathNotFound")
	// Onto an existing directory in the SDK's legacy mode: an empty one
	// is replaced (azure-sdk-for-net's recorded
	// RenameAsync_DestinationConditions), a full one is not.
	_, err = fs.NewFileClient("other/keep").Create(e.ctx, nil)
	must(t, err)
	_, err = src.Rename(e.ctx, "other", nil)
	wantDL(t, err, 409, "DirectoryNotEmpty")
	_, err = fs.NewFileClient("other/keep").Delete(e.ctx, nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("spare").Create(e.ctx, nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("spare").Rename(e.ctx, "empty-dst", nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("empty-dst2").Create(e.ctx, nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("empty-dst").Rename(e.ctx, "empty-dst2", nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("empty-dst2").Delete(e.ctx, nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("ghost").Rename(e.ctx, "x", nil)
	wantDL(t, err, 404, "SourcePathNotFound")
	// A file onto a directory, a directory onto a file: 409
	// InvalidSourceOrDestinationResourceType, nothing moved.
	_, err = fs.NewFileClient("lone").Create(e.ctx, nil)
	must(t, err)
	_, err = fs.NewFileClient("lone").Rename(e.ctx, "other", nil)
	wantDL(t, err, 409, "InvalidSourceOrDestinationResourceType")
	_, err = fs.NewDirectoryClient("other").Rename(e.ctx, "lone", nil)
	wantDL(t, err, 409, "InvalidSourceOrDestinationResourceType")
	_, err = fs.NewFileClient("lone").Delete(e.ctx, nil)
	must(t, err)
	// The rename itself: the whole subtree moves.
	_, err = src.Rename(e.ctx, "other/dst", nil)
	must(t, err)
	if got := strings.Join(listAll(t, e, fs, "", true, 100), ","); got != "other/,other/dst/,other/dst/f0,other/dst/f1,other/dst/f2,other/dst/f3,other/dst/f4" {
		t.Fatalf("after rename: %s", got)
	}
	// A file rename replaces a file (posix, through the dfs API).
	resp, _ := e.raw(http.MethodPut, "/mvfs/other/dst/f1?mode=posix", map[string]string{"x-ms-rename-source": "/mvfs/other/dst/f0"}, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("posix file rename: %d", resp.StatusCode)
	}
	// posix: a directory renamed onto an existing directory moves into
	// it under its own name (the PathRenameMode description; what
	// Hadoop's ABFS driver relies on), beside what is there.
	_, err = fs.NewDirectoryClient("full").Create(e.ctx, nil)
	must(t, err)
	_, err = fs.NewFileClient("full/x").Create(e.ctx, nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("d2").Create(e.ctx, nil)
	must(t, err)
	resp, body := e.raw(http.MethodPut, "/mvfs/full?mode=posix", map[string]string{"x-ms-rename-source": "/mvfs/d2"}, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("posix onto a directory: %d %s", resp.StatusCode, body)
	}
	if got := strings.Join(listAll(t, e, fs, "full", true, 100), ","); got != "full/d2/,full/x" {
		t.Fatalf("posix onto a directory: %s", got)
	}
	_, err = fs.NewDirectoryClient("full/d2").Delete(e.ctx, nil)
	must(t, err)
	// Delete: a non-empty directory needs recursive.
	resp, body = e.raw(http.MethodDelete, "/mvfs/other?recursive=false", nil, nil)
	if code, _ := dfsError(t, body); resp.StatusCode != 409 || code != "DirectoryNotEmpty" {
		t.Fatalf("delete non-empty: %d %s", resp.StatusCode, body)
	}
	_, err = fs.NewDirectoryClient("other").Delete(e.ctx, nil)
	must(t, err)
	_, err = fs.NewFileClient("full/x").Delete(e.ctx, nil)
	must(t, err)
	_, err = fs.NewFileClient("full/x").Delete(e.ctx, nil)
	wantDL(t, err, 404, "PathNotFound")
	if got := strings.Join(listAll(t, e, fs, "", true, 100), ","); got != "full/" {
		t.Fatalf("after deletes: %s", got)
	}
}

// TestDLAccessControl: set, get and the recursive forms through the SDK.
func TestDLAccessControl(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("acl")
	_, err := fs.NewDirectoryClient("d").Create(e.ctx, nil)
	must(t, err)
	for _, p := range []string{"d/s", "d/s/t"} {
		_, err := fs.NewDirectoryClient(p).Create(e.ctx, nil)
		must(t, err)
	}
	for _, p := range []string{"d/f", "d/s/g", "d/s/t/h"} {
		_, err := fs.NewFileClient(p).Create(e.ctx, nil)
		must(t, err)
	}
	d := fs.NewDirectoryClient("d")
	_, err = d.SetAccessControl(e.ctx, &directory.SetAccessControlOptions{Owner: to.Ptr("o1"), Group: to.Ptr("g1"), Permissions: to.Ptr("1750")})
	must(t, err)
	ac, err := d.GetAccessControl(e.ctx, nil)
	must(t, err)
	if *ac.Owner != "o1" || *ac.Group != "g1" || *ac.Permissions != "rwxr-x--T" {
		t.Fatalf("after set: %s %s %s", *ac.Owner, *ac.Group, *ac.Permissions)
	}
	_, err = d.SetAccessControl(e.ctx, &directory.SetAccessControlOptions{Permissions: to.Ptr("0750"), ACL: to.Ptr("user::rwx,group::r-x,other::---")})
	if err == nil {
		t.Fatal("permissions and ACL together accepted")
	}
	// Recursive set in batches of 2, then modify and remove.
	res, err := d.SetAccessControlRecursive(e.ctx, "user::rwx,group::r-x,other::r--,user:bob:rwx", &directory.SetAccessControlRecursiveOptions{BatchSize: to.Ptr(int32(2))})
	must(t, err)
	if *res.DirectoriesSuccessful != 3 || *res.FilesSuccessful != 3 || *res.FailureCount != 0 {
		t.Fatalf("set recursive: %d dirs %d files %d failures", *res.DirectoriesSuccessful, *res.FilesSuccessful, *res.FailureCount)
	}
	fac, err := fs.NewFileClient("d/s/t/h").GetAccessControl(e.ctx, nil)
	must(t, err)
	if *fac.ACL != "user::rwx,user:bob:rwx,group::r-x,mask::rwx,other::r--" {
		t.Fatalf("file after set: %s", *fac.ACL)
	}
	_, err = d.UpdateAccessControlRecursive(e.ctx, "user:carol:r--", nil)
	must(t, err)
	_, err = d.RemoveAccessControlRecursive(e.ctx, "user:bob", nil)
	must(t, err)
	fac, err = fs.NewFileClient("d/f").GetAccessControl(e.ctx, nil)
	must(t, err)
	if *fac.ACL != "user::rwx,user:carol:r--,group::r-x,mask::rwx,other::r--" {
		t.Fatalf("file after modify and remove: %s", *fac.ACL)
	}
	// A continuation the server never issued does nothing, as on Azure
	// (azdatalake TestDirSetAccessControlRecursiveWithBadContinuation).
	res, err = d.SetAccessControlRecursive(e.ctx, "user::rwx,group::r-x,other::rwx", &directory.SetAccessControlRecursiveOptions{Marker: to.Ptr("garbage")})
	must(t, err)
	if *res.DirectoriesSuccessful != 0 || *res.FilesSuccessful != 0 || *res.FailureCount != 0 {
		t.Fatalf("bad continuation: %d dirs %d files %d failures", *res.DirectoriesSuccessful, *res.FilesSuccessful, *res.FailureCount)
	}
	fac, err = fs.NewFileClient("d/f").GetAccessControl(e.ctx, nil)
	must(t, err)
	if *fac.ACL != "user::rwx,user:carol:r--,group::r-x,mask::rwx,other::r--" {
		t.Fatalf("bad continuation changed %s", *fac.ACL)
	}
	resp, body := e.raw(http.MethodPatch, "/acl/d?action=setAccessControlRecursive&mode=sideways", map[string]string{"x-ms-acl": "user::rwx"}, nil)
	if code, _ := dfsError(t, body); resp.StatusCode != 400 || code != "InvalidQueryParameterValue" {
		t.Fatalf("bad mode: %d %s", resp.StatusCode, body)
	}
}

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestDLFilesystemRoot: a filesystem of a hierarchical account has a root
// directory from its creation (through the Blob API as through the dfs
// API): List Paths answers an empty list, not FilesystemNotFound; a
// deleted and re-created filesystem starts empty.
func TestDLFilesystemRoot(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("rooted")
	pager := fs.NewListPathsPager(true, nil)
	page, err := pager.NextPage(e.ctx)
	must(t, err)
	if len(page.Paths) != 0 || pager.More() {
		t.Fatalf("new filesystem lists %d paths", len(page.Paths))
	}
	resp, body := e.raw(http.MethodGet, "/rooted?resource=filesystem&recursive=false", nil, nil)
	var out struct {
		Paths []json.RawMessage `json:"paths"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &out) != nil || out.Paths == nil || len(out.Paths) != 0 {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}
	// recursive is required.
	resp, body = e.raw(http.MethodGet, "/rooted?resource=filesystem", nil, nil)
	if code, _ := dfsError(t, body); resp.StatusCode != 400 || code != "MissingRequiredQueryParameter" {
		t.Fatalf("no recursive: %d %s", resp.StatusCode, body)
	}
	_, err = fs.Delete(e.ctx, nil)
	must(t, err)
	_, err = fs.NewListPathsPager(true, nil).NextPage(e.ctx)
	wantDL(t, err, 404, "FilesystemNotFound")
	resp, _ = e.raw(http.MethodPut, "/rooted?resource=filesystem", nil, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("re-create: %d", resp.StatusCode)
	}
	page, err = e.fs("rooted").NewListPathsPager(true, &filesystem.ListPathsOptions{}).NextPage(e.ctx)
	must(t, err)
	if len(page.Paths) != 0 {
		t.Fatalf("re-created filesystem lists %d paths", len(page.Paths))
	}
}

// TestDLFlatAccount: on an account without a hierarchical namespace the
// dfs endpoint serves Path Create, List, Delete and getStatus over the
// account's blobs, as Azure does (azure-sdk-for-net's recorded
// GetPathsAsync_NonHns lists paths on such an account): a directory is a
// blob marked hdi_isfolder, parents need not exist, and a recursive
// delete removes the blobs under a directory. What needs a namespace
// (access control, rename) is 400 HierarchicalNamespaceNotEnabled, the
// answer ABFS and Arrow read to tell a flat account.
func TestDLFlatAccount(t *testing.T) {
	e := startDL(t, false)
	fs := e.mkfs("flat")
	for _, d := range []string{"foo", "bar"} {
		_, err := fs.NewDirectoryClient(d).Create(e.ctx, nil)
		must(t, err)
	}
	for _, f := range []string{"baz", "foo/x", "deep/er/f"} {
		_, err := fs.NewFileClient(f).Create(e.ctx, nil)
		must(t, err)
	}
	if got := strings.Join(listAll(t, e, fs, "", false, 2), ","); got != "bar/,baz,deep/,foo/" {
		t.Fatalf("one level: %s", got)
	}
	if got := strings.Join(listAll(t, e, fs, "", true, 100), ","); got != "bar/,baz,deep/er/f,foo/,foo/x" {
		t.Fatalf("recursive: %s", got)
	}
	if got := strings.Join(listAll(t, e, fs, "deep", false, 100), ","); got != "deep/er/" {
		t.Fatalf("under deep: %s", got)
	}
	resp, _ := e.raw(http.MethodHead, "/flat/bar?action=getStatus", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("x-ms-resource-type") != "directory" {
		t.Fatalf("getStatus of a directory: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = e.raw(http.MethodHead, "/flat/?action=getAccessControl", nil, nil)
	if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "HierarchicalNamespaceNotEnabled" {
		t.Fatalf("root access control: %d %v", resp.StatusCode, resp.Header)
	}
	_, err := fs.NewDirectoryClient("foo").GetAccessControl(e.ctx, nil)
	wantDL(t, err, 400, "HierarchicalNamespaceNotEnabled")
	_, err = fs.NewDirectoryClient("foo").Rename(e.ctx, "moved", nil)
	wantDL(t, err, 400, "HierarchicalNamespaceNotEnabled")
	_, err = fs.NewDirectoryClient("p").Create(e.ctx, &directory.CreateOptions{Permissions: to.Ptr("0700")})
	wantDL(t, err, 400, "HierarchicalNamespaceNotEnabled")
	_, err = fs.NewFileClient("baz").Create(e.ctx, &file.CreateOptions{AccessConditions: &file.AccessConditions{ModifiedAccessConditions: &file.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}})
	wantDL(t, err, 409, "PathAlreadyExists")
	resp, body := e.raw(http.MethodDelete, "/flat/foo?recursive=false", nil, nil)
	if code, _ := dfsError(t, body); resp.StatusCode != 409 || code != "DirectoryNotEmpty" {
		t.Fatalf("delete non-empty: %d %s", resp.StatusCode, body)
	}
	_, err = fs.NewDirectoryClient("foo").Delete(e.ctx, nil)
	must(t, err)
	_, err = fs.NewDirectoryClient("deep").Delete(e.ctx, nil) // no marker, only blobs under it
	must(t, err)
	_, err = fs.NewFileClient("nothing").Delete(e.ctx, nil)
	wantDL(t, err, 404, "PathNotFound")
	if got := strings.Join(listAll(t, e, fs, "", true, 100), ","); got != "bar/,baz" {
		t.Fatalf("after deletes: %s", got)
	}
	// One account, two APIs: the Blob endpoint sees the paths as blobs,
	// and blobs uploaded there are paths.
	bc := client(t, e.app.BlobURL, app.DevKey)
	_, err = bc.UploadBuffer(e.ctx, "flat", "up/loaded.txt", []byte("hello"), nil)
	must(t, err)
	var blobs []string
	pager := bc.NewListBlobsFlatPager("flat", &container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Metadata: true}})
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(t, err)
		for _, b := range page.Segment.BlobItems {
			blobs = append(blobs, *b.Name+fmt.Sprint(len(b.Metadata)))
		}
	}
	if got := strings.Join(blobs, ","); got != "bar1,baz0,up/loaded.txt0" {
		t.Fatalf("blobs: %s", got)
	}
	paths, err := fs.NewListPathsPager(true, nil).NextPage(e.ctx)
	must(t, err)
	if n := len(paths.Paths); n != 3 || *paths.Paths[2].Name != "up/loaded.txt" || *paths.Paths[2].ContentLength != 5 {
		t.Fatalf("paths: %d", n)
	}
}

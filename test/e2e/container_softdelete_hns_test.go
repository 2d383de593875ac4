package e2e

// Container soft delete on an account with a hierarchical namespace, end
// to end through the Go SDKs: azdatalake writes a tree of directories and
// files with owners, groups and ACLs, deletes the filesystem (its Delete
// calls Delete Container on the blob endpoint) and lists it with
// ListFileSystemsInclude.Deleted; azblob's RestoreContainer brings it
// back (azdatalake v1.4.2 has no UndeleteFileSystem: the SDKs that have
// one, .NET's DataLakeServiceClient.UndeleteFileSystem and
// @azure/storage-file-datalake's undeleteFileSystem, send this Restore
// Container); the tree reads back through azdatalake as it was.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// hnsSoftDelete is a hierarchical server with --container-soft-delete,
// and clients dating their requests at its fake clock.
type hnsSoftDelete struct {
	*dlEnv
	dfs  *service.Client // dfs endpoint, azdatalake
	blob *azblob.Client  // blob endpoint, azblob
}

func startHNSSoftDelete(t *testing.T, days int) *hnsSoftDelete {
	t.Helper()
	e := startDLWith(t, true, func(c *app.Config) *http.Client {
		c.ContainerSoftDelete = days
		return &http.Client{Timeout: 60 * time.Second}
	})
	dated := []policy.Policy{sdDatePolicy{e.clock}}
	dfs, err := service.NewClientWithSharedKeyCredential(e.app.DFSURL, e.cred, &service.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}, Transport: e.hc, PerCallPolicies: dated}})
	must(t, err)
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	opts := clientOptions()
	opts.PerCallPolicies = append(opts.PerCallPolicies, dated...)
	bc, err := azblob.NewClientWithSharedKeyCredential(e.app.BlobURL, cred, opts)
	must(t, err)
	return &hnsSoftDelete{dlEnv: e, dfs: dfs, blob: bc}
}

// deletedFilesystems lists the deleted filesystems named name through
// azdatalake (ListFileSystemsInclude.Deleted): their versions.
func (h *hnsSoftDelete) deletedFilesystems(name string) []string {
	h.t.Helper()
	var out []string
	pg := h.dfs.NewListFileSystemsPager(&service.ListFileSystemsOptions{Prefix: &name, Include: service.ListFileSystemsInclude{Deleted: to.Ptr(true)}})
	for pg.More() {
		page, err := pg.NextPage(h.ctx)
		must(h.t, err)
		for _, it := range page.FileSystemItems {
			if *it.Name == name && it.Deleted != nil && *it.Deleted {
				if it.Version == nil || it.Properties.DeletedTime == nil || it.Properties.RemainingRetentionDays == nil {
					h.t.Fatalf("deleted filesystem %+v / %+v", it, it.Properties)
				}
				out = append(out, *it.Version)
			}
		}
	}
	return out
}

// tree reads fs through azdatalake: every path (List Paths, recursive)
// with its type, owner, group, permissions, size and ETag, and its ACL
// (Get Access Control).
func (h *hnsSoftDelete) tree(fs *filesystem.Client) []string {
	h.t.Helper()
	var out []string
	pg := fs.NewListPathsPager(true, &filesystem.ListPathsOptions{MaxResults: to.Ptr(int32(9))})
	for pg.More() {
		page, err := pg.NextPage(h.ctx)
		must(h.t, err)
		for _, p := range page.Paths {
			dir := p.IsDirectory != nil && *p.IsDirectory
			var acl *string
			if dir {
				r, err := fs.NewDirectoryClient(*p.Name).GetAccessControl(h.ctx, nil)
				must(h.t, err)
				acl = r.ACL
			} else {
				r, err := fs.NewFileClient(*p.Name).GetAccessControl(h.ctx, nil)
				must(h.t, err)
				acl = r.ACL
			}
			out = append(out, fmt.Sprintf("%s dir=%v %s:%s %s size=%d %s acl=%s", *p.Name, dir, *p.Owner, *p.Group, *p.Permissions, *p.ContentLength, *p.ETag, *acl))
		}
	}
	sort.Strings(out)
	return out
}

// read is a file's content through azdatalake.
func (h *hnsSoftDelete) read(fs *filesystem.Client, path string) string {
	h.t.Helper()
	r, err := fs.NewFileClient(path).DownloadStream(h.ctx, nil)
	must(h.t, err)
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	must(h.t, err)
	return string(b)
}

// deleteOnDFS is Filesystem - Delete on the dfs endpoint
// (DELETE /{filesystem}?resource=filesystem), dated at the clock.
func (h *hnsSoftDelete) deleteOnDFS(name string) {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodDelete, h.app.DFSURL+"/"+name+"?resource=filesystem", bytes.NewReader(nil))
	must(h.t, err)
	req.Header.Set("x-ms-date", h.clock.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2023-11-03")
	signRaw(req)
	resp, err := h.hc.Do(req)
	must(h.t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		h.t.Fatalf("Filesystem - Delete: %d, want 202", resp.StatusCode)
	}
}

func want404(t *testing.T, what string, err error) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
		t.Fatalf("%s: %v, want 404", what, err)
	}
}

// TestContainerSoftDeleteHierarchical: a filesystem of a hierarchical
// account deleted with container soft delete on keeps its directories,
// files, owners, groups, ACLs, contents and soft-deleted paths; the name
// is free at once for a new filesystem; Restore Container onto it is 409
// ContainerAlreadyExists while it lives; deleted again (through the dfs
// endpoint), the first version is restored and reads back through
// azdatalake exactly as it was; at the end of the retention the deleted
// version is gone and reclaimed.
func TestContainerSoftDeleteHierarchical(t *testing.T) {
	h := startHNSSoftDelete(t, 7)
	const name = "lake"
	fs := h.dfs.NewFileSystemClient(name)
	_, err := fs.Create(h.ctx, &filesystem.CreateOptions{Metadata: map[string]*string{"k": to.Ptr("v")}})
	must(t, err)
	// Blob soft delete too, so a path deleted before the filesystem is
	// kept with it.
	_, err = h.dfs.SetProperties(h.ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7))}})
	must(t, err)
	_, err = fs.NewDirectoryClient("dir").Create(h.ctx, &directory.CreateOptions{Owner: to.Ptr("o1"), Group: to.Ptr("g1"),
		ACL: to.Ptr("user::rwx,user:u1:r-x,group::r-x,mask::r-x,other::---,default:user::rwx,default:user:u1:r-x,default:group::r-x,default:mask::r-x,default:other::---")})
	must(t, err)
	_, err = fs.NewDirectoryClient("dir/sub").Create(h.ctx, nil)
	must(t, err)
	const n = 40
	for i := 0; i < n; i++ {
		f := fs.NewFileClient(fmt.Sprintf("dir/sub/f%02d", i))
		_, err := f.Create(h.ctx, nil)
		must(t, err)
		must(t, f.UploadBuffer(h.ctx, []byte(fmt.Sprintf("content %d", i)), nil))
	}
	_, err = fs.NewFileClient("dir/sub/f00").SetAccessControl(h.ctx, &file.SetAccessControlOptions{ACL: to.Ptr("user::rw-,user:u2:rw-,group::r--,mask::rw-,other::---")})
	must(t, err)
	_, err = fs.NewFileClient("dir/sub/f01").SetAccessControl(h.ctx, &file.SetAccessControlOptions{Owner: to.Ptr("o2"), Group: to.Ptr("g2")})
	must(t, err)
	gone := fs.NewFileClient("dir/gone")
	_, err = gone.Create(h.ctx, nil)
	must(t, err)
	must(t, gone.UploadBuffer(h.ctx, []byte("kept"), nil))
	_, err = gone.Delete(h.ctx, nil)
	must(t, err)
	want := h.tree(fs)
	if len(want) != n+2 || !strings.Contains(want[0], "o1:g1") || !strings.Contains(want[0], "default:user:u1:r-x") {
		t.Fatalf("the tree written: %v", want)
	}

	// Delete through azdatalake (Delete Container on the blob endpoint).
	h.clock.Advance(time.Hour)
	var raw *http.Response
	_, err = fs.Delete(runtime.WithCaptureResponse(h.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != http.StatusAccepted {
		t.Fatalf("Delete: %d, want 202", raw.StatusCode)
	}
	_, err = fs.GetProperties(h.ctx, nil)
	want404(t, "the deleted filesystem's properties", err)
	_, err = fs.NewFileClient("dir/sub/f03").GetProperties(h.ctx, nil)
	want404(t, "a file of the deleted filesystem", err)
	_, err = fs.NewListPathsPager(true, nil).NextPage(h.ctx)
	want404(t, "listing the deleted filesystem", err)
	vers := h.deletedFilesystems(name)
	if len(vers) != 1 {
		t.Fatalf("deleted filesystems %v, want 1", vers)
	}
	v1 := vers[0]

	// The name is free at once (once the small move is over): a new,
	// empty filesystem.
	if _, err := h.app.Blob.ReclaimContainers(h.ctx); err != nil {
		t.Fatal(err)
	}
	_, err = fs.Create(h.ctx, nil)
	must(t, err)
	if got := h.tree(fs); len(got) != 0 {
		t.Fatalf("the new filesystem holds %v", got)
	}
	other := fs.NewFileClient("other")
	_, err = other.Create(h.ctx, nil)
	must(t, err)
	_, err = h.blob.ServiceClient().RestoreContainer(h.ctx, name, v1, nil)
	wantCode(t, err, 409, bloberror.ContainerAlreadyExists)
	h.clock.Advance(time.Second)
	h.deleteOnDFS(name)
	if vers = h.deletedFilesystems(name); len(vers) != 2 || vers[0] != v1 {
		t.Fatalf("deleted filesystems after the second delete %v", vers)
	}
	v2 := vers[1]

	// Restore the first: the tree reads back as it was.
	raw = nil
	_, err = h.blob.ServiceClient().RestoreContainer(runtime.WithCaptureResponse(h.ctx, &raw), name, v1, nil)
	must(t, err)
	if raw.StatusCode != http.StatusCreated {
		t.Fatalf("Restore Container: %d, want 201", raw.StatusCode)
	}
	if got := h.tree(fs); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("restored tree\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, i := range []int{0, 1, 17, n - 1} {
		if got := h.read(fs, fmt.Sprintf("dir/sub/f%02d", i)); got != fmt.Sprintf("content %d", i) {
			t.Errorf("restored file %d reads %q", i, got)
		}
	}
	p, err := fs.GetProperties(h.ctx, nil)
	must(t, err)
	if p.Metadata["k"] == nil && p.Metadata["K"] == nil {
		t.Errorf("restored filesystem's metadata %v", p.Metadata)
	}
	_, err = other.GetProperties(h.ctx, nil)
	want404(t, "the other version's file in the restored filesystem", err)
	// The path deleted before the filesystem is still soft-deleted, and
	// restorable (Undelete Blob, as the SDKs' undelete path sends it).
	pg := fs.NewListDeletedPathsPager(nil)
	page, err := pg.NextPage(h.ctx)
	must(t, err)
	if len(page.Segment.PathItems) != 1 || *page.Segment.PathItems[0].Name != "dir/gone" {
		t.Fatalf("restored filesystem's deleted paths %+v", page.Segment.PathItems)
	}
	_, err = h.blob.ServiceClient().NewContainerClient(name).NewBlobClient("dir/gone").Undelete(h.ctx, nil)
	must(t, err)
	if got := h.read(fs, "dir/gone"); got != "kept" {
		t.Errorf("undeleted file reads %q", got)
	}
	// It takes writes.
	f := fs.NewFileClient("dir/sub/new")
	_, err = f.Create(h.ctx, nil)
	must(t, err)
	must(t, f.UploadBuffer(h.ctx, []byte("new"), nil))
	if got := h.read(fs, "dir/sub/new"); got != "new" {
		t.Errorf("new file reads %q", got)
	}
	if vers = h.deletedFilesystems(name); len(vers) != 1 || vers[0] != v2 {
		t.Fatalf("deleted filesystems after the restore %v", vers)
	}

	// The end of the retention: v2 is neither listed nor restorable, and
	// the reclaimer takes it.
	h.clock.Advance(7 * 24 * time.Hour)
	if vers = h.deletedFilesystems(name); len(vers) != 0 {
		t.Fatalf("deleted filesystems after the retention %v", vers)
	}
	_, err = fs.Delete(h.ctx, nil)
	must(t, err)
	_, err = h.blob.ServiceClient().RestoreContainer(h.ctx, name, v2, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	steps := 0
	for i := 0; i < 3; i++ {
		n, err := h.app.Blob.Reclaimer().Drain(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		steps += n
	}
	if steps == 0 {
		t.Error("the reclaimer found nothing of the expired filesystem to reclaim")
	}
	if n, err := h.app.Blob.Reclaimer().Drain(h.ctx); err != nil || n != 0 {
		t.Errorf("last drain: %d steps, %v; want nothing left", n, err)
	}
	// The version deleted last is still there, whole.
	vers = h.deletedFilesystems(name)
	if len(vers) != 1 {
		t.Fatalf("deleted filesystems at the end %v", vers)
	}
	_, err = h.blob.ServiceClient().RestoreContainer(h.ctx, name, vers[0], nil)
	must(t, err)
	if got := h.read(fs, "dir/sub/f05"); got != "content 5" {
		t.Errorf("file of the last restore reads %q", got)
	}
}

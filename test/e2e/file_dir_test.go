package e2e

// End-to-end tests of the directory operations of the File service
// (Create/Get/Set/Delete Directory, List Directories and Files, Rename
// File and Rename Directory, List/Force Close Handles) through azfile.
// Test names in comments are azfile v1.7.1's recorded tests
// (github.com/Azure/azure-sdk-for-go, sdk/storage/azfile/directory and
// file client_test.go), whose recordings hold the real service's answers;
// REST pages are cited by title; "(inferred)" marks Cerulean's reading
// where no source says.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// fdList lists a directory completely with the given page options and
// returns the names in wire order of each page (directories of a page
// first, as the SDK splits them) and the number of pages.
func (e *fileEnv) fdList(d *directory.Client, o *directory.ListFilesAndDirectoriesOptions) (dirs, files []string, pages int) {
	e.t.Helper()
	p := d.NewListFilesAndDirectoriesPager(o)
	for p.More() {
		r, err := p.NextPage(e.ctx)
		if err != nil {
			e.t.Fatalf("list: %v", err)
		}
		pages++
		for _, x := range r.Segment.Directories {
			dirs = append(dirs, *x.Name)
		}
		for _, x := range r.Segment.Files {
			files = append(files, *x.Name)
		}
	}
	return dirs, files, pages
}

// fdOrder lists d one entry per page and returns the names in listing
// order (directories and files intermixed).
func (e *fileEnv) fdOrder(d *directory.Client, prefix string) []string {
	e.t.Helper()
	o := &directory.ListFilesAndDirectoriesOptions{MaxResults: to.Ptr(int32(1))}
	if prefix != "" {
		o.Prefix = &prefix
	}
	var out []string
	p := d.NewListFilesAndDirectoriesPager(o)
	for p.More() {
		r, err := p.NextPage(e.ctx)
		if err != nil {
			e.t.Fatalf("list: %v", err)
		}
		if n := len(r.Segment.Directories) + len(r.Segment.Files); n > 1 {
			e.t.Fatalf("page of %d entries with maxresults=1", n)
		}
		for _, x := range r.Segment.Directories {
			out = append(out, *x.Name+"/")
		}
		for _, x := range r.Segment.Files {
			out = append(out, *x.Name)
		}
	}
	return out
}

func TestFileDirCreate(t *testing.T) {
	e := startFile(t)
	s := e.share()
	d := dirAt(s, "Alpha")
	var raw *http.Response
	cr, err := d.Create(fiCapture(e.ctx, &raw), &directory.CreateOptions{Metadata: map[string]*string{"k": to.Ptr("v")}})
	must(t, err)
	if raw.StatusCode != http.StatusCreated {
		t.Fatalf("status %d, want 201", raw.StatusCode)
	}
	if cr.ETag == nil || cr.LastModified == nil || cr.IsServerEncrypted == nil || !*cr.IsServerEncrypted ||
		cr.ID == nil || cr.ParentID == nil || *cr.ParentID != "0" || cr.FilePermissionKey == nil ||
		cr.FileCreationTime == nil || cr.FileLastWriteTime == nil || cr.FileChangeTime == nil {
		t.Fatalf("create response: %+v", cr)
	}
	if a := fiAttrs(t, cr.FileAttributes); !a.Directory || a.Archive {
		t.Fatalf("attributes %q, want Directory", *cr.FileAttributes)
	}
	// The permission is inherited from the root.
	root, err := s.NewRootDirectoryClient().GetProperties(e.ctx, nil)
	must(t, err)
	if *root.FilePermissionKey != *cr.FilePermissionKey {
		t.Fatalf("permission key %s, root has %s", *cr.FilePermissionKey, *root.FilePermissionKey)
	}

	// Nested, and the errors (azfile recorded test
	// TestDirCreateDeleteNegativeMultiLevelDir).
	_, err = dirAt(s, "Alpha/b/c").Create(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ParentNotFound)
	sub := e.mkdir(s, "alpha/b") // case-insensitive parent lookup
	sp, err := sub.GetProperties(e.ctx, nil)
	must(t, err)
	if *sp.ParentID != *cr.ID {
		t.Fatalf("parent id %s, want %s", *sp.ParentID, *cr.ID)
	}
	e.mkdir(s, "Alpha/b/c")
	_, err = dirAt(s, "ALPHA").Create(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.ResourceAlreadyExists)
	e.mkfile(s, "Alpha/f.txt", 10)
	// A file of that name (microsoft/vscode-azurestorage#848).
	_, err = dirAt(s, "Alpha/F.TXT").Create(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.ResourceTypeMismatch)
	_, err = dirAt(s, "Alpha/f.txt/x").Create(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ParentNotFound)
	_, err = s.NewRootDirectoryClient().Create(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.ResourceAlreadyExists)
	_, err = e.svc.NewShareClient("nosuchshare").NewDirectoryClient("d").Create(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ShareNotFound)

	// Explicit SMB properties.
	ct := time.Date(2023, 3, 31, 21, 5, 0, 123456700, time.UTC)
	wt := ct.Add(time.Minute)
	d2 := dirAt(s, "smb")
	cr2, err := d2.Create(e.ctx, &directory.CreateOptions{
		FileSMBProperties: &file.SMBProperties{
			Attributes:   &file.NTFSFileAttributes{ReadOnly: true, Hidden: true},
			CreationTime: &ct, LastWriteTime: &wt, ChangeTime: &wt,
		},
		FilePermissions: &file.Permissions{Permission: to.Ptr(fiSDDL)},
	})
	must(t, err)
	if a := fiAttrs(t, cr2.FileAttributes); !a.ReadOnly || !a.Hidden || !a.Directory {
		t.Fatalf("attributes %q", *cr2.FileAttributes)
	}
	if !cr2.FileCreationTime.Equal(ct) || !cr2.FileLastWriteTime.Equal(wt) || !cr2.FileChangeTime.Equal(wt) {
		t.Fatalf("times %v %v %v", cr2.FileCreationTime, cr2.FileLastWriteTime, cr2.FileChangeTime)
	}
	if *cr2.FilePermissionKey == *cr.FilePermissionKey {
		t.Fatal("explicit permission got the inherited key")
	}
	// None combined with another attribute is invalid (azfile recorded test
	// TestDirCreateNegativeAttributes).
	_, err = dirAt(s, "bad").Create(e.ctx, &directory.CreateOptions{FileSMBProperties: &file.SMBProperties{
		Attributes: &file.NTFSFileAttributes{None: true, ReadOnly: true}}})
	wantFileCode(t, err, 400, fileerror.InvalidHeaderValue)
}

func TestFileDirProperties(t *testing.T) {
	e := startFile(t)
	s := e.share()
	d := e.mkdir(s, "d")

	// The root directory (azfile recorded test
	// TestDirGetPropertiesWithBaseDirectory).
	var raw *http.Response
	rp, err := s.NewRootDirectoryClient().GetProperties(fiCapture(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != 200 || rp.ETag == nil || rp.LastModified == nil || rp.FileCreationTime == nil ||
		rp.IsServerEncrypted == nil || !*rp.IsServerEncrypted || rp.ID == nil || *rp.ID != "0" {
		t.Fatalf("root properties: %d %+v", raw.StatusCode, rp)
	}

	p1, err := d.GetProperties(e.ctx, nil)
	must(t, err)
	ct := time.Date(2021, 1, 2, 3, 4, 5, 600000000, time.UTC)
	e.clock.Advance(2 * time.Second)
	sr, err := d.SetProperties(e.ctx, &directory.SetPropertiesOptions{FileSMBProperties: &file.SMBProperties{
		Attributes: &file.NTFSFileAttributes{ReadOnly: true}, CreationTime: &ct,
	}})
	must(t, err)
	if *sr.ETag == *p1.ETag || !sr.FileCreationTime.Equal(ct) || !sr.FileLastWriteTime.Equal(*p1.FileLastWriteTime) {
		t.Fatalf("set properties: %+v (before %+v)", sr, p1)
	}
	if a := fiAttrs(t, sr.FileAttributes); !a.ReadOnly || !a.Directory {
		t.Fatalf("attributes %q", *sr.FileAttributes)
	}
	if *sr.FilePermissionKey != *p1.FilePermissionKey {
		t.Fatal("set properties without a permission changed it")
	}
	// Unspecified headers preserve.
	sr2, err := d.SetProperties(e.ctx, nil)
	must(t, err)
	if a := fiAttrs(t, sr2.FileAttributes); !a.ReadOnly || !sr2.FileCreationTime.Equal(ct) {
		t.Fatalf("preserve: %+v", sr2)
	}

	// Metadata: replace, clear (azfile recorded test
	// TestDirGetSetMetadataMergeAndReplace).
	md := map[string]*string{"Color": to.Ptr("RED")}
	mr, err := d.SetMetadata(e.ctx, &directory.SetMetadataOptions{Metadata: md})
	must(t, err)
	if mr.ETag == nil || mr.IsServerEncrypted == nil {
		t.Fatalf("set metadata: %+v", mr)
	}
	gp, err := d.GetProperties(e.ctx, nil)
	must(t, err)
	if len(gp.Metadata) != 1 || gp.Metadata["Color"] == nil || *gp.Metadata["Color"] != "RED" {
		t.Fatalf("metadata %v", gp.Metadata)
	}
	_, err = d.SetMetadata(e.ctx, &directory.SetMetadataOptions{Metadata: map[string]*string{"Color": to.Ptr("WHITE")}})
	must(t, err)

	// A snapshot keeps the old metadata (azure-sdk-for-python recorded test
	// test_get_directory_properties_with_snapshot).
	snap, err := s.CreateSnapshot(e.ctx, nil)
	must(t, err)
	_, err = d.SetMetadata(e.ctx, nil)
	must(t, err)
	gp, err = d.GetProperties(e.ctx, nil)
	must(t, err)
	if len(gp.Metadata) != 0 {
		t.Fatalf("metadata after clear: %v", gp.Metadata)
	}
	sp, err := d.GetProperties(e.ctx, &directory.GetPropertiesOptions{ShareSnapshot: snap.Snapshot})
	must(t, err)
	if sp.Metadata["Color"] == nil || *sp.Metadata["Color"] != "WHITE" {
		t.Fatalf("snapshot metadata %v", sp.Metadata)
	}
	_, err = s.NewRootDirectoryClient().GetProperties(e.ctx, &directory.GetPropertiesOptions{ShareSnapshot: snap.Snapshot})
	must(t, err)

	// Missing, and a file is not a directory.
	_, err = dirAt(s, "nope").GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
	e.mkfile(s, "d/f", 1)
	_, err = dirAt(s, "d/f").GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
	_, err = dirAt(s, "d/f").SetMetadata(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
	_, err = dirAt(s, "nope").SetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
}

func TestFileDirDelete(t *testing.T) {
	e := startFile(t)
	s := e.share()
	p := e.mkdir(s, "p")
	c := e.mkdir(s, "p/c")
	_, err := p.Delete(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.DirectoryNotEmpty)
	var raw *http.Response
	_, err = c.Delete(fiCapture(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d, want 202", raw.StatusCode)
	}
	e.mkfile(s, "p/f", 0)
	_, err = p.Delete(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.DirectoryNotEmpty)
	_, err = fileAt(s, "p/f").Delete(e.ctx, nil)
	must(t, err)
	_, err = p.Delete(e.ctx, nil)
	must(t, err)
	_, err = p.GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
	_, err = p.Delete(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
	// The root cannot be deleted: 400 InvalidUri (inferred).
	_, err = s.NewRootDirectoryClient().Delete(e.ctx, nil)
	wantFileCode(t, err, 400, fileerror.InvalidURI)
	// A file path is not a directory.
	e.mkfile(s, "g", 0)
	_, err = dirAt(s, "g").Delete(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
}

func TestFileDirList(t *testing.T) {
	e := startFile(t)
	s := e.share()
	root := s.NewRootDirectoryClient()
	for _, n := range []string{"b", "D", "a", "c"} {
		e.mkdir(s, n)
	}
	for _, n := range []string{"B.txt", "a.txt", "e"} {
		e.mkfile(s, n, 2048)
	}
	// Intermixed, case-insensitive order.
	want := []string{"a/", "a.txt", "b/", "B.txt", "c/", "D/", "e"}
	if got := e.fdOrder(root, ""); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("order %v, want %v", got, want)
	}
	// Prefix, case-insensitively (inferred).
	if got := e.fdOrder(root, "B"); strings.Join(got, ",") != "b/,B.txt" {
		t.Fatalf("prefix B: %v", got)
	}
	if got := e.fdOrder(root, "a."); strings.Join(got, ",") != "a.txt" {
		t.Fatalf("prefix a.: %v", got)
	}

	// Default: FileId always, no timestamps or attributes; files carry
	// their size (azfile recorded test TestDirListFilesAndDirsDefault).
	r, err := root.NewListFilesAndDirectoriesPager(nil).NextPage(e.ctx)
	must(t, err)
	if r.NextMarker == nil || *r.NextMarker != "" || r.Prefix == nil || *r.Prefix != "" || r.ShareName == nil ||
		r.DirectoryID == nil || *r.DirectoryID != "0" || r.ServiceEndpoint == nil || r.DirectoryPath == nil {
		t.Fatalf("envelope %+v", r.ListFilesAndDirectoriesSegmentResponse)
	}
	if len(r.Segment.Directories) != 4 || len(r.Segment.Files) != 3 {
		t.Fatalf("%d dirs, %d files", len(r.Segment.Directories), len(r.Segment.Files))
	}
	for _, d := range r.Segment.Directories {
		if d.ID == nil || d.Attributes != nil || d.PermissionKey != nil || d.Properties == nil ||
			d.Properties.ETag != nil || d.Properties.CreationTime != nil || d.Properties.ContentLength != nil {
			t.Fatalf("default directory entry %+v %+v", d, d.Properties)
		}
	}
	for _, f := range r.Segment.Files {
		if f.ID == nil || f.Attributes != nil || f.Properties.ETag != nil || f.Properties.ContentLength == nil || *f.Properties.ContentLength != 2048 {
			t.Fatalf("default file entry %+v", f)
		}
	}

	// Everything included (azfile recorded test
	// TestDirListFilesAndDirsInclude).
	r, err = root.NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{
		Include:             directory.ListFilesInclude{Timestamps: true, ETag: true, Attributes: true, PermissionKey: true},
		IncludeExtendedInfo: to.Ptr(true),
	}).NextPage(e.ctx)
	must(t, err)
	for _, d := range r.Segment.Directories {
		p := d.Properties
		if d.ID == nil || d.Attributes == nil || !strings.Contains(*d.Attributes, "Directory") || d.PermissionKey == nil ||
			p.ETag == nil || p.ChangeTime == nil || p.CreationTime == nil || p.LastWriteTime == nil ||
			p.LastAccessTime == nil || p.LastModified == nil || p.ContentLength != nil {
			t.Fatalf("included directory entry %+v %+v", d, p)
		}
		dp, err := root.NewSubdirectoryClient(*d.Name).GetProperties(e.ctx, nil)
		must(t, err)
		if *dp.ID != *d.ID || *dp.ETag != *p.ETag || !dp.FileCreationTime.Equal(*p.CreationTime) {
			t.Fatalf("listing disagrees with properties: %+v vs %+v", dp, p)
		}
	}
	for _, f := range r.Segment.Files {
		if f.Attributes == nil || !strings.Contains(*f.Attributes, "Archive") || f.Properties.ETag == nil || f.Properties.CreationTime == nil {
			t.Fatalf("included file entry %+v", f)
		}
	}
	// Extended info alone adds no property (azure-sdk-for-python recorded
	// test test_list_subdirectories_and_files_include_extended_info).
	r, err = root.NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{IncludeExtendedInfo: to.Ptr(true)}).NextPage(e.ctx)
	must(t, err)
	if d := r.Segment.Directories[0]; d.ID == nil || d.Attributes != nil || d.Properties.LastAccessTime != nil {
		t.Fatalf("extended info entry %+v", d)
	}

	// Paging (azfile recorded test TestDirListFilesAndDirsMaxResultsAndMarker).
	dirs, files, pages := e.fdList(root, &directory.ListFilesAndDirectoriesOptions{MaxResults: to.Ptr(int32(3))})
	if len(dirs) != 4 || len(files) != 3 || pages != 3 {
		t.Fatalf("paged: %v %v in %d pages", dirs, files, pages)
	}
	_, err = root.NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{MaxResults: to.Ptr(int32(-1))}).NextPage(e.ctx)
	wantFileCode(t, err, 400, fileerror.OutOfRangeQueryParameterValue)
	_, err = root.NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{Marker: to.Ptr("!!")}).NextPage(e.ctx)
	wantFileCode(t, err, 400, fileerror.InvalidQueryParameterValue)

	// Inside a directory, and one level only (azure-sdk-for-python recorded
	// test test_list_nested_subdirectories_and_files).
	e.mkdir(s, "a/sub")
	e.mkfile(s, "a/sub/deep", 1)
	e.mkfile(s, "a/x", 5)
	ar, err := dirAt(s, "a").NewListFilesAndDirectoriesPager(nil).NextPage(e.ctx)
	must(t, err)
	if len(ar.Segment.Directories) != 1 || *ar.Segment.Directories[0].Name != "sub" || len(ar.Segment.Files) != 1 ||
		*ar.Segment.Files[0].Name != "x" || *ar.DirectoryPath != "a" {
		t.Fatalf("inside a: %+v", ar.Segment)
	}
	_, err = dirAt(s, "nope").NewListFilesAndDirectoriesPager(nil).NextPage(e.ctx)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)

	// Through a snapshot (azfile recorded test
	// TestDirListFilesAndDirsSnapshot).
	snap, err := s.CreateSnapshot(e.ctx, nil)
	must(t, err)
	e.mkdir(s, "later")
	sr, err := root.NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{ShareSnapshot: snap.Snapshot}).NextPage(e.ctx)
	must(t, err)
	if len(sr.Segment.Directories) != 4 || sr.ShareSnapshot == nil || *sr.ShareSnapshot != *snap.Snapshot {
		t.Fatalf("snapshot listing: %d dirs, snapshot %v", len(sr.Segment.Directories), sr.ShareSnapshot)
	}
}

// Names no XML document can carry are sent Encoded="true" and decoded by the
// SDK (azure-sdk-for-python recorded test
// test_list_subdirectories_and_files_encoded).
func TestFileDirListEncoded(t *testing.T) {
	e := startFile(t)
	s := e.share()
	e.mkdir(s, "dir\uFFFE")
	e.mkfile(s, "\uFFFFfile", 1)
	dirs, files, _ := e.fdList(s.NewRootDirectoryClient(), &directory.ListFilesAndDirectoriesOptions{Prefix: to.Ptr("\uFFFF")})
	if len(dirs) != 0 || len(files) != 1 || files[0] != "\uFFFFfile" {
		t.Fatalf("prefix listing: %q %q", dirs, files)
	}
	dirs, _, _ = e.fdList(s.NewRootDirectoryClient(), nil)
	if len(dirs) != 1 || dirs[0] != "dir\uFFFE" {
		t.Fatalf("dirs %q", dirs)
	}
}

// Entries created or deleted while a listing pages do not make it skip
// or repeat the entries that exist throughout.
func TestFileDirListStablePaging(t *testing.T) {
	e := startFile(t)
	s := e.share()
	var orig []string
	for i := 0; i < 20; i++ {
		n := fmt.Sprintf("n%02d", i*2)
		orig = append(orig, n)
		e.mkfile(s, n, 0)
	}
	root := s.NewRootDirectoryClient()
	o := &directory.ListFilesAndDirectoriesOptions{MaxResults: to.Ptr(int32(3))}
	seen := map[string]int{}
	for page := 0; ; page++ {
		r, err := root.NewListFilesAndDirectoriesPager(o).NextPage(e.ctx)
		must(t, err)
		for _, f := range r.Segment.Files {
			seen[*f.Name]++
		}
		if *r.NextMarker == "" {
			break
		}
		o.Marker = r.NextMarker
		// Create before and after the position, and delete an entry
		// already listed.
		e.mkfile(s, fmt.Sprintf("n%02d", page*6+1), 0)
		e.mkfile(s, fmt.Sprintf("n%02dz", 39-page), 0)
		if page == 2 {
			_, err := fileAt(s, "n00").Delete(e.ctx, nil)
			must(t, err)
		}
	}
	for _, n := range orig {
		if seen[n] != 1 {
			t.Fatalf("%s listed %d times (seen %v)", n, seen[n], seen)
		}
	}
	for n, c := range seen {
		if c != 1 {
			t.Fatalf("%s listed %d times", n, c)
		}
	}
}

func TestFileDirRenameFile(t *testing.T) {
	e := startFile(t)
	s := e.share()
	e.mkdir(s, "src")
	e.mkdir(s, "dst")
	f := e.mkfile(s, "src/a.txt", 4)
	e.put(f, 0, []byte("abcd"))
	p0 := e.props(f)

	// Move across directories, with a new content type and metadata.
	var raw *http.Response
	rr, err := f.Rename(fiCapture(e.ctx, &raw), "dst/b.txt", &file.RenameOptions{
		ContentType: to.Ptr("text/plain"), Metadata: map[string]*string{"m": to.Ptr("1")},
	})
	must(t, err)
	if raw.StatusCode != 200 || rr.ETag == nil || rr.LastModified == nil || rr.ID == nil || *rr.ID != *p0.ID ||
		rr.FileCreationTime == nil || !rr.FileCreationTime.Equal(*p0.FileCreationTime) || rr.IsServerEncrypted == nil {
		t.Fatalf("rename: %d %+v", raw.StatusCode, rr)
	}
	_, err = f.GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
	nf := fileAt(s, "dst/b.txt")
	p1 := e.props(nf)
	if *p1.ID != *p0.ID || *p1.ContentType != "text/plain" || *p1.Metadata["M"] != "1" || *p1.ParentID == *p0.ParentID {
		t.Fatalf("renamed file %+v", p1)
	}
	if got := e.read(nf, 0, 0); string(got) != "abcd" {
		t.Fatalf("content %q", got)
	}

	// Case-only rename keeps the entry.
	_, err = nf.Rename(e.ctx, "dst/B.TXT", nil)
	must(t, err)
	dirs, files, _ := e.fdList(dirAt(s, "dst"), nil)
	if len(dirs) != 0 || len(files) != 1 || files[0] != "B.TXT" {
		t.Fatalf("after case rename: %v %v", dirs, files)
	}
	nf = fileAt(s, "dst/B.TXT")

	// Destination exists: refused without replace, replaced with it.
	old := e.mkfile(s, "dst/old", 8)
	e.put(old, 0, []byte("12345678"))
	_, err = nf.Rename(e.ctx, "dst/OLD", nil)
	wantFileCode(t, err, 409, fileerror.ResourceAlreadyExists)
	_, err = nf.Rename(e.ctx, "dst/old", &file.RenameOptions{ReplaceIfExists: to.Ptr(false)})
	wantFileCode(t, err, 409, fileerror.ResourceAlreadyExists)
	_, err = nf.Rename(e.ctx, "dst/old", &file.RenameOptions{ReplaceIfExists: to.Ptr(true)})
	must(t, err)
	if p := e.props(old); *p.ID != *p0.ID || *p.ContentLength != 4 || string(e.read(old, 0, 0)) != "abcd" {
		t.Fatalf("replaced destination: %+v", p)
	}
	// ignore-readonly alone is invalid (Rename File,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/rename-file).
	_, err = old.Rename(e.ctx, "dst/x", &file.RenameOptions{IgnoreReadOnly: to.Ptr(true)})
	wantFileCode(t, err, 400, fileerror.InvalidHeaderValue)

	// Read-only destination (azfile recorded test
	// TestDirectoryRenameIgnoreReadOnly, for files the same rule).
	ro := fileAt(s, "dst/ro")
	_, err = ro.Create(e.ctx, 1, &file.CreateOptions{SMBProperties: &file.SMBProperties{Attributes: &file.NTFSFileAttributes{ReadOnly: true}}})
	must(t, err)
	_, err = old.Rename(e.ctx, "dst/ro", &file.RenameOptions{ReplaceIfExists: to.Ptr(true)})
	wantFileCode(t, err, 409, fileerror.ReadOnlyAttribute)
	_, err = old.Rename(e.ctx, "dst/ro", &file.RenameOptions{ReplaceIfExists: to.Ptr(true), IgnoreReadOnly: to.Ptr(true)})
	must(t, err)
	if p := e.props(ro); *p.ID != *p0.ID {
		t.Fatalf("read-only destination not replaced: %+v", p)
	}

	// A directory is never replaced (microsoft/AzureStorageExplorer#6593).
	e.mkdir(s, "dst/sub")
	_, err = ro.Rename(e.ctx, "dst/sub", &file.RenameOptions{ReplaceIfExists: to.Ptr(true)})
	wantFileCode(t, err, 409, fileerror.ResourceAlreadyExists)

	// Errors of source and destination.
	_, err = fileAt(s, "dst/none").Rename(e.ctx, "dst/y", nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
	_, err = fileAt(s, "nodir/none").Rename(e.ctx, "dst/y", nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
	_, err = ro.Rename(e.ctx, "nodir/y", nil)
	wantFileCode(t, err, 404, fileerror.ParentNotFound)
	// A directory is not a file source.
	_, err = fileAt(s, "dst/sub").Rename(e.ctx, "dst/y", nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
	// The rename is refused from a snapshot (inferred).
	snap, err := s.CreateSnapshot(e.ctx, nil)
	must(t, err)
	ss, err := s.WithSnapshot(*snap.Snapshot)
	must(t, err)
	_, err = fileAt(ss, "dst/ro").Rename(e.ctx, "dst/z", nil)
	wantFileCode(t, err, 400, fileerror.ShareSnapshotOperationNotSupported)
}

func TestFileDirRenameLeases(t *testing.T) {
	e := startFile(t)
	s := e.share()
	src := e.mkfile(s, "src", 1)
	dst := e.mkfile(s, "dst", 1)
	id := "c820a799-76d7-4ee2-6e15-546f19325c2c"
	lc, err := lease.NewFileClient(dst, &lease.FileClientOptions{LeaseID: &id})
	must(t, err)
	_, err = lc.Acquire(e.ctx, nil)
	must(t, err)
	// (azfile recorded test TestDirectoryRenameDestLease)
	_, err = src.Rename(e.ctx, "dst", &file.RenameOptions{ReplaceIfExists: to.Ptr(true)})
	wantFileCode(t, err, 412, "LeaseIdMissing")
	_, err = src.Rename(e.ctx, "dst", &file.RenameOptions{ReplaceIfExists: to.Ptr(true),
		DestinationLeaseAccessConditions: &file.DestinationLeaseAccessConditions{DestinationLeaseID: &id}})
	must(t, err)

	// A leased source needs its lease ID; the lease moves with the file.
	src2 := e.mkfile(s, "src2", 1)
	lc2, err := lease.NewFileClient(src2, &lease.FileClientOptions{LeaseID: &id})
	must(t, err)
	_, err = lc2.Acquire(e.ctx, nil)
	must(t, err)
	_, err = src2.Rename(e.ctx, "moved", nil)
	wantFileCode(t, err, 412, "LeaseIdMissing")
	_, err = src2.Rename(e.ctx, "moved", &file.RenameOptions{SourceLeaseAccessConditions: &file.SourceLeaseAccessConditions{SourceLeaseID: &id}})
	must(t, err)
	if p := e.props(fileAt(s, "moved")); p.LeaseState == nil || *p.LeaseState != "leased" {
		t.Fatalf("lease after rename: %+v", p.LeaseState)
	}
}

func TestFileDirRenameDirectory(t *testing.T) {
	e := startFile(t)
	s := e.share()
	a := e.mkdir(s, "a")
	e.mkdir(s, "a/b")
	f := e.mkfile(s, "a/b/f", 3)
	e.put(f, 0, []byte("xyz"))
	e.mkdir(s, "t")
	ap, err := a.GetProperties(e.ctx, nil)
	must(t, err)

	// Moving a directory moves its subtree (azfile recorded test
	// TestDirectoryRenameDefault).
	rr, err := a.Rename(e.ctx, "t/a2", nil)
	must(t, err)
	if *rr.ID != *ap.ID || rr.FileChangeTime == nil || rr.FileLastWriteTime == nil || rr.FileCreationTime == nil {
		t.Fatalf("rename response %+v", rr)
	}
	_, err = a.GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
	_, err = f.GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ParentNotFound)
	if got := e.read(fileAt(s, "t/a2/b/f"), 0, 0); string(got) != "xyz" {
		t.Fatalf("moved content %q", got)
	}

	// Into its own subtree: 400 InvalidInput (inferred).
	_, err = dirAt(s, "t/a2").Rename(e.ctx, "t/a2/b/c", nil)
	wantFileCode(t, err, 400, fileerror.InvalidInput)
	_, err = dirAt(s, "t").Rename(e.ctx, "t/a2/t", nil)
	wantFileCode(t, err, 400, fileerror.InvalidInput)
	// Onto a directory, even with replace.
	e.mkdir(s, "u")
	_, err = dirAt(s, "u").Rename(e.ctx, "t", &directory.RenameOptions{ReplaceIfExists: to.Ptr(true)})
	wantFileCode(t, err, 409, fileerror.ResourceAlreadyExists)
	// Parent missing (azfile recorded test TestDirectoryRenameParentNotFound).
	_, err = dirAt(s, "u").Rename(e.ctx, "dir1/dir2/", nil)
	wantFileCode(t, err, 404, fileerror.ParentNotFound)
	// A file is not a directory source.
	_, err = dirAt(s, "t/a2/b/f").Rename(e.ctx, "g", nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)

	// Onto a read-only file (azfile recorded test
	// TestDirectoryRenameIgnoreReadOnly).
	ro := fileAt(s, "t/ro")
	_, err = ro.Create(e.ctx, 1, &file.CreateOptions{SMBProperties: &file.SMBProperties{Attributes: &file.NTFSFileAttributes{ReadOnly: true}}})
	must(t, err)
	u := dirAt(s, "u")
	_, err = u.Rename(e.ctx, "t/ro", nil)
	wantFileCode(t, err, 409, fileerror.ResourceAlreadyExists)
	_, err = u.Rename(e.ctx, "t/ro", &directory.RenameOptions{ReplaceIfExists: to.Ptr(true)})
	wantFileCode(t, err, 409, fileerror.ReadOnlyAttribute)
	_, err = u.Rename(e.ctx, "t/ro", &directory.RenameOptions{ReplaceIfExists: to.Ptr(true), IgnoreReadOnly: to.Ptr(true)})
	must(t, err)
	if _, err := dirAt(s, "t/ro").GetProperties(e.ctx, nil); err != nil {
		t.Fatalf("directory at the replaced file's path: %v", err)
	}

	// SMB properties, permission and metadata (azfile recorded test
	// TestDirectoryRenameNonDefault).
	ct := time.Date(2023, 3, 31, 21, 5, 0, 0, time.UTC)
	rr, err = dirAt(s, "t/ro").Rename(e.ctx, "ren", &directory.RenameOptions{
		FileSMBProperties: &file.SMBProperties{Attributes: &file.NTFSFileAttributes{ReadOnly: true, System: true},
			CreationTime: &ct, LastWriteTime: &ct, ChangeTime: &ct},
		FilePermissions: &file.Permissions{Permission: to.Ptr(fiSDDL)},
		Metadata:        map[string]*string{"Foo": to.Ptr("bar")},
	})
	must(t, err)
	if a := fiAttrs(t, rr.FileAttributes); !a.ReadOnly || !a.System || !a.Directory {
		t.Fatalf("attributes %q", *rr.FileAttributes)
	}
	if !rr.FileCreationTime.Equal(ct) || !rr.FileChangeTime.Equal(ct) || *rr.FilePermissionKey == *ap.FilePermissionKey {
		t.Fatalf("rename SMB: %+v", rr)
	}
	gp, err := dirAt(s, "ren").GetProperties(e.ctx, nil)
	must(t, err)
	if gp.Metadata["Foo"] == nil || *gp.Metadata["Foo"] != "bar" {
		t.Fatalf("metadata %v", gp.Metadata)
	}
	// The root is never a source, nor a destination.
	_, err = s.NewRootDirectoryClient().Rename(e.ctx, "x", nil)
	wantFileCode(t, err, 400, fileerror.InvalidInput)
}

// A SAS-authorized rename needs the source authorized too: by the SAS its
// URL carries (as the SDK sends it) or by the request's own SAS.
func TestFileDirRenameSAS(t *testing.T) {
	e := startFile(t)
	s := e.share()
	e.mkdir(s, "dir1")
	e.mkfile(s, "f", 1)
	e.mkfile(s, "h", 1)
	u, err := s.GetSASURL(sas.SharePermissions{Read: true, Create: true, Write: true}, time.Now().Add(time.Hour), nil)
	must(t, err)
	base, q, _ := strings.Cut(u, "?")
	// (azfile recorded test TestDirectoryRenameUsingSAS)
	d, err := directory.NewClientWithNoCredential(base+"/dir1?"+q, (*directory.ClientOptions)(fileClientOptions()))
	must(t, err)
	_, err = d.Rename(e.ctx, "dir2?"+q, nil)
	must(t, err)
	_, err = dirAt(s, "dir2").GetProperties(e.ctx, nil)
	must(t, err)
	// The source URL without a SAS: the request's share SAS covers it.
	f, err := file.NewClientWithNoCredential(fileAt(s, "f").URL(), (*file.ClientOptions)(fileClientOptions()))
	must(t, err)
	_, err = f.Rename(e.ctx, "f2?"+q, nil)
	must(t, err)
	// A file SAS signed for the destination alone does not.
	fu, err := fileAt(s, "g").GetSASURL(sas.FilePermissions{Create: true, Write: true}, time.Now().Add(time.Hour), nil)
	must(t, err)
	_, fq, _ := strings.Cut(fu, "?")
	hc, err := file.NewClientWithNoCredential(fileAt(s, "h").URL(), (*file.ClientOptions)(fileClientOptions()))
	must(t, err)
	_, err = hc.Rename(e.ctx, "g?"+fq, nil)
	wantFileCode(t, err, 403, fileerror.AuthenticationFailed)
	e.props(fileAt(s, "h"))
}

// fdHandles opens handles through package handle on the app's store.
type fdHandles struct {
	e     *fileEnv
	share string
}

func (h fdHandles) update(fn func(tx kv.Tx, now time.Time) error) {
	h.e.t.Helper()
	now := h.e.clock.Now()
	if err := h.e.app.File.Store().Update(context.Background(), func(tx kv.Tx) error { return fn(tx, now) }); err != nil {
		h.e.t.Fatal(err)
	}
}

// open opens a handle on the item whose properties gave id and parent.
func (h fdHandles) open(id, parent, path string, a handle.Access, doc bool) handle.Handle {
	h.e.t.Helper()
	var out handle.Handle
	h.update(func(tx kv.Tx, now time.Time) error {
		if err := handle.Heartbeat(tx, now, "test", now.Add(24*time.Hour)); err != nil {
			return err
		}
		var err error
		out, err = handle.Open(tx, now, handle.OpenRequest{
			Account: app.DevAccount, Share: h.share, FileID: id, ParentID: parent, Path: path,
			SessionID: "1234", ClientIP: "10.0.0.5:49152", Access: a, ShareAccess: handle.ShareAll,
			DeleteOnClose: doc, Owner: "test",
		})
		return err
	})
	return out
}

func TestFileDirHandles(t *testing.T) {
	e := startFile(t)
	s := e.share()
	hs := fdHandles{e, shareNameOf(t, s)}
	d := e.mkdir(s, "d")
	dp, err := d.GetProperties(e.ctx, nil)
	must(t, err)
	e.mkdir(s, "d/sub")
	f := e.mkfile(s, "d/sub/f", 1)
	fp := e.props(f)
	g := e.mkfile(s, "g", 1)
	gp := e.props(g)

	hd := hs.open(*dp.ID, "0", "d", handle.Read, false)
	hf1 := hs.open(*fp.ID, *fp.ParentID, "d/sub/f", handle.Read|handle.Write, false)
	hf2 := hs.open(*fp.ID, *fp.ParentID, "d/sub/f", handle.Read, false)
	hs.open(*gp.ID, "0", "g", handle.Read, false)

	// A file's handles.
	var raw *http.Response
	lr, err := f.ListHandles(fiCapture(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != 200 || len(lr.Handles) != 2 || lr.NextMarker == nil || *lr.NextMarker != "" {
		t.Fatalf("file handles: %d %+v", raw.StatusCode, lr)
	}
	for _, x := range lr.Handles {
		if *x.Path != "d/sub/f" || *x.FileID != *fp.ID || *x.ParentID != *fp.ParentID || *x.SessionID != "1234" ||
			*x.ClientIP != "10.0.0.5:49152" || x.OpenTime == nil || x.OpenTime.IsZero() || x.LastReconnectTime != nil {
			t.Fatalf("handle %+v", x)
		}
		want := "Read"
		if *x.ID == hf1.HandleID {
			want = "Read,Write"
		}
		var got []string
		for _, r := range x.AccessRightList {
			got = append(got, string(*r))
		}
		if strings.Join(got, ",") != want {
			t.Fatalf("rights %v, want %s", got, want)
		}
	}

	// A directory: itself only, or its subtree.
	dl, err := d.ListHandles(e.ctx, nil)
	must(t, err)
	if len(dl.Handles) != 1 || *dl.Handles[0].ID != hd.HandleID {
		t.Fatalf("directory handles %+v", dl.Handles)
	}
	dl, err = d.ListHandles(e.ctx, &directory.ListHandlesOptions{Recursive: to.Ptr(true)})
	must(t, err)
	if len(dl.Handles) != 3 {
		t.Fatalf("recursive: %d handles", len(dl.Handles))
	}
	rl, err := s.NewRootDirectoryClient().ListHandles(e.ctx, &directory.ListHandlesOptions{Recursive: to.Ptr(true)})
	must(t, err)
	if len(rl.Handles) != 4 {
		t.Fatalf("share: %d handles", len(rl.Handles))
	}
	rl, err = s.NewRootDirectoryClient().ListHandles(e.ctx, nil)
	must(t, err)
	if len(rl.Handles) != 0 {
		t.Fatalf("root itself: %d handles", len(rl.Handles))
	}
	// Paging.
	var ids []string
	o := &directory.ListHandlesOptions{Recursive: to.Ptr(true), MaxResults: to.Ptr(int32(1))}
	for {
		r, err := s.NewRootDirectoryClient().ListHandles(e.ctx, o)
		must(t, err)
		for _, x := range r.Handles {
			ids = append(ids, *x.ID)
		}
		if *r.NextMarker == "" {
			break
		}
		o.Marker = r.NextMarker
	}
	if len(ids) != 4 {
		t.Fatalf("paged handles %v", ids)
	}
	_, err = d.ListHandles(e.ctx, &directory.ListHandlesOptions{Marker: to.Ptr("%%%")})
	wantFileCode(t, err, 400, fileerror.InvalidQueryParameterValue)
	_, err = fileAt(s, "none").ListHandles(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)

	// Handles follow a renamed directory: paths are current.
	_, err = d.Rename(e.ctx, "d2", nil)
	must(t, err)
	lr, err = fileAt(s, "d2/sub/f").ListHandles(e.ctx, nil)
	must(t, err)
	if len(lr.Handles) != 2 || *lr.Handles[0].Path != "d2/sub/f" {
		t.Fatalf("after rename: %+v", lr.Handles)
	}

	// Force close one handle, then all of a subtree.
	fc, err := fileAt(s, "d2/sub/f").ForceCloseHandles(e.ctx, hf2.HandleID, nil)
	must(t, err)
	if *fc.NumberOfHandlesClosed != 1 || *fc.NumberOfHandlesFailedToClose != 0 || fc.Marker != nil {
		t.Fatalf("force close one: %+v", fc)
	}
	fc, err = fileAt(s, "d2/sub/f").ForceCloseHandles(e.ctx, hf2.HandleID, nil)
	must(t, err)
	if *fc.NumberOfHandlesClosed != 0 {
		t.Fatalf("closed a closed handle: %+v", fc)
	}
	_, err = fileAt(s, "d2/sub/f").ForceCloseHandles(e.ctx, "abc", nil)
	wantFileCode(t, err, 400, fileerror.InvalidHeaderValue)
	dc, err := dirAt(s, "d2").ForceCloseHandles(e.ctx, "*", &directory.ForceCloseHandlesOptions{Recursive: to.Ptr(true)})
	must(t, err)
	if *dc.NumberOfHandlesClosed != 2 {
		t.Fatalf("recursive close: %+v", dc)
	}
	rl, err = s.NewRootDirectoryClient().ListHandles(e.ctx, &directory.ListHandlesOptions{Recursive: to.Ptr(true)})
	must(t, err)
	if len(rl.Handles) != 1 || *rl.Handles[0].FileID != *gp.ID {
		t.Fatalf("left: %+v", rl.Handles)
	}
	rc, err := s.NewRootDirectoryClient().ForceCloseHandles(e.ctx, "*", &directory.ForceCloseHandlesOptions{Recursive: to.Ptr(true)})
	must(t, err)
	if *rc.NumberOfHandlesClosed != 1 {
		t.Fatalf("share close: %+v", rc)
	}
}

// Closing the last handle of a delete-pending file deletes it; while it
// is pending, listings omit it and a non-recursive delete of its
// directory still sees it.
func TestFileDirHandlesDeletePending(t *testing.T) {
	e := startFile(t)
	s := e.share()
	hs := fdHandles{e, shareNameOf(t, s)}
	e.mkdir(s, "d")
	f := e.mkfile(s, "d/f", 1)
	fp := e.props(f)
	h := hs.open(*fp.ID, *fp.ParentID, "d/f", handle.Read|handle.Delete, true)
	h2 := hs.open(*fp.ID, *fp.ParentID, "d/f", handle.Read, false)
	// Closing the delete-on-close handle makes the file delete-pending.
	hs.update(func(tx kv.Tx, now time.Time) error {
		_, err := handle.Close(tx, now, app.DevAccount, hs.share, h.FileID, h.HandleID)
		return err
	})
	_, files, _ := e.fdList(dirAt(s, "d"), nil)
	if len(files) != 0 {
		t.Fatalf("delete-pending file listed: %v", files)
	}
	_, err := f.GetProperties(e.ctx, nil)
	wantFileCode(t, err, 409, "")
	_, err = dirAt(s, "d").Delete(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.DirectoryNotEmpty)
	fc, err := f.ForceCloseHandles(e.ctx, h2.HandleID, nil)
	must(t, err)
	if *fc.NumberOfHandlesClosed != 1 {
		t.Fatalf("force close: %+v", fc)
	}
	_, err = f.GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
	_, err = dirAt(s, "d").Delete(e.ctx, nil)
	must(t, err)
}

// Open handles gate directory operations through their share modes.
func TestFileDirHandlesSharing(t *testing.T) {
	e := startFile(t)
	s := e.share()
	hs := fdHandles{e, shareNameOf(t, s)}
	d := e.mkdir(s, "d")
	dp, err := d.GetProperties(e.ctx, nil)
	must(t, err)
	hs.open(*dp.ID, "0", "d", handle.Read, false)
	_, err = d.Delete(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.SharingViolation)
	_, err = d.GetProperties(e.ctx, nil)
	must(t, err)
}

// shareNameOf is the share's name, from its URL.
func shareNameOf(t *testing.T, s *share.Client) string {
	t.Helper()
	u := s.URL()
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u = u[:i]
	}
	return u[strings.LastIndexByte(u, '/')+1:]
}

package e2e

// End-to-end tests of the File operations on one file: Create File, Get
// File, Get/Set File Properties, Set File Metadata, Delete File, and the
// path rules they share. Test names in comments are azfile v1.7.1's
// recorded tests (github.com/Azure/azure-sdk-for-go,
// sdk/storage/azfile/file/client_test.go), whose recordings hold the real
// service's answers; REST pages are cited by title and URL; "(inferred)"
// marks Cerulean's reading where no source says.

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// fiSDDL is the SDDL the azfile recorded tests use (testcommon.SampleSDDL).
const fiSDDL = `O:S-1-5-32-548G:S-1-5-21-397955417-626881126-188441444-512D:(A;;RPWPCCDCLCSWRCWDWOGA;;;S-1-0-0)`

func fiAttrs(t testing.TB, s *string) file.NTFSFileAttributes {
	t.Helper()
	if s == nil {
		t.Fatal("no x-ms-file-attributes")
	}
	a, err := file.ParseNTFSFileAttributes(s)
	if err != nil {
		t.Fatalf("attributes %q: %v", *s, err)
	}
	return *a
}

func TestFileCreateDefaults(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := fileAt(s, "f.txt")
	var raw *http.Response
	cr, err := f.Create(fiCapture(e.ctx, &raw), 1024, nil)
	must(t, err)
	if raw.StatusCode != http.StatusCreated {
		t.Fatalf("status %d, want 201", raw.StatusCode)
	}
	if cr.ETag == nil || *cr.ETag == "" || cr.LastModified == nil || cr.LastModified.IsZero() {
		t.Fatalf("create: ETag %v Last-Modified %v", cr.ETag, cr.LastModified)
	}
	if cr.FileCreationTime == nil || cr.FileLastWriteTime == nil || cr.FileChangeTime == nil ||
		cr.FilePermissionKey == nil || *cr.FilePermissionKey == "" || cr.ID == nil || cr.ParentID == nil {
		t.Fatalf("create: missing SMB headers: %+v", cr)
	}
	// The default ("New" semantics) adds Archive (azfile recorded test
	// TestFileCreateFilePropertySemantics).
	if a := fiAttrs(t, cr.FileAttributes); !a.Archive || a.Directory {
		t.Fatalf("attributes %q, want Archive", *cr.FileAttributes)
	}
	p := e.props(f)
	if *p.ContentLength != 1024 || p.FileType == nil || *p.FileType != "File" {
		t.Fatalf("properties: length %d type %v", *p.ContentLength, p.FileType)
	}
	if *p.ETag != *cr.ETag || !p.LastModified.Equal(*cr.LastModified) {
		t.Fatalf("properties ETag %s / %v, create returned %s / %v", *p.ETag, p.LastModified, *cr.ETag, cr.LastModified)
	}
	// Default content type (Create File,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/create-file,
	// x-ms-content-type; HEAD after Create File without a type in
	// TestResizeFile, GET in TestClearRangeNonDefaultCount).
	if p.ContentType == nil || *p.ContentType != "application/octet-stream" {
		t.Fatalf("content type %v, want application/octet-stream", p.ContentType)
	}
	if p.ContentMD5 != nil || len(p.Metadata) != 0 {
		t.Fatalf("unexpected MD5 %x or metadata %v", p.ContentMD5, p.Metadata)
	}
	if *p.ID != *cr.ID || *p.FilePermissionKey != *cr.FilePermissionKey || !p.FileCreationTime.Equal(*cr.FileCreationTime) {
		t.Fatalf("properties disagree with create response")
	}
	// A new file reads as zeros.
	if got := e.read(f, 0, 0); !bytes.Equal(got, make([]byte, 1024)) {
		t.Fatalf("new file is not zero-filled")
	}
	// Two files have distinct IDs.
	g := e.mkfile(s, "g.txt", 0)
	if id := *e.props(g).ID; id == *cr.ID {
		t.Fatalf("two files share ID %s", id)
	}
}

func TestFileCreateHeadersMetadataSMB(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := fileAt(s, "f.bin")
	md5sum := fiMD5([]byte("content"))
	created := time.Date(2021, 3, 4, 5, 6, 7, 123456700, time.UTC)
	written := time.Date(2022, 1, 2, 3, 4, 5, 100, time.UTC)
	changed := time.Date(2023, 6, 7, 8, 9, 10, 0, time.UTC)
	_, err := f.Create(e.ctx, 4096, &file.CreateOptions{
		HTTPHeaders: &file.HTTPHeaders{
			ContentType:        to.Ptr("text/plain"),
			ContentEncoding:    to.Ptr("gzip"),
			ContentLanguage:    to.Ptr("en-GB"),
			ContentDisposition: to.Ptr("attachment"),
			CacheControl:       to.Ptr("no-cache"),
			ContentMD5:         md5sum,
		},
		Metadata: map[string]*string{"Color": to.Ptr("blue"), "size": to.Ptr("L")},
		SMBProperties: &file.SMBProperties{
			Attributes:    &file.NTFSFileAttributes{ReadOnly: true, Hidden: true},
			CreationTime:  &created,
			LastWriteTime: &written,
			ChangeTime:    &changed,
		},
		Permissions: &file.Permissions{Permission: to.Ptr(fiSDDL)},
	})
	must(t, err)
	p := e.props(f)
	for _, c := range []struct {
		name string
		got  *string
		want string
	}{
		{"Content-Type", p.ContentType, "text/plain"},
		{"Content-Encoding", p.ContentEncoding, "gzip"},
		{"Content-Language", p.ContentLanguage, "en-GB"},
		{"Content-Disposition", p.ContentDisposition, "attachment"},
		{"Cache-Control", p.CacheControl, "no-cache"},
	} {
		if c.got == nil || *c.got != c.want {
			t.Errorf("%s %v, want %q", c.name, c.got, c.want)
		}
	}
	if !bytes.Equal(p.ContentMD5, md5sum) {
		t.Errorf("Content-MD5 %x, want %x", p.ContentMD5, md5sum)
	}
	if len(p.Metadata) != 2 || p.Metadata["Color"] == nil || *p.Metadata["Color"] != "blue" || p.Metadata["Size"] == nil || *p.Metadata["Size"] != "L" {
		t.Errorf("metadata %v", p.Metadata)
	}
	if a := fiAttrs(t, p.FileAttributes); !a.ReadOnly || !a.Hidden || a.Directory {
		t.Errorf("attributes %q, want ReadOnly and Hidden", *p.FileAttributes)
	}
	if !p.FileCreationTime.Equal(created) || !p.FileLastWriteTime.Equal(written) || !p.FileChangeTime.Equal(changed) {
		t.Errorf("times %v %v %v, want %v %v %v", p.FileCreationTime, p.FileLastWriteTime, p.FileChangeTime, created, written, changed)
	}
	key := *p.FilePermissionKey
	if key == "" {
		t.Fatal("no permission key")
	}
	// The key resolves to a permission of the share.
	gp, err := s.GetPermission(e.ctx, key, nil)
	must(t, err)
	if gp.Permission == nil || *gp.Permission == "" {
		t.Fatal("Get Permission returned no SDDL")
	}

	// A permission created on the share is applied by key and reported back
	// under the same key (inferred: the key names the stored descriptor).
	cp, err := s.CreatePermission(e.ctx, fiSDDL, nil)
	must(t, err)
	g := fileAt(s, "g.bin")
	_, err = g.Create(e.ctx, 0, &file.CreateOptions{Permissions: &file.Permissions{PermissionKey: cp.FilePermissionKey}})
	must(t, err)
	if got := *e.props(g).FilePermissionKey; got != *cp.FilePermissionKey {
		t.Fatalf("permission key %s, want %s", got, *cp.FilePermissionKey)
	}

	// A key that names no permission is refused with 400 (the code is not
	// verified against the service, only the status).
	_, err = fileAt(s, "h.bin").Create(e.ctx, 0, &file.CreateOptions{Permissions: &file.Permissions{PermissionKey: to.Ptr("12345*67890")}})
	wantFileCode(t, err, http.StatusBadRequest, "")
	// So is a permission that is not SDDL.
	_, err = fileAt(s, "h.bin").Create(e.ctx, 0, &file.CreateOptions{Permissions: &file.Permissions{Permission: to.Ptr("not a descriptor")}})
	wantFileCode(t, err, http.StatusBadRequest, "")
	// And an unknown attribute name: InvalidHeaderValue, the common code
	// for a malformed header (inferred).
	_, err = fileAt(s, "h.bin").Create(fiHeader(e.ctx, "x-ms-file-attributes", "Bogus"), 0, nil)
	wantFileCode(t, err, http.StatusBadRequest, fileerror.InvalidHeaderValue)
	if _, err := fileAt(s, "h.bin").GetProperties(e.ctx, nil); err == nil {
		t.Fatal("a refused create left a file behind")
	}
}

// Create File on an existing file replaces it: a new empty sparse file with
// only the new request's properties (Create File,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-file
// "creates a new file or replaces a file").
func TestFileCreateReplaces(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := fileAt(s, "f")
	_, err := f.Create(e.ctx, 2048, &file.CreateOptions{
		HTTPHeaders: &file.HTTPHeaders{ContentType: to.Ptr("text/plain")},
		Metadata:    map[string]*string{"a": to.Ptr("1")},
	})
	must(t, err)
	e.put(f, 0, fiRand(2048))
	old := e.props(f)
	e.clock.Advance(time.Second)
	_, err = f.Create(e.ctx, 1000, nil)
	must(t, err)
	p := e.props(f)
	if *p.ContentLength != 1000 || len(p.Metadata) != 0 || *p.ContentType != "application/octet-stream" {
		t.Fatalf("replaced file: length %d metadata %v type %v", *p.ContentLength, p.Metadata, *p.ContentType)
	}
	if *p.ETag == *old.ETag || !p.LastModified.After(*old.LastModified) {
		t.Fatalf("replace kept ETag %s / Last-Modified %v", *p.ETag, p.LastModified)
	}
	if got := e.read(f, 0, 0); !bytes.Equal(got, make([]byte, 1000)) {
		t.Fatal("replaced file kept old data")
	}
	wantRanges(t, "replaced file", e.ranges(f, nil), fiRanges{})
}

func TestFileCreateErrors(t *testing.T) {
	e := startFile(t)
	s := e.share()
	// Under a missing directory: 404 ParentNotFound (azfile recorded test
	// TestFileCreateUsingSharedKey).
	_, err := fileAt(s, "nodir/f").Create(e.ctx, 10, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ParentNotFound)
	_, err = fileAt(s, "a/b/c/f").Create(e.ctx, 10, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ParentNotFound)
	// In a missing share: 404 ShareNotFound.
	_, err = fileAt(e.svc.NewShareClient("noshare"), "f").Create(e.ctx, 10, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ShareNotFound)
	// Larger than 4 TiB (Create File,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/create-file,
	// x-ms-content-length "up to 4 TiB"; the service's message for a bad
	// size is OutOfRangeInput "The file size exceeds the maximum permissible
	// limit.", TestFileResizeInvalidSizeNegative).
	_, err = fileAt(s, "huge").Create(e.ctx, 4<<40+1, nil)
	wantFileCode(t, err, http.StatusBadRequest, fileerror.OutOfRangeInput)
	// Exactly 4 TiB is allowed in a share of the default quota (5 TiB)
	// (azfile recorded test TestCreateMaximumSizeFileShare).
	e.mkfile(s, "max", 4<<40)
	// Success after the directory exists.
	e.mkdir(s, "nodir")
	e.mkfile(s, "nodir/f", 10)
}

// A negative size is 400 OutOfRangeInput (azfile recorded test
// TestFileResizeInvalidSizeNegative: Resize(-4) fails with OutOfRangeInput;
// Create File takes the same x-ms-content-length header, I).
func TestFileNegativeSize(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "f", 10)
	_, err := f.Resize(e.ctx, -4, nil)
	wantFileCode(t, err, http.StatusBadRequest, fileerror.OutOfRangeInput)
	_, err = fileAt(s, "neg").Create(e.ctx, -1, nil)
	wantFileCode(t, err, http.StatusBadRequest, fileerror.OutOfRangeInput)
}

// A file larger than the share quota is refused (azfile recorded test
// TestNegativeFileSizeMoreThanShareQuota: a 4 TiB file in a 1024 GiB share
// gets 403 ShareSizeLimitReached "The specified share is full.").
func TestFileCreateOverQuota(t *testing.T) {
	e := startFile(t)
	s := e.svc.NewShareClient(fileName("quota"))
	_, err := s.Create(e.ctx, &share.CreateOptions{Quota: to.Ptr(int32(1024))})
	must(t, err)
	_, err = fileAt(s, "f").Create(e.ctx, 4<<40, nil)
	wantFileCode(t, err, http.StatusForbidden, fileerror.ShareSizeLimitReached)
}

func TestFileGet(t *testing.T) {
	e := startFile(t)
	s := e.share()
	const size = 10000
	data := fiRand(size)
	f := e.mkfile(s, "f", size)
	e.put(f, 0, data)

	get := func(o *file.DownloadStreamOptions) (file.DownloadStreamResponse, *http.Response, []byte, error) {
		var raw *http.Response
		r, err := f.DownloadStream(fiCapture(e.ctx, &raw), o)
		if err != nil {
			return r, raw, nil, err
		}
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		return r, raw, b, err
	}

	// Whole file: 200, no Content-Range, Accept-Ranges bytes.
	r, raw, got, err := get(nil)
	must(t, err)
	if raw.StatusCode != http.StatusOK || r.ContentRange != nil || !bytes.Equal(got, data) || *r.ContentLength != size {
		t.Fatalf("whole file: status %d Content-Range %v length %d equal %v", raw.StatusCode, r.ContentRange, *r.ContentLength, bytes.Equal(got, data))
	}
	if r.AcceptRanges == nil || *r.AcceptRanges != "bytes" {
		t.Fatalf("Accept-Ranges %v", r.AcceptRanges)
	}
	if r.FileAttributes == nil || r.FilePermissionKey == nil || r.ETag == nil {
		t.Fatal("Get File lacks SMB properties or ETag")
	}

	// A range: 206 with Content-Range.
	r, raw, got, err = get(&file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 100, Count: 1000}})
	must(t, err)
	if raw.StatusCode != http.StatusPartialContent || !bytes.Equal(got, data[100:1100]) ||
		r.ContentRange == nil || *r.ContentRange != "bytes 100-1099/10000" || *r.ContentLength != 1000 {
		t.Fatalf("range: status %d Content-Range %v length %d", raw.StatusCode, r.ContentRange, *r.ContentLength)
	}
	// An open range (bytes=s-).
	r, raw, got, err = get(&file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 9000}})
	must(t, err)
	if raw.StatusCode != http.StatusPartialContent || !bytes.Equal(got, data[9000:]) || *r.ContentRange != "bytes 9000-9999/10000" {
		t.Fatalf("open range: status %d Content-Range %v", raw.StatusCode, r.ContentRange)
	}
	// A range running past the end is cut at the end (azfile recorded test
	// TestFileDownloadDataCountOutOfRange).
	r, _, got, err = get(&file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 9990, Count: 100}})
	must(t, err)
	if !bytes.Equal(got, data[9990:]) || *r.ContentRange != "bytes 9990-9999/10000" {
		t.Fatalf("range past the end: %d bytes, Content-Range %v", len(got), *r.ContentRange)
	}
	// A range starting at or past the end: 416 InvalidRange (azfile
	// TestFileDownloadDataOffsetOutOfRange; Specifying the range header for
	// Azure Files operations,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/specifying-the-range-header-for-file-service-operations).
	for _, off := range []int64{size, size + 1, 1 << 40} {
		_, _, _, err = get(&file.DownloadStreamOptions{Range: file.HTTPRange{Offset: off, Count: 10}})
		wantFileCode(t, err, http.StatusRequestedRangeNotSatisfiable, fileerror.InvalidRange)
	}
	// An empty file: every range is unsatisfiable, a plain GET works.
	empty := e.mkfile(s, "empty", 0)
	_, err = empty.DownloadStream(e.ctx, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 0, Count: 10}})
	wantFileCode(t, err, http.StatusRequestedRangeNotSatisfiable, fileerror.InvalidRange)
	if b := e.read(empty, 0, 0); len(b) != 0 {
		t.Fatalf("empty file read %d bytes", len(b))
	}

	// x-ms-range-get-content-md5 returns the MD5 of the range.
	r, _, got, err = get(&file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 1000, Count: 4096}, RangeGetContentMD5: to.Ptr(true)})
	must(t, err)
	if !bytes.Equal(got, data[1000:5096]) || !bytes.Equal(r.ContentMD5, fiMD5(data[1000:5096])) {
		t.Fatalf("range MD5 %x, want %x", r.ContentMD5, fiMD5(data[1000:5096]))
	}
	// ... needs a range, and a range of at most 4 MiB (Get File,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/get-file,
	// x-ms-range-get-content-md5: "status code 400 (Bad Request)" in both
	// cases; the code is not documented).
	_, _, _, err = get(&file.DownloadStreamOptions{RangeGetContentMD5: to.Ptr(true)})
	wantFileCode(t, err, http.StatusBadRequest, "")
	big := e.mkfile(s, "big", 4<<20+1)
	_, err = big.DownloadStream(e.ctx, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 0, Count: 4<<20 + 1}, RangeGetContentMD5: to.Ptr(true)})
	wantFileCode(t, err, http.StatusBadRequest, "")
	r, err = big.DownloadStream(e.ctx, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 1, Count: 4 << 20}, RangeGetContentMD5: to.Ptr(true)})
	must(t, err)
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if !bytes.Equal(r.ContentMD5, fiMD5(make([]byte, 4<<20))) || len(b) != 4<<20 {
		t.Fatalf("4 MiB range MD5 %x", r.ContentMD5)
	}

	// The stored Content-MD5: on a whole read as Content-MD5, on a ranged
	// read as x-ms-content-md5 (azfile recorded test
	// TestUploadDownloadDefaultNonDefaultMD5).
	whole := fiMD5(data)
	_, err = f.SetHTTPHeaders(e.ctx, &file.SetHTTPHeadersOptions{HTTPHeaders: &file.HTTPHeaders{ContentMD5: whole}})
	must(t, err)
	r, _, _, err = get(nil)
	must(t, err)
	if !bytes.Equal(r.ContentMD5, whole) || r.FileContentMD5 != nil {
		t.Fatalf("whole read: Content-MD5 %x x-ms-content-md5 %x", r.ContentMD5, r.FileContentMD5)
	}
	r, _, _, err = get(&file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 5000}})
	must(t, err)
	if r.ContentMD5 != nil || !bytes.Equal(r.FileContentMD5, whole) {
		t.Fatalf("ranged read: Content-MD5 %x x-ms-content-md5 %x", r.ContentMD5, r.FileContentMD5)
	}

	// Missing file and missing share.
	_, err = fileAt(s, "nofile").DownloadStream(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	_, err = fileAt(s, "nofile").GetProperties(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	_, err = fileAt(e.svc.NewShareClient("noshare"), "f").DownloadStream(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ShareNotFound)
}

func TestFileSetHTTPHeaders(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := fileAt(s, "f")
	_, err := f.Create(e.ctx, 0, &file.CreateOptions{
		HTTPHeaders:   &file.HTTPHeaders{ContentType: to.Ptr("a/b"), CacheControl: to.Ptr("x")},
		Permissions:   &file.Permissions{Permission: to.Ptr(fiSDDL)},
		SMBProperties: &file.SMBProperties{Attributes: &file.NTFSFileAttributes{Archive: true}},
		Metadata:      map[string]*string{"keep": to.Ptr("me")},
	})
	must(t, err)
	before := e.props(f)

	// New HTTP headers; SMB properties left out are preserved, except the
	// change time, which defaults to now (azfile recorded test
	// TestFilePreservePermissions).
	e.clock.Advance(2 * time.Second)
	md5sum := fiMD5([]byte("x"))
	sr, err := f.SetHTTPHeaders(e.ctx, &file.SetHTTPHeadersOptions{
		HTTPHeaders: &file.HTTPHeaders{
			ContentType: to.Ptr("text/html"), ContentEncoding: to.Ptr("gzip"), ContentLanguage: to.Ptr("en"),
			ContentMD5: md5sum, CacheControl: to.Ptr("no-transform"), ContentDisposition: to.Ptr("attachment"),
		},
		SMBProperties: &file.SMBProperties{},
	})
	must(t, err)
	p := e.props(f)
	if *p.ContentType != "text/html" || *p.ContentEncoding != "gzip" || *p.ContentLanguage != "en" ||
		*p.CacheControl != "no-transform" || *p.ContentDisposition != "attachment" || !bytes.Equal(p.ContentMD5, md5sum) {
		t.Fatalf("headers not set: %+v", p)
	}
	if *p.FilePermissionKey != *before.FilePermissionKey || !p.FileCreationTime.Equal(*before.FileCreationTime) ||
		!p.FileLastWriteTime.Equal(*before.FileLastWriteTime) || *p.FileAttributes != *before.FileAttributes {
		t.Fatalf("SMB properties not preserved: before %+v after %+v", before, p)
	}
	if !p.FileChangeTime.After(*before.FileChangeTime) {
		t.Fatalf("change time %v not after %v", p.FileChangeTime, before.FileChangeTime)
	}
	if *sr.ETag == *before.ETag || *p.ETag != *sr.ETag || !sr.LastModified.After(*before.LastModified) {
		t.Fatalf("ETag/Last-Modified not changed by Set File Properties")
	}
	if len(p.Metadata) != 1 {
		t.Fatalf("metadata changed by Set File Properties: %v", p.Metadata)
	}

	// New SMB properties; attributes replace the old set (azfile recorded
	// test TestFileGetSetPropertiesNonDefault: Hidden alone reads back
	// "Hidden").
	created := time.Date(2020, 1, 1, 0, 0, 0, 500, time.UTC)
	written := time.Date(2020, 2, 2, 0, 0, 0, 0, time.UTC)
	changed := time.Date(2020, 3, 3, 0, 0, 0, 0, time.UTC)
	_, err = f.SetHTTPHeaders(e.ctx, &file.SetHTTPHeadersOptions{
		SMBProperties: &file.SMBProperties{
			Attributes:   &file.NTFSFileAttributes{Hidden: true},
			CreationTime: &created, LastWriteTime: &written, ChangeTime: &changed,
		},
	})
	must(t, err)
	p = e.props(f)
	if a := fiAttrs(t, p.FileAttributes); a != (file.NTFSFileAttributes{Hidden: true}) {
		t.Fatalf("attributes %q, want Hidden", *p.FileAttributes)
	}
	if !p.FileCreationTime.Equal(created) || !p.FileLastWriteTime.Equal(written) || !p.FileChangeTime.Equal(changed) {
		t.Fatalf("times %v %v %v", p.FileCreationTime, p.FileLastWriteTime, p.FileChangeTime)
	}
	// "None" clears every attribute.
	_, err = f.SetHTTPHeaders(e.ctx, &file.SetHTTPHeadersOptions{SMBProperties: &file.SMBProperties{Attributes: &file.NTFSFileAttributes{None: true}}})
	must(t, err)
	if a := fiAttrs(t, e.props(f).FileAttributes); a.Hidden || a.Archive || a.ReadOnly {
		t.Fatalf("attributes after None: %+v", a)
	}

	// Missing file.
	_, err = fileAt(s, "nofile").SetHTTPHeaders(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
}

// Set File Properties clears the HTTP headers it does not carry, the
// content type included: afterwards neither Get File Properties nor Get
// File sends a Content-Type.
func TestFileSetHTTPHeadersClears(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := fileAt(s, "f")
	_, err := f.Create(e.ctx, 10, &file.CreateOptions{HTTPHeaders: &file.HTTPHeaders{
		ContentType: to.Ptr("a/b"), ContentEncoding: to.Ptr("gzip"), ContentLanguage: to.Ptr("en"),
		ContentMD5: fiMD5([]byte("x")), CacheControl: to.Ptr("no-cache"), ContentDisposition: to.Ptr("inline"),
	}})
	must(t, err)
	// HTTP headers left out are cleared (azfile recorded test
	// TestFileGetSetPropertiesDefault, TestUploadDownloadDefaultNonDefaultMD5
	// "ContentType is set to empty during SetHTTPHeaders").
	_, err = f.SetHTTPHeaders(e.ctx, nil)
	must(t, err)
	p := e.props(f)
	if p.ContentType != nil || p.ContentEncoding != nil || p.ContentLanguage != nil || p.ContentMD5 != nil ||
		p.CacheControl != nil || p.ContentDisposition != nil {
		t.Fatalf("headers not cleared: type %q encoding %q language %q md5 %x cache %q disposition %q",
			fiStr(p.ContentType), fiStr(p.ContentEncoding), fiStr(p.ContentLanguage), p.ContentMD5, fiStr(p.CacheControl), fiStr(p.ContentDisposition))
	}
	// Get File then sends no Content-Type either (azfile recorded test
	// TestUploadDownloadDefaultNonDefaultMD5, resp.ContentType nil).
	dr, err := f.DownloadStream(e.ctx, nil)
	must(t, err)
	dr.Body.Close()
	if dr.ContentType != nil {
		t.Fatalf("Get File Content-Type %q after the content type was cleared", *dr.ContentType)
	}

}

// Resize through Set File Properties (x-ms-content-length): shrinking drops
// the data past the new end, growing reads zeros.
func TestFileResize(t *testing.T) {
	e := startFile(t)
	s := e.share()
	data := fiRand(8192)
	f := e.mkfile(s, "f", 8192)
	e.put(f, 0, data)

	_, err := f.Resize(e.ctx, 3000, nil)
	must(t, err)
	if n := *e.props(f).ContentLength; n != 3000 {
		t.Fatalf("length %d after shrink", n)
	}
	if got := e.read(f, 0, 0); !bytes.Equal(got, data[:3000]) {
		t.Fatal("shrunk file content differs")
	}
	_, err = f.Resize(e.ctx, 20000, nil)
	must(t, err)
	got := e.read(f, 0, 0)
	if len(got) != 20000 || !bytes.Equal(got[:3000], data[:3000]) || !bytes.Equal(got[3000:], make([]byte, 17000)) {
		t.Fatal("grown file: the data dropped by the shrink came back, or the tail is not zero")
	}
	for _, r := range e.ranges(f, nil) {
		if r[1] >= 3000+511 { // allow rounding of the last range to 512 bytes (inferred)
			t.Fatalf("range %v survives past the shrink point", r)
		}
	}
	// Resize to zero (azfile recorded test TestFileResizeZero).
	_, err = f.Resize(e.ctx, 0, nil)
	must(t, err)
	if n := *e.props(f).ContentLength; n != 0 {
		t.Fatalf("length %d after resize to 0", n)
	}
	_, err = f.Resize(e.ctx, 4<<40+1, nil)
	wantFileCode(t, err, http.StatusBadRequest, fileerror.OutOfRangeInput)
	// Growing to 4 TiB is fine.
	_, err = f.Resize(e.ctx, 4<<40, nil)
	must(t, err)
}

// A request that only resizes keeps the HTTP properties (azfile recorded test
// TestResizeFile: Content-Type is still reported after Resize, while Set File
// Properties without x-ms-content-length clears it,
// TestFileGetSetPropertiesDefault).
func TestFileResizeKeepsHTTPHeaders(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := fileAt(s, "f")
	_, err := f.Create(e.ctx, 100, &file.CreateOptions{HTTPHeaders: &file.HTTPHeaders{ContentType: to.Ptr("text/plain"), CacheControl: to.Ptr("no-cache")}})
	must(t, err)
	_, err = f.Resize(e.ctx, 200, nil)
	must(t, err)
	p := e.props(f)
	if fiStr(p.ContentType) != "text/plain" || fiStr(p.CacheControl) != "no-cache" {
		t.Fatalf("after resize: content type %q cache control %q", fiStr(p.ContentType), fiStr(p.CacheControl))
	}
}

func TestFileSetMetadata(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "f", 10)
	before := e.props(f)
	e.clock.Advance(time.Second)
	var raw *http.Response
	mr, err := f.SetMetadata(fiCapture(e.ctx, &raw), &file.SetMetadataOptions{Metadata: map[string]*string{"Foo": to.Ptr("Foovalue"), "Bar": to.Ptr("Barvalue")}})
	must(t, err)
	if raw.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", raw.StatusCode)
	}
	p := e.props(f)
	if len(p.Metadata) != 2 || *p.Metadata["Foo"] != "Foovalue" || *p.Metadata["Bar"] != "Barvalue" {
		t.Fatalf("metadata %v", p.Metadata)
	}
	if *mr.ETag == *before.ETag || *p.ETag != *mr.ETag || !p.LastModified.After(*before.LastModified) {
		t.Fatal("Set File Metadata did not change ETag/Last-Modified")
	}
	// Replaces the whole set.
	_, err = f.SetMetadata(e.ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"only": to.Ptr("one")}})
	must(t, err)
	if p := e.props(f); len(p.Metadata) != 1 || *p.Metadata["Only"] != "one" {
		t.Fatalf("metadata %v", p.Metadata)
	}
	// No metadata clears it (azfile recorded test TestFileSetMetadataNil).
	_, err = f.SetMetadata(e.ctx, nil)
	must(t, err)
	if p := e.props(f); len(p.Metadata) != 0 {
		t.Fatalf("metadata %v after clearing", p.Metadata)
	}
	// Names must be C# identifiers (azfile recorded test
	// TestFileSetMetadataInvalidField fails; code as for blobs).
	_, err = f.SetMetadata(e.ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"1abc": to.Ptr("x")}})
	wantFileCode(t, err, http.StatusBadRequest, fileerror.InvalidMetadata)
	_, err = fileAt(s, "nofile").SetMetadata(e.ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("b")}})
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	// Metadata also reads through Get File.
	_, err = f.SetMetadata(e.ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"k": to.Ptr("v")}})
	must(t, err)
	r, err := f.DownloadStream(e.ctx, nil)
	must(t, err)
	r.Body.Close()
	if len(r.Metadata) != 1 || *r.Metadata["K"] != "v" {
		t.Fatalf("Get File metadata %v", r.Metadata)
	}
}

func TestFileDelete(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "f", 1000)
	e.put(f, 0, fiRand(1000))
	var raw *http.Response
	_, err := f.Delete(fiCapture(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d, want 202", raw.StatusCode)
	}
	_, err = f.GetProperties(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	_, err = f.Delete(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	_, err = fileAt(s, "nodir/f").Delete(e.ctx, nil)
	if st := fiStatus(err); st != http.StatusNotFound {
		t.Fatalf("delete under a missing directory: %v", err)
	}
	// The name is free again; the new file starts empty.
	e.mkfile(s, "f", 1000)
	if got := e.read(f, 0, 0); !bytes.Equal(got, make([]byte, 1000)) {
		t.Fatal("recreated file shows the deleted data")
	}
	wantRanges(t, "recreated", e.ranges(f, nil), fiRanges{})
	// Deleting a file leaves its directory and siblings alone.
	e.mkdir(s, "d")
	a := e.mkfile(s, "d/a", 1)
	b := e.mkfile(s, "d/b", 1)
	_, err = a.Delete(e.ctx, nil)
	must(t, err)
	e.props(b)
	_, err = dirAt(s, "d").GetProperties(e.ctx, nil)
	must(t, err)
}

// The file client pointed at a directory: file operations see no file
// there: the file resolves to nothing, 404 ResourceNotFound (inferred);
// Create File over a directory conflicts with it, as the service answers the
// mirror case, Create Directory over a file, with 409 "The specified
// resource type does not match the type of the existing resource"
// (ResourceTypeMismatch, microsoft/vscode-azurestorage#848).
func TestFileOnDirectoryPath(t *testing.T) {
	e := startFile(t)
	s := e.share()
	e.mkdir(s, "d")
	f := fileAt(s, "d")
	_, err := f.GetProperties(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	_, err = f.DownloadStream(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	_, err = f.UploadRange(e.ctx, 0, fiBody([]byte("x")), nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	_, err = f.SetMetadata(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	_, err = f.Resize(e.ctx, 10, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	_, err = f.GetRangeList(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	_, err = f.Delete(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	_, err = f.Create(e.ctx, 10, nil)
	wantFileCode(t, err, http.StatusConflict, fileerror.ResourceTypeMismatch)
	// The directory is untouched.
	dp, err := dirAt(s, "d").GetProperties(e.ctx, nil)
	must(t, err)
	if a := fiAttrs(t, dp.FileAttributes); !a.Directory {
		t.Fatalf("directory attributes %q", *dp.FileAttributes)
	}
	// The root directory's path is not a file either.
	_, err = s.NewRootDirectoryClient().NewFileClient("").GetProperties(e.ctx, nil)
	if err == nil {
		t.Fatal("file properties of the share root")
	}
}

// Names are case-insensitive and case-preserving (Naming and referencing
// shares, directories, files, and metadata,
// https://learn.microsoft.com/en-us/rest/api/storageservices/naming-and-referencing-shares--directories--files--and-metadata).
func TestFileCaseInsensitive(t *testing.T) {
	e := startFile(t)
	s := e.share()
	data := fiRand(300)
	f := e.mkfile(s, "A.txt", 300)
	e.put(f, 0, data)
	g := fileAt(s, "a.TXT")
	if p := e.props(g); *p.ContentLength != 300 || *p.ID != *e.props(f).ID {
		t.Fatal("a.TXT is not A.txt")
	}
	if got := e.read(g, 0, 0); !bytes.Equal(got, data) {
		t.Fatal("a.TXT reads other data")
	}
	_, err := g.SetMetadata(e.ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"via": to.Ptr("lower")}})
	must(t, err)
	if p := e.props(f); *p.Metadata["Via"] != "lower" {
		t.Fatal("metadata set through a.TXT not seen through A.txt")
	}
	// The listing shows one entry, with the case it was created with.
	var names []string
	pager := s.NewRootDirectoryClient().NewListFilesAndDirectoriesPager(nil)
	for pager.More() {
		pg, err := pager.NextPage(e.ctx)
		must(t, err)
		for _, it := range pg.Segment.Files {
			names = append(names, *it.Name)
		}
	}
	if len(names) != 1 || names[0] != "A.txt" {
		t.Fatalf("listing %v, want [A.txt]", names)
	}
	// Directories too: "D/x" and "d/X" are the same file.
	e.mkdir(s, "D")
	e.mkfile(s, "D/x", 7)
	if n := *e.props(fileAt(s, "d/X")).ContentLength; n != 7 {
		t.Fatalf("d/X length %d", n)
	}
	// Deleting through another case removes the file.
	_, err = g.Delete(e.ctx, nil)
	must(t, err)
	_, err = f.GetProperties(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
}

// Path component rules (Naming and referencing shares, directories, files,
// and metadata,
// https://learn.microsoft.com/en-us/rest/api/storageservices/naming-and-referencing-shares--directories--files--and-metadata);
// the service answers 400 InvalidResourceName "The specifed resource name
// contains invalid characters." (microsoft/AzureStorageExplorer#2566,
// jenkinsci/azure-storage-plugin#231).
func TestFileNames(t *testing.T) {
	e := startFile(t)
	s := e.share()
	for _, name := range []string{`a"b`, "a:b", "a|b", "a<b", "a>b", "a*b", "a?b", "a\x01b"} {
		_, err := fileAt(s, name).Create(e.ctx, 1, nil)
		if err == nil {
			t.Errorf("file %q created", name)
			continue
		}
		wantFileCode(t, err, http.StatusBadRequest, fileerror.InvalidResourceName)
	}
	// A component of 255 characters is allowed, 256 is not (same page).
	long := strings.Repeat("n", 255)
	e.mkfile(s, long, 1)
	_, err := fileAt(s, long+"n").Create(e.ctx, 1, nil)
	wantFileCode(t, err, http.StatusBadRequest, "")
	// Reads of an invalid name fail the same way rather than with 404.
	_, err = fileAt(s, "a*b").GetProperties(e.ctx, nil)
	wantFileCode(t, err, http.StatusBadRequest, "")
	// Spaces, Unicode, and characters that need escaping in a URL are fine.
	for _, name := range []string{"with space.txt", "ünïcødé-文件", "a%20b", "a+b&c=d#e", "semi;colon", "x'y"} {
		f := e.mkfile(s, name, 3)
		e.put(f, 0, []byte("abc"))
		if got := e.read(f, 0, 0); string(got) != "abc" {
			t.Errorf("file %q reads %q", name, got)
		}
	}
}

// Trailing dots: with x-ms-allow-trailing-dot: true they are part of the name
// (azfile recorded test TestFileCreateDeleteTrailingDot,
// TestFileSetMetadataTrailingDot create and use "file.."); without it the
// service trims them (azfile's ShareClientOptions.AllowTrailingDot: "If
// false, the trailing dot will be trimmed"; version 2022-11-02).
func TestFileTrailingDot(t *testing.T) {
	e := startFile(t)
	s := e.share()
	opts := fileClientOptions()
	opts.AllowTrailingDot = to.Ptr(true)
	cred, err := service.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	dotSvc, err := service.NewClientWithSharedKeyCredential(e.app.FileURL, cred, opts)
	must(t, err)
	ds := dotSvc.NewShareClient(fiShareName(t, s))
	f := e.mkfile(ds, "file..", 2048)
	e.props(f)
	if _, err := fileAt(s, "file").GetProperties(e.ctx, nil); err == nil {
		t.Fatal(`"file.." is reachable as "file"`)
	}
	_, err = f.Delete(e.ctx, nil)
	must(t, err)
	_, err = f.GetProperties(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
}

func TestFileTrailingDotTrimmed(t *testing.T) {
	e := startFile(t)
	s := e.share()
	// Without the header "plain." names the file "plain".
	e.mkfile(s, "plain.", 5)
	if n := *e.props(fileAt(s, "plain")).ContentLength; n != 5 {
		t.Fatalf("plain length %d", n)
	}
}

// File REST has no conditional requests: If-* headers are refused with 400
// ConditionHeadersNotSupported (Azure Files error codes,
// https://learn.microsoft.com/en-us/rest/api/storageservices/file-service-error-codes).
func TestFileConditionHeaders(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "f", 100)
	etag := string(*e.props(f).ETag)
	for _, h := range [][2]string{
		{"If-Match", etag}, {"If-Match", "*"}, {"If-None-Match", "*"},
		{"If-Modified-Since", "Sat, 01 Jan 2000 00:00:00 GMT"}, {"If-Unmodified-Since", "Sat, 01 Jan 2000 00:00:00 GMT"},
	} {
		ctx := fiHeader(e.ctx, h[0], h[1])
		_, err := f.GetProperties(ctx, nil) // HEAD: the code comes from x-ms-error-code
		wantFileCode(t, err, http.StatusBadRequest, fileerror.ConditionHeadersNotSupported)
		_, err = f.DownloadStream(ctx, nil)
		wantFileCode(t, err, http.StatusBadRequest, fileerror.ConditionHeadersNotSupported)
		_, err = f.UploadRange(ctx, 0, fiBody([]byte("abc")), nil)
		wantFileCode(t, err, http.StatusBadRequest, fileerror.ConditionHeadersNotSupported)
		_, err = f.SetMetadata(ctx, nil)
		wantFileCode(t, err, http.StatusBadRequest, fileerror.ConditionHeadersNotSupported)
		_, err = fileAt(s, "new").Create(ctx, 1, nil)
		wantFileCode(t, err, http.StatusBadRequest, fileerror.ConditionHeadersNotSupported)
		_, err = f.Delete(ctx, nil)
		wantFileCode(t, err, http.StatusBadRequest, fileerror.ConditionHeadersNotSupported)
	}
	// Nothing was changed or created.
	if got := e.read(f, 0, 0); !bytes.Equal(got, make([]byte, 100)) {
		t.Fatal("a refused Put Range wrote data")
	}
	if _, err := fileAt(s, "new").GetProperties(e.ctx, nil); err == nil {
		t.Fatal("a refused Create File created the file")
	}
}

// A file SAS grants exactly its permissions.
func TestFileSAS(t *testing.T) {
	e := startFile(t)
	s := e.share()
	data := fiRand(1000)
	f := e.mkfile(s, "f", 1000)
	e.put(f, 0, data)
	u, err := f.GetSASURL(sas.FilePermissions{Read: true}, time.Now().Add(time.Hour), nil)
	must(t, err)
	ro, err := file.NewClientWithNoCredential(u, (*file.ClientOptions)(fileClientOptions()))
	must(t, err)
	r, err := ro.DownloadStream(e.ctx, nil)
	must(t, err)
	got, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if !bytes.Equal(got, data) {
		t.Fatal("SAS read differs")
	}
	_, err = ro.UploadRange(e.ctx, 0, fiBody([]byte("x")), nil)
	wantFileCode(t, err, http.StatusForbidden, fileerror.AuthorizationPermissionMismatch)
	_, err = ro.Delete(e.ctx, nil)
	wantFileCode(t, err, http.StatusForbidden, fileerror.AuthorizationPermissionMismatch)

	// Read-write: writes work; a SAS for one file does not reach another.
	u, err = f.GetSASURL(sas.FilePermissions{Read: true, Write: true, Create: true}, time.Now().Add(time.Hour), nil)
	must(t, err)
	rw, err := file.NewClientWithNoCredential(u, (*file.ClientOptions)(fileClientOptions()))
	must(t, err)
	_, err = rw.UploadRange(e.ctx, 0, fiBody([]byte("xyz")), nil)
	must(t, err)
	if got := e.read(f, 0, 3); string(got) != "xyz" {
		t.Fatalf("SAS write reads back %q", got)
	}
	other := e.mkfile(s, "other", 10)
	sibling := strings.Replace(u, "/f?", "/other?", 1)
	oc, err := file.NewClientWithNoCredential(sibling, (*file.ClientOptions)(fileClientOptions()))
	must(t, err)
	_, err = oc.GetProperties(e.ctx, nil)
	wantFileCode(t, err, http.StatusForbidden, "")
	e.props(other)
}

// A file service SAS overrides the response headers it signs (rscc, rscd,
// rsce, rscl, rsct) on Get File and Get File Properties; an account SAS has
// none (Create a service SAS,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas,
// "Blob Storage and Azure Files only").
func TestFileSASOverrides(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "f.txt", 5)
	e.put(f, 0, []byte("hello"))
	cred, err := service.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	qp, err := sas.SignatureValues{
		Protocol: sas.ProtocolHTTPSandHTTP, ShareName: fiShareName(t, s), FilePath: "f.txt",
		Permissions: (&sas.FilePermissions{Read: true}).String(), ExpiryTime: time.Now().Add(time.Hour),
		CacheControl: "no-store", ContentDisposition: "attachment; filename=x.bin", ContentEncoding: "identity",
		ContentLanguage: "de", ContentType: "application/x-test",
	}.SignWithSharedKey(cred)
	must(t, err)
	c, err := file.NewClientWithNoCredential(f.URL()+"?"+qp.Encode(), (*file.ClientOptions)(fileClientOptions()))
	must(t, err)
	check := func(what string, cc, cd, ce, cl, ct *string) {
		t.Helper()
		for _, h := range []struct {
			name string
			got  *string
			want string
		}{{"Cache-Control", cc, "no-store"}, {"Content-Disposition", cd, "attachment; filename=x.bin"},
			{"Content-Encoding", ce, "identity"}, {"Content-Language", cl, "de"}, {"Content-Type", ct, "application/x-test"}} {
			if h.got == nil || *h.got != h.want {
				t.Errorf("%s: %s %v, want %q", what, h.name, h.got, h.want)
			}
		}
	}
	d, err := c.DownloadStream(e.ctx, nil)
	must(t, err)
	data, _ := io.ReadAll(d.Body)
	d.Body.Close()
	if string(data) != "hello" {
		t.Fatalf("body %q", data)
	}
	check("Get File", d.CacheControl, d.ContentDisposition, d.ContentEncoding, d.ContentLanguage, d.ContentType)
	p, err := c.GetProperties(e.ctx, nil)
	must(t, err)
	check("Get File Properties", p.CacheControl, p.ContentDisposition, p.ContentEncoding, p.ContentLanguage, p.ContentType)
	// The stored properties are untouched, and Shared Key reads see them.
	p, err = f.GetProperties(e.ctx, nil)
	must(t, err)
	if p.ContentType != nil && *p.ContentType == "application/x-test" || p.ContentDisposition != nil {
		t.Fatalf("the overrides leaked into the file: %v %v", p.ContentType, p.ContentDisposition)
	}
}

// fiShareName is the name of share client s.
func fiShareName(t testing.TB, s *share.Client) string {
	t.Helper()
	u := s.URL()
	return u[strings.LastIndex(u, "/")+1:]
}

// Create File with a body (version 2026-06-06, azfile CreateOptions.
// OptionalBody) writes the data in the same request (azfile recorded test
// TestFileCreateData, TestFileCreateDataPrecalculatedChecksum (Content-MD5
// echoed), TestFileCreateDataIncorrectMD5 (Md5Mismatch),
// TestFileCreateDataWithMD5NoBody (no Content-MD5 without a body); live tests
// TestFileCreateDataExactly4MiB and TestFileCreateDataExceedMaxSize
// (RequestBodyTooLarge)).
func TestFileCreateWithData(t *testing.T) {
	e := startFile(t)
	s := e.share()
	data := fiRand(1024)
	f := fileAt(s, "withdata")
	cr, err := f.Create(e.ctx, int64(len(data)), &file.CreateOptions{OptionalBody: fiBody(data), ContentMD5: fiMD5(data)})
	must(t, err)
	if !bytes.Equal(cr.ContentMD5, fiMD5(data)) {
		t.Fatalf("Content-MD5 %x, want %x", cr.ContentMD5, fiMD5(data))
	}
	if got := e.read(f, 0, 0); !bytes.Equal(got, data) {
		t.Fatal("content of a file created with data differs")
	}
	wantRanges(t, "created with data", e.ranges(f, nil), fiRanges{{0, 1023}})
	// No body: no Content-MD5.
	cr, err = fileAt(s, "nobody").Create(e.ctx, 1024, nil)
	must(t, err)
	if cr.ContentMD5 != nil {
		t.Fatalf("Content-MD5 %x without a body", cr.ContentMD5)
	}
	// A wrong MD5 is refused and creates nothing.
	_, err = fileAt(s, "badmd5").Create(e.ctx, 1024, &file.CreateOptions{OptionalBody: fiBody(data), ContentMD5: fiMD5([]byte("x"))})
	wantFileCode(t, err, http.StatusBadRequest, fileerror.MD5Mismatch)
	_, err = fileAt(s, "badmd5").GetProperties(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	// Up to 4 MiB.
	four := fiRand(4 << 20)
	g := fileAt(s, "four")
	_, err = g.Create(e.ctx, 4<<20, &file.CreateOptions{OptionalBody: fiBody(four)})
	must(t, err)
	if got := e.read(g, 0, 0); !bytes.Equal(got, four) {
		t.Fatal("4 MiB created content differs")
	}
	_, err = fileAt(s, "toobig").Create(e.ctx, 4<<20+1, &file.CreateOptions{OptionalBody: fiBody(fiRand(4<<20 + 1))})
	wantFileCode(t, err, http.StatusRequestEntityTooLarge, fileerror.RequestBodyTooLarge)
}

package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/datalakeerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
)

// The answers of the dfs endpoint that the REST reference leaves open,
// checked against what Azure answered in the SDKs' recorded tests (each
// named where it is used).

// TestDLListFileItself: List Paths whose directory is a file lists that
// file alone, recursively or not, as Azure answers: Hadoop ABFS's
// ITestAzureBlobFileSystemListStatus.testListFileVsListDir and
// testListFileVsListDir2, which run against the service, list a file
// with one List Paths call (AzureBlobFileSystemStore.listStatus) and get
// the file back. A path that does not exist stays 404 PathNotFound, for
// List Paths and for Path Delete.
func TestDLListFileItself(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("listfile")
	f := fs.NewFileClient("a/b/f")
	_, err := f.Create(e.ctx, nil)
	must(t, err)
	data := []byte("twelve bytes")
	must(t, f.UploadBuffer(e.ctx, data, nil))
	for _, recursive := range []bool{false, true} {
		page, err := fs.NewListPathsPager(recursive, &filesystem.ListPathsOptions{Prefix: to.Ptr("a/b/f")}).NextPage(e.ctx)
		must(t, err)
		if len(page.Paths) != 1 || *page.Paths[0].Name != "a/b/f" || (page.Paths[0].IsDirectory != nil && *page.Paths[0].IsDirectory) ||
			*page.Paths[0].ContentLength != int64(len(data)) || page.Continuation != nil {
			t.Fatalf("listing the file (recursive %v): %+v", recursive, page.Paths)
		}
	}
	// Path Delete of a path whose parent does not exist: 404 PathNotFound
	// (azure-sdk-for-js's recording "DataLakePathClient deleteIfExists
	// when parent not exists").
	_, err = fs.NewFileClient("nodir/f").Delete(e.ctx, nil)
	wantDL(t, err, 404, string(datalakeerror.PathNotFound))
	// A path that does not exist, or under a file, is still 404.
	for _, p := range []string{"a/missing", "a/b/f/g"} {
		_, err = fs.NewListPathsPager(false, &filesystem.ListPathsOptions{Prefix: to.Ptr(p)}).NextPage(e.ctx)
		wantDL(t, err, 404, string(datalakeerror.PathNotFound))
	}
}

// TestDLRecordedResponseHeaders: x-ms-request-server-encrypted on Path
// Create of a directory (azure-sdk-for-python's recorded
// test_directory.py test_rename_from) and "false" on a flush, which has
// no content (azure-sdk-for-js's recording "append with acquire lease");
// a rename answers the moved item's unchanged ETag and Last-Modified,
// and the item keeps them (test_rename_from again, and
// azure-sdk-for-net's recorded DirectoryClientTests.RenameAsync).
func TestDLRecordedResponseHeaders(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("headers")
	dr, err := fs.NewDirectoryClient("d").Create(e.ctx, nil)
	must(t, err)
	if dr.IsServerEncrypted == nil || !*dr.IsServerEncrypted {
		t.Fatalf("directory create: x-ms-request-server-encrypted %v", dr.IsServerEncrypted)
	}
	f := fs.NewFileClient("f")
	fr, err := f.Create(e.ctx, nil)
	must(t, err)
	if fr.IsServerEncrypted == nil || !*fr.IsServerEncrypted {
		t.Fatalf("file create: x-ms-request-server-encrypted %v", fr.IsServerEncrypted)
	}
	data := []byte("Hello World")
	ar, err := f.AppendData(e.ctx, 0, body(data), nil)
	must(t, err)
	if ar.IsServerEncrypted == nil || !*ar.IsServerEncrypted {
		t.Fatalf("append: x-ms-request-server-encrypted %v", ar.IsServerEncrypted)
	}
	flr, err := f.FlushData(e.ctx, int64(len(data)), nil)
	must(t, err)
	if flr.IsServerEncrypted == nil || *flr.IsServerEncrypted {
		t.Fatalf("flush: x-ms-request-server-encrypted %v", flr.IsServerEncrypted)
	}

	e.clock.Advance(3 * time.Second)
	resp, out := e.raw(http.MethodPut, "/headers/moved?mode=legacy", map[string]string{"x-ms-rename-source": "/headers/d"}, nil)
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("ETag") != string(*dr.ETag) || resp.Header.Get("Last-Modified") != dr.LastModified.UTC().Format(http.TimeFormat) {
		t.Fatalf("rename: %d %s %v, created with %s %v", resp.StatusCode, out, resp.Header, *dr.ETag, dr.LastModified)
	}
	p, err := fs.NewDirectoryClient("moved").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ETag != *dr.ETag || !p.LastModified.Equal(*dr.LastModified) {
		t.Fatalf("moved directory: %s %v, created with %s %v", *p.ETag, p.LastModified, *dr.ETag, dr.LastModified)
	}
}

// TestDLRecordedLeaseAnswers: the lease answers of the dfs endpoint the
// recordings show. A lease id where the path has no lease is 412
// LeaseNotPresent, "There is currently no lease on the resource.", on a
// flush (azure-sdk-for-net's recorded
// FileClientTests.FlushDataAsync_ConditionsFail), on a rename's
// destination (DirectoryClientTests.RenameAsync_DestinationConditionsFail)
// and on its source (RenameAsync_SourceConditionsFail); a write without
// the lease id of a leased file is 412 LeaseIdMissing, "There is
// currently a lease on the resource and no lease ID was specified in the
// request." (azure-sdk-for-js's recording "append with acquire lease"),
// and goes through with it.
func TestDLRecordedLeaseAnswers(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("leaseanswers")
	wantBody := func(resp *http.Response, out []byte, status int, code, msg string) {
		t.Helper()
		c, m := dfsError(t, out)
		if resp.StatusCode != status || resp.Header.Get("x-ms-error-code") != code || c != code || !strings.HasPrefix(m, msg) {
			t.Fatalf("want %d %s %q, got %d %s %q", status, code, msg, resp.StatusCode, c, m)
		}
	}
	const notPresent = "There is currently no lease on the resource."
	const missing = "There is currently a lease on the resource and no lease ID was specified in the request."
	f := fs.NewFileClient("f")
	_, err := f.Create(e.ctx, nil)
	must(t, err)
	_, err = f.AppendData(e.ctx, 0, body(make([]byte, 1024)), nil)
	must(t, err)
	resp, out := e.raw(http.MethodPatch, "/leaseanswers/f?action=flush&position=1024", map[string]string{"x-ms-lease-id": leaseB}, nil)
	wantBody(resp, out, 412, "LeaseNotPresent", notPresent)

	for _, d := range []string{"src", "dst"} {
		_, err = fs.NewDirectoryClient(d).Create(e.ctx, nil)
		must(t, err)
	}
	resp, out = e.raw(http.MethodPut, "/leaseanswers/dst?mode=legacy", map[string]string{"x-ms-rename-source": "/leaseanswers/src", "x-ms-lease-id": leaseB}, nil)
	wantBody(resp, out, 412, "LeaseNotPresent", notPresent)
	resp, out = e.raw(http.MethodPut, "/leaseanswers/dst?mode=legacy", map[string]string{"x-ms-rename-source": "/leaseanswers/src", "x-ms-source-lease-id": leaseB}, nil)
	wantBody(resp, out, 412, "LeaseNotPresent", notPresent)

	g := fs.NewFileClient("g")
	_, err = g.Create(e.ctx, nil)
	must(t, err)
	hello := []byte("HelloWorld")
	_, err = g.AppendData(e.ctx, 0, body(hello), &file.AppendDataOptions{LeaseAction: to.Ptr(file.LeaseActionAcquire), ProposedLeaseID: to.Ptr(leaseA), LeaseDuration: to.Ptr(int64(15))})
	must(t, err)
	// The recording's Get Properties of the leased file: leased, locked,
	// fixed.
	gp, err := g.GetProperties(e.ctx, nil)
	must(t, err)
	if gp.LeaseState == nil || string(*gp.LeaseState) != "leased" || gp.LeaseStatus == nil || string(*gp.LeaseStatus) != "locked" ||
		gp.LeaseDuration == nil || string(*gp.LeaseDuration) != "fixed" {
		t.Fatalf("leased file: state %v status %v duration %v", gp.LeaseState, gp.LeaseStatus, gp.LeaseDuration)
	}
	resp, out = e.raw(http.MethodPatch, "/leaseanswers/g?action=append&position=10&flush=true", nil, hello)
	wantBody(resp, out, 412, "LeaseIdMissing", missing)
	resp, out = e.raw(http.MethodPatch, "/leaseanswers/g?action=append&position=10&flush=true", map[string]string{"x-ms-lease-id": leaseA}, hello)
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get("ETag") == "" {
		t.Fatalf("append and flush with the lease: %d %s %v", resp.StatusCode, out, resp.Header)
	}
}

// TestDLRecordedAppendAnswers: what azure-sdk-for-net's recorded
// FileClientTests expect of append and flush. An empty append is 400
// InvalidHeaderValue with the standard message and the JSON body's
// "detail" naming Content-Length = 0 (AppendDataAsync_EmptyStream); a flush at 0 after an append at 1024 of
// an empty file succeeds, committing nothing (FlushDataAsync); the same
// flush twice with close succeeds (FlushDataAsync_CloseTwice); append
// and flush of a path that does not exist are 404 PathNotFound
// (AppendDataAsync_Error, FlushDataAsync_Error).
func TestDLRecordedAppendAnswers(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("appends")
	f := fs.NewFileClient("f")
	_, err := f.Create(e.ctx, nil)
	must(t, err)
	resp, out := e.raw(http.MethodPatch, "/appends/f?action=append&position=0", map[string]string{"Content-Length": "0"}, nil)
	code, msg := dfsError(t, out)
	if resp.StatusCode != http.StatusBadRequest || code != "InvalidHeaderValue" || !strings.HasPrefix(msg, "The value for one of the HTTP headers is not in the correct format.") ||
		!strings.Contains(string(out), `"detail":{"HeaderName":"Content-Length","HeaderValue":"0"}`) {
		t.Fatalf("empty append: %d %s", resp.StatusCode, out)
	}
	_, err = f.AppendData(e.ctx, 1024, body(make([]byte, 1024)), nil)
	must(t, err)
	_, err = f.FlushData(e.ctx, 0, nil)
	must(t, err)
	p, err := f.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ContentLength != 0 {
		t.Fatalf("length after flush at 0: %d", *p.ContentLength)
	}
	data := []byte("closed twice")
	_, err = f.AppendData(e.ctx, 0, body(data), nil)
	must(t, err)
	for i := 0; i < 2; i++ {
		_, err = f.FlushData(e.ctx, int64(len(data)), &file.FlushDataOptions{Close: to.Ptr(true)})
		must(t, err)
	}
	missing := fs.NewFileClient("missing")
	_, err = missing.AppendData(e.ctx, 0, body(data), nil)
	wantDL(t, err, 404, string(datalakeerror.PathNotFound))
	_, err = missing.FlushData(e.ctx, 0, nil)
	wantDL(t, err, 404, string(datalakeerror.PathNotFound))
}

// TestDLSetExpiryKeepsETag: Set Expiry answers the file's unchanged ETag
// and Last-Modified and leaves them so, as Azure does
// (azure-sdk-for-js's recording "listPaths - expiryTime absolute": the
// ETag of the flush comes back from Set Expiry and from List Paths,
// whose entry carries the expiry time).
func TestDLSetExpiryKeepsETag(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("expetag")
	f := fs.NewFileClient("f")
	_, err := f.Create(e.ctx, nil)
	must(t, err)
	data := []byte("Hello, World")
	_, err = f.AppendData(e.ctx, 0, body(data), nil)
	must(t, err)
	fr, err := f.FlushData(e.ctx, int64(len(data)), nil)
	must(t, err)
	e.clock.Advance(2 * time.Second)
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	sr, err := f.SetExpiry(e.ctx, file.SetExpiryValues{ExpiryType: file.SetExpiryTypeAbsolute, ExpiresOn: at.Format(http.TimeFormat)}, nil)
	must(t, err)
	if *sr.ETag != *fr.ETag || !sr.LastModified.Equal(*fr.LastModified) {
		t.Fatalf("set expiry answered %s %v, the flush %s %v", *sr.ETag, sr.LastModified, *fr.ETag, fr.LastModified)
	}
	page, err := fs.NewListPathsPager(false, nil).NextPage(e.ctx)
	must(t, err)
	ticks := strconv.FormatInt(at.UnixNano()/100+116444736000000000, 10) // a Windows file time, as List Paths sends it
	if len(page.Paths) != 1 || *page.Paths[0].ETag != strings.Trim(string(*fr.ETag), `"`) || page.Paths[0].ExpiryTime == nil || *page.Paths[0].ExpiryTime != ticks {
		t.Fatalf("listing after set expiry: %+v (flush ETag %s, expiry %v)", page.Paths, *fr.ETag, at)
	}
}

// TestDLSetAccessControlKeepsETag: setAccessControl answers 200 with the
// path's unchanged ETag and Last-Modified and x-ms-namespace-enabled:
// true (azure-sdk-for-python's recorded test_directory.py
// test_set_access_control, azure-sdk-for-net's recorded
// DirectoryClientTests.SetPermissionsAsync); setAccessControlRecursive,
// the same change on every path, keeps them too.
func TestDLSetAccessControlKeepsETag(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("acletag")
	dr, err := fs.NewDirectoryClient("d").Create(e.ctx, nil)
	must(t, err)
	fr, err := fs.NewFileClient("d/f").Create(e.ctx, nil)
	must(t, err)
	e.clock.Advance(2 * time.Second)
	resp, out := e.raw(http.MethodPatch, "/acletag/d?action=setAccessControl", map[string]string{"x-ms-permissions": "0777"}, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") != string(*dr.ETag) ||
		resp.Header.Get("Last-Modified") != dr.LastModified.UTC().Format(http.TimeFormat) || resp.Header.Get("x-ms-namespace-enabled") != "true" {
		t.Fatalf("setAccessControl: %d %s %v (created %s)", resp.StatusCode, out, resp.Header, *dr.ETag)
	}
	_, err = fs.NewDirectoryClient("d").SetAccessControlRecursive(e.ctx, "user::rwx,group::r-x,other::---", nil)
	must(t, err)
	for p, want := range map[string]string{"d": string(*dr.ETag), "d/f": string(*fr.ETag)} {
		props, err := fs.NewFileClient(p).GetProperties(e.ctx, nil)
		must(t, err)
		if string(*props.ETag) != want {
			t.Fatalf("%s after the ACL changes: ETag %s, created %s", p, *props.ETag, want)
		}
	}
	ac, err := fs.NewFileClient("d/f").GetAccessControl(e.ctx, nil)
	must(t, err)
	if *ac.ACL != "user::rwx,group::r-x,other::---" {
		t.Fatalf("d/f ACL %s", *ac.ACL)
	}
}

// TestDLRecordedCreateConditions: Path Create of an existing directory
// with unmet conditions is 412 ConditionNotMet — If-Match another ETag,
// If-None-Match its ETag, If-Unmodified-Since before its change — and
// with a lease id where it has no lease 412 LeaseNotPresent
// (azure-sdk-for-net's recorded DirectoryClientTests.CreateAsync_ConditionsFail).
func TestDLRecordedCreateConditions(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("createcond")
	dr, err := fs.NewDirectoryClient("d").Create(e.ctx, nil)
	must(t, err)
	past := dr.LastModified.Add(-24 * time.Hour).UTC().Format(http.TimeFormat)
	for _, h := range []map[string]string{
		{"If-Match": `"garbage"`},
		{"If-None-Match": string(*dr.ETag)},
		{"If-Unmodified-Since": past},
	} {
		resp, out := e.raw(http.MethodPut, "/createcond/d?resource=directory", h, nil)
		if code, _ := dfsError(t, out); resp.StatusCode != http.StatusPreconditionFailed || code != "ConditionNotMet" {
			t.Fatalf("create with %v: %d %s", h, resp.StatusCode, out)
		}
	}
	resp, out := e.raw(http.MethodPut, "/createcond/d?resource=directory", map[string]string{"x-ms-lease-id": leaseB}, nil)
	if code, _ := dfsError(t, out); resp.StatusCode != http.StatusPreconditionFailed || code != "LeaseNotPresent" {
		t.Fatalf("create with a lease id: %d %s", resp.StatusCode, out)
	}
}

// TestDLRecordedAutoRenew: azure-sdk-for-js's recording "append with
// autorenew lease": a file created with a 15-second lease, the lease
// left to expire, an append naming it with x-ms-lease-action auto-renew
// succeeds and the lease holds again, so an append and flush without
// the id is 412 LeaseIdMissing.
func TestDLRecordedAutoRenew(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("autorenew")
	f := fs.NewFileClient("f")
	_, err := f.Create(e.ctx, &file.CreateOptions{ProposedLeaseID: to.Ptr(leaseA), LeaseDuration: to.Ptr(int64(15))})
	must(t, err)
	gp, err := f.GetProperties(e.ctx, nil)
	must(t, err)
	if string(*gp.LeaseState) != "leased" || string(*gp.LeaseDuration) != "fixed" || string(*gp.LeaseStatus) != "locked" {
		t.Fatalf("created leased: %v %v %v", *gp.LeaseState, *gp.LeaseDuration, *gp.LeaseStatus)
	}
	e.clock.Advance(16 * time.Second)
	hello := []byte("HelloWorld")
	_, err = f.AppendData(e.ctx, 0, body(hello), &file.AppendDataOptions{LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(leaseA)},
		LeaseAction: to.Ptr(file.LeaseActionRenew), LeaseDuration: to.Ptr(int64(15))})
	must(t, err)
	resp, out := e.raw(http.MethodPatch, "/autorenew/f?action=append&position=10&flush=true", nil, hello)
	if code, _ := dfsError(t, out); resp.StatusCode != http.StatusPreconditionFailed || code != "LeaseIdMissing" {
		t.Fatalf("append without the renewed lease: %d %s", resp.StatusCode, out)
	}
}

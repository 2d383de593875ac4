package e2e

import (
	"encoding/base64"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// auWrongKey is a well-formed key that is not the account's.
var auWrongKey = base64.StdEncoding.EncodeToString([]byte(strings.Repeat("not the key ", 5)))

func (e *env) auAnon() *azblob.Client {
	e.t.Helper()
	c, err := azblob.NewClientWithNoCredential(e.app.BlobURL, clientOptions())
	must(e.t, err)
	return c
}

func (e *env) auAnonContainer(name string) *container.Client {
	e.t.Helper()
	c, err := container.NewClientWithNoCredential(e.app.BlobURL+"/"+name, (*container.ClientOptions)(clientOptions()))
	must(e.t, err)
	return c
}

// auNames lists the account's containers with the real key.
func (e *env) auNames() []string {
	e.t.Helper()
	names, _, _ := e.lsContainers(nil)
	return names
}

func TestAuthWrongKey(t *testing.T) {
	e := start(t)
	e.container("exists")
	bad := client(t, e.app.BlobURL, auWrongKey)

	_, err := bad.CreateContainer(e.ctx, "created", nil)
	wantCode(t, err, 403, bloberror.AuthenticationFailed)
	_, err = bad.UploadBuffer(e.ctx, "exists", "blob", []byte("x"), nil)
	wantCode(t, err, 403, bloberror.AuthenticationFailed)
	_, err = bad.DeleteContainer(e.ctx, "exists", nil)
	wantCode(t, err, 403, bloberror.AuthenticationFailed)
	_, err = bad.ServiceClient().NewContainerClient("exists").SetMetadata(e.ctx, &container.SetMetadataOptions{Metadata: ctPtrMeta(map[string]string{"a": "b"})})
	wantCode(t, err, 403, bloberror.AuthenticationFailed)
	// Reads fail the same way.
	_, err = bad.ServiceClient().NewContainerClient("exists").GetProperties(e.ctx, nil)
	wantCode(t, err, 403, bloberror.AuthenticationFailed)
	_, err = bad.NewListContainersPager(nil).NextPage(e.ctx)
	wantCode(t, err, 403, bloberror.AuthenticationFailed)

	// Nothing was created, changed or deleted.
	if names := e.auNames(); len(names) != 1 || names[0] != "exists" {
		t.Fatalf("containers after rejected writes: %v", names)
	}
	p, err := e.ctClient("exists").GetProperties(e.ctx, nil)
	must(t, err)
	if len(p.Metadata) != 0 {
		t.Fatalf("metadata set by a rejected request: %v", ctDeref(p.Metadata))
	}
	_, err = e.c.DownloadStream(e.ctx, "exists", "blob", nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)

	// The error body explains; HEAD carries only the header.
	r := e.svSDKDo(auWrongKey, http.MethodPut, "/raw?restype=container", nil, nil)
	svWantRaw(t, r, 403, string(bloberror.AuthenticationFailed))
	svWantErrorBody(t, r, string(bloberror.AuthenticationFailed))
	var detail struct {
		Detail string `xml:"AuthenticationErrorDetail"`
	}
	if err := xml.Unmarshal(r.body, &detail); err != nil || !strings.Contains(detail.Detail, "signature") {
		t.Fatalf("no AuthenticationErrorDetail in %q", r.body)
	}
	r = e.svSDKDo(auWrongKey, http.MethodHead, "/exists?restype=container", nil, nil)
	svWantRaw(t, r, 403, string(bloberror.AuthenticationFailed))
	if len(r.body) != 0 {
		t.Fatalf("HEAD error with a body")
	}

	// A malformed Authorization header is 400 InvalidAuthenticationInfo.
	for _, h := range []string{"SharedKey devstoreaccount1", "Basic abc", "SharedKey :sig"} {
		r = e.svAnon(http.MethodGet, "/?comp=list", map[string]string{"Authorization": h, "x-ms-version": "2026-12-06", "x-ms-date": time.Now().UTC().Format(http.TimeFormat)})
		svWantRaw(t, r, 400, string(bloberror.InvalidAuthenticationInfo))
	}
	// A signature for another account.
	r = e.svAnon(http.MethodGet, "/?comp=list", map[string]string{"Authorization": "SharedKey otheraccount:" + base64.StdEncoding.EncodeToString(make([]byte, 32)), "x-ms-version": "2026-12-06", "x-ms-date": time.Now().UTC().Format(http.TimeFormat)})
	svWantRaw(t, r, 403, string(bloberror.AuthenticationFailed))
}

// A correctly signed request whose date is more than 15 minutes from the
// server's clock is refused.
func TestAuthClockSkew(t *testing.T) {
	e := start(t)
	now := e.clock.Now()
	e.clock.Set(now.Add(-20 * time.Minute)) // the request looks 20 minutes in the future
	_, err := e.c.CreateContainer(e.ctx, "skew", nil)
	wantCode(t, err, 403, bloberror.AuthenticationFailed)
	e.clock.Set(now.Add(20 * time.Minute)) // ...or 20 minutes old
	_, err = e.c.CreateContainer(e.ctx, "skew", nil)
	wantCode(t, err, 403, bloberror.AuthenticationFailed)
	e.clock.Set(now.Add(10 * time.Minute)) // within 15 minutes
	e.container("skew")
	e.clock.Set(now)
	if names := e.auNames(); len(names) != 1 {
		t.Fatalf("containers: %v", names)
	}
}

func TestAuthAnonymousReads(t *testing.T) {
	e := start(t)
	for name, access := range map[string]*container.PublicAccessType{
		"pubblob": to.Ptr(container.PublicAccessTypeBlob),
		"pubcont": to.Ptr(container.PublicAccessTypeContainer),
		"private": nil,
	} {
		_, err := e.ctClient(name).Create(e.ctx, &container.CreateOptions{Access: access, Metadata: ctPtrMeta(map[string]string{"m": name})})
		must(t, err)
		_, err = e.c.UploadBuffer(e.ctx, name, "dir/file.txt", []byte("content of "+name), nil)
		must(t, err)
	}
	anon := e.auAnon()
	read := func(cont string) (string, error) {
		r, err := anon.DownloadStream(e.ctx, cont, "dir/file.txt", nil)
		if err != nil {
			return "", err
		}
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		return string(b), err
	}

	// "blob": blobs are readable, the container is not.
	got, err := read("pubblob")
	must(t, err)
	if got != "content of pubblob" {
		t.Fatalf("pubblob: %q", got)
	}
	bp, err := anon.ServiceClient().NewContainerClient("pubblob").NewBlobClient("dir/file.txt").GetProperties(e.ctx, nil)
	must(t, err)
	if *bp.ContentLength != int64(len("content of pubblob")) {
		t.Fatalf("blob properties: %d", *bp.ContentLength)
	}
	_, err = anon.DownloadStream(e.ctx, "pubblob", "missing", nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = e.auAnonContainer("pubblob").NewListBlobsFlatPager(nil).NextPage(e.ctx)
	wantCode(t, err, 401, bloberror.NoAuthenticationInformation)
	_, err = e.auAnonContainer("pubblob").GetProperties(e.ctx, nil)
	wantCode(t, err, 401, bloberror.NoAuthenticationInformation)

	// "container": blobs readable, blobs listable, container properties readable.
	got, err = read("pubcont")
	must(t, err)
	if got != "content of pubcont" {
		t.Fatalf("pubcont: %q", got)
	}
	page, err := e.auAnonContainer("pubcont").NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Metadata: true}}).NextPage(e.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 1 || *page.Segment.BlobItems[0].Name != "dir/file.txt" {
		t.Fatalf("anonymous listing: %d items", len(page.Segment.BlobItems))
	}
	hpage, err := e.auAnonContainer("pubcont").NewListBlobsHierarchyPager("/", nil).NextPage(e.ctx)
	must(t, err)
	if len(hpage.Segment.BlobPrefixes) != 1 || *hpage.Segment.BlobPrefixes[0].Name != "dir/" {
		t.Fatalf("anonymous hierarchy listing: %d prefixes", len(hpage.Segment.BlobPrefixes))
	}
	cp, err := e.auAnonContainer("pubcont").GetProperties(e.ctx, nil)
	must(t, err)
	if cp.BlobPublicAccess == nil || *cp.BlobPublicAccess != container.PublicAccessTypeContainer {
		t.Fatalf("anonymous container properties: %v", cp.BlobPublicAccess)
	}
	// The ACL (stored access policies) stays owner-only.
	_, err = e.auAnonContainer("pubcont").GetAccessPolicy(e.ctx, nil)
	wantCode(t, err, 401, bloberror.NoAuthenticationInformation)

	// Private and missing containers look the same: from version
	// 2019-12-12 on, 401 NoAuthenticationInformation (recorded real-service
	// tests of the .NET SDK); older versions get 404 ResourceNotFound.
	for _, cont := range []string{"private", "nosuchcontainer"} {
		_, err = read(cont)
		wantCode(t, err, 401, bloberror.NoAuthenticationInformation)
		_, err = anon.ServiceClient().NewContainerClient(cont).NewBlobClient("dir/file.txt").GetProperties(e.ctx, nil)
		wantCode(t, err, 401, bloberror.NoAuthenticationInformation)
		_, err = e.auAnonContainer(cont).NewListBlobsFlatPager(nil).NextPage(e.ctx)
		wantCode(t, err, 401, bloberror.NoAuthenticationInformation)
		_, err = e.auAnonContainer(cont).GetProperties(e.ctx, nil)
		wantCode(t, err, 401, bloberror.NoAuthenticationInformation)
		old := e.svAnon(http.MethodGet, "/"+cont+"/dir/file.txt", map[string]string{"x-ms-version": "2019-07-07"})
		svWantRaw(t, old, 404, string(bloberror.ResourceNotFound))
		r := e.svAnon(http.MethodHead, "/"+cont+"/dir/file.txt", map[string]string{"x-ms-version": "2026-12-06"})
		svWantRaw(t, r, 401, string(bloberror.NoAuthenticationInformation))
		if len(r.body) != 0 {
			t.Fatalf("HEAD error with a body")
		}
	}

	// A plain GET with no x-ms-version (a browser) reads a public blob.
	r := e.svAnon(http.MethodGet, "/pubblob/dir/file.txt", nil)
	svWantRaw(t, r, 200, "")
	if string(r.body) != "content of pubblob" || r.header.Get("x-ms-version") != "2009-09-19" {
		t.Fatalf("plain GET: %q, x-ms-version %q", r.body, r.header.Get("x-ms-version"))
	}

	// Account-level operations need credentials (401).
	_, err = anon.NewListContainersPager(nil).NextPage(e.ctx)
	wantCode(t, err, 401, bloberror.NoAuthenticationInformation)
	_, err = anon.ServiceClient().GetProperties(e.ctx, nil)
	wantCode(t, err, 401, bloberror.NoAuthenticationInformation)
}

// Public access is read-only: an anonymous write is refused before it
// touches anything. Since version 2019-12-12 the service answers an
// anonymous request it will not serve with 401 NoAuthenticationInformation
// (recorded in azure-sdk-for-net's CreateIfNotExistsAsync_Error tests).
func TestAuthAnonymousWritesRefused(t *testing.T) {
	e := start(t)
	_, err := e.ctClient("pub").Create(e.ctx, &container.CreateOptions{Access: to.Ptr(container.PublicAccessTypeContainer)})
	must(t, err)
	_, err = e.c.UploadBuffer(e.ctx, "pub", "blob", []byte("original"), nil)
	must(t, err)
	before, err := e.ctClient("pub").GetProperties(e.ctx, nil)
	must(t, err)

	anon := e.auAnon()
	ac := e.auAnonContainer("pub")
	al, err := lease.NewContainerClient(ac, nil)
	must(t, err)
	bl, err := lease.NewBlobClient(ac.NewBlobClient("blob"), nil)
	must(t, err)
	writes := map[string]func() error{
		"create container": func() error { _, err := anon.CreateContainer(e.ctx, "new", nil); return err },
		"create existing container": func() error {
			_, err := ac.Create(e.ctx, nil)
			return err
		},
		"delete container":       func() error { _, err := ac.Delete(e.ctx, nil); return err },
		"set container metadata": func() error { _, err := ac.SetMetadata(e.ctx, nil); return err },
		"set container ACL":      func() error { _, err := ac.SetAccessPolicy(e.ctx, nil); return err },
		"lease container":        func() error { _, err := al.AcquireLease(e.ctx, 15, nil); return err },
		"put blob":               func() error { _, err := anon.UploadBuffer(e.ctx, "pub", "blob", []byte("changed"), nil); return err },
		"put new blob":           func() error { _, err := anon.UploadBuffer(e.ctx, "pub", "other", []byte("x"), nil); return err },
		"put blob, private":      func() error { _, err := anon.UploadBuffer(e.ctx, "nosuch", "x", []byte("x"), nil); return err },
		"delete blob":            func() error { _, err := anon.DeleteBlob(e.ctx, "pub", "blob", nil); return err },
		"set blob metadata":      func() error { _, err := ac.NewBlobClient("blob").SetMetadata(e.ctx, nil, nil); return err },
		"snapshot blob":          func() error { _, err := ac.NewBlobClient("blob").CreateSnapshot(e.ctx, nil); return err },
		"lease blob":             func() error { _, err := bl.AcquireLease(e.ctx, 15, nil); return err },
		"set service properties": func() error { _, err := anon.ServiceClient().SetProperties(e.ctx, nil); return err },
		"stage block":            func() error { return auStage(e, ac) },
		"copy onto existing blob": func() error {
			_, err := ac.NewBlobClient("blob").StartCopyFromURL(e.ctx, ac.NewBlobClient("blob").URL(), nil)
			return err
		},
	}
	for name, w := range writes {
		t.Run(name, func(t *testing.T) { wantCode(t, w(), 401, bloberror.NoAuthenticationInformation) })
	}

	after, err := e.ctClient("pub").GetProperties(e.ctx, nil)
	must(t, err)
	if *after.ETag != *before.ETag || *after.LeaseState != lease.StateTypeAvailable || *after.BlobPublicAccess != container.PublicAccessTypeContainer {
		t.Fatalf("container changed: %v %v %v", *after.ETag, *after.LeaseState, after.BlobPublicAccess)
	}
	r, err := e.c.DownloadStream(e.ctx, "pub", "blob", nil)
	must(t, err)
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if string(b) != "original" {
		t.Fatalf("blob changed: %q", b)
	}
	if names := e.auNames(); len(names) != 1 {
		t.Fatalf("containers: %v", names)
	}
	got := lsNames(e.lsAll("pub", map[string][]string{"include": {"snapshots,uncommittedblobs"}}, 0))
	if len(got) != 1 || got[0] != "blob" {
		t.Fatalf("blobs after anonymous writes: %q", got)
	}
}

func auStage(e *env, ac *container.Client) error {
	_, err := ac.NewBlockBlobClient("staged").StageBlock(e.ctx, base64.StdEncoding.EncodeToString([]byte("id")), streaming.NopCloser(strings.NewReader("x")), nil)
	return err
}

func TestAuthVersionHeader(t *testing.T) {
	e := start(t)
	// Newer than any version the server knows: accepted and echoed.
	r := e.svSigned(http.MethodPut, "/future?restype=container", map[string]string{"x-ms-version": "2099-01-01"}, nil)
	svWantRaw(t, r, 201, "")
	if v := r.header.Get("x-ms-version"); v != "2099-01-01" {
		t.Fatalf("x-ms-version echoed as %q", v)
	}
	r = e.svSigned(http.MethodGet, "/?comp=list", map[string]string{"x-ms-version": "2099-01-01"}, nil)
	svWantRaw(t, r, 200, "")

	// Malformed: 400 InvalidHeaderValue naming the header, signed or not.
	for _, v := range []string{"abc", "2020-1-1", "20200101", "2020-01-01x"} {
		r = e.svSigned(http.MethodPut, "/bad?restype=container", map[string]string{"x-ms-version": v}, nil)
		svWantRaw(t, r, 400, string(bloberror.InvalidHeaderValue))
		var eb struct {
			Code  string `xml:"Code"`
			Name  string `xml:"HeaderName"`
			Value string `xml:"HeaderValue"`
		}
		if err := xml.Unmarshal(r.body, &eb); err != nil || eb.Code != string(bloberror.InvalidHeaderValue) || eb.Name != "x-ms-version" || eb.Value != v {
			t.Fatalf("error body %q", r.body)
		}
		ra := e.svAnon(http.MethodGet, "/?comp=list", map[string]string{"x-ms-version": v})
		svWantRaw(t, ra, 400, string(bloberror.InvalidHeaderValue))
		ra = e.svAnon(http.MethodHead, "/bad?restype=container", map[string]string{"x-ms-version": v})
		svWantRaw(t, ra, 400, string(bloberror.InvalidHeaderValue))
		if len(ra.body) != 0 {
			t.Fatalf("HEAD error with a body")
		}
	}
	if names := e.auNames(); len(names) != 1 || names[0] != "future" {
		t.Fatalf("containers: %v", names)
	}
}

// Every response, success or error, GET or HEAD, carries the common
// headers; errors also carry x-ms-error-code.
func TestAuthCommonResponseHeaders(t *testing.T) {
	e := start(t)
	e.container("hdrs")
	_, err := e.c.UploadBuffer(e.ctx, "hdrs", "b", []byte("x"), nil)
	must(t, err)
	ids := map[string]bool{}
	check := func(what string, r svResp, status int, code string) {
		t.Helper()
		svWantRaw(t, r, status, code)
		id := r.header.Get("x-ms-request-id")
		if ids[id] {
			t.Fatalf("%s: request id %s reused", what, id)
		}
		ids[id] = true
		if r.header.Get("x-ms-client-request-id") != "client-"+what {
			t.Fatalf("%s: x-ms-client-request-id %q", what, r.header.Get("x-ms-client-request-id"))
		}
		if code != "" && r.header.Get("Content-Type") != "" && !strings.HasPrefix(r.header.Get("Content-Type"), "application/xml") {
			t.Fatalf("%s: error Content-Type %q", what, r.header.Get("Content-Type"))
		}
	}
	type req struct {
		method, path string
		status       int
		code         string
	}
	for _, c := range []req{
		{"GET", "/?comp=list", 200, ""},
		{"GET", "/?restype=service&comp=properties", 200, ""},
		{"GET", "/?restype=account&comp=properties", 200, ""},
		{"HEAD", "/?restype=account&comp=properties", 200, ""},
		{"GET", "/hdrs?restype=container", 200, ""},
		{"HEAD", "/hdrs?restype=container", 200, ""},
		{"GET", "/hdrs?restype=container&comp=list", 200, ""},
		{"GET", "/hdrs/b", 200, ""},
		{"HEAD", "/hdrs/b", 200, ""},
		{"GET", "/hdrs/missing", 404, string(bloberror.BlobNotFound)},
		{"HEAD", "/hdrs/missing", 404, string(bloberror.BlobNotFound)},
		{"GET", "/nope?restype=container", 404, string(bloberror.ContainerNotFound)},
		{"HEAD", "/nope?restype=container", 404, string(bloberror.ContainerNotFound)},
		{"PUT", "/hdrs?restype=container", 409, string(bloberror.ContainerAlreadyExists)},
		{"PUT", "/UPPER?restype=container", 400, string(bloberror.InvalidResourceName)},
		{"DELETE", "/nope?restype=container", 404, string(bloberror.ContainerNotFound)},
		{"GET", "/hdrs?restype=container&comp=bogus", 400, string(bloberror.InvalidQueryParameterValue)},
	} {
		what := c.method + " " + c.path
		r := e.svSigned(c.method, c.path, map[string]string{"x-ms-client-request-id": "client-" + what}, nil)
		check(what, r, c.status, c.code)
		if c.method == "HEAD" && len(r.body) != 0 {
			t.Fatalf("%s: HEAD response with a body", what)
		}
		if c.method != "HEAD" && c.code != "" {
			svWantErrorBody(t, r, c.code)
		}
	}
	// Through the SDK too, on a success and on an error.
	var raw *http.Response
	_, err = e.ctClient("hdrs").GetProperties(runtime.WithCaptureResponse(e.ctx, &raw), nil)
	must(t, err)
	svWantCommon(t, raw.Header)
	_, err = e.ctClient("nope").GetProperties(runtime.WithCaptureResponse(e.ctx, &raw), nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	svWantCommon(t, raw.Header)
	if raw.Header.Get("x-ms-error-code") != string(bloberror.ContainerNotFound) {
		t.Fatalf("x-ms-error-code %q", raw.Header.Get("x-ms-error-code"))
	}
}

// A request in the virtual-host form (the path starts with the container
// or share, not the account), signed with Shared Key for an account of
// this server, is that account's: the JS file SDK builds its rename
// destination so even against a path-style endpoint.
func TestVirtualHostFormPath(t *testing.T) {
	b := newBlobT(t)
	b.put("vh", []byte("virtual host"), nil)
	base := b.app.BlobURL[:strings.LastIndex(b.app.BlobURL, "/")] // http://host:port
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	c, err := blockblob.NewClientWithSharedKeyCredential(base+"/"+b.cont+"/vh", cred, (*blockblob.ClientOptions)(clientOptions()))
	must(t, err)
	r, err := c.DownloadStream(b.ctx, nil)
	must(t, err)
	got, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if string(got) != "virtual host" {
		t.Fatalf("read %q", got)
	}
	// Signed for an unknown account: still 403, and nothing is read.
	other, err := azblob.NewSharedKeyCredential("nosuchaccount", app.DevKey)
	must(t, err)
	c2, err := blockblob.NewClientWithSharedKeyCredential(base+"/"+b.cont+"/vh", other, (*blockblob.ClientOptions)(clientOptions()))
	must(t, err)
	_, err = c2.DownloadStream(b.ctx, nil)
	if code, _ := bxErrCode(err); code != http.StatusForbidden && code != http.StatusNotFound {
		t.Fatalf("unknown account: %v", err)
	}

	// The File service: rename to a destination named without the account.
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "from.txt", 3)
	_, err = f.Rename(e.ctx, "to.txt", nil)
	must(t, err)
	fcred, err := file.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	vh, err := file.NewClientWithSharedKeyCredential(strings.Replace(fileAt(s, "to.txt").URL(), "/"+app.DevAccount+"/", "/", 1), fcred, (*file.ClientOptions)(fileClientOptions()))
	must(t, err)
	p, err := vh.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ContentLength != 3 {
		t.Fatalf("length %d", *p.ContentLength)
	}
}

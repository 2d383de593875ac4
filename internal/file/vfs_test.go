package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// Tests of the SMB view (vfs*.go) on a bolt store with a fake clock,
// cross-checked through the REST handlers (ServeAzure).

const vtAcct = "acct"

type vtEnv struct {
	t   testing.TB
	s   *Service
	clk *clock.Fake
	v   VFS
	ctx context.Context
	sh  string
}

// newVT starts a Service with one share "vfs" and a VFS whose owner is
// live for an hour of fake time.
func newVT(t testing.TB) *vtEnv {
	t.Helper()
	s, clk := shService(t)
	e := &vtEnv{t: t, s: s, clk: clk, ctx: context.Background(), sh: "vfs"}
	e.v = e.s.VFS("smb-test")
	if err := e.v.Heartbeat(e.ctx, clk.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	e.restOK(http.StatusCreated, "PUT", "/vfs?restype=share", nil)
	return e
}

// rest sends one authenticated REST request; target is below the account.
func (e *vtEnv) rest(method, target string, body []byte, hdr ...string) (*httptest.ResponseRecorder, error) {
	hr := httptest.NewRequest(method, "http://127.0.0.1:10003/"+vtAcct+target, bytes.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		hr.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	err := serveREST(e.s, w, &server.Request{Request: hr, Account: vtAcct, Authenticated: true, Now: e.clk.Now()})
	return asClientSees(w), err
}

func (e *vtEnv) restOK(status int, method, target string, body []byte, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	w, err := e.rest(method, target, body, hdr...)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, target, err)
	}
	if w.Code != status {
		e.t.Fatalf("%s %s: status %d, want %d", method, target, w.Code, status)
	}
	return w
}

func (e *vtEnv) restFails(code, method, target string, body []byte, hdr ...string) {
	e.t.Helper()
	_, err := e.rest(method, target, body, hdr...)
	if !azerr.Has(err, code) {
		e.t.Fatalf("%s %s: got %v, want %s", method, target, err, code)
	}
}

// mkfile creates a file of size bytes over REST at p (below the share).
func (e *vtEnv) mkfile(p string, size int) {
	e.t.Helper()
	e.restOK(http.StatusCreated, "PUT", "/"+e.sh+"/"+p, nil, "x-ms-type", "file", "x-ms-content-length", fmt.Sprint(size))
}

func (e *vtEnv) mkdir(p string) {
	e.t.Helper()
	e.restOK(http.StatusCreated, "PUT", "/"+e.sh+"/"+p+"?restype=directory", nil)
}

// putRange writes data at off over REST.
func (e *vtEnv) putRange(p string, off int, data []byte) {
	e.t.Helper()
	e.restOK(http.StatusCreated, "PUT", "/"+e.sh+"/"+p+"?comp=range", data,
		"x-ms-range", fmt.Sprintf("bytes=%d-%d", off, off+len(data)-1), "x-ms-write", "update")
}

// getFile reads the whole file over REST.
func (e *vtEnv) getFile(p string) []byte {
	e.t.Helper()
	return e.restOK(http.StatusOK, "GET", "/"+e.sh+"/"+p, nil).Body.Bytes()
}

func (e *vtEnv) path(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// req is an OpenRequest for p in the test share.
func (e *vtEnv) req(p string, access, shareAccess uint32, disp Disposition, opts uint32) OpenRequest {
	return OpenRequest{Account: vtAcct, Share: e.sh, Path: e.path(p), DesiredAccess: access, ShareAccess: shareAccess,
		Disposition: disp, Options: opts, SessionID: "s1", ClientAddr: "127.0.0.1:50000"}
}

// withAttrs returns r asking for the attributes a.
func withAttrs(r OpenRequest, a Attributes) OpenRequest {
	r.Attributes = a
	return r
}

func (e *vtEnv) open(r OpenRequest) *Open {
	e.t.Helper()
	o, err := e.v.Open(e.ctx, r)
	if err != nil {
		e.t.Fatalf("open %v: %v", r.Path, err)
	}
	return o
}

func (e *vtEnv) openErr(r OpenRequest, want error) {
	e.t.Helper()
	o, err := e.v.Open(e.ctx, r)
	if !errors.Is(err, want) {
		e.t.Fatalf("open %v: got %v (%+v), want %v", r.Path, err, o, want)
	}
}

func (e *vtEnv) close(o *Open) Info {
	e.t.Helper()
	in, err := e.v.Close(e.ctx, o)
	if err != nil {
		e.t.Fatalf("close %v: %v", o.FileID, err)
	}
	return in
}

func (e *vtEnv) read(o *Open, off int64, n int) []byte {
	e.t.Helper()
	b, err := e.v.Read(e.ctx, o, off, n)
	if err != nil {
		e.t.Fatalf("read %d+%d: %v", off, n, err)
	}
	return b
}

func (e *vtEnv) write(o *Open, off int64, data []byte) {
	e.t.Helper()
	if err := e.v.Write(e.ctx, o, off, data); err != nil {
		e.t.Fatalf("write %d+%d: %v", off, len(data), err)
	}
}

const (
	vtRW   = AccessReadData | AccessWriteData | AccessReadAttributes | AccessWriteAttributes
	vtAll  = FileAllAccess
	vtRWD  = 7
	vtDir  = OptDirectoryFile
	vtFile = OptNonDirectoryFile
	vtDOC  = OptDeleteOnClose
)

// TestVFSDispositions runs every disposition against an existing and a
// missing file.
func TestVFSDispositions(t *testing.T) {
	for _, tc := range []struct {
		disp         Disposition
		exists       bool
		want         error
		action       CreateAction
		truncated    bool
		createdFresh bool
	}{
		{DispSupersede, true, nil, ActionSuperseded, true, false},
		{DispSupersede, false, nil, ActionCreated, false, true},
		{DispOpen, true, nil, ActionOpened, false, false},
		{DispOpen, false, ErrNotFound, 0, false, false},
		{DispCreate, true, ErrExists, 0, false, false},
		{DispCreate, false, nil, ActionCreated, false, true},
		{DispOpenIf, true, nil, ActionOpened, false, false},
		{DispOpenIf, false, nil, ActionCreated, false, true},
		{DispOverwrite, true, nil, ActionOverwritten, true, false},
		{DispOverwrite, false, ErrNotFound, 0, false, false},
		{DispOverwriteIf, true, nil, ActionOverwritten, true, false},
		{DispOverwriteIf, false, nil, ActionCreated, false, true},
	} {
		t.Run(fmt.Sprintf("%d-exists=%v", tc.disp, tc.exists), func(t *testing.T) {
			e := newVT(t)
			var etag string
			if tc.exists {
				e.mkfile("f.txt", 10)
				e.putRange("f.txt", 0, []byte("0123456789"))
				etag = e.restOK(http.StatusOK, "HEAD", "/vfs/f.txt", nil).Header().Get("ETag")
			}
			r := e.req("f.txt", vtRW, vtRWD, tc.disp, vtFile)
			r.Attributes = AttrHidden
			if tc.want != nil {
				e.openErr(r, tc.want)
				return
			}
			o := e.open(r)
			if o.Action != tc.action {
				t.Fatalf("action %d, want %d", o.Action, tc.action)
			}
			got := e.getFile("f.txt")
			h := e.restOK(http.StatusOK, "HEAD", "/vfs/f.txt", nil).Header()
			switch {
			case tc.truncated:
				if len(got) != 0 || o.Info.Size != 0 || h.Get("ETag") == etag {
					t.Fatalf("not truncated: %q size %d etag %s", got, o.Info.Size, h.Get("ETag"))
				}
				// Overwrite replaces the attributes: requested | Archive.
				if a := h.Get("x-ms-file-attributes"); a != "Hidden | Archive" {
					t.Fatalf("attributes %q", a)
				}
			case tc.createdFresh:
				if len(got) != 0 || h.Get("x-ms-file-attributes") != "Hidden | Archive" || h.Get("x-ms-file-permission-key") == "" {
					t.Fatalf("created: %q %v", got, h)
				}
				if h.Get("x-ms-file-id") != FormatID(o.FileID) || o.FileID == RootID {
					t.Fatalf("file id %s vs %d", h.Get("x-ms-file-id"), o.FileID)
				}
			default:
				if string(got) != "0123456789" || h.Get("ETag") != etag || h.Get("x-ms-file-attributes") != "Archive" {
					t.Fatalf("opened but changed: %q %s", got, h.Get("x-ms-file-attributes"))
				}
			}
			e.close(o)
		})
	}
}

// TestVFSKinds covers directory and file options, the root and paths.
func TestVFSKinds(t *testing.T) {
	e := newVT(t)
	e.mkdir("d")
	e.mkfile("d/f", 0)
	const ra = AccessReadData | AccessReadAttributes
	for _, tc := range []struct {
		name string
		r    OpenRequest
		want error
	}{
		{"dir option on a file", e.req("d/f", ra, vtRWD, DispOpen, vtDir), ErrNotDirectory},
		{"file option on a dir", e.req("d", ra, vtRWD, DispOpen, vtFile), ErrIsDirectory},
		{"both options", e.req("d", ra, vtRWD, DispOpen, vtDir|vtFile), ErrInvalidParameter},
		{"dir option with overwrite", e.req("x", ra, vtRWD, DispOverwriteIf, vtDir), ErrInvalidParameter},
		{"overwrite a dir", e.req("d", vtRW, vtRWD, DispOverwriteIf, 0), ErrInvalidParameter},
		{"create existing dir", e.req("d", ra, vtRWD, DispCreate, vtDir), ErrExists},
		{"create the root", e.req("", ra, vtRWD, DispCreate, vtDir), ErrExists},
		{"missing parent", e.req("nope/f", ra, vtRWD, DispOpenIf, 0), ErrPathNotFound},
		{"file as parent", e.req("d/f/g", ra, vtRWD, DispOpen, 0), ErrPathNotFound},
		{"missing name", e.req("d/g", ra, vtRWD, DispOpen, 0), ErrNotFound},
		{"stream name", e.req("d/f:s", ra, vtRWD, DispOpen, 0), ErrInvalidName},
		{"dot dot", e.req("d/..", ra, vtRWD, DispOpen, 0), ErrInvalidName},
		{"empty component", e.req("d//f", ra, vtRWD, DispOpen, 0), ErrInvalidName},
		{"long name", e.req(strings.Repeat("n", 256), ra, vtRWD, DispOpenIf, 0), ErrInvalidName},
		{"zero access", e.req("d/f", 0, vtRWD, DispOpen, 0), ErrAccessDenied},
		{"reserved access", e.req("d/f", ra|0x00000200, vtRWD, DispOpen, 0), ErrAccessDenied},
		{"bad disposition", e.req("d/f", ra, vtRWD, 6, 0), ErrInvalidParameter},
		{"bad share", e.req("d/f", ra, 8, DispOpen, 0), ErrInvalidParameter},
		{"doc without delete", e.req("d/f", ra, vtRWD, DispOpen, vtDOC), ErrInvalidParameter},
		{"reserved option", e.req("d/f", ra, vtRWD, DispOpen, 0x10000000), ErrInvalidParameter},
		{"volume attribute", withAttrs(e.req("d/v", ra, vtRWD, DispOpenIf, 0), 0x8), ErrInvalidParameter},
		{"device attribute", withAttrs(e.req("d/f", ra, vtRWD, DispOpen, 0), 0x40), ErrInvalidParameter},
		{"no-scrub attribute", withAttrs(e.req("d/v", ra, vtRWD, DispOpenIf, 0), AttrNoScrubData), ErrInvalidParameter},
		{"doc on the root", e.req("", vtAll, vtRWD, DispOpen, vtDOC), ErrAccessDenied},
	} {
		t.Run(tc.name, func(t *testing.T) { e.openErr(tc.r, tc.want) })
	}
	e.openErr(OpenRequest{Account: vtAcct, Share: "nosuch", DesiredAccess: ra, Disposition: DispOpen}, ErrShareNotFound)

	// Case-insensitive, case-preserving.
	o := e.open(e.req("D/F", ra, vtRWD, DispOpen, 0))
	if o.Dir || o.Info.Name != "f" {
		t.Fatalf("D/F: %+v", o.Info)
	}
	e.close(o)
	root := e.open(e.req("", ra, vtRWD, DispOpen, vtDir))
	if !root.Dir || root.FileID != RootID || root.Info.Attributes&AttrDirectory == 0 {
		t.Fatalf("root: %+v", root)
	}
	e.close(root)

	// A directory created over SMB is a REST directory with the REST
	// defaults.
	nd := e.open(e.req("d/new", ra, vtRWD, DispCreate, vtDir))
	if nd.Action != ActionCreated || !nd.Dir {
		t.Fatalf("mkdir: %+v", nd)
	}
	h := e.restOK(http.StatusOK, "GET", "/vfs/d/new?restype=directory", nil).Header()
	if h.Get("x-ms-file-attributes") != "Directory" || h.Get("x-ms-file-id") != FormatID(nd.FileID) {
		t.Fatalf("REST view of the new directory: %v", h)
	}
	dh := e.restOK(http.StatusOK, "GET", "/vfs/d?restype=directory", nil).Header()
	if h.Get("x-ms-file-permission-key") != dh.Get("x-ms-file-permission-key") || h.Get("x-ms-file-parent-id") != dh.Get("x-ms-file-id") {
		t.Fatalf("permission or parent not inherited: %v vs %v", h, dh)
	}
	e.close(nd)
}

// TestVFSShareModes checks the sharing check (MS-FSA 2.1.5.1.2.2) against
// the access × share-mode matrix measured on smbd.
func TestVFSShareModes(t *testing.T) {
	const (
		R  = AccessReadData
		W  = AccessWriteData
		D  = AccessDelete
		RA = AccessReadAttributes
		X  = AccessExecute
		A  = AccessAppendData
	)
	for i, tc := range []struct {
		a1, s1, a2, s2 uint32
		conflict       bool
	}{
		{R | W, 0, R, vtRWD, true},
		{R | W, 0, RA, vtRWD, false},
		{RA, 0, R | W, vtRWD, false},
		{R, 1, R, 1, false},
		{R, 1, W, vtRWD, true},
		{R, vtRWD, R, 1, false},
		{W, 1, R, 2, false},
		{R, 2, W, 1, false},
		{D, 0, RA, vtRWD, false},
		{R, 3, D, vtRWD, true},
		{D, vtRWD, R, 3, true},
		{X, 0, R, vtRWD, true},
		{A, 1, W, vtRWD, true},
		{R, 0, R, 0, true},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			e := newVT(t)
			e.mkfile("f", 0)
			o1 := e.open(e.req("f", tc.a1, tc.s1, DispOpen, 0))
			o2, err := e.v.Open(e.ctx, e.req("f", tc.a2, tc.s2, DispOpen, 0))
			if tc.conflict != errors.Is(err, ErrSharingViolation) || !tc.conflict && err != nil {
				t.Fatalf("open2: %v, conflict want %v", err, tc.conflict)
			}
			if o2 != nil {
				e.close(o2)
			}
			e.close(o1)
			// Once the first is closed, the second succeeds.
			e.close(e.open(e.req("f", tc.a2, tc.s2, DispOpen, 0)))
		})
	}
}

// TestVFSRESTSharing checks the REST side of a held SMB open, per the tables
// of Managing file locks
// (https://learn.microsoft.com/en-us/rest/api/storageservices/managing-file-locks)
// (a few rows; test/e2e runs all of them through the SDK).
func TestVFSRESTSharing(t *testing.T) {
	e := newVT(t)
	e.mkfile("f", 4)
	o := e.open(e.req("f", vtAll, 1, DispOpen, 0)) // share Read
	e.restOK(http.StatusOK, "GET", "/vfs/f", nil)
	e.restOK(http.StatusOK, "HEAD", "/vfs/f", nil)
	e.restFails(azerr.SharingViolation, "PUT", "/vfs/f?comp=range", []byte("abcd"), "x-ms-range", "bytes=0-3", "x-ms-write", "update")
	e.restFails(azerr.SharingViolation, "DELETE", "/vfs/f", nil)
	// An attribute-only open blocks only Delete File.
	e.close(o)
	o = e.open(e.req("f", AccessReadAttributes, 0, DispOpen, 0))
	e.putRange("f", 0, []byte("abcd"))
	e.restFails(azerr.SharingViolation, "DELETE", "/vfs/f", nil)
	e.close(o)
	e.restOK(http.StatusAccepted, "DELETE", "/vfs/f", nil)
}

// TestVFSDeleteOnClose: delete-on-close marks the open; the file is
// delete-pending from that open's close to the last close, then gone.
func TestVFSDeleteOnClose(t *testing.T) {
	e := newVT(t)
	e.mkfile("f", 3)
	e.putRange("f", 0, []byte("abc"))
	a := e.open(e.req("f", vtAll, vtRWD, DispOpen, vtDOC))
	b := e.open(e.req("f", AccessReadData, vtRWD, DispOpen, 0))
	// DOC does not make the file pending while its open lives.
	c := e.open(e.req("f", AccessReadData, vtRWD, DispOpen, 0))
	e.close(c)
	e.restOK(http.StatusOK, "HEAD", "/vfs/f", nil)
	if in := e.close(a); !in.DeletePending {
		t.Fatalf("close of the DOC open with another open left: %+v", in)
	}
	e.openErr(e.req("f", AccessReadData, vtRWD, DispOpen, 0), ErrDeletePending)
	e.openErr(e.req("f", AccessReadData, vtRWD, DispOverwriteIf, 0), ErrDeletePending)
	e.restFails(azerr.DeletePending, "HEAD", "/vfs/f", nil)
	e.restFails(azerr.DeletePending, "GET", "/vfs/f", nil)
	list := e.restOK(http.StatusOK, "GET", "/vfs?restype=directory&comp=list", nil).Body.String()
	if strings.Contains(list, "<Name>f</Name>") {
		t.Fatalf("REST lists a delete-pending file: %s", list)
	}
	root := e.open(e.req("", AccessReadData, vtRWD, DispOpen, vtDir))
	ents, err := e.v.ReadDir(e.ctx, root, "", 0)
	if err != nil || len(ents) != 1 || ents[0].Name != "f" || !ents[0].DeletePending {
		t.Fatalf("SMB listing: %+v %v", ents, err)
	}
	if in, err := e.v.Info(e.ctx, b); err != nil || !in.DeletePending {
		t.Fatalf("info through the remaining open: %+v %v", in, err)
	}
	// The remaining open still reads the file.
	if got := e.read(b, 0, 10); string(got) != "abc" {
		t.Fatalf("read %q", got)
	}
	if in := e.close(b); !in.DeletePending || in.Size != 3 {
		t.Fatalf("last close: %+v", in)
	}
	e.restFails(azerr.ResourceNotFound, "HEAD", "/vfs/f", nil)
	e.openErr(e.req("f", AccessReadData, vtRWD, DispOpen, 0), ErrNotFound)
	if ents, _ := e.v.ReadDir(e.ctx, root, "", 0); len(ents) != 0 {
		t.Fatalf("deleted file still listed: %+v", ents)
	}
	// A new file of the name is a new file.
	o := e.open(e.req("f", vtRW, vtRWD, DispCreate, 0))
	if o.Info.Size != 0 {
		t.Fatalf("recreated: %+v", o.Info)
	}
	e.close(o)
	e.close(root)
}

// TestVFSDisposition covers FileDispositionInformation and the
// read-only rules of delete.
func TestVFSDisposition(t *testing.T) {
	e := newVT(t)
	e.mkfile("f", 0)
	e.mkdir("d")
	e.mkfile("d/x", 0)
	e.restOK(http.StatusCreated, "PUT", "/vfs/ro", nil, "x-ms-type", "file", "x-ms-content-length", "0", "x-ms-file-attributes", "ReadOnly")

	// Set, then clear: the file survives.
	o := e.open(e.req("f", vtAll, vtRWD, DispOpen, 0))
	if err := e.v.SetDisposition(e.ctx, o, true); err != nil {
		t.Fatal(err)
	}
	e.restFails(azerr.DeletePending, "HEAD", "/vfs/f", nil)
	if err := e.v.SetDisposition(e.ctx, o, false); err != nil {
		t.Fatal(err)
	}
	e.close(o)
	e.restOK(http.StatusOK, "HEAD", "/vfs/f", nil)

	// No DELETE access.
	o = e.open(e.req("f", vtRW, vtRWD, DispOpen, 0))
	if err := e.v.SetDisposition(e.ctx, o, true); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("without DELETE: %v", err)
	}
	e.close(o)

	// Read-only file: CANNOT_DELETE, by disposition or delete-on-close,
	// also when the create asks for the attribute.
	o = e.open(e.req("ro", AccessDelete|AccessReadAttributes, vtRWD, DispOpen, 0))
	if err := e.v.SetDisposition(e.ctx, o, true); !errors.Is(err, ErrCannotDelete) {
		t.Fatalf("read-only: %v", err)
	}
	e.close(o)
	e.openErr(e.req("ro", AccessDelete, vtRWD, DispOpen, vtDOC), ErrCannotDelete)
	r := e.req("new-ro", vtAll, vtRWD, DispCreate, vtDOC)
	r.Attributes = AttrReadOnly
	e.openErr(r, ErrCannotDelete)
	e.openErr(e.req("new-ro", AccessReadData, vtRWD, DispOpen, 0), ErrNotFound)

	// A directory with entries.
	d := e.open(e.req("d", vtAll, vtRWD, DispOpen, vtDir))
	if err := e.v.SetDisposition(e.ctx, d, true); !errors.Is(err, ErrDirectoryNotEmpty) {
		t.Fatalf("non-empty directory: %v", err)
	}
	e.restOK(http.StatusAccepted, "DELETE", "/vfs/d/x", nil)
	if err := e.v.SetDisposition(e.ctx, d, true); err != nil {
		t.Fatal(err)
	}
	e.restFails(azerr.DeletePending, "GET", "/vfs/d?restype=directory", nil)
	// Creating in a delete-pending directory.
	e.openErr(e.req("d/y", vtRW, vtRWD, DispCreate, 0), ErrDeletePending)
	e.close(d)
	e.restFails(azerr.ResourceNotFound, "GET", "/vfs/d?restype=directory", nil)

	// The root.
	root := e.open(e.req("", vtAll, vtRWD, DispOpen, vtDir))
	if err := e.v.SetDisposition(e.ctx, root, true); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("root: %v", err)
	}
	e.close(root)
}

// TestVFSCloseNonEmptyDir: a delete-on-close directory that gained an
// entry over REST survives its last close, which reports it.
func TestVFSCloseNonEmptyDir(t *testing.T) {
	e := newVT(t)
	e.mkdir("d")
	d := e.open(e.req("d", vtAll, vtRWD, DispOpen, vtDir|vtDOC))
	e.mkfile("d/late", 0)
	in, err := e.v.Close(e.ctx, d)
	if !errors.Is(err, ErrDirectoryNotEmpty) || in.FileID != d.FileID {
		t.Fatalf("close: %+v %v", in, err)
	}
	e.restOK(http.StatusOK, "GET", "/vfs/d?restype=directory", nil)
	if _, err := e.v.Close(e.ctx, d); !errors.Is(err, ErrFileClosed) {
		t.Fatalf("second close: %v", err)
	}
	// Not left delete-pending.
	e.close(e.open(e.req("d", AccessReadData, vtRWD, DispOpen, vtDir)))
}

// TestVFSDataCrossProtocol writes over SMB and reads over REST, and the
// other way round, with one ETag history.
func TestVFSDataCrossProtocol(t *testing.T) {
	e := newVT(t)
	o := e.open(e.req("data.bin", vtRW, vtRWD, DispCreate, 0))
	big := make([]byte, 3*extentInlineMax()+123) // chunked, not inline
	for i := range big {
		big[i] = byte(i*7 + i>>9)
	}
	e.write(o, 0, big)
	e.write(o, int64(len(big)), []byte("tail"))
	want := append(append([]byte(nil), big...), "tail"...)
	if got := e.getFile("data.bin"); !bytes.Equal(got, want) {
		t.Fatalf("REST read %d bytes, want %d", len(got), len(want))
	}
	h := e.restOK(http.StatusOK, "HEAD", "/vfs/data.bin", nil).Header()
	in, err := e.v.Info(e.ctx, o)
	if err != nil || h.Get("ETag") != in.ETag || h.Get("Content-Length") != fmt.Sprint(len(want)) {
		t.Fatalf("ETag %s vs %+v (%v)", h.Get("ETag"), in, err)
	}
	if in.Allocation != (int64(len(want))+4095)/4096*4096 {
		t.Fatalf("allocation %d for %d", in.Allocation, in.Size)
	}
	// REST writes are seen by the open.
	e.putRange("data.bin", 10, []byte("REST"))
	copy(want[10:], "REST")
	if got := e.read(o, 0, len(want)+100); !bytes.Equal(got, want) {
		t.Fatalf("SMB read after Put Range differs")
	}
	in2, _ := e.v.Info(e.ctx, o)
	if in2.ETag == in.ETag || !in2.LastModified.Equal(e.clk.Now()) {
		t.Fatalf("REST write not visible in Info: %+v", in2)
	}
	// SMB write stamps times and the ETag.
	e.clk.Advance(time.Minute)
	e.write(o, 0, []byte("X"))
	in3, _ := e.v.Info(e.ctx, o)
	if in3.ETag == in2.ETag || !in3.LastWrite.Equal(e.clk.Now()) || !in3.Changed.Equal(e.clk.Now()) || !in3.LastModified.Equal(e.clk.Now()) {
		t.Fatalf("write stamps: %+v", in3)
	}
	// EOF semantics.
	if _, err := e.v.Read(e.ctx, o, int64(len(want)), 1); err != io.EOF {
		t.Fatalf("read at EOF: %v", err)
	}
	if _, err := e.v.Read(e.ctx, o, 1<<40, 1); err != io.EOF {
		t.Fatalf("read past EOF: %v", err)
	}
	// Append.
	e.write(o, WriteToEOF, []byte("!!"))
	if got := e.read(o, int64(len(want)), 10); string(got) != "!!" {
		t.Fatalf("append: %q", got)
	}
	e.close(o)
}

func extentInlineMax() int { return 64 << 10 }

// TestVFSSparse: extend by write leaves a hole of zeros; truncation
// releases content; REST List Ranges agrees.
func TestVFSSparse(t *testing.T) {
	e := newVT(t)
	o := e.open(e.req("s", vtRW, vtRWD, DispCreate, 0))
	e.write(o, 1<<20, []byte("far"))
	if got := e.read(o, 0, 8); !bytes.Equal(got, make([]byte, 8)) {
		t.Fatalf("hole: %q", got)
	}
	if got := e.read(o, 1<<20-2, 10); !bytes.Equal(got, []byte("\x00\x00far")) {
		t.Fatalf("around the data: %q", got)
	}
	ranges := e.restOK(http.StatusOK, "GET", "/vfs/s?comp=rangelist", nil).Body.String()
	if !strings.Contains(ranges, "<Start>1048576</Start><End>1048578</End>") || strings.Count(ranges, "<Range>") != 1 {
		t.Fatalf("ranges: %s", ranges)
	}
	if err := e.v.SetEndOfFile(e.ctx, o, 1<<20+1); err != nil {
		t.Fatal(err)
	}
	if err := e.v.SetEndOfFile(e.ctx, o, 1<<21); err != nil {
		t.Fatal(err)
	}
	if got := e.read(o, 1<<20, 4); !bytes.Equal(got, []byte("f\x00\x00\x00")) {
		t.Fatalf("after truncate and extend: %q", got)
	}
	if h := e.restOK(http.StatusOK, "HEAD", "/vfs/s", nil).Header(); h.Get("Content-Length") != fmt.Sprint(1<<21) {
		t.Fatalf("REST size %s", h.Get("Content-Length"))
	}
	// Allocation: at or above EOF nothing; below, truncation.
	if err := e.v.SetAllocation(e.ctx, o, 1<<30); err != nil {
		t.Fatal(err)
	}
	if in, _ := e.v.Info(e.ctx, o); in.Size != 1<<21 {
		t.Fatalf("allocation grew the file: %d", in.Size)
	}
	if err := e.v.SetAllocation(e.ctx, o, 5); err != nil {
		t.Fatal(err)
	}
	if in, _ := e.v.Info(e.ctx, o); in.Size != 5 {
		t.Fatalf("allocation below EOF: %d", in.Size)
	}
	e.close(o)
}

// TestVFSAccess checks the access each call needs.
func TestVFSAccess(t *testing.T) {
	e := newVT(t)
	e.mkfile("f", 4)
	e.mkdir("d")
	e.restOK(http.StatusCreated, "PUT", "/vfs/ro", nil, "x-ms-type", "file", "x-ms-content-length", "4", "x-ms-file-attributes", "ReadOnly|Hidden")

	ro := e.open(e.req("f", AccessReadData|AccessReadAttributes, vtRWD, DispOpen, 0))
	if err := e.v.Write(e.ctx, ro, 0, []byte("x")); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("write without write access: %v", err)
	}
	if err := e.v.SetEndOfFile(e.ctx, ro, 0); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("truncate without write access: %v", err)
	}
	if _, err := e.v.SetBasic(e.ctx, ro, BasicInfo{Attributes: AttrHidden}); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("set basic without FILE_WRITE_ATTRIBUTES: %v", err)
	}
	if err := e.v.Rename(e.ctx, ro, []string{"g"}, false); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("rename without DELETE: %v", err)
	}
	if _, err := e.v.ReadDir(e.ctx, ro, "", 0); !errors.Is(err, ErrNotDirectory) {
		t.Fatalf("readdir of a file: %v", err)
	}
	e.close(ro)
	wo := e.open(e.req("f", AccessWriteData, vtRWD, DispOpen, 0))
	if _, err := e.v.Read(e.ctx, wo, 0, 1); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("read without read access: %v", err)
	}
	e.close(wo)

	d := e.open(e.req("d", AccessReadAttributes, vtRWD, DispOpen, vtDir))
	if _, err := e.v.Read(e.ctx, d, 0, 1); !errors.Is(err, ErrIsDirectory) {
		t.Fatalf("read a directory: %v", err)
	}
	if err := e.v.Write(e.ctx, d, 0, []byte("x")); !errors.Is(err, ErrIsDirectory) {
		t.Fatalf("write a directory: %v", err)
	}
	if _, err := e.v.ReadDir(e.ctx, d, "", 0); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("list without FILE_LIST_DIRECTORY: %v", err)
	}
	e.close(d)

	// Read-only files: explicit write access is denied, MAXIMUM_ALLOWED
	// leaves it out, overwrite is denied.
	e.openErr(e.req("ro", AccessGenericWrite, vtRWD, DispOpen, 0), ErrAccessDenied)
	e.openErr(e.req("ro", AccessReadData, vtRWD, DispOverwrite, 0), ErrAccessDenied)
	m := e.open(e.req("ro", AccessMaximumAllowed, vtRWD, DispOpen, 0))
	if m.GrantedAccess&(AccessWriteData|AccessAppendData) != 0 || m.GrantedAccess&AccessDelete == 0 {
		t.Fatalf("MAXIMUM_ALLOWED on a read-only file granted %#x", m.GrantedAccess)
	}
	e.close(m)
	// Overwrite must keep Hidden and System.
	e.restOK(http.StatusCreated, "PUT", "/vfs/h", nil, "x-ms-type", "file", "x-ms-content-length", "4", "x-ms-file-attributes", "Hidden")
	e.openErr(e.req("h", vtRW, vtRWD, DispOverwriteIf, 0), ErrAccessDenied)
	r := e.req("h", vtRW, vtRWD, DispOverwriteIf, 0)
	r.Attributes = AttrHidden
	e.close(e.open(r))
	// Supersede does not check them.
	e.close(e.open(e.req("h", vtRW, vtRWD, DispSupersede, 0)))

	// Generic mapping.
	for _, tc := range []struct{ in, want uint32 }{
		{AccessGenericRead, 0x120089},
		{AccessGenericWrite, 0x120116},
		{AccessGenericExecute, 0x1200A0},
		{AccessGenericAll, FileAllAccess},
		{AccessMaximumAllowed, FileAllAccess},
		{AccessGenericRead | AccessDelete, 0x130089},
	} {
		if got := MapAccess(tc.in, false); got != tc.want {
			t.Errorf("MapAccess(%#x) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
}

// TestVFSSetBasic sets times and attributes over SMB and reads them over
// REST.
func TestVFSSetBasic(t *testing.T) {
	e := newVT(t)
	e.mkfile("f", 0)
	o := e.open(e.req("f", vtRW, vtRWD, DispOpen, 0))
	before, _ := e.v.Info(e.ctx, o)
	e.clk.Advance(time.Minute)
	ct := time.Date(2001, 2, 3, 4, 5, 6, 700, time.UTC)
	in, err := e.v.SetBasic(e.ctx, o, BasicInfo{Created: ct, Attributes: AttrReadOnly | AttrSystem})
	if err != nil {
		t.Fatal(err)
	}
	if !in.Created.Equal(ct) || !in.LastWrite.Equal(before.LastWrite) || !in.Changed.Equal(e.clk.Now()) || in.Attributes != AttrReadOnly|AttrSystem || in.ETag == before.ETag {
		t.Fatalf("after set: %+v (before %+v)", in, before)
	}
	h := e.restOK(http.StatusOK, "HEAD", "/vfs/f", nil).Header()
	if h.Get("x-ms-file-attributes") != "ReadOnly | System" || h.Get("x-ms-file-creation-time") != "2001-02-03T04:05:06.0000007Z" || h.Get("ETag") != in.ETag {
		t.Fatalf("REST view: %v", h)
	}
	// Zero means unchanged: no new ETag.
	if in2, err := e.v.SetBasic(e.ctx, o, BasicInfo{}); err != nil || in2.ETag != in.ETag {
		t.Fatalf("empty set: %+v %v", in2, err)
	}
	// AttrNormal clears the attributes.
	if in3, err := e.v.SetBasic(e.ctx, o, BasicInfo{Attributes: AttrNormal, Changed: ct}); err != nil || in3.Attributes != AttrNormal || !in3.Changed.Equal(ct) {
		t.Fatalf("normal: %+v %v", in3, err)
	}
	if _, err := e.v.SetBasic(e.ctx, o, BasicInfo{Attributes: AttrDirectory}); !errors.Is(err, ErrInvalidParameter) {
		t.Fatalf("directory attribute on a file: %v", err)
	}
	e.close(o)
	// The root's hidden and system attributes cannot change (MS-FSA
	// 2.1.5.15.2); its others can.
	root := e.open(e.req("", vtAll, vtRWD, DispOpen, vtDir))
	if in, err := e.v.SetBasic(e.ctx, root, BasicInfo{Attributes: AttrHidden | AttrSystem | AttrReadOnly}); err != nil || in.Attributes != AttrReadOnly|AttrDirectory {
		t.Fatalf("root attributes: %+v %v", in, err)
	}
	e.close(root)
}

// TestVFSFrozenTimes: a time set through an open, or frozen with
// FILETIME -1, is no longer stamped by operations through that open
// until thawed (-2); other opens are not affected.
func TestVFSFrozenTimes(t *testing.T) {
	e := newVT(t)
	e.mkfile("f", 0)
	o := e.open(e.req("f", vtAll, vtRWD, DispOpen, 0))
	other := e.open(e.req("f", vtRW, vtRWD, DispOpen, 0))
	ct := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := e.v.SetBasic(e.ctx, o, BasicInfo{Changed: ct}); err != nil {
		t.Fatal(err)
	}
	if o.Frozen() != TimeChanged || other.Frozen() != 0 {
		t.Fatalf("frozen: %v, other %v", o.Frozen(), other.Frozen())
	}
	// An attribute change through o keeps the change time it set
	// (smb2.setinfo "a zero time means don't change").
	e.clk.Advance(time.Minute)
	if in, err := e.v.SetBasic(e.ctx, o, BasicInfo{Attributes: AttrHidden}); err != nil || !in.Changed.Equal(ct) || in.Attributes != AttrHidden {
		t.Fatalf("attributes through o: %+v %v", in, err)
	}
	// So does a rename through o; through another open it would stamp.
	if err := e.v.Rename(e.ctx, o, []string{"g"}, false); err != nil {
		t.Fatal(err)
	}
	if in, _ := e.v.Info(e.ctx, o); !in.Changed.Equal(ct) {
		t.Fatalf("rename through o stamped the change time: %v", in.Changed)
	}
	if in, err := e.v.SetBasic(e.ctx, other, BasicInfo{Attributes: AttrNormal}); err != nil || !in.Changed.Equal(e.clk.Now()) {
		t.Fatalf("attributes through the other open: %+v %v", in, err)
	}
	// Thaw (-2) resumes the updates; freeze (-1) alone changes nothing.
	e.clk.Advance(time.Minute)
	if _, err := e.v.SetBasic(e.ctx, o, BasicInfo{Thaw: TimeChanged, Freeze: TimeLastWrite}); err != nil {
		t.Fatal(err)
	}
	if o.Frozen() != TimeLastWrite {
		t.Fatalf("after thaw: %v", o.Frozen())
	}
	if in, err := e.v.SetBasic(e.ctx, o, BasicInfo{Attributes: AttrArchive}); err != nil || !in.Changed.Equal(e.clk.Now()) {
		t.Fatalf("attributes after thaw: %+v %v", in, err)
	}
	// A refused call freezes nothing.
	ro := e.open(e.req("g", AccessReadAttributes, vtRWD, DispOpen, 0))
	if _, err := e.v.SetBasic(e.ctx, ro, BasicInfo{Changed: ct}); !errors.Is(err, ErrAccessDenied) || ro.Frozen() != 0 {
		t.Fatalf("without FILE_WRITE_ATTRIBUTES: %v, frozen %v", err, ro.Frozen())
	}
	e.close(ro)
	e.close(other)
	e.close(o)
}

// TestVFSLastAccess: the access time an SMB client sets is kept apart
// from the write time, survives REST operations (which do not show it)
// and is reported by Info and listings; never set, it reads as the
// write time.
func TestVFSLastAccess(t *testing.T) {
	e := newVT(t)
	e.mkfile("f", 0)
	o := e.open(e.req("f", vtRW, vtRWD, DispOpen, 0))
	in, _ := e.v.Info(e.ctx, o)
	if !in.LastAccess.Equal(in.LastWrite) {
		t.Fatalf("never set: access %v, write %v", in.LastAccess, in.LastWrite)
	}
	at := time.Date(2031, 5, 6, 7, 8, 9, 100, time.UTC)
	wt := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
	in, err := e.v.SetBasic(e.ctx, o, BasicInfo{LastAccess: at, LastWrite: wt})
	if err != nil || !in.LastAccess.Equal(at) || !in.LastWrite.Equal(wt) {
		t.Fatalf("after set: %+v %v", in, err)
	}
	// Setting only the write time leaves the access time.
	wt2 := wt.Add(time.Hour)
	if in, err = e.v.SetBasic(e.ctx, o, BasicInfo{LastWrite: wt2}); err != nil || !in.LastAccess.Equal(at) {
		t.Fatalf("write time set: %+v %v", in, err)
	}
	// REST Set File Properties and Put Range keep it.
	e.clk.Advance(time.Minute)
	e.restOK(http.StatusOK, "PUT", "/vfs/f?comp=properties", nil, "x-ms-file-attributes", "Hidden", "x-ms-content-length", "3")
	e.putRange("f", 0, []byte("abc"))
	in, _ = e.v.Info(e.ctx, o)
	if !in.LastAccess.Equal(at) || in.Attributes != AttrHidden {
		t.Fatalf("after REST: %+v", in)
	}
	// Listings report it too.
	e.close(o)
	root := e.open(e.req("", vtAll, vtRWD, DispOpen, vtDir))
	if l, err := e.v.Lookup(e.ctx, root, "F"); err != nil || !l.LastAccess.Equal(at) {
		t.Fatalf("lookup: %+v %v", l, err)
	}
	e.close(root)
	w := e.restOK(http.StatusOK, "GET", "/vfs?restype=directory&comp=list&include=Timestamps", nil, "x-ms-file-extended-info", "true")
	if want := "<LastAccessTime>" + at.Format("2006-01-02T15:04:05.0000000Z") + "</LastAccessTime>"; !strings.Contains(w.Body.String(), want) {
		t.Fatalf("REST listing lacks %s:\n%s", want, w.Body)
	}
	// An overwrite is an access: the time follows the write again.
	r := e.req("f", vtRW, vtRWD, DispOverwrite, 0)
	r.Attributes = AttrHidden
	o = e.open(r)
	if !o.Info.LastAccess.Equal(e.clk.Now()) || !o.Info.LastWrite.Equal(e.clk.Now()) {
		t.Fatalf("after overwrite: %+v", o.Info)
	}
	e.close(o)
}

// TestVFSRenameTargetDirOpens: a rename acts as an open of the target's
// directory asking FILE_ADD_FILE and sharing read and write, so opens of
// that directory with DELETE access, or without write sharing, refuse it
// (smb2.rename's share_delete / no_share_delete cases).
func TestVFSRenameTargetDirOpens(t *testing.T) {
	e := newVT(t)
	e.mkdir("d")
	e.mkdir("e")
	e.mkfile("d/f", 0)
	const dirData = AccessReadData | AccessWriteData | AccessAppendData | AccessExecute | AccessReadAttributes
	for _, c := range []struct {
		name          string
		access, share uint32
		want          error
	}{
		{"delete access, shares all", dirData | AccessDelete, vtRWD, ErrSharingViolation},
		{"delete access, shares none", dirData | AccessDelete, 0, ErrSharingViolation},
		{"no delete access, shares all", dirData, vtRWD, nil},
		{"no delete access, shares none", dirData, 0, ErrSharingViolation},
		{"no delete access, shares read and delete", dirData, 1 | 4, ErrSharingViolation},
		{"attributes only, shares none", AccessReadAttributes, 0, nil},
	} {
		f := e.open(e.req("d/f", vtAll, 0, DispOpen, vtFile))
		d := e.open(e.req("d", c.access, c.share, DispOpen, vtDir))
		if err := e.v.Rename(e.ctx, f, []string{"d", "g"}, false); !errors.Is(err, c.want) {
			t.Fatalf("%s: in place: got %v, want %v", c.name, err, c.want)
		}
		// A move into another directory is decided by that one.
		if err := e.v.Rename(e.ctx, f, []string{"e", "h"}, false); err != nil {
			t.Fatalf("%s: to e: %v", c.name, err)
		}
		if err := e.v.Rename(e.ctx, f, []string{"d", "f"}, false); !errors.Is(err, c.want) {
			t.Fatalf("%s: back into d: got %v, want %v", c.name, err, c.want)
		}
		e.close(d)
		if err := e.v.Rename(e.ctx, f, []string{"d", "f"}, true); err != nil {
			t.Fatalf("%s: after closing d: %v", c.name, err)
		}
		e.close(f)
	}
}

// TestVFSRename covers rename through an open handle.
func TestVFSRename(t *testing.T) {
	e := newVT(t)
	e.mkdir("a")
	e.mkdir("a/sub")
	e.mkdir("b")
	e.mkfile("a/f", 3)
	e.putRange("a/f", 0, []byte("abc"))
	e.mkfile("b/t", 1)

	f := e.open(e.req("a/f", vtAll, vtRWD, DispOpen, 0))
	other := e.open(e.req("a/f", AccessReadData, vtRWD, DispOpen, 0))
	if err := e.v.Rename(e.ctx, f, []string{"b", "t"}, false); !errors.Is(err, ErrExists) {
		t.Fatalf("onto an existing file: %v", err)
	}
	if err := e.v.Rename(e.ctx, f, []string{"b"}, true); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("onto a directory: %v", err)
	}
	if err := e.v.Rename(e.ctx, f, []string{"nope", "x"}, false); !errors.Is(err, ErrPathNotFound) {
		t.Fatalf("into a missing directory: %v", err)
	}
	t2 := e.open(e.req("b/t", AccessReadData, vtRWD, DispOpen, 0))
	if err := e.v.Rename(e.ctx, f, []string{"b", "t"}, true); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("onto an open file: %v", err)
	}
	e.close(t2)
	if err := e.v.Rename(e.ctx, f, []string{"b", "T"}, true); err != nil {
		t.Fatal(err)
	}
	e.restFails(azerr.ResourceNotFound, "HEAD", "/vfs/a/f", nil)
	if got := e.getFile("b/t"); string(got) != "abc" {
		t.Fatalf("moved content: %q", got)
	}
	h := e.restOK(http.StatusOK, "HEAD", "/vfs/b/T", nil).Header()
	if h.Get("x-ms-file-id") != FormatID(f.FileID) {
		t.Fatalf("file id changed: %s", h.Get("x-ms-file-id"))
	}
	if p, err := e.v.Path(e.ctx, other); err != nil || strings.Join(p, "/") != "b/T" {
		t.Fatalf("path of the other open: %v %v", p, err)
	}
	if got := e.read(other, 0, 3); string(got) != "abc" {
		t.Fatalf("other open reads %q", got)
	}
	// A case-only rename.
	if err := e.v.Rename(e.ctx, f, []string{"b", "t"}, false); err != nil {
		t.Fatal(err)
	}
	if in, _ := e.v.Info(e.ctx, f); in.Name != "t" {
		t.Fatalf("case change: %q", in.Name)
	}
	e.close(other)

	// A directory with an open item below it cannot move; into itself
	// neither.
	a := e.open(e.req("a", vtAll, vtRWD, DispOpen, vtDir))
	if err := e.v.Rename(e.ctx, a, []string{"a", "sub", "x"}, false); !errors.Is(err, ErrInvalidParameter) {
		t.Fatalf("into itself: %v", err)
	}
	sub := e.open(e.req("a/sub", AccessReadAttributes, vtRWD, DispOpen, vtDir))
	if err := e.v.Rename(e.ctx, a, []string{"c"}, false); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("with an open below: %v", err)
	}
	e.close(sub)
	if err := e.v.Rename(e.ctx, a, []string{"b", "c"}, false); err != nil {
		t.Fatal(err)
	}
	e.restOK(http.StatusOK, "GET", "/vfs/b/c/sub?restype=directory", nil)
	e.close(a)
	// The file open outside the moved directory did not block it.
	e.close(f)
}

// TestVFSReadDir pages through a directory in folded-name order.
func TestVFSReadDir(t *testing.T) {
	e := newVT(t)
	e.mkdir("d")
	var names []string
	for i := 0; i < 23; i++ {
		n := fmt.Sprintf("%c%02d", "aBc"[i%3], i)
		names = append(names, n)
		if i%4 == 0 {
			e.mkdir("d/" + n)
		} else {
			e.mkfile("d/"+n, i)
		}
	}
	d := e.open(e.req("d", AccessReadData|AccessReadAttributes, vtRWD, DispOpen, vtDir))
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		ents, err := e.v.ReadDir(e.ctx, d, after, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) == 0 {
			if pages != 5 {
				t.Fatalf("%d pages", pages)
			}
			break
		}
		for _, in := range ents {
			got = append(got, in.Name)
			if in.Dir != (in.Size == 0 && in.Attributes&AttrDirectory != 0) {
				t.Fatalf("entry %+v", in)
			}
		}
		after = strings.ToLower(ents[len(ents)-1].Name) // any case resumes
	}
	want := append([]string(nil), names...)
	sortFolded(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("listing\n got %v\nwant %v", got, want)
	}
	in, err := e.v.Lookup(e.ctx, d, "B01")
	if err != nil || in.Name != "B01" || in.Size != 1 {
		t.Fatalf("lookup: %+v %v", in, err)
	}
	if _, err := e.v.Lookup(e.ctx, d, "zz"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("lookup missing: %v", err)
	}
	p, err := e.v.ParentInfo(e.ctx, d)
	if err != nil || p.FileID != RootID || !p.Dir {
		t.Fatalf("parent: %+v %v", p, err)
	}
	e.close(d)
}

func sortFolded(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && fold(s[j]) < fold(s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestVFSOwnerExpiry: a front end that stops heartbeating loses its
// handles; the reaper applies their delete-on-close.
func TestVFSOwnerExpiry(t *testing.T) {
	e := newVT(t)
	e.mkfile("locked", 1)
	e.mkfile("doc", 1)
	crashed := e.s.VFS("crashed")
	if err := crashed.Heartbeat(e.ctx, e.clk.Now().Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	lk, err := crashed.Open(e.ctx, e.req("locked", vtAll, 0, DispOpen, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crashed.Open(e.ctx, e.req("doc", vtAll, vtRWD, DispOpen, vtDOC)); err != nil {
		t.Fatal(err)
	}
	e.restFails(azerr.SharingViolation, "GET", "/vfs/locked", nil)
	e.openErr(e.req("locked", AccessReadData, vtRWD, DispOpen, 0), ErrSharingViolation)

	e.clk.Advance(31 * time.Second)
	e.restOK(http.StatusOK, "GET", "/vfs/locked", nil)
	e.close(e.open(e.req("locked", AccessReadData, vtRWD, DispOpen, 0)))
	if _, err := crashed.Read(e.ctx, lk, 0, 1); !errors.Is(err, ErrFileClosed) {
		t.Fatalf("read through a dead handle: %v", err)
	}
	if _, err := crashed.Open(e.ctx, e.req("locked", AccessReadData, vtRWD, DispOpen, 0)); !errors.Is(err, ErrOwnerNotLive) {
		t.Fatalf("open by an expired owner: %v", err)
	}
	// Coming back does not revive its handles.
	if err := crashed.Heartbeat(e.ctx, e.clk.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := crashed.Close(e.ctx, lk); !errors.Is(err, ErrFileClosed) {
		t.Fatalf("close of a dead handle: %v", err)
	}
	// The reaper applies the dead delete-on-close handle.
	e.restOK(http.StatusOK, "HEAD", "/vfs/doc", nil)
	if _, err := e.s.ReapHandles(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.restFails(azerr.ResourceNotFound, "HEAD", "/vfs/doc", nil)

	// Retire ends an owner at once.
	o, err := crashed.Open(e.ctx, e.req("locked", vtAll, 0, DispOpen, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := crashed.Retire(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.restOK(http.StatusOK, "GET", "/vfs/locked", nil)
	if _, err := crashed.Info(e.ctx, o); !errors.Is(err, ErrFileClosed) {
		t.Fatalf("info after retire: %v", err)
	}
}

// TestVFSLease: a REST lease acts as an open with Write and Delete
// sharing Read.
func TestVFSLease(t *testing.T) {
	e := newVT(t)
	e.mkfile("f", 1)
	lid := "3c5a2f6e-0000-4000-8000-000000000001"
	e.restOK(http.StatusCreated, "PUT", "/vfs/f?comp=lease", nil, "x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1", "x-ms-proposed-lease-id", lid)
	e.openErr(e.req("f", AccessWriteData, vtRWD, DispOpen, 0), ErrSharingViolation)
	e.openErr(e.req("f", AccessDelete, vtRWD, DispOpen, 0), ErrSharingViolation)
	e.openErr(e.req("f", AccessReadData, vtRWD, DispOverwriteIf, 0), ErrSharingViolation)
	r := e.open(e.req("f", AccessReadData, vtRWD, DispOpen, 0))
	e.close(r)
	e.restOK(http.StatusOK, "PUT", "/vfs/f?comp=lease", nil, "x-ms-lease-action", "release", "x-ms-lease-id", lid)
	w := e.open(e.req("f", AccessWriteData, vtRWD, DispOpen, 0))
	e.restFails(azerr.SharingViolation, "PUT", "/vfs/f?comp=lease", nil, "x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1")
	e.close(w)
}

// TestVFSForceClose: REST List Handles shows SMB opens and Force Close
// Handles closes them.
func TestVFSForceClose(t *testing.T) {
	e := newVT(t)
	e.mkfile("f", 1)
	o := e.open(e.req("f", vtRW, 0, DispOpen, 0))
	list := e.restOK(http.StatusOK, "GET", "/vfs/f?comp=listhandles", nil).Body.String()
	if !strings.Contains(list, "<HandleId>"+o.HandleID+"</HandleId>") || !strings.Contains(list, "<ClientIp>127.0.0.1:50000</ClientIp>") {
		t.Fatalf("list handles: %s", list)
	}
	h := e.restOK(http.StatusOK, "PUT", "/vfs/f?comp=forceclosehandles", nil, "x-ms-handle-id", "*").Header()
	if h.Get("x-ms-number-of-handles-closed") != "1" {
		t.Fatalf("force close: %v", h)
	}
	if err := e.v.Write(e.ctx, o, 0, []byte("x")); !errors.Is(err, ErrFileClosed) {
		t.Fatalf("write through a force-closed handle: %v", err)
	}
	e.restOK(http.StatusAccepted, "DELETE", "/vfs/f", nil)
}

// TestVFSCloseSession closes a session's handles, with delete-on-close.
func TestVFSCloseSession(t *testing.T) {
	e := newVT(t)
	e.mkfile("f", 1)
	e.mkfile("g", 1)
	e.open(e.req("f", vtAll, vtRWD, DispOpen, vtDOC))
	e.open(e.req("g", vtAll, 0, DispOpen, 0))
	other := e.req("g", AccessReadAttributes, vtRWD, DispOpen, 0)
	other.SessionID = "s2"
	keep := e.open(other)
	n, err := e.v.CloseSession(e.ctx, "s1")
	if err != nil || n != 2 {
		t.Fatalf("close session: %d %v", n, err)
	}
	e.restFails(azerr.ResourceNotFound, "HEAD", "/vfs/f", nil)
	e.restOK(http.StatusOK, "GET", "/vfs/g", nil)
	if _, err := e.v.Info(e.ctx, keep); err != nil {
		t.Fatalf("other session's open: %v", err)
	}
}

// TestVFSShares covers share-level calls and the quota.
func TestVFSShares(t *testing.T) {
	e := newVT(t)
	e.restOK(http.StatusCreated, "PUT", "/small?restype=share", nil, "x-ms-share-quota", "1")
	e.restOK(http.StatusCreated, "PUT", "/nfs?restype=share", nil, "x-ms-enabled-protocols", "NFS")
	if ok, err := e.v.ShareExists(e.ctx, vtAcct, "small"); !ok || err != nil {
		t.Fatalf("exists: %v %v", ok, err)
	}
	for _, sh := range []string{"nosuch", "nfs", "SMALL"} {
		if ok, err := e.v.ShareExists(e.ctx, vtAcct, sh); ok || err != nil {
			t.Fatalf("exists %s: %v %v", sh, ok, err)
		}
	}
	shares, err := e.v.Shares(e.ctx, vtAcct)
	if err != nil || strings.Join(shares, ",") != "small,vfs" {
		t.Fatalf("shares: %v %v", shares, err)
	}
	e.sh = "small"
	o := e.open(e.req("f", vtRW, vtRWD, DispCreate, 0))
	e.write(o, 100, []byte("12345"))
	if err := e.v.Write(e.ctx, o, 1<<30-2, []byte("abc")); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("write past the quota: %v", err)
	}
	if err := e.v.SetEndOfFile(e.ctx, o, 1<<30+1); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("extend past the quota: %v", err)
	}
	if err := e.v.Write(e.ctx, o, MaxFileSize, []byte("a")); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("write past 4 TiB: %v", err)
	}
	fi, err := e.v.FSInfo(e.ctx, vtAcct, "small")
	if err != nil || fi.QuotaBytes != 1<<30 || fi.UsedBytes != 105 || !fi.Created.Equal(e.clk.Now()) {
		t.Fatalf("fs info: %+v %v", fi, err)
	}
	e.close(o)
	// A deleted share: its opens are gone.
	o = e.open(e.req("f", vtRW, vtRWD, DispOpen, 0))
	e.restOK(http.StatusAccepted, "DELETE", "/small?restype=share", nil)
	if _, err := e.v.Info(e.ctx, o); !errors.Is(err, ErrShareNotFound) {
		t.Fatalf("info after share delete: %v", err)
	}
}

// TestCheckReadOnly is the REST read-only rule of each operation, as its
// fileOp states it (answered through the REST door, filerest.Answer):
// refused on a read-only file, never on a writable file
// or a read-only directory. A resize is refused like a content write.
// Rename File has no fileOp: it checks the attribute of a replaced file
// itself (x-ms-file-rename-ignore-readonly, TestDomainRenameBothDoors).
func TestCheckReadOnly(t *testing.T) {
	ro := &entry{SMB: smbProps{Attrs: AttrReadOnly | AttrArchive}}
	rw := &entry{SMB: smbProps{Attrs: AttrArchive}}
	dir := &entry{Dir: true, SMB: smbProps{Attrs: AttrReadOnly | AttrDirectory}}
	rest := &caller{}
	var d domain
	for _, tc := range []struct {
		name    string
		op      *fileOp
		refused bool
	}{
		{"putRange", &opPutRange, true}, {"putRangeFromURL", &opPutRangeFromURL, true},
		{"createFile", &opCreateFile, true}, {"deleteFile", &opDeleteFile, true},
		{"setFileProperties", &opSetProperties, false}, {"setFileMetadata", &opSetFileMetadata, false},
		{"copyFile", &opCopyFileDest, false}, {"abortCopyFile", &opAbortCopyFile, false},
	} {
		if !tc.op.write {
			t.Errorf("%s: not a write, so admit never checks its read-only rule", tc.name)
		}
		err := restAnswer(d.readOnly(rest, ro, tc.op))
		if tc.refused != azerr.Has(err, azerr.ReadOnlyAttribute) || tc.refused != (refusedBy(err) == byReadOnly) || !tc.refused && err != nil {
			t.Errorf("%s on a read-only file: %v", tc.name, err)
		}
		if err := d.readOnly(rest, rw, tc.op); err != nil {
			t.Errorf("%s on a writable file: %v", tc.name, err)
		}
		if err := d.readOnly(rest, dir, tc.op); err != nil {
			t.Errorf("%s on a read-only directory: %v", tc.name, err)
		}
	}
	// resize: Set File Properties with x-ms-content-length.
	if err := restAnswer(d.readOnlyREST(ro, true)); !azerr.Has(err, azerr.ReadOnlyAttribute) || refusedBy(err) != byReadOnly {
		t.Errorf("resize of a read-only file: %v", err)
	}
	// Reads carry no read-only rule.
	for _, op := range []*fileOp{&opGetFile, &opGetFileProperties, &opListRanges, &opGetDirectoryProperties, &opListFilesAndDirectories} {
		if op.readOnly || op.write {
			t.Errorf("%s: a read with a write's rules", op.handle)
		}
	}
}

// TestFileOpHandleRows: every operation names a row of package handle's
// REST access table, which handlesAt refuses to run without.
func TestFileOpHandleRows(t *testing.T) {
	for _, op := range []*fileOp{
		&opGetFile, &opGetFileProperties, &opListRanges, &opCreateFile, &opCopyFileDest, &opAbortCopyFile,
		&opGetDirectoryProperties, &opListFilesAndDirectories, &opPutRange, &opPutRangeFromURL,
		&opSetProperties, &opSetFileMetadata, &opSetBasic, &opSetDirectoryProperties, &opSetDirectoryMetadata,
		&opSetEndOfFile, &opSetAllocation, &opDeleteFile, &opDeleteDirectory,
	} {
		if _, ok := handle.RESTAccess(op.handle); !ok {
			t.Errorf("fileOp %+v: no handle access row %q", *op, op.handle)
		}
	}
}

// FuzzVFSData runs a random sequence of SMB writes, truncations and
// extensions against an in-memory model and compares every byte, read
// over SMB and over REST. The seeds run in the normal test run.
func FuzzVFSData(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3, 42, 1234} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		e := newVT(t)
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		o := e.open(e.req("m", vtRW, vtRWD, DispCreate, 0))
		var model []byte
		for step := 0; step < 12; step++ {
			switch rng.IntN(5) {
			case 0, 1, 2:
				off := rng.IntN(300 << 10)
				n := 1 + rng.IntN(100<<10)
				if rng.IntN(4) == 0 {
					n = 1 + rng.IntN(16)
				}
				data := make([]byte, n)
				for i := range data {
					data[i] = byte(rng.Uint32())
				}
				e.write(o, int64(off), data)
				if off+n > len(model) {
					model = append(model, make([]byte, off+n-len(model))...)
				}
				copy(model[off:], data)
			case 3:
				size := rng.IntN(len(model) + 1 + 50<<10)
				if err := e.v.SetEndOfFile(e.ctx, o, int64(size)); err != nil {
					t.Fatal(err)
				}
				if size < len(model) {
					model = model[:size]
				} else {
					model = append(model, make([]byte, size-len(model))...)
				}
			case 4:
				if len(model) == 0 {
					continue
				}
				off := rng.IntN(len(model))
				n := 1 + rng.IntN(len(model)-off+10)
				got := e.read(o, int64(off), n)
				if want := model[off:min(off+n, len(model))]; !bytes.Equal(got, want) {
					t.Fatalf("step %d: read %d+%d differs", step, off, n)
				}
			}
		}
		got, err := e.v.Read(e.ctx, o, 0, MaxIOSize)
		if len(model) == 0 && err != io.EOF || len(model) > 0 && (err != nil || !bytes.Equal(got, model)) {
			t.Fatalf("final SMB read: %d bytes (%v), model %d", len(got), err, len(model))
		}
		if got := e.getFile("m"); !bytes.Equal(got, model) {
			t.Fatalf("final REST read: %d bytes, model %d", len(got), len(model))
		}
		e.close(o)
	})
}

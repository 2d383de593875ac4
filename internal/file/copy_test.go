package file

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc64"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// cpHost is the File endpoint of the unit tests: copy sources name it.
const cpHost = "127.0.0.1:10003"

// cpEnv is a File service over bolt and a chunk directory with a fake
// clock, driven through ServeAzure with Shared Key requests.
type cpEnv struct {
	t   *testing.T
	s   *Service
	clk *clock.Fake
}

func newCPEnv(t *testing.T) *cpEnv {
	t.Helper()
	s, clk := shService(t)
	return &cpEnv{t: t, s: s, clk: clk}
}

type hdr map[string]string

func (e *cpEnv) do(method, target string, h hdr, body []byte) (*httptest.ResponseRecorder, error) {
	e.t.Helper()
	req := httptest.NewRequest(method, "http://"+cpHost+target, bytes.NewReader(body))
	for k, v := range h {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	err := serveREST(e.s, w, &server.Request{Request: req, Account: "acct", Authenticated: true, Now: e.clk.Now(), Version: "2026-06-06", ID: "t"})
	return asClientSees(w), err
}

func (e *cpEnv) ok(status int, method, target string, h hdr, body []byte) *httptest.ResponseRecorder {
	e.t.Helper()
	w, err := e.do(method, target, h, body)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, target, err)
	}
	if w.Code != status {
		e.t.Fatalf("%s %s: status %d, want %d", method, target, w.Code, status)
	}
	return w
}

func (e *cpEnv) fails(status int, code, method, target string, h hdr) *azerr.Error {
	e.t.Helper()
	_, err := e.do(method, target, h, nil)
	ae, ok := azerr.As(err)
	if !ok || ae.Code != code || ae.Status != status {
		e.t.Fatalf("%s %s: got %v, want %d %s", method, target, err, status, code)
	}
	return ae
}

func (e *cpEnv) share(name string) {
	e.t.Helper()
	e.ok(http.StatusCreated, http.MethodPut, "/acct/"+name+"?restype=share", nil, nil)
}

// file creates the file at /acct/path with content data.
func (e *cpEnv) file(path string, data []byte, h hdr) {
	e.t.Helper()
	ch := hdr{"x-ms-type": "file", "x-ms-content-length": strconv.Itoa(len(data))}
	for k, v := range h {
		ch[k] = v
	}
	e.ok(http.StatusCreated, http.MethodPut, "/acct/"+path, ch, nil)
	if len(data) > 0 {
		e.ok(http.StatusCreated, http.MethodPut, "/acct/"+path+"?comp=range", hdr{"x-ms-range": "bytes=0-" + strconv.Itoa(len(data)-1), "x-ms-write": "update"}, data)
	}
}

func (e *cpEnv) read(path string) []byte {
	e.t.Helper()
	return e.ok(http.StatusOK, http.MethodGet, "/acct/"+path, nil, nil).Body.Bytes()
}

func (e *cpEnv) props(path string) http.Header {
	e.t.Helper()
	return e.ok(http.StatusOK, http.MethodHead, "/acct/"+path, nil, nil).Header()
}

func src(path string) string { return "http://" + cpHost + "/acct/" + path }

func TestPartsInSplice(t *testing.T) {
	P := func(off, n int64, id string, doff int64) extent.Part {
		return extent.Part{Off: off, Len: n, ID: id, DOff: doff}
	}
	src := []extent.Part{P(0, 100, "a", 0), P(200, 100, "b", 10)}
	got := extent.Within(src, 50, 200) // [50, 250): a[50,100), hole, b[200,250)
	want := []extent.Part{P(50, 50, "a", 50), P(200, 50, "b", 10)}
	if !extent.SameParts(got, want) {
		t.Fatalf("partsIn = %+v", got)
	}
	if extent.SameParts(got, want[:1]) || extent.SameParts(got, []extent.Part{P(50, 50, "a", 51), want[1]}) {
		t.Fatal("sameParts matched different lists")
	}
	emb := []extent.Part{{Off: 0, Len: 4, Data: []byte("abcd")}}
	if e := extent.Within(emb, 1, 2); len(e) != 1 || string(e[0].Data) != "bc" || e[0].Off != 1 {
		t.Fatalf("embedded slice = %+v", e)
	}
	// Write the 200 bytes at 1000 of a file that has c over [900, 1300):
	// c keeps [900,1000) and [1200,1300); the hole of the source stays a
	// hole in the destination.
	dst := []extent.Part{P(900, 400, "c", 0)}
	out := extent.SpliceShifted(dst, 1000, 200, got, 1000-50)
	wantOut := []extent.Part{P(900, 100, "c", 0), P(1000, 50, "a", 50), P(1150, 50, "b", 10), P(1200, 100, "c", 300)}
	if !extent.SameParts(out, wantOut) {
		t.Fatalf("spliceParts = %+v", out)
	}
	if dst[0].Len != 400 || got[0].Off != 50 {
		t.Fatal("inputs modified")
	}
}

func TestLeaseFileLifecycle(t *testing.T) {
	e := newCPEnv(t)
	e.share("shr")
	e.file("shr/f", []byte("hello"), nil)
	before := e.props("shr/f")
	acq := hdr{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}
	w := e.ok(http.StatusCreated, http.MethodPut, "/acct/shr/f?comp=lease", acq, nil)
	id := w.Header().Get("x-ms-lease-id")
	if _, ok := lease.ParseID(id); !ok {
		t.Fatalf("lease id %q", id)
	}
	// A lease action is not a write (Lease File,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/lease-file).
	if w.Header().Get("ETag") != before.Get("ETag") || w.Header().Get("Last-Modified") != before.Get("Last-Modified") {
		t.Fatalf("lease changed ETag/Last-Modified: %v vs %v", w.Header(), before)
	}
	p := e.props("shr/f")
	if p.Get("x-ms-lease-state") != "leased" || p.Get("x-ms-lease-status") != "locked" || p.Get("x-ms-lease-duration") != "infinite" || p.Get("ETag") != before.Get("ETag") {
		t.Fatalf("after acquire: %v", p)
	}
	// Only -1 durations, no renew, no acquire by another ID.
	e.fails(400, azerr.InvalidHeaderValue, http.MethodPut, "/acct/shr/f?comp=lease", hdr{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "15"})
	e.fails(400, azerr.InvalidHeaderValue, http.MethodPut, "/acct/shr/f?comp=lease", hdr{"x-ms-lease-action": "renew", "x-ms-lease-id": id})
	e.fails(409, azerr.LeaseAlreadyPresent, http.MethodPut, "/acct/shr/f?comp=lease", acq)

	// Writes need the ID.
	meta := hdr{"x-ms-meta-k": "v"}
	e.fails(412, azerr.LeaseIDMissing, http.MethodPut, "/acct/shr/f?comp=metadata", meta)
	e.fails(412, azerr.LeaseIDMismatchWithFileOperation, http.MethodPut, "/acct/shr/f?comp=metadata", hdr{"x-ms-meta-k": "v", "x-ms-lease-id": lease.NewID()})
	e.ok(http.StatusOK, http.MethodPut, "/acct/shr/f?comp=metadata", hdr{"x-ms-meta-k": "v", "x-ms-lease-id": id}, nil)

	// Change to a new ID; the old one no longer works.
	nid := lease.NewID()
	w = e.ok(http.StatusOK, http.MethodPut, "/acct/shr/f?comp=lease", hdr{"x-ms-lease-action": "change", "x-ms-lease-id": id, "x-ms-proposed-lease-id": nid}, nil)
	if w.Header().Get("x-ms-lease-id") != nid {
		t.Fatalf("change returned %q", w.Header().Get("x-ms-lease-id"))
	}
	e.fails(409, azerr.LeaseIDMismatchWithLeaseOperation, http.MethodPut, "/acct/shr/f?comp=lease", hdr{"x-ms-lease-action": "release", "x-ms-lease-id": id})

	// Break is immediate: 202, x-ms-lease-time 0, state broken, writes
	// without an ID succeed and clear the broken lease.
	w = e.ok(http.StatusAccepted, http.MethodPut, "/acct/shr/f?comp=lease", hdr{"x-ms-lease-action": "break"}, nil)
	if w.Header().Get("x-ms-lease-time") != "0" {
		t.Fatalf("break lease-time %q", w.Header().Get("x-ms-lease-time"))
	}
	if p := e.props("shr/f"); p.Get("x-ms-lease-state") != "broken" || p.Get("x-ms-lease-status") != "unlocked" {
		t.Fatalf("after break: %v", p)
	}
	e.ok(http.StatusOK, http.MethodPut, "/acct/shr/f?comp=metadata", meta, nil)
	if p := e.props("shr/f"); p.Get("x-ms-lease-state") != "available" {
		t.Fatalf("after write on broken lease: %v", p)
	}
	e.fails(409, azerr.LeaseNotPresentWithLeaseOperation, http.MethodPut, "/acct/shr/f?comp=lease", hdr{"x-ms-lease-action": "break"})

	// Acquire with a proposed ID, release it.
	pid := lease.NewID()
	w = e.ok(http.StatusCreated, http.MethodPut, "/acct/shr/f?comp=lease", hdr{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1", "x-ms-proposed-lease-id": pid}, nil)
	if w.Header().Get("x-ms-lease-id") != pid {
		t.Fatalf("acquire returned %q", w.Header().Get("x-ms-lease-id"))
	}
	e.ok(http.StatusOK, http.MethodPut, "/acct/shr/f?comp=lease", hdr{"x-ms-lease-action": "release", "x-ms-lease-id": pid}, nil)
	e.fails(412, azerr.LeaseNotPresentWithFileOperation, http.MethodPut, "/acct/shr/f?comp=metadata", hdr{"x-ms-lease-id": pid})

	// Not on directories, missing files or snapshots.
	e.ok(http.StatusCreated, http.MethodPut, "/acct/shr/d?restype=directory", nil, nil)
	e.fails(404, azerr.ResourceNotFound, http.MethodPut, "/acct/shr/d?comp=lease", acq)
	e.fails(404, azerr.ResourceNotFound, http.MethodPut, "/acct/shr/none?comp=lease", acq)
	e.fails(400, azerr.MissingRequiredHeader, http.MethodPut, "/acct/shr/f?comp=lease", hdr{})
}

func TestCopyFileSharesData(t *testing.T) {
	e := newCPEnv(t)
	e.share("shr")
	data := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // 128 KiB: a chunk, not inline
	e.file("shr/src", data, hdr{"x-ms-content-type": "text/plain", "x-ms-meta-a": "1"})
	w := e.ok(http.StatusAccepted, http.MethodPut, "/acct/shr/dst", hdr{"x-ms-copy-source": src("shr/src")}, nil)
	cid := w.Header().Get("x-ms-copy-id")
	if w.Header().Get("x-ms-copy-status") != "success" || cid == "" || w.Header().Get("ETag") == "" {
		t.Fatalf("copy response %v", w.Header())
	}
	p := e.props("shr/dst")
	for k, v := range map[string]string{
		"x-ms-copy-id": cid, "x-ms-copy-status": "success", "x-ms-copy-source": src("shr/src"),
		"x-ms-copy-progress": "131072/131072", "Content-Type": "text/plain", "x-ms-meta-A": "1",
		"Content-Length": "131072", "x-ms-copy-completion-time": e.clk.Now().Format(http.TimeFormat),
	} {
		if p.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, p.Get(k), v)
		}
	}
	// Delete the source and collect garbage long after: the copy still
	// holds references to the shared data items.
	e.ok(http.StatusAccepted, http.MethodDelete, "/acct/shr/src", nil, nil)
	e.clk.Advance(extent.GCGrace + time.Hour)
	if _, err := e.s.data.Collect(context.Background(), e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if got := e.read("shr/dst"); !bytes.Equal(got, data) {
		t.Fatalf("copy content differs (%d bytes)", len(got))
	}
	// Copy over an existing file with metadata of its own: the file ID
	// stays, the metadata is the request's.
	e.file("shr/small", []byte("tiny"), nil)
	id := e.props("shr/dst").Get("x-ms-file-id")
	e.ok(http.StatusAccepted, http.MethodPut, "/acct/shr/dst", hdr{"x-ms-copy-source": src("shr/small"), "x-ms-meta-b": "2"}, nil)
	p = e.props("shr/dst")
	if p.Get("x-ms-file-id") != id || p.Get("x-ms-meta-B") != "2" || p.Get("x-ms-meta-A") != "" || p.Get("Content-Length") != "4" {
		t.Fatalf("replaced copy: %v", p)
	}
	if got := e.read("shr/dst"); string(got) != "tiny" {
		t.Fatalf("replaced content %q", got)
	}
	e.clk.Advance(extent.GCGrace + time.Hour)
	if n, err := e.s.data.Collect(context.Background(), e.clk.Now()); err != nil || n == 0 {
		t.Fatalf("the replaced content was not freed: %d, %v", n, err)
	}
	// Errors.
	e.fails(404, azerr.ResourceNotFound, http.MethodPut, "/acct/shr/x", hdr{"x-ms-copy-source": src("shr/missing")})
	e.fails(404, azerr.ShareNotFound, http.MethodPut, "/acct/shr/x", hdr{"x-ms-copy-source": src("nosuch/f")})
	e.fails(404, azerr.ParentNotFound, http.MethodPut, "/acct/shr/nodir/x", hdr{"x-ms-copy-source": src("shr/small")})
	e.fails(400, azerr.InvalidMetadata, http.MethodPut, "/acct/shr/x", hdr{"x-ms-copy-source": src("shr/small"), "x-ms-meta-1bad": "v"})
	e.ok(http.StatusCreated, http.MethodPut, "/acct/shr/d?restype=directory", nil, nil)
	e.fails(404, azerr.ResourceNotFound, http.MethodPut, "/acct/shr/x", hdr{"x-ms-copy-source": src("shr/d")})
	e.fails(409, azerr.ResourceTypeMismatch, http.MethodPut, "/acct/shr/d", hdr{"x-ms-copy-source": src("shr/small")})
}

func TestCopyFileAcrossSharesAndSnapshots(t *testing.T) {
	e := newCPEnv(t)
	e.share("sha")
	e.share("shb")
	const sddl = "O:BAG:BAD:(A;;FA;;;BA)"
	e.file("sha/f", []byte("version one"), hdr{"x-ms-file-permission": sddl})
	key := e.props("sha/f").Get("x-ms-file-permission-key")
	w := e.ok(http.StatusCreated, http.MethodPut, "/acct/sha?restype=share&comp=snapshot", nil, nil)
	snap := w.Header().Get("x-ms-snapshot")
	if snap == "" {
		t.Fatal("no snapshot")
	}
	e.ok(http.StatusCreated, http.MethodPut, "/acct/sha/f?comp=range", hdr{"x-ms-range": "bytes=8-10", "x-ms-write": "update"}, []byte("TWO"))

	// Across shares, with the source's permission: the key is valid in
	// the destination share.
	e.ok(http.StatusAccepted, http.MethodPut, "/acct/shb/live", hdr{"x-ms-copy-source": src("sha/f"), "x-ms-file-permission-copy-mode": "source"}, nil)
	if got := e.read("shb/live"); string(got) != "version TWO" {
		t.Fatalf("live copy %q", got)
	}
	if p := e.props("shb/live"); p.Get("x-ms-file-permission-key") != key {
		t.Fatalf("permission key %q, want %q", p.Get("x-ms-file-permission-key"), key)
	}
	w = e.ok(http.StatusOK, http.MethodGet, "/acct/shb?restype=share&comp=filepermission", hdr{"x-ms-file-permission-key": key}, nil)
	if !strings.Contains(w.Body.String(), sddl) {
		t.Fatalf("permission in b: %s", w.Body.String())
	}
	// From the snapshot.
	e.ok(http.StatusAccepted, http.MethodPut, "/acct/shb/old", hdr{"x-ms-copy-source": src("sha/f?sharesnapshot=" + snap)}, nil)
	if got := e.read("shb/old"); string(got) != "version one" {
		t.Fatalf("snapshot copy %q", got)
	}
	// Not into a snapshot.
	e.fails(400, azerr.ShareSnapshotOperationNotSupported, http.MethodPut, "/acct/sha/g?sharesnapshot="+snap, hdr{"x-ms-copy-source": src("sha/f")})
}

func TestCopyFileSMBProperties(t *testing.T) {
	e := newCPEnv(t)
	e.share("shr")
	ct, wt, ch := "2023-03-31T21:05:00.0000000Z", "2023-03-31T21:02:00.0000000Z", "2023-03-31T21:08:00.0000000Z"
	// An empty source: no Put Range moves its times.
	e.file("shr/src", nil, hdr{"x-ms-file-attributes": "ReadOnly|Hidden", "x-ms-file-creation-time": ct, "x-ms-file-last-write-time": wt, "x-ms-file-change-time": ch})
	sp := e.props("shr/src")
	if sp.Get("x-ms-file-change-time") != ch || sp.Get("x-ms-file-last-write-time") != wt {
		t.Fatalf("source times: %v", sp)
	}
	e.clk.Advance(time.Minute)
	now := wire.FormatISO7(e.clk.Now())

	e.ok(http.StatusAccepted, http.MethodPut, "/acct/shr/all", hdr{"x-ms-copy-source": src("shr/src"),
		"x-ms-file-attributes": "source", "x-ms-file-creation-time": "source", "x-ms-file-last-write-time": "source", "x-ms-file-change-time": "source", "x-ms-file-permission-copy-mode": "source"}, nil)
	p := e.props("shr/all")
	for _, k := range []string{"x-ms-file-attributes", "x-ms-file-creation-time", "x-ms-file-last-write-time", "x-ms-file-change-time", "x-ms-file-permission-key"} {
		if p.Get(k) != sp.Get(k) {
			t.Errorf("%s = %q, want the source's %q", k, p.Get(k), sp.Get(k))
		}
	}

	e.ok(http.StatusAccepted, http.MethodPut, "/acct/shr/def", hdr{"x-ms-copy-source": src("shr/src"), "x-ms-file-creation-time": "source"}, nil)
	p = e.props("shr/def")
	if p.Get("x-ms-file-creation-time") != ct || p.Get("x-ms-file-last-write-time") != now || p.Get("x-ms-file-change-time") != now || p.Get("x-ms-file-attributes") != "Archive" {
		t.Errorf("defaults: %v", p)
	}

	e.ok(http.StatusAccepted, http.MethodPut, "/acct/shr/arch", hdr{"x-ms-copy-source": src("shr/src"), "x-ms-file-attributes": "System|ReadOnly", "x-ms-file-copy-set-archive": "true"}, nil)
	if a := e.props("shr/arch").Get("x-ms-file-attributes"); a != "ReadOnly | System | Archive" {
		t.Errorf("set-archive attributes %q", a)
	}

	// A read-only destination needs x-ms-file-copy-ignore-readonly.
	e.fails(409, azerr.ReadOnlyAttribute, http.MethodPut, "/acct/shr/arch", hdr{"x-ms-copy-source": src("shr/src")})
	e.ok(http.StatusAccepted, http.MethodPut, "/acct/shr/arch", hdr{"x-ms-copy-source": src("shr/src"), "x-ms-file-copy-ignore-readonly": "true"}, nil)

	// Override needs a permission; an unknown key is refused.
	e.fails(400, azerr.MissingRequiredHeader, http.MethodPut, "/acct/shr/ov", hdr{"x-ms-copy-source": src("shr/src"), "x-ms-file-permission-copy-mode": "override"})
	e.fails(400, azerr.FileInvalidPermissionKey, http.MethodPut, "/acct/shr/ov", hdr{"x-ms-copy-source": src("shr/src"), "x-ms-file-permission-copy-mode": "override", "x-ms-file-permission-key": "1*2"})
	const sddl = "O:BAG:BAD:(A;;FA;;;SY)"
	e.ok(http.StatusAccepted, http.MethodPut, "/acct/shr/ov", hdr{"x-ms-copy-source": src("shr/src"), "x-ms-file-permission-copy-mode": "override", "x-ms-file-permission": sddl}, nil)
	if k := e.props("shr/ov").Get("x-ms-file-permission-key"); k != permissionKey(sddl) {
		t.Errorf("override key %q", k)
	}
}

func TestCopyFileLeasedDestination(t *testing.T) {
	e := newCPEnv(t)
	e.share("shr")
	e.file("shr/src", []byte("source"), nil)
	e.file("shr/dst", []byte("old"), nil)
	id := e.ok(http.StatusCreated, http.MethodPut, "/acct/shr/dst?comp=lease", hdr{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}, nil).Header().Get("x-ms-lease-id")
	cp := hdr{"x-ms-copy-source": src("shr/src")}
	e.fails(412, azerr.LeaseIDMissing, http.MethodPut, "/acct/shr/dst", cp)
	e.fails(412, azerr.LeaseIDMismatchWithFileOperation, http.MethodPut, "/acct/shr/dst", hdr{"x-ms-copy-source": src("shr/src"), "x-ms-lease-id": lease.NewID()})
	e.ok(http.StatusAccepted, http.MethodPut, "/acct/shr/dst", hdr{"x-ms-copy-source": src("shr/src"), "x-ms-lease-id": id}, nil)
	if p := e.props("shr/dst"); p.Get("x-ms-lease-state") != "leased" || string(e.read("shr/dst")) != "source" {
		t.Fatalf("after copy: %v", p)
	}
	// A lease ID for a destination that does not exist is 412 (Copy File,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/copy-file).
	e.fails(412, azerr.LeaseNotPresentWithFileOperation, http.MethodPut, "/acct/shr/new", hdr{"x-ms-copy-source": src("shr/src"), "x-ms-lease-id": id})
	// The source's lease does not matter (Copy File).
	e.ok(http.StatusAccepted, http.MethodPut, "/acct/shr/new", hdr{"x-ms-copy-source": src("shr/dst")}, nil)
}

func TestAbortCopyFile(t *testing.T) {
	e := newCPEnv(t)
	e.share("shr")
	e.file("shr/src", []byte("source"), nil)
	cid := e.ok(http.StatusAccepted, http.MethodPut, "/acct/shr/dst", hdr{"x-ms-copy-source": src("shr/src")}, nil).Header().Get("x-ms-copy-id")
	abort := hdr{"x-ms-copy-action": "abort"}
	e.fails(409, azerr.NoPendingCopyOperation, http.MethodPut, "/acct/shr/dst?comp=copy&copyid="+cid, abort)
	e.fails(409, azerr.NoPendingCopyOperation, http.MethodPut, "/acct/shr/src?comp=copy&copyid="+cid, abort)
	e.fails(400, azerr.InvalidQueryParameterValue, http.MethodPut, "/acct/shr/none?comp=copy&copyid=copynotstarted", abort)
	e.fails(400, azerr.MissingRequiredQueryParameter, http.MethodPut, "/acct/shr/dst?comp=copy", abort)
	e.fails(400, azerr.MissingRequiredHeader, http.MethodPut, "/acct/shr/dst?comp=copy&copyid="+cid, nil)
	e.fails(400, azerr.InvalidHeaderValue, http.MethodPut, "/acct/shr/dst?comp=copy&copyid="+cid, hdr{"x-ms-copy-action": "pause"})
	e.fails(404, azerr.ResourceNotFound, http.MethodPut, "/acct/shr/none?comp=copy&copyid="+cid, abort)
	id := e.ok(http.StatusCreated, http.MethodPut, "/acct/shr/dst?comp=lease", hdr{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}, nil).Header().Get("x-ms-lease-id")
	e.fails(412, azerr.LeaseIDMissing, http.MethodPut, "/acct/shr/dst?comp=copy&copyid="+cid, abort)
	e.fails(409, azerr.NoPendingCopyOperation, http.MethodPut, "/acct/shr/dst?comp=copy&copyid="+cid, hdr{"x-ms-copy-action": "abort", "x-ms-lease-id": id})
}

func TestPutRangeFromURLValidation(t *testing.T) {
	e := newCPEnv(t)
	e.share("shr")
	e.file("shr/src", []byte("source bytes"), nil)
	e.file("shr/dst", make([]byte, 16), nil)
	base := func(extra hdr) hdr {
		h := hdr{"x-ms-copy-source": src("shr/src"), "x-ms-range": "bytes=0-5", "x-ms-source-range": "bytes=0-5", "x-ms-write": "update"}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	const u = "/acct/shr/dst?comp=range"
	// The source of Put Range from URL must carry a SAS, even under Shared
	// Key (Put Range From URL; the service's 401 CannotVerifyCopySource with
	// NoAuthenticationInformation, Azure/azure-sdk-for-net#48992).
	ae := e.fails(401, azerr.CannotVerifyCopySource, http.MethodPut, u, base(nil))
	if len(ae.Details) < 2 || ae.Details[1].Value != azerr.NoAuthenticationInformation {
		t.Fatalf("details %+v", ae.Details)
	}
	// A bearer token for the source is verified; this server runs without
	// --oauth basic, so none is accepted (as for a blob copy source).
	e.fails(403, azerr.CannotVerifyCopySource, http.MethodPut, u, base(hdr{"x-ms-copy-source-authorization": "Bearer abc"}))
	e.fails(400, azerr.InvalidHeaderValue, http.MethodPut, u, base(hdr{"x-ms-write": "clear"}))
	e.fails(400, azerr.MissingRequiredHeader, http.MethodPut, u, base(hdr{"x-ms-write": ""}))
	e.fails(400, azerr.MissingRequiredHeader, http.MethodPut, u, base(hdr{"x-ms-range": ""}))
	e.fails(400, azerr.MissingRequiredHeader, http.MethodPut, u, base(hdr{"x-ms-source-range": ""}))
	e.fails(400, azerr.InvalidHeaderValue, http.MethodPut, u, base(hdr{"x-ms-source-range": "bytes=0-6"}))
	e.fails(413, azerr.RequestBodyTooLarge, http.MethodPut, u, base(hdr{"x-ms-range": "bytes=0-4194304", "x-ms-source-range": "bytes=0-4194304"}))
	e.fails(400, azerr.InvalidHeaderValue, http.MethodPut, u, base(hdr{"x-ms-file-last-write-time": "later"}))
	e.fails(400, azerr.InvalidHeaderValue, http.MethodPut, u, base(hdr{"x-ms-source-if-match-crc64": "zz"}))
	e.fails(404, azerr.CannotVerifyCopySource, http.MethodPut, u, base(hdr{"x-ms-copy-source": "http://elsewhere:1/acct/shr/src"}))
}

func TestRangeCRC64(t *testing.T) {
	e := newCPEnv(t)
	e.share("shr")
	data := bytes.Repeat([]byte("abc"), 30000) // inline and chunked parts
	e.file("shr/f", data, nil)
	e.ok(http.StatusCreated, http.MethodPut, "/acct/shr/f?comp=range", hdr{"x-ms-range": "bytes=10-19", "x-ms-write": "clear"}, nil)
	want := append([]byte(nil), data...)
	copy(want[10:20], make([]byte, 10))
	var fe *entry
	err := e.s.store.View(context.Background(), func(tx kv.Tx) error {
		_, ent, err := walk(tx, "acct", "shr", "", []string{"f"})
		fe = ent
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ off, n int64 }{{0, int64(len(data))}, {5, 20}, {100, 70000}} {
		got, err := rangeCRC64(e.s.data.NewReader(context.Background(), extent.Within(fe.Parts, c.off, c.n), nil, c.off, c.n), c.n)
		if err != nil {
			t.Fatal(err)
		}
		sum := crc64.Checksum(want[c.off:c.off+c.n], extent.CRC64Table)
		if binary.LittleEndian.Uint64(got) != sum {
			t.Errorf("crc of [%d,+%d) = %x, want %x", c.off, c.n, got, sum)
		}
	}
}

// openHandle opens an SMB handle on the file at comps of share sh.
func (e *cpEnv) openHandle(sh string, comps []string, access handle.Access, shareAccess handle.ShareAccess) handle.Handle {
	e.t.Helper()
	var h handle.Handle
	err := e.s.store.Update(context.Background(), func(tx kv.Tx) error {
		now := e.clk.Now()
		if err := handle.Heartbeat(tx, now, "test", now.Add(24*time.Hour)); err != nil {
			return err
		}
		_, f, err := walk(tx, "acct", sh, "", comps)
		if err != nil {
			return err
		}
		h, err = handle.Open(tx, now, handle.OpenRequest{Account: "acct", Share: sh, FileID: FormatID(f.ID), ParentID: FormatID(f.Parent),
			Path: strings.Join(comps, "/"), SessionID: "s1", Owner: "test", Access: access, ShareAccess: shareAccess})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

func (e *cpEnv) closeHandle(sh string, h handle.Handle) {
	e.t.Helper()
	err := e.s.store.Update(context.Background(), func(tx kv.Tx) error {
		_, err := handle.Close(tx, e.clk.Now(), "acct", sh, h.FileID, h.HandleID)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// Lease acquire fails while a handle has Write or Delete access (Managing
// file locks,
// https://learn.microsoft.com/en-us/rest/api/storageservices/managing-file-locks);
// a Read handle does not stop it. Copy reads its source like Get File and
// replaces its destination like Create File.
func TestLeaseAndCopyVersusHandles(t *testing.T) {
	e := newCPEnv(t)
	e.share("shr")
	e.file("shr/f", []byte("data"), nil)
	e.file("shr/g", []byte("more"), nil)
	acq := hdr{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}

	w := e.openHandle("shr", []string{"f"}, handle.Write, handle.ShareAll)
	e.fails(409, azerr.SharingViolation, http.MethodPut, "/acct/shr/f?comp=lease", acq)
	e.closeHandle("shr", w)
	r := e.openHandle("shr", []string{"f"}, handle.Read, handle.ShareAll)
	id := e.ok(http.StatusCreated, http.MethodPut, "/acct/shr/f?comp=lease", acq, nil).Header().Get("x-ms-lease-id")
	// Release needs no access of its own.
	e.ok(http.StatusOK, http.MethodPut, "/acct/shr/f?comp=lease", hdr{"x-ms-lease-action": "release", "x-ms-lease-id": id}, nil)
	e.closeHandle("shr", r)

	// A handle denying readers blocks copying from the file; one denying
	// writers blocks copying onto it.
	noRead := e.openHandle("shr", []string{"f"}, handle.Read, handle.ShareWrite|handle.ShareDelete)
	e.fails(409, azerr.SharingViolation, http.MethodPut, "/acct/shr/h", hdr{"x-ms-copy-source": src("shr/f")})
	e.closeHandle("shr", noRead)
	noWrite := e.openHandle("shr", []string{"g"}, handle.Read, handle.ShareRead)
	e.fails(409, azerr.SharingViolation, http.MethodPut, "/acct/shr/g", hdr{"x-ms-copy-source": src("shr/f")})
	e.ok(http.StatusAccepted, http.MethodPut, "/acct/shr/h", hdr{"x-ms-copy-source": src("shr/g")}, nil)
	e.closeHandle("shr", noWrite)
	e.ok(http.StatusAccepted, http.MethodPut, "/acct/shr/g", hdr{"x-ms-copy-source": src("shr/f")}, nil)
}

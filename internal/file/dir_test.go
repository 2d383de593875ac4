package file

import (
	"context"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
)

const dtAcct = "acct"

// dtEnv is a Service over a temporary bolt store with a fake clock.
type dtEnv struct {
	t   *testing.T
	s   *Service
	clk *clock.Fake
}

func newDTEnv(t *testing.T) *dtEnv {
	t.Helper()
	s, clk := shService(t)
	return &dtEnv{t: t, s: s, clk: clk}
}

// do sends one authenticated request; target is below the account.
func (e *dtEnv) do(method, target, body string, hdr ...string) (*httptest.ResponseRecorder, error) {
	hr := httptest.NewRequest(method, "http://127.0.0.1:10003/"+dtAcct+target, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		hr.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	err := serveREST(e.s, w, &server.Request{Request: hr, Account: dtAcct, Authenticated: true, Now: e.clk.Now()})
	return asClientSees(w), err
}

func (e *dtEnv) ok(status int, method, target, body string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	w, err := e.do(method, target, body, hdr...)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, target, err)
	}
	if w.Code != status {
		e.t.Fatalf("%s %s: status %d, want %d", method, target, w.Code, status)
	}
	return w
}

func (e *dtEnv) fails(code, method, target string, hdr ...string) {
	e.t.Helper()
	_, err := e.do(method, target, "", hdr...)
	if !azerr.Has(err, code) {
		e.t.Fatalf("%s %s: got %v, want %s", method, target, err, code)
	}
}

func (e *dtEnv) mkfile(path, data string) {
	e.t.Helper()
	e.ok(201, "PUT", "/"+path, "", "x-ms-type", "file", "x-ms-content-length", fmt.Sprint(len(data)))
	if data != "" {
		e.ok(201, "PUT", "/"+path+"?comp=range", data, "x-ms-range", fmt.Sprintf("bytes=0-%d", len(data)-1), "x-ms-write", "update")
	}
}

// entryAt loads the live entry at path in share sh (nil if none).
func (e *dtEnv) entryAt(sh, path string) *entry {
	e.t.Helper()
	var out *entry
	err := e.s.store.View(context.Background(), func(tx kv.Tx) error {
		_, x, err := walk(tx, dtAcct, sh, "", strings.Split(path, "/"))
		out = x
		if azerr.Has(err, azerr.ParentNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// refs returns the reference count of every data item.
func (e *dtEnv) refs() map[string]uint32 {
	e.t.Helper()
	out := map[string]uint32{}
	err := e.s.store.View(context.Background(), func(tx kv.Tx) error {
		pre := kv.Key("x")
		return tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, v []byte) bool {
			parts, _ := kv.Split(k)
			out[parts[1]] = binary.BigEndian.Uint32(v)
			return true
		})
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// listNames lists directory dir of share sh with listChildren.
func (e *dtEnv) listNames(sh string, dir uint64, prefix, from string, max int) ([]string, string) {
	e.t.Helper()
	var names []string
	var next string
	err := e.s.store.View(context.Background(), func(tx kv.Tx) error {
		es, n, err := listChildren(tx, dtAcct, sh, "", dir, fold(prefix), from, max)
		for _, x := range es {
			names = append(names, x.Name)
		}
		next = n
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return names, next
}

func TestListChildren(t *testing.T) {
	e := newDTEnv(t)
	e.ok(201, "PUT", "/shr?restype=share", "")
	for _, n := range []string{"b", "D", "a", "C", "ab", "Aa", "é"} {
		e.ok(201, "PUT", "/shr/"+n+"?restype=directory", "")
	}
	e.mkfile("shr/B.txt", "")
	e.ok(201, "PUT", "/shr/b/inner?restype=directory", "")

	// The root's own record is not one of its children; names sort by
	// their folded form.
	all := []string{"a", "Aa", "ab", "b", "B.txt", "C", "D", "é"}
	if got, next := e.listNames("shr", RootID, "", "", 100); !reflect.DeepEqual(got, all) || next != "" {
		t.Fatalf("all: %q next %q", got, next)
	}
	if got, _ := e.listNames("shr", RootID, "A", "", 100); !reflect.DeepEqual(got, []string{"a", "Aa", "ab"}) {
		t.Fatalf("prefix A: %q", got)
	}
	if got, _ := e.listNames("shr", RootID, "b.", "", 100); !reflect.DeepEqual(got, []string{"B.txt"}) {
		t.Fatalf("prefix b.: %q", got)
	}
	// Pages of three, resumed at the marker.
	var paged []string
	from := ""
	for i := 0; ; i++ {
		got, next := e.listNames("shr", RootID, "", from, 3)
		paged = append(paged, got...)
		if next == "" {
			break
		}
		if i > 5 {
			t.Fatal("no end")
		}
		from = next
	}
	if !reflect.DeepEqual(paged, all) {
		t.Fatalf("paged %q", paged)
	}
	// A marker before the prefix does not widen it.
	if got, _ := e.listNames("shr", RootID, "C", "A", 10); !reflect.DeepEqual(got, []string{"C"}) {
		t.Fatalf("prefix C from A: %q", got)
	}
	b := e.entryAt("shr", "b")
	if got, _ := e.listNames("shr", b.ID, "", "", 10); !reflect.DeepEqual(got, []string{"inner"}) {
		t.Fatalf("inside b: %q", got)
	}

	// A delete-pending entry is skipped, also at a page boundary.
	f := e.entryAt("shr", "B.txt")
	now := e.clk.Now()
	err := e.s.store.Update(context.Background(), func(tx kv.Tx) error {
		if err := handle.Heartbeat(tx, now, "t", now.Add(time.Hour)); err != nil {
			return err
		}
		h, err := handle.Open(tx, now, handle.OpenRequest{Account: dtAcct, Share: "shr", FileID: FormatID(f.ID),
			Access: handle.Delete, ShareAccess: handle.ShareAll, DeleteOnClose: true, Owner: "t"})
		if err != nil {
			return err
		}
		if _, err := handle.Open(tx, now, handle.OpenRequest{Account: dtAcct, Share: "shr", FileID: FormatID(f.ID),
			Access: handle.Read, ShareAccess: handle.ShareAll, Owner: "t"}); err != nil {
			return err
		}
		_, err = handle.Close(tx, now, dtAcct, "shr", h.FileID, h.HandleID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, next := e.listNames("shr", RootID, "", "", 4); !reflect.DeepEqual(got, []string{"a", "Aa", "ab", "b"}) || next != "C" {
		t.Fatalf("with pending, first page: %q next %q", got, next)
	}
	if got, _ := e.listNames("shr", RootID, "b", "", 10); !reflect.DeepEqual(got, []string{"b"}) {
		t.Fatalf("with pending, prefix b: %q", got)
	}
}

// The listing XML parses into azfile's own types with every field.
func TestListXMLParsesInSDK(t *testing.T) {
	e := newDTEnv(t)
	e.ok(201, "PUT", "/shr?restype=share", "")
	e.ok(201, "PUT", "/shr/d?restype=directory", "")
	e.ok(201, "PUT", "/shr/d/sub?restype=directory", "")
	e.mkfile("shr/d/z\uFFFE", "hello")
	w := e.ok(200, "GET", "/shr/d?restype=directory&comp=list&include=Timestamps,ETag,Attributes,PermissionKey&maxresults=1&prefix=", "")
	var got directory.ListFilesAndDirectoriesSegmentResponse
	if err := xml.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, w.Body)
	}
	d := e.entryAt("shr", "d")
	sub := e.entryAt("shr", "d/sub")
	if *got.ServiceEndpoint != "http://127.0.0.1:10003/acct/" || *got.ShareName != "shr" || *got.DirectoryPath != "d" ||
		*got.DirectoryID != FormatID(d.ID) || *got.MaxResults != 1 || *got.Prefix != "" || *got.NextMarker == "" {
		t.Fatalf("envelope: %s", w.Body)
	}
	if len(got.Segment.Directories) != 1 || len(got.Segment.Files) != 0 {
		t.Fatalf("page: %s", w.Body)
	}
	x := got.Segment.Directories[0]
	if *x.Name != "sub" || *x.ID != FormatID(sub.ID) || *x.Attributes != "Directory" || *x.PermissionKey != sub.SMB.PermKey ||
		string(*x.Properties.ETag) != sub.ETag || !x.Properties.CreationTime.Equal(sub.SMB.Created) ||
		!x.Properties.LastModified.Equal(sub.Modified.Truncate(time.Second)) || x.Properties.ContentLength != nil {
		t.Fatalf("directory entry: %s", w.Body)
	}
	w = e.ok(200, "GET", "/shr/d?restype=directory&comp=list&marker="+*got.NextMarker, "")
	got = directory.ListFilesAndDirectoriesSegmentResponse{}
	if err := xml.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Segment.Files) != 1 || *got.Segment.Files[0].Name != "z\uFFFE" || *got.Segment.Files[0].Properties.ContentLength != 5 ||
		got.Segment.Files[0].Properties.ETag != nil || *got.NextMarker != "" || got.MaxResults != nil {
		t.Fatalf("file page: %s", w.Body)
	}
	if !strings.Contains(w.Body.String(), `<Name Encoded="true">z%EF%BF%BE</Name>`) {
		t.Fatalf("name not encoded: %s", w.Body)
	}
	// An empty directory still has <Entries/>.
	w = e.ok(200, "GET", "/shr/d/sub?restype=directory&comp=list", "")
	if !strings.Contains(w.Body.String(), "<Entries></Entries>") {
		t.Fatalf("empty listing: %s", w.Body)
	}
	e.fails(azerr.OutOfRangeQueryParameterValue, "GET", "/shr/d?restype=directory&comp=list&maxresults=0")
	e.fails(azerr.InvalidQueryParameterValue, "GET", "/shr/d?restype=directory&comp=list&include=Foo")
	e.fails(azerr.InvalidHeaderValue, "GET", "/shr/d?restype=directory&comp=list", "x-ms-file-extended-info", "maybe")
	e.fails(azerr.ResourceNotFound, "GET", "/shr/d/z%EF%BF%BE?restype=directory&comp=list")
}

// Renaming a directory rewrites its record and ID index only; its
// children keep their keys and follow it.
func TestRenameDirectoryMovesOneRecord(t *testing.T) {
	e := newDTEnv(t)
	e.ok(201, "PUT", "/shr?restype=share", "")
	e.ok(201, "PUT", "/shr/a?restype=directory", "")
	e.ok(201, "PUT", "/shr/a/b?restype=directory", "")
	e.ok(201, "PUT", "/shr/t?restype=directory", "")
	e.mkfile("shr/a/b/f", "data")
	a := e.entryAt("shr", "a")
	b := e.entryAt("shr", "a/b")
	count := func(prefix []byte) int {
		n := 0
		err := e.s.store.View(context.Background(), func(tx kv.Tx) error {
			return tx.Scan(prefix, kv.PrefixEnd(prefix), 0, false, func(_, _ []byte) bool { n++; return true })
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	entries, ids := count(entriesPrefix(dtAcct, "shr", "")), count(idsPrefix(dtAcct, "shr", ""))
	e.clk.Advance(time.Second)
	w := e.ok(200, "PUT", "/shr/t/A2?restype=directory&comp=rename", "", "x-ms-file-rename-source", "http://h/acct/shr/a")
	if w.Header().Get("x-ms-file-id") != FormatID(a.ID) || w.Header().Get("ETag") == a.ETag {
		t.Fatalf("response headers %v", w.Header())
	}
	if n, m := count(entriesPrefix(dtAcct, "shr", "")), count(idsPrefix(dtAcct, "shr", "")); n != entries || m != ids {
		t.Fatalf("records %d→%d, ids %d→%d", entries, n, ids, m)
	}
	if e.entryAt("shr", "a") != nil {
		t.Fatal("source still there")
	}
	moved := e.entryAt("shr", "t/A2")
	tdir := e.entryAt("shr", "t")
	if moved == nil || moved.ID != a.ID || moved.Parent != tdir.ID || moved.Name != "A2" || !moved.SMB.Created.Equal(a.SMB.Created) {
		t.Fatalf("moved %+v", moved)
	}
	if x := e.entryAt("shr", "t/a2/b"); x == nil || x.ID != b.ID || x.ETag != b.ETag {
		t.Fatalf("child after move: %+v", x)
	}
	err := e.s.store.View(context.Background(), func(tx kv.Tx) error {
		x, err := loadByID(tx, dtAcct, "shr", "", a.ID)
		if err != nil {
			return err
		}
		if x == nil || x.Parent != tdir.ID {
			return fmt.Errorf("id index points at %+v", x)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Into its own subtree, directly or deeper.
	e.fails(azerr.InvalidInput, "PUT", "/shr/t/A2/x?restype=directory&comp=rename", "x-ms-file-rename-source", "/acct/shr/t/a2")
	e.fails(azerr.InvalidInput, "PUT", "/shr/t/A2/b/x?restype=directory&comp=rename", "x-ms-file-rename-source", "/acct/shr/t")
	// Onto the share root.
	e.fails(azerr.ResourceAlreadyExists, "PUT", "/shr?restype=directory&comp=rename", "x-ms-file-rename-source", "/acct/shr/t")
}

// Replacing a file by rename releases its data; the source's data keeps
// one reference.
func TestRenameReplaceReleasesData(t *testing.T) {
	e := newDTEnv(t)
	e.ok(201, "PUT", "/shr?restype=share", "")
	e.mkfile("shr/src", "source bytes")
	e.mkfile("shr/dst", "destination bytes")
	src, dst := e.entryAt("shr", "src"), e.entryAt("shr", "dst")
	before := e.refs()
	for _, p := range append(partRefs(src), partRefs(dst)...) {
		if before[p] != 1 {
			t.Fatalf("item %s has %d references before", p, before[p])
		}
	}
	e.fails(azerr.ResourceAlreadyExists, "PUT", "/shr/dst?comp=rename", "x-ms-file-rename-source", "/acct/shr/src")
	e.ok(200, "PUT", "/shr/dst?comp=rename", "", "x-ms-file-rename-source", "/acct/shr/src", "x-ms-file-rename-replace-if-exists", "true")
	after := e.refs()
	for _, p := range partRefs(src) {
		if after[p] != 1 {
			t.Fatalf("source item %s has %d references", p, after[p])
		}
	}
	for _, p := range partRefs(dst) {
		if after[p] != 0 {
			t.Fatalf("replaced item %s has %d references", p, after[p])
		}
	}
	if x := e.entryAt("shr", "dst"); x == nil || x.ID != src.ID || e.entryAt("shr", "src") != nil {
		t.Fatalf("after replace: %+v", x)
	}
}

// partRefs are the data item ids an entry references (as the "x" keys
// name them).
func partRefs(e *entry) []string {
	var out []string
	for _, p := range e.Parts {
		if p.ID != "" {
			out = append(out, p.ID)
		}
	}
	return out
}

// List Handles XML parses into azfile's types; paths and parents are
// the current ones.
func TestHandleXMLParsesInSDK(t *testing.T) {
	e := newDTEnv(t)
	e.ok(201, "PUT", "/shr?restype=share", "")
	e.ok(201, "PUT", "/shr/d?restype=directory", "")
	e.mkfile("shr/d/f", "x")
	f := e.entryAt("shr", "d/f")
	d := e.entryAt("shr", "d")
	now := e.clk.Now()
	var h handle.Handle
	err := e.s.store.Update(context.Background(), func(tx kv.Tx) (err error) {
		if err := handle.Heartbeat(tx, now, "t", now.Add(time.Hour)); err != nil {
			return err
		}
		h, err = handle.Open(tx, now, handle.OpenRequest{Account: dtAcct, Share: "shr", FileID: FormatID(f.ID), ParentID: "stale",
			Path: "stale/path", SessionID: "77", ClientIP: "10.1.2.3:445", Access: handle.Read | handle.Delete,
			ShareAccess: handle.ShareAll, Owner: "t"})
		if err != nil {
			return err
		}
		_, err = handle.Reconnect(tx, now.Add(time.Minute), dtAcct, "shr", h.FileID, h.HandleID, handle.ReconnectRequest{Owner: "t", SessionID: "78", ClientIP: "10.1.2.4:445"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	w := e.ok(200, "GET", "/shr/d?comp=listhandles", "", "x-ms-recursive", "true")
	var got directory.ListHandlesResponse
	if err := xml.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, w.Body)
	}
	if len(got.Handles) != 1 || got.NextMarker == nil || *got.NextMarker != "" {
		t.Fatalf("listing: %s", w.Body)
	}
	x := got.Handles[0]
	if *x.ID != h.HandleID || *x.Path != "d/f" || *x.FileID != FormatID(f.ID) || *x.ParentID != FormatID(d.ID) ||
		*x.SessionID != "78" || *x.ClientIP != "10.1.2.4:445" || !x.OpenTime.Equal(now.Truncate(time.Second)) ||
		x.LastReconnectTime == nil || !x.LastReconnectTime.Equal(now.Add(time.Minute).Truncate(time.Second)) ||
		len(x.AccessRightList) != 2 || string(*x.AccessRightList[0]) != "Read" || string(*x.AccessRightList[1]) != "Delete" {
		t.Fatalf("handle: %s", w.Body)
	}
	// The share root lists handles without restype (the SDK's root
	// directory client sends none).
	w = e.ok(200, "GET", "/shr?comp=listhandles", "", "x-ms-recursive", "true")
	if !strings.Contains(w.Body.String(), "<HandleId>"+h.HandleID+"</HandleId>") {
		t.Fatalf("root listing: %s", w.Body)
	}
	// Force close; the marker of an unrelated file is refused.
	e.fails(azerr.MissingRequiredHeader, "PUT", "/shr/d/f?comp=forceclosehandles")
	w = e.ok(200, "PUT", "/shr?comp=forceclosehandles", "", "x-ms-handle-id", "*", "x-ms-recursive", "true")
	if w.Header().Get("x-ms-number-of-handles-closed") != "1" || w.Header().Get("x-ms-number-of-handles-failed") != "0" || w.Header().Get("x-ms-marker") != "" {
		t.Fatalf("force close headers %v", w.Header())
	}
	m := handle.EncodeMarker(handle.Position{FileID: "123", HandleID: "1"})
	e.fails(azerr.InvalidQueryParameterValue, "GET", "/shr/d/f?comp=listhandles&marker="+m)
	// A snapshot has no handles.
	w = e.ok(201, "PUT", "/shr?restype=share&comp=snapshot", "")
	snap := w.Header().Get("x-ms-snapshot")
	w = e.ok(200, "GET", "/shr/d?comp=listhandles&sharesnapshot="+snap, "")
	if !strings.Contains(w.Body.String(), "<Entries></Entries>") {
		t.Fatalf("snapshot listing: %s", w.Body)
	}
}

// Force Close Handles closes at most forceCloseBatch handles per call
// and resumes at its marker.
func TestForceCloseBatches(t *testing.T) {
	e := newDTEnv(t)
	e.ok(201, "PUT", "/shr?restype=share", "")
	e.mkfile("shr/f", "x")
	f := e.entryAt("shr", "f")
	now := e.clk.Now()
	defer func(n int) { forceCloseBatch = n }(forceCloseBatch)
	forceCloseBatch = 4
	n := forceCloseBatch + 3
	err := e.s.store.Update(context.Background(), func(tx kv.Tx) error {
		if err := handle.Heartbeat(tx, now, "t", now.Add(time.Hour)); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if _, err := handle.Open(tx, now, handle.OpenRequest{Account: dtAcct, Share: "shr", FileID: FormatID(f.ID),
				Access: handle.Read, ShareAccess: handle.ShareAll, Owner: "t"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w := e.ok(200, "PUT", "/shr/f?comp=forceclosehandles", "", "x-ms-handle-id", "*")
	m := w.Header().Get("x-ms-marker")
	if w.Header().Get("x-ms-number-of-handles-closed") != fmt.Sprint(forceCloseBatch) || m == "" {
		t.Fatalf("first batch: %v", w.Header())
	}
	w = e.ok(200, "PUT", "/shr/f?comp=forceclosehandles&marker="+m, "", "x-ms-handle-id", "*")
	if w.Header().Get("x-ms-number-of-handles-closed") != "3" || w.Header().Get("x-ms-marker") != "" {
		t.Fatalf("second batch: %v", w.Header())
	}
}

// Directory responses carry their headers; the root cannot be deleted.
func TestDirectoryHeaders(t *testing.T) {
	e := newDTEnv(t)
	e.fails(azerr.ShareNotFound, "PUT", "/shr/d?restype=directory")
	e.ok(201, "PUT", "/shr?restype=share", "")
	w := e.ok(201, "PUT", "/shr/d?restype=directory", "", "x-ms-meta-a", "1")
	for _, h := range []string{"ETag", "Last-Modified", "x-ms-request-server-encrypted", "x-ms-file-id", "x-ms-file-parent-id",
		"x-ms-file-permission-key", "x-ms-file-attributes", "x-ms-file-creation-time"} {
		if w.Header().Get(h) == "" {
			t.Errorf("create: no %s", h)
		}
	}
	for _, m := range []string{"GET", "HEAD"} {
		for _, q := range []string{"", "&comp=metadata"} {
			w = e.ok(200, m, "/shr/d?restype=directory"+q, "")
			if w.Header().Get("x-ms-meta-a") != "1" || w.Header().Get("x-ms-server-encrypted") != "true" || w.Body.Len() != 0 {
				t.Errorf("%s %s: %v", m, q, w.Header())
			}
		}
	}
	e.ok(200, "GET", "/shr?restype=directory", "")
	e.fails(azerr.InvalidURI, "DELETE", "/shr?restype=directory")
	e.fails(azerr.ResourceAlreadyExists, "PUT", "/shr?restype=directory")
	e.fails(azerr.ShareSnapshotOperationNotSupported, "PUT", "/shr/e?restype=directory&sharesnapshot=2030-01-02T03:04:05.0000000Z")
	e.ok(202, "DELETE", "/shr/d?restype=directory", "")
	if e.entryAt("shr", "d") != nil {
		t.Fatal("deleted directory still there")
	}
}

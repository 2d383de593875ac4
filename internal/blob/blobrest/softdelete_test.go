package blobrest

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// sdEnv drives the Blob service's handlers directly (no HTTP server, no
// signatures), so the fake clock can move freely between requests.
type sdEnv struct {
	t *testing.T
	s *Service
}

func newSDEnv(t *testing.T) (*sdEnv, func(time.Duration)) {
	s, clk := dtService(t)
	e := &sdEnv{t: t, s: s}
	e.ok(http.MethodPut, "/acct/cnt?restype=container", nil, "")
	return e, clk.Advance
}

// do runs one request and returns the recorder and the handler's error.
func (e *sdEnv) do(method, target string, hdr map[string]string, body string) (*httptest.ResponseRecorder, error) {
	e.t.Helper()
	req := httptest.NewRequest(method, "http://127.0.0.1:10000"+target, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	err := e.s.ServeAzure(w, &server.Request{Request: req, Account: "acct", Authenticated: true, Now: e.s.Clock().Now(), Version: "2026-12-06", ID: "t"})
	return w, err
}

func (e *sdEnv) ok(method, target string, hdr map[string]string, body string) *httptest.ResponseRecorder {
	e.t.Helper()
	w, err := e.do(method, target, hdr, body)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, target, err)
	}
	return w
}

func (e *sdEnv) fails(code string, status int, method, target string, hdr map[string]string) {
	e.t.Helper()
	_, err := e.do(method, target, hdr, "")
	ae, ok := azerr.As(err)
	if !ok || ae.Code != code || ae.Status != status {
		e.t.Fatalf("%s %s: got %v, want %d %s", method, target, err, status, code)
	}
}

func (e *sdEnv) policy(on bool, days int, permanent bool) {
	e.t.Helper()
	body := "<StorageServiceProperties><DeleteRetentionPolicy><Enabled>false</Enabled></DeleteRetentionPolicy></StorageServiceProperties>"
	if on {
		body = "<StorageServiceProperties><DeleteRetentionPolicy><Enabled>true</Enabled><Days>" + strconv.Itoa(days) +
			"</Days><AllowPermanentDelete>" + map[bool]string{true: "true", false: "false"}[permanent] + "</AllowPermanentDelete></DeleteRetentionPolicy></StorageServiceProperties>"
	}
	e.ok(http.MethodPut, "/acct?restype=service&comp=properties", nil, body)
}

func (e *sdEnv) put(name, typ, body string) {
	e.t.Helper()
	if typ == blob.BlockBlob {
		// Put Block + Put Block List: the content becomes a shared data
		// item, so the tests can follow its references (a small Put Blob
		// body is embedded in the record instead).
		e.ok(http.MethodPut, "/acct/cnt/"+name+"?comp=block&blockid=YmxrMQ==", nil, body)
		e.ok(http.MethodPut, "/acct/cnt/"+name+"?comp=blocklist", nil, "<BlockList><Latest>YmxrMQ==</Latest></BlockList>")
		return
	}
	hdr := map[string]string{"x-ms-blob-type": typ}
	if typ == blob.PageBlob {
		hdr["x-ms-blob-content-length"] = "512"
	}
	e.ok(http.MethodPut, "/acct/cnt/"+name, hdr, body)
}

func (e *sdEnv) snapshot(name string) string {
	e.t.Helper()
	return e.ok(http.MethodPut, "/acct/cnt/"+name+"?comp=snapshot", nil, "").Header().Get("x-ms-snapshot")
}

func (e *sdEnv) read(name, snap string) string {
	e.t.Helper()
	target := "/acct/cnt/" + name
	if snap != "" {
		target += "?snapshot=" + snap
	}
	return e.ok(http.MethodGet, target, nil, "").Body.String()
}

// list returns "name[@snap][ deleted]" for each item of List Blobs.
func (e *sdEnv) list(include string) []string {
	e.t.Helper()
	w := e.ok(http.MethodGet, "/acct/cnt?restype=container&comp=list&include="+include, nil, "")
	var out struct {
		Blobs []struct {
			Name       string `xml:"Name"`
			Snapshot   string `xml:"Snapshot"`
			Deleted    bool   `xml:"Deleted"`
			Properties struct {
				DeletedTime string `xml:"DeletedTime"`
				Remaining   *int   `xml:"RemainingRetentionDays"`
				LeaseState  string `xml:"LeaseState"`
			} `xml:"Properties"`
		} `xml:"Blobs>Blob"`
	}
	if err := xml.Unmarshal(w.Body.Bytes(), &out); err != nil {
		e.t.Fatal(err)
	}
	var items []string
	for _, b := range out.Blobs {
		s := b.Name
		if b.Snapshot != "" {
			s += "@" + b.Snapshot
		}
		if b.Deleted {
			if b.Properties.DeletedTime == "" || b.Properties.Remaining == nil || b.Properties.LeaseState != "" {
				e.t.Fatalf("deleted item %s: properties %+v", s, b.Properties)
			}
			s += " deleted " + strconv.Itoa(*b.Properties.Remaining)
		} else if b.Properties.DeletedTime != "" || b.Properties.Remaining != nil {
			e.t.Fatalf("live item %s with deletion properties", s)
		}
		items = append(items, s)
	}
	return items
}

// keys returns the decoded keys of one key family, joined with "/".
func (e *sdEnv) keys(family string) []string {
	e.t.Helper()
	var out []string
	err := e.s.Store().View(context.Background(), func(tx kv.Tx) error {
		p := kv.Key(family)
		return tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, _ []byte) bool {
			parts, _ := kv.Split(k)
			out = append(out, strings.Join(parts[1:], "/"))
			return true
		})
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// refs returns the reference count of every data item, by content.
func (e *sdEnv) refs() map[string]uint32 {
	out := map[string]uint32{}
	for _, it := range dtItems(e.t, e.s) {
		out[it.Data] = it.Refs
	}
	return out
}

// sdWant compares the printed forms (fmt prints maps sorted by key).
func sdWant(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
		t.Fatalf("%s: got %s, want %s", what, g, w)
	}
}

// TestSoftDeleteLifecycle follows one blob and its snapshots through soft
// delete, undelete, overwrite and expiry, checking the key ranges and the
// data references at every step.
func TestSoftDeleteLifecycle(t *testing.T) {
	e, advance := newSDEnv(t)
	e.policy(true, 7, false)
	e.put("a", blob.BlockBlob, "v1")
	s1 := e.snapshot("a")
	sdWant(t, "refs", e.refs(), map[string]uint32{"v1": 2})

	// Delete with include: blob and snapshot move to "bd", data kept.
	w := e.ok(http.MethodDelete, "/acct/cnt/a", map[string]string{"x-ms-delete-snapshots": "include"}, "")
	sdWant(t, "delete-type-permanent", w.Header().Get("x-ms-delete-type-permanent"), "false")
	e.fails(azerr.BlobNotFound, 404, http.MethodGet, "/acct/cnt/a", nil)
	e.fails(azerr.BlobNotFound, 404, http.MethodGet, "/acct/cnt/a?snapshot="+s1, nil)
	e.fails(azerr.BlobNotFound, 404, http.MethodDelete, "/acct/cnt/a", nil) // deleting again: 404, expiry unchanged
	sdWant(t, "live keys", e.keys("b"), []string(nil))
	sdWant(t, "deleted keys", e.keys("bd"), []string{"acct/cnt/a/", "acct/cnt/a/" + s1})
	sdWant(t, "expiry index", len(e.keys("bx")), 2)
	sdWant(t, "refs while soft-deleted", e.refs(), map[string]uint32{"v1": 2})
	sdWant(t, "gc queue", dtQueue(t, e.s), []string(nil))
	sdWant(t, "list", e.list(""), []string(nil))
	sdWant(t, "list deleted", e.list("deleted"), []string{"a deleted 6"})
	sdWant(t, "list snapshots", e.list("snapshots"), []string(nil))
	sdWant(t, "list snapshots,deleted", e.list("snapshots,deleted"), []string{"a@" + s1 + " deleted 6", "a deleted 6"})

	// Undelete restores both.
	sdWant(t, "undelete status", e.ok(http.MethodPut, "/acct/cnt/a?comp=undelete", nil, "").Code, 200)
	sdWant(t, "content", e.read("a", ""), "v1")
	sdWant(t, "snapshot content", e.read("a", s1), "v1")
	sdWant(t, "deleted keys after undelete", e.keys("bd"), []string(nil))
	sdWant(t, "expiry index after undelete", e.keys("bx"), []string(nil))
	sdWant(t, "list after undelete", e.list("snapshots,deleted"), []string{"a@" + s1, "a"})
	// Undelete of a live blob with nothing deleted: no change.
	sdWant(t, "undelete no-op", e.ok(http.MethodPut, "/acct/cnt/a?comp=undelete", nil, "").Code, 200)
	e.fails(azerr.BlobNotFound, 404, http.MethodPut, "/acct/cnt/none?comp=undelete", nil)

	// Overwrite keeps the replaced content as a soft-deleted snapshot.
	advance(time.Second)
	e.put("a", blob.BlockBlob, "v2")
	sdWant(t, "content after overwrite", e.read("a", ""), "v2")
	sdWant(t, "refs after overwrite", e.refs(), map[string]uint32{"v1": 2, "v2": 1})
	got := e.list("snapshots,deleted")
	if len(got) != 3 || got[0] != "a@"+s1 || !strings.HasSuffix(got[1], " deleted 6") || got[2] != "a" {
		t.Fatalf("list after overwrite: %v", got)
	}
	s2 := strings.TrimSuffix(strings.TrimPrefix(got[1], "a@"), " deleted 6")
	e.fails(azerr.BlobNotFound, 404, http.MethodGet, "/acct/cnt/a?snapshot="+s2, nil)

	// Delete just the snapshot s1: soft-deleted as well.
	e.ok(http.MethodDelete, "/acct/cnt/a?snapshot="+s1, nil, "")
	sdWant(t, "list snapshots", e.list("snapshots"), []string{"a"})

	// Expiry: invisible at deletion + 7 days, purged by the collector,
	// data freed after the grace period.
	advance(7*24*time.Hour - 2*time.Second)
	sdWant(t, "remaining just before expiry", len(e.list("snapshots,deleted")), 3)
	if n, err := e.s.CollectGarbage(context.Background()); err != nil || n != 0 {
		t.Fatalf("collect before expiry: %d, %v", n, err)
	}
	advance(2 * time.Second)
	sdWant(t, "list at expiry", e.list("snapshots,deleted"), []string{"a"})
	e.fails(azerr.BlobNotFound, 404, http.MethodGet, "/acct/cnt/a?snapshot="+s2, nil)
	sdWant(t, "undelete at expiry", e.ok(http.MethodPut, "/acct/cnt/a?comp=undelete", nil, "").Code, 200)
	sdWant(t, "list after late undelete", e.list("snapshots,deleted"), []string{"a"})
	if n, err := e.s.CollectGarbage(context.Background()); err != nil || n != 0 {
		t.Fatalf("collect at expiry: %d, %v", n, err)
	}
	sdWant(t, "deleted keys after purge", e.keys("bd"), []string(nil))
	sdWant(t, "expiry index after purge", e.keys("bx"), []string(nil))
	sdWant(t, "refs after purge", e.refs(), map[string]uint32{"v1": 0, "v2": 1})
	advance(extent.GCGrace)
	if n, err := e.s.CollectGarbage(context.Background()); err != nil || n != 1 {
		t.Fatalf("collect after grace: %d, %v", n, err)
	}
	sdWant(t, "refs after collection", e.refs(), map[string]uint32{"v2": 1})
}

// TestSoftDeleteRetentionFixedAtDelete: a policy change applies to later
// deletions only; disabling the policy keeps what is retained.
func TestSoftDeleteRetentionFixedAtDelete(t *testing.T) {
	e, advance := newSDEnv(t)
	e.policy(true, 3, false)
	e.put("a", blob.BlockBlob, "a")
	e.ok(http.MethodDelete, "/acct/cnt/a", nil, "")
	e.policy(true, 1, false)
	e.put("b", blob.BlockBlob, "b")
	e.ok(http.MethodDelete, "/acct/cnt/b", nil, "")
	e.policy(false, 0, false)
	sdWant(t, "list", e.list("deleted"), []string{"a deleted 2", "b deleted 0"})
	advance(24 * time.Hour)
	sdWant(t, "after a day", e.list("deleted"), []string{"a deleted 1"})
	if _, err := e.s.CollectGarbage(context.Background()); err != nil {
		t.Fatal(err)
	}
	sdWant(t, "deleted keys", e.keys("bd"), []string{"acct/cnt/a/"})
	// Soft delete off: a new delete is permanent, but "a" can still be
	// restored.
	e.put("c", blob.BlockBlob, "c")
	w := e.ok(http.MethodDelete, "/acct/cnt/c", nil, "")
	sdWant(t, "delete-type-permanent", w.Header().Get("x-ms-delete-type-permanent"), "true")
	e.fails(azerr.BlobNotFound, 404, http.MethodPut, "/acct/cnt/c?comp=undelete", nil)
	e.ok(http.MethodPut, "/acct/cnt/a?comp=undelete", nil, "")
	sdWant(t, "restored", e.read("a", ""), "a")
}

// TestSoftDeleteRecreate: writing a blob over a soft-deleted one turns it
// into a soft-deleted snapshot when the types match and purges the name's
// soft-deleted data when they differ; Put Block settles it too.
func TestSoftDeleteRecreate(t *testing.T) {
	e, advance := newSDEnv(t)
	e.policy(true, 7, false)
	e.put("a", blob.BlockBlob, "old")
	e.ok(http.MethodDelete, "/acct/cnt/a", nil, "")
	advance(time.Second)
	e.put("a", blob.BlockBlob, "new")
	got := e.list("snapshots,deleted")
	if len(got) != 2 || !strings.HasPrefix(got[0], "a@") || !strings.HasSuffix(got[0], " deleted 6") || got[1] != "a" {
		t.Fatalf("list: %v", got)
	}
	e.ok(http.MethodPut, "/acct/cnt/a?comp=undelete", nil, "")
	snap := strings.TrimSuffix(strings.TrimPrefix(got[0], "a@"), " deleted 6")
	sdWant(t, "restored snapshot", e.read("a", snap), "old")
	sdWant(t, "live blob", e.read("a", ""), "new")

	// Another type: the soft-deleted data goes for good.
	e.put("p", blob.BlockBlob, "block")
	s := e.snapshot("p")
	e.ok(http.MethodDelete, "/acct/cnt/p", map[string]string{"x-ms-delete-snapshots": "include"}, "")
	sdWant(t, "refs before", e.refs()["block"], uint32(2))
	e.put("p", blob.PageBlob, "")
	sdWant(t, "list p", e.list("snapshots,deleted")[2:], []string{"p"})
	sdWant(t, "refs after", e.refs()["block"], uint32(0))
	e.fails(azerr.BlobNotFound, 404, http.MethodGet, "/acct/cnt/p?snapshot="+s, nil)

	// Put Block on a soft-deleted block blob.
	e.put("k", blob.BlockBlob, "k1")
	e.ok(http.MethodDelete, "/acct/cnt/k", nil, "")
	advance(time.Second)
	e.ok(http.MethodPut, "/acct/cnt/k?comp=block&blockid=YWFh", nil, "blk")
	got = e.list("snapshots,deleted,uncommittedblobs")
	if len(got) != 5 || !strings.HasPrefix(got[2], "k@") || !strings.HasSuffix(got[2], "deleted 6") || got[3] != "k" {
		t.Fatalf("list after put block: %v", got)
	}
	if k := e.keys("bd"); len(k) != 1 || !strings.HasPrefix(k[0], "acct/cnt/k/2") {
		t.Fatalf("deleted keys: %v", k)
	}
}

// TestSoftDeleteSnapshotsAndPermanentDelete: x-ms-delete-snapshots with
// and without the policy, and deletetype=permanent.
func TestSoftDeleteSnapshotsAndPermanentDelete(t *testing.T) {
	e, _ := newSDEnv(t)
	e.policy(true, 7, false)
	e.put("a", blob.BlockBlob, "a")
	s1 := e.snapshot("a")
	e.fails(azerr.SnapshotsPresent, 409, http.MethodDelete, "/acct/cnt/a", nil)
	e.ok(http.MethodDelete, "/acct/cnt/a", map[string]string{"x-ms-delete-snapshots": "only"}, "")
	sdWant(t, "list", e.list("snapshots,deleted"), []string{"a@" + s1 + " deleted 6", "a"})
	// Soft-deleted snapshots do not block a soft delete of the blob.
	e.ok(http.MethodDelete, "/acct/cnt/a", nil, "")
	e.ok(http.MethodPut, "/acct/cnt/a?comp=undelete", nil, "")
	sdWant(t, "restored", e.list("snapshots"), []string{"a@" + s1, "a"})

	// Permanent delete: only of soft-deleted snapshots, only when allowed.
	permanent := map[string]string{}
	perm := "/acct/cnt/a?deletetype=Permanent&snapshot="
	e.fails(azerr.InvalidOperation, 409, http.MethodDelete, "/acct/cnt/a?deletetype=permanent", permanent)
	e.fails(azerr.InvalidOperation, 409, http.MethodDelete, perm+s1, permanent) // not enabled
	e.policy(true, 7, true)
	e.fails(azerr.InvalidOperation, 409, http.MethodDelete, perm+s1, permanent) // live snapshot
	e.fails(azerr.InvalidQueryParameterValue, 400, http.MethodDelete, "/acct/cnt/a?deletetype=soon&snapshot="+s1, permanent)
	e.ok(http.MethodDelete, "/acct/cnt/a?snapshot="+s1, nil, "")
	w := e.ok(http.MethodDelete, perm+s1, nil, "")
	sdWant(t, "delete-type-permanent", w.Header().Get("x-ms-delete-type-permanent"), "true")
	sdWant(t, "after permanent delete", e.list("snapshots,deleted"), []string{"a"})
	sdWant(t, "refs", e.refs()["a"], uint32(1))
	e.fails(azerr.BlobNotFound, 404, http.MethodDelete, perm+s1, permanent)

	// Policy off: retained soft-deleted snapshots count as snapshots and
	// go with include.
	s2 := e.snapshot("a")
	e.ok(http.MethodDelete, "/acct/cnt/a?snapshot="+s2, nil, "")
	e.policy(false, 0, false)
	e.fails(azerr.SnapshotsPresent, 409, http.MethodDelete, "/acct/cnt/a", nil)
	w = e.ok(http.MethodDelete, "/acct/cnt/a", map[string]string{"x-ms-delete-snapshots": "include"}, "")
	sdWant(t, "delete-type-permanent", w.Header().Get("x-ms-delete-type-permanent"), "true")
	sdWant(t, "all gone", e.keys("bd"), []string(nil))
	sdWant(t, "index gone", e.keys("bx"), []string(nil))
	sdWant(t, "refs", e.refs()["a"], uint32(0))
}

// TestSoftDeleteContainerDelete: deleting the container removes its
// soft-deleted blobs, their index entries and their references.
func TestSoftDeleteContainerDelete(t *testing.T) {
	e, _ := newSDEnv(t)
	e.policy(true, 7, false)
	e.put("a", blob.BlockBlob, "a")
	e.put("a", blob.BlockBlob, "b")
	e.ok(http.MethodDelete, "/acct/cnt/a", nil, "")
	sdWant(t, "deleted keys", len(e.keys("bd")), 2)
	e.ok(http.MethodDelete, "/acct/cnt?restype=container", nil, "")
	// A container this small is reclaimed before the answer
	// (reclaim.Inline): nothing is left for the background.
	if n, err := e.s.ReclaimContainers(context.Background()); err != nil || n != 0 {
		t.Fatalf("background reclaim after the delete: %d steps, %v; want none", n, err)
	}
	sdWant(t, "deleted keys", e.keys("bd"), []string(nil))
	sdWant(t, "index", e.keys("bx"), []string(nil))
	sdWant(t, "refs", e.refs(), map[string]uint32{"a": 0, "b": 0})
}

// TestSoftDeleteListPaging: live and soft-deleted entries merge in order
// across pages, with delimiters.
func TestSoftDeleteListPaging(t *testing.T) {
	e, _ := newSDEnv(t)
	e.policy(true, 7, false)
	for _, n := range []string{"a", "b", "c", "d/1", "d/2", "e/1", "f"} {
		e.put(n, blob.BlockBlob, n)
	}
	for _, n := range []string{"b", "d/1", "d/2", "f"} {
		e.ok(http.MethodDelete, "/acct/cnt/"+n, nil, "")
	}
	var names []string
	marker := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("too many pages")
		}
		w := e.ok(http.MethodGet, "/acct/cnt?restype=container&comp=list&include=deleted&delimiter=/&maxresults=2&marker="+marker, nil, "")
		var out struct {
			Blobs struct {
				Items []struct {
					XMLName xml.Name
					Name    string `xml:"Name"`
					Deleted bool   `xml:"Deleted"`
				} `xml:",any"`
			} `xml:"Blobs"`
			Next string `xml:"NextMarker"`
		}
		if err := xml.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Blobs.Items) > 2 {
			t.Fatalf("page of %d", len(out.Blobs.Items))
		}
		for _, it := range out.Blobs.Items {
			s := it.Name
			if it.XMLName.Local == "BlobPrefix" {
				s += " (prefix)"
			}
			if it.Deleted {
				s += " (deleted)"
			}
			names = append(names, s)
		}
		if out.Next == "" {
			break
		}
		marker = out.Next
	}
	sdWant(t, "pages", names, []string{"a", "b (deleted)", "c", "d/ (prefix)", "e/ (prefix)", "f (deleted)"})
	sdWant(t, "live only", e.list(""), []string{"a", "c", "e/1"})
}

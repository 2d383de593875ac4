package e2e

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/datalakeerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/extent"
)

// deletedPaths lists fs's soft-deleted paths through the SDK's
// NewListDeletedPathsPager (List Blobs showonly=deleted), name -> item.
func deletedPaths(t *testing.T, e *dlEnv, fs *filesystem.Client, opts *filesystem.ListDeletedPathsOptions) (names []string, ids map[string]string, pages int) {
	t.Helper()
	ids = map[string]string{}
	pg := fs.NewListDeletedPathsPager(opts)
	for pg.More() {
		page, err := pg.NextPage(e.ctx)
		must(t, err)
		pages++
		for _, it := range page.Segment.PathItems {
			if it.Deleted == nil || !*it.Deleted || it.DeletionID == nil || *it.DeletionID == "" || it.Properties.DeletedTime == nil {
				t.Fatalf("deleted item %s: %+v", *it.Name, it)
			}
			if d := it.Properties.RemainingRetentionDays; d == nil || *d != 6 {
				t.Fatalf("%s: remaining days %v", *it.Name, d)
			}
			names = append(names, *it.Name)
			ids[*it.Name] = *it.DeletionID
		}
	}
	return names, ids, pages
}

// TestDLSoftDeletedPaths: with Blob soft delete on (the Blob service's
// DeleteRetentionPolicy), a deleted file and a recursively deleted
// directory are kept for the retention days: the SDK's
// NewListDeletedPathsPager lists them with their deletion ids, Path
// Undelete (PUT comp=undelete with x-ms-undelete-source, the Blob API
// on either port, as the SDKs send it to the Blob URL) restores them at
// their paths — a directory with its content — with the Blob API's
// errors (409 BlobAlreadyExists once the name is taken again); at the
// end of the retention they are gone and collected. Path Delete answers
// x-ms-delete-type-permanent and, for a kept path, its x-ms-deletion-id
// (azure-sdk-for-js's recording "undelete file and directory - recreate
// and delete path and undelete the path twice"). Without the policy a
// delete is immediate.
func TestDLSoftDeletedPaths(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("soft")
	mkfile := func(p, body string) {
		t.Helper()
		f := fs.NewFileClient(p)
		_, err := f.Create(e.ctx, nil)
		must(t, err)
		must(t, f.UploadBuffer(e.ctx, []byte(body), nil))
	}
	mkfile("early", "e")
	resp, out := e.raw(http.MethodDelete, "/soft/early?recursive=false", nil, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("x-ms-delete-type-permanent") != "true" || resp.Header.Get("x-ms-deletion-id") != "" {
		t.Fatalf("delete without a policy: %d %s %v", resp.StatusCode, out, resp.Header)
	}
	if names, _, _ := deletedPaths(t, e, fs, nil); len(names) != 0 {
		t.Fatalf("deleted without a policy: %v", names)
	}

	_, err := e.svc.SetProperties(e.ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7))}})
	must(t, err)
	_, err = fs.NewDirectoryClient("d").Create(e.ctx, nil)
	must(t, err)
	mkfile("d/x", "x content")
	mkfile("f", "f content")
	mkfile("g", "g content")
	answered := map[string]string{}
	for _, p := range []string{"f", "g"} {
		dr, err := fs.NewFileClient(p).Delete(e.ctx, nil)
		must(t, err)
		if dr.DeletionID == nil {
			t.Fatalf("delete %s: no x-ms-deletion-id", p)
		}
		answered[p] = *dr.DeletionID
	}
	resp, out = e.raw(http.MethodDelete, "/soft/d?recursive=true", nil, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("x-ms-delete-type-permanent") != "false" {
		t.Fatalf("delete d: %d %s %v", resp.StatusCode, out, resp.Header)
	}
	answered["d"] = resp.Header.Get("x-ms-deletion-id")
	_, err = fs.NewFileClient("d/x").GetProperties(e.ctx, nil)
	wantDL(t, err, 404, string(datalakeerror.PathNotFound))
	names, ids, _ := deletedPaths(t, e, fs, nil)
	if strings.Join(names, ",") != "d,f,g" {
		t.Fatalf("deleted paths: %v", names)
	}
	for p, id := range answered {
		if ids[p] != id {
			t.Fatalf("%s: deletion id %q answered, %q listed", p, id, ids[p])
		}
	}
	if _, _, pages := deletedPaths(t, e, fs, &filesystem.ListDeletedPathsOptions{MaxResults: to.Ptr(int32(2))}); pages != 2 {
		t.Fatalf("pages of 2: %d", pages)
	}
	if got, _, _ := deletedPaths(t, e, fs, &filesystem.ListDeletedPathsOptions{Prefix: to.Ptr("f")}); len(got) != 1 {
		t.Fatalf("prefix f: %v", got)
	}

	// Path Undelete on the dfs port restores the directory and what it
	// held, with its creation time.
	resp, out = e.raw(http.MethodPut, "/soft/d?comp=undelete", map[string]string{"x-ms-undelete-source": "?deletionid=" + ids["d"]}, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("x-ms-resource-type") != "directory" || resp.Header.Get("x-ms-creation-time") == "" {
		t.Fatalf("undelete d: %d %s %v", resp.StatusCode, out, resp.Header)
	}
	rd, err := fs.NewFileClient("d/x").DownloadStream(e.ctx, nil)
	must(t, err)
	got, _ := io.ReadAll(rd.Body)
	rd.Body.Close()
	if string(got) != "x content" {
		t.Fatalf("d/x after undelete: %q", got)
	}
	// On the Blob endpoint, as the C++ SDK sends it.
	req, err := http.NewRequest(http.MethodPut, e.app.BlobURL+"/soft/f?comp=undelete", bytes.NewReader(nil))
	must(t, err)
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2023-11-03")
	req.Header.Set("x-ms-undelete-source", "?deletionid="+ids["f"])
	signRaw(req)
	bresp, err := e.hc.Do(req)
	must(t, err)
	bresp.Body.Close()
	if bresp.StatusCode != http.StatusOK || bresp.Header.Get("x-ms-resource-type") != "file" {
		t.Fatalf("undelete f on the Blob endpoint: %d %v", bresp.StatusCode, bresp.Header)
	}
	if p, err := fs.NewFileClient("f").GetProperties(e.ctx, nil); err != nil || *p.ContentLength != int64(len("f content")) {
		t.Fatalf("f after undelete: %v %v", p, err)
	}
	// The Blob API's errors: the name taken again 409 BlobAlreadyExists,
	// an unknown deletion 404 BlobNotFound, a filesystem that does not
	// exist 404 ContainerNotFound in XML (azure-sdk-for-net's recorded
	// FileSystemClientTests.UndeletePathAsync_Error).
	mkfile("g", "new g")
	resp, out = e.raw(http.MethodPut, "/soft/g?comp=undelete", map[string]string{"x-ms-undelete-source": "?deletionid=" + ids["g"]}, nil)
	if resp.StatusCode != http.StatusConflict || resp.Header.Get("x-ms-error-code") != "BlobAlreadyExists" {
		t.Fatalf("undelete onto a live g: %d %s", resp.StatusCode, out)
	}
	resp, out = e.raw(http.MethodPut, "/soft/g?comp=undelete", map[string]string{"x-ms-undelete-source": "?deletionid=1"}, nil)
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("x-ms-error-code") != "BlobNotFound" {
		t.Fatalf("undelete of an unknown deletion: %d %s", resp.StatusCode, out)
	}
	resp, out = e.raw(http.MethodPut, "/nosuchfs/d?comp=undelete", map[string]string{"x-ms-undelete-source": "?deletionid=132502020374991873"}, nil)
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("x-ms-error-code") != "ContainerNotFound" || !strings.Contains(string(out), "<Code>ContainerNotFound</Code>") {
		t.Fatalf("undelete in a missing filesystem: %d %s", resp.StatusCode, out)
	}
	resp, out = e.raw(http.MethodPut, "/soft/g?comp=undelete", map[string]string{"x-ms-undelete-source": "g"}, nil)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "InvalidHeaderValue" {
		t.Fatalf("undelete without a deletion id: %d %s", resp.StatusCode, out)
	}

	// The end of the retention: the collector removes the deleted paths
	// and frees their content. The SDK signs with the real time and the
	// server refuses more than 15 minutes of skew, so the clock moves
	// only around direct collector calls.
	_, err = fs.NewDirectoryClient("d").Delete(e.ctx, nil)
	must(t, err)
	deletedAt := e.clock.Now()
	// collect runs the collector at at, and again after the data items'
	// grace (extent.GCGrace): on a store only this server uses the first
	// run frees what it releases at once (extent.TrackViews), elsewhere
	// the second does; the sum counts each item once.
	collect := func(at time.Time) int {
		t.Helper()
		defer e.clock.Set(time.Now())
		n := 0
		for _, when := range []time.Time{at, at.Add(extent.GCGrace + time.Second)} {
			e.clock.Set(when)
			m, err := e.app.Blob.CollectGarbage(e.ctx)
			must(t, err)
			n += m
		}
		return n
	}
	const week = 7 * 24 * time.Hour
	// During the retention only "early" goes: deleted for good before the
	// policy was set, its content is handed back by the first collection.
	if n := collect(deletedAt.Add(week - time.Hour)); n != 1 {
		t.Fatalf("freed %d items during the retention, want 1 (early)", n)
	}
	if names, _, _ := deletedPaths(t, e, fs, nil); len(names) != 2 {
		t.Fatalf("deleted paths during the retention: %v", names)
	}
	if n := collect(deletedAt.Add(week + time.Second)); n != 2 { // d/x and the deleted g
		t.Fatalf("collected %d data items after the retention, want 2", n)
	}
	if names, _, _ := deletedPaths(t, e, fs, nil); len(names) != 0 {
		t.Fatalf("deleted paths after the retention: %v", names)
	}
}

package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// sdPolicy sets the account's blob soft-delete policy through Set Blob
// Service Properties.
func (e *env) sdPolicy(enabled bool, days int32, permanent bool) {
	e.t.Helper()
	p := &service.RetentionPolicy{Enabled: to.Ptr(enabled)}
	if enabled {
		p.Days = to.Ptr(days)
		p.AllowPermanentDelete = to.Ptr(permanent)
	}
	_, err := e.c.ServiceClient().SetProperties(e.ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: p})
	must(e.t, err)
	got, err := e.c.ServiceClient().GetProperties(e.ctx, nil)
	must(e.t, err)
	if r := got.DeleteRetentionPolicy; r == nil || *r.Enabled != enabled || (enabled && *r.Days != days) {
		e.t.Fatalf("retention policy not stored: %+v", r)
	}
}

func (e *env) sdBlob(cont, name string) *blob.Client {
	return e.c.ServiceClient().NewContainerClient(cont).NewBlobClient(name)
}

func (e *env) sdUpload(cont, name string, data []byte, meta map[string]*string) {
	e.t.Helper()
	_, err := e.c.UploadBuffer(e.ctx, cont, name, data, &azblob.UploadBufferOptions{Metadata: meta})
	must(e.t, err)
}

func (e *env) sdRead(bc *blob.Client) ([]byte, blob.DownloadStreamResponse) {
	e.t.Helper()
	r, err := bc.DownloadStream(e.ctx, nil)
	must(e.t, err)
	defer r.Body.Close()
	data, err := io.ReadAll(r.Body)
	must(e.t, err)
	return data, r
}

// sdDelete deletes and returns the x-ms-delete-type-permanent header.
func (e *env) sdDelete(bc *blob.Client, o *blob.DeleteOptions) string {
	e.t.Helper()
	var raw *http.Response
	_, err := bc.Delete(policy.WithCaptureResponse(e.ctx, &raw), o)
	must(e.t, err)
	if raw.StatusCode != http.StatusAccepted {
		e.t.Fatalf("delete status %d", raw.StatusCode)
	}
	return raw.Header.Get("x-ms-delete-type-permanent")
}

// sdList lists every blob of cont with the SDK pager.
func (e *env) sdList(cont string, inc container.ListBlobsInclude) []*container.BlobItem {
	e.t.Helper()
	var out []*container.BlobItem
	pager := e.c.ServiceClient().NewContainerClient(cont).NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: inc})
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(e.t, err)
		out = append(out, page.Segment.BlobItems...)
	}
	return out
}

// sdNames renders a listing as "name[@snapshot][ (deleted)]" entries.
func sdNames(items []*container.BlobItem) string {
	var s []string
	for _, it := range items {
		n := *it.Name
		if it.Snapshot != nil && *it.Snapshot != "" {
			n += "@" + *it.Snapshot
		}
		if it.Deleted != nil && *it.Deleted {
			n += " (deleted)"
		}
		s = append(s, n)
	}
	return strings.Join(s, ", ")
}

// sdMeta looks a metadata value up by name, ignoring case (the SDK
// returns header metadata with canonicalised names).
func sdMeta(m map[string]*string, name string) string {
	for k, v := range m {
		if strings.EqualFold(k, name) && v != nil {
			return *v
		}
	}
	return ""
}

func sdWantList(t *testing.T, what string, items []*container.BlobItem, want string) {
	t.Helper()
	if got := sdNames(items); got != want {
		t.Fatalf("%s: got [%s], want [%s]", what, got, want)
	}
}

func TestSoftDeleteBlob(t *testing.T) {
	e := start(t)
	e.container("softdel")
	e.sdPolicy(true, 7, false)
	data := bytes.Repeat([]byte("soft"), 100)
	e.sdUpload("softdel", "doc", data, map[string]*string{"owner": to.Ptr("ann")})
	bc := e.sdBlob("softdel", "doc")
	before, err := bc.GetProperties(e.ctx, nil)
	must(t, err)
	deletedAt := e.clock.Now()

	if got := e.sdDelete(bc, nil); got != "false" {
		t.Fatalf("x-ms-delete-type-permanent: %q", got)
	}
	_, err = bc.GetProperties(e.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = bc.DownloadStream(e.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = bc.SetMetadata(e.ctx, map[string]*string{"x": to.Ptr("y")}, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = bc.Delete(e.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)

	sdWantList(t, "plain listing", e.sdList("softdel", container.ListBlobsInclude{}), "")
	items := e.sdList("softdel", container.ListBlobsInclude{Deleted: true, Metadata: true})
	sdWantList(t, "include=deleted", items, "doc (deleted)")
	p := items[0].Properties
	if p.DeletedTime == nil || !p.DeletedTime.Equal(deletedAt.Truncate(time.Second)) {
		t.Fatalf("DeletedTime %v, want %v", p.DeletedTime, deletedAt)
	}
	if p.RemainingRetentionDays == nil || *p.RemainingRetentionDays != 6 {
		t.Fatalf("RemainingRetentionDays %v, want 6", p.RemainingRetentionDays)
	}
	// Listings carry blob ETags unquoted, as Azure sends them.
	if `"`+*p.ETag+`"` != *before.ETag || *p.ContentLength != int64(len(data)) || p.LeaseStatus != nil {
		t.Fatalf("deleted item properties: etag %v length %v lease %v", *p.ETag, *p.ContentLength, p.LeaseStatus)
	}
	if sdMeta(items[0].Metadata, "owner") != "ann" {
		t.Fatalf("deleted item metadata %v", items[0].Metadata)
	}

	var raw *http.Response
	_, err = bc.Undelete(policy.WithCaptureResponse(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != http.StatusOK {
		t.Fatalf("undelete status %d", raw.StatusCode)
	}
	got, r := e.sdRead(bc)
	if !bytes.Equal(got, data) || sdMeta(r.Metadata, "owner") != "ann" {
		t.Fatalf("restored: %d bytes, metadata %v", len(got), r.Metadata)
	}
	if *r.ETag != *before.ETag || !r.LastModified.Equal(*before.LastModified) {
		t.Fatalf("restored ETag/Last-Modified changed: %v %v", *r.ETag, r.LastModified)
	}
	items = e.sdList("softdel", container.ListBlobsInclude{Deleted: true})
	sdWantList(t, "after undelete", items, "doc")
	if items[0].Properties.DeletedTime != nil || items[0].Properties.RemainingRetentionDays != nil {
		t.Fatalf("restored blob still has deletion properties")
	}
	// Undelete of a live blob with nothing deleted succeeds and changes
	// nothing; of a name with nothing at all it is 404.
	_, err = bc.Undelete(e.ctx, nil)
	must(t, err)
	_, err = e.sdBlob("softdel", "never").Undelete(e.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	_, err = e.sdBlob("nocont", "doc").Undelete(e.ctx, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
}

func TestSoftDeleteLeasedBlob(t *testing.T) {
	e := start(t)
	e.container("softdel")
	e.sdPolicy(true, 3, false)
	e.sdUpload("softdel", "leased", []byte("x"), nil)
	bc := e.sdBlob("softdel", "leased")
	id := "00000000-1111-2222-3333-444444444444"
	lc, err := lease.NewBlobClient(bc, &lease.BlobClientOptions{LeaseID: to.Ptr(id)})
	must(t, err)
	_, err = lc.AcquireLease(e.ctx, -1, nil)
	must(t, err)
	_, err = bc.Delete(e.ctx, nil)
	wantCode(t, err, 412, bloberror.LeaseIDMissing)
	e.sdDelete(bc, &blob.DeleteOptions{AccessConditions: &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: to.Ptr(id)}}})
	items := e.sdList("softdel", container.ListBlobsInclude{Deleted: true})
	sdWantList(t, "deleted", items, "leased (deleted)")
	if *items[0].Properties.RemainingRetentionDays != 2 {
		t.Fatalf("RemainingRetentionDays %d", *items[0].Properties.RemainingRetentionDays)
	}
	// Undelete brings the blob back without its lease.
	_, err = bc.Undelete(e.ctx, nil)
	must(t, err)
	props, err := bc.GetProperties(e.ctx, nil)
	must(t, err)
	if string(*props.LeaseState) != "available" {
		t.Fatalf("lease state after undelete: %s", *props.LeaseState)
	}
	_, err = bc.SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v")}, nil)
	must(t, err)
}

func TestSoftDeleteSnapshots(t *testing.T) {
	e := start(t)
	e.container("softdel")
	e.sdPolicy(true, 7, false)
	e.sdUpload("softdel", "b", []byte("one"), nil)
	bc := e.sdBlob("softdel", "b")
	s1, err := bc.CreateSnapshot(e.ctx, nil)
	must(t, err)
	e.sdUpload("softdel", "b", []byte("two"), nil) // the overwritten "one" is kept as a soft-deleted snapshot
	s2, err := bc.CreateSnapshot(e.ctx, nil)
	must(t, err)

	all := e.sdList("softdel", container.ListBlobsInclude{Snapshots: true, Deleted: true})
	if len(all) != 4 || *all[0].Snapshot != *s1.Snapshot || *all[1].Deleted != true || *all[2].Snapshot != *s2.Snapshot || *all[3].Name != "b" {
		t.Fatalf("after overwrite: [%s]", sdNames(all))
	}
	overwritten := *all[1].Snapshot
	sdWantList(t, "snapshots only", e.sdList("softdel", container.ListBlobsInclude{Snapshots: true}), "b@"+*s1.Snapshot+", b@"+*s2.Snapshot+", b")
	sdWantList(t, "deleted only", e.sdList("softdel", container.ListBlobsInclude{Deleted: true}), "b")
	snapOf := func(s string) *blob.Client {
		c, err := bc.WithSnapshot(s)
		must(t, err)
		return c
	}
	_, err = snapOf(overwritten).GetProperties(e.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)

	// A blob with snapshots needs x-ms-delete-snapshots.
	_, err = bc.Delete(e.ctx, nil)
	wantCode(t, err, 409, bloberror.SnapshotsPresent)
	// Soft-delete one snapshot, then the blob with the rest.
	if got := e.sdDelete(snapOf(*s1.Snapshot), nil); got != "false" {
		t.Fatalf("snapshot delete permanent=%q", got)
	}
	_, err = snapOf(*s1.Snapshot).GetProperties(e.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	sdWantList(t, "snapshot deleted", e.sdList("softdel", container.ListBlobsInclude{Snapshots: true}), "b@"+*s2.Snapshot+", b")
	e.sdDelete(bc, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)})
	sdWantList(t, "all deleted", e.sdList("softdel", container.ListBlobsInclude{Snapshots: true}), "")
	want := fmt.Sprintf("b@%s (deleted), b@%s (deleted), b@%s (deleted), b (deleted)", *s1.Snapshot, overwritten, *s2.Snapshot)
	sdWantList(t, "include snapshots,deleted", e.sdList("softdel", container.ListBlobsInclude{Snapshots: true, Deleted: true}), want)

	// Undelete restores the blob and every snapshot.
	_, err = bc.Undelete(e.ctx, nil)
	must(t, err)
	want = fmt.Sprintf("b@%s, b@%s, b@%s, b", *s1.Snapshot, overwritten, *s2.Snapshot)
	sdWantList(t, "restored", e.sdList("softdel", container.ListBlobsInclude{Snapshots: true, Deleted: true}), want)
	for s, content := range map[string]string{*s1.Snapshot: "one", overwritten: "one", *s2.Snapshot: "two", "": "two"} {
		c := bc
		if s != "" {
			c = snapOf(s)
		}
		if got, _ := e.sdRead(c); string(got) != content {
			t.Fatalf("snapshot %q: %q, want %q", s, got, content)
		}
	}

	// A new blob written over a soft-deleted one: the soft-deleted blob
	// becomes a soft-deleted snapshot, restored by Undelete while the new
	// blob stays.
	e.sdUpload("softdel", "n", []byte("first"), nil)
	nc := e.sdBlob("softdel", "n")
	e.sdDelete(nc, nil)
	e.clock.Advance(time.Second)
	e.sdUpload("softdel", "n", []byte("second"), nil)
	items := e.sdList("softdel", container.ListBlobsInclude{Snapshots: true, Deleted: true, Metadata: true})
	items = items[len(items)-2:]
	if sdNames(items[:1]) != "n@"+*items[0].Snapshot+" (deleted)" || sdNames(items[1:]) != "n" {
		t.Fatalf("after recreate: [%s]", sdNames(items))
	}
	_, err = nc.Undelete(e.ctx, nil)
	must(t, err)
	c, err := nc.WithSnapshot(*items[0].Snapshot)
	must(t, err)
	if got, _ := e.sdRead(c); string(got) != "first" {
		t.Fatalf("old blob as snapshot: %q", got)
	}
	if got, _ := e.sdRead(nc); string(got) != "second" {
		t.Fatalf("new blob: %q", got)
	}
}

func TestSoftDeletePermanentDelete(t *testing.T) {
	e := start(t)
	e.container("softdel")
	e.sdPolicy(true, 7, false)
	e.sdUpload("softdel", "p", []byte("p"), nil)
	bc := e.sdBlob("softdel", "p")
	s, err := bc.CreateSnapshot(e.ctx, nil)
	must(t, err)
	sc, err := bc.WithSnapshot(*s.Snapshot)
	must(t, err)
	permanent := &blob.DeleteOptions{BlobDeleteType: to.Ptr(blob.DeleteTypePermanent)}
	_, err = sc.Delete(e.ctx, permanent)
	wantCode(t, err, 409, "") // not enabled
	e.sdDelete(sc, nil)
	_, err = sc.Delete(e.ctx, permanent)
	wantCode(t, err, 409, "") // still not enabled
	e.sdPolicy(true, 7, true)
	_, err = bc.Delete(e.ctx, permanent)
	wantCode(t, err, 409, "") // only snapshots or versions
	if got := e.sdDelete(sc, permanent); got != "true" {
		t.Fatalf("permanent delete header %q", got)
	}
	_, err = bc.Undelete(e.ctx, nil)
	must(t, err)
	sdWantList(t, "after permanent delete", e.sdList("softdel", container.ListBlobsInclude{Snapshots: true, Deleted: true}), "p")
}

func TestSoftDeleteDisabled(t *testing.T) {
	e := start(t)
	e.container("softdel")
	e.sdUpload("softdel", "h", []byte("hard"), nil)
	bc := e.sdBlob("softdel", "h")
	if got := e.sdDelete(bc, nil); got != "true" {
		t.Fatalf("x-ms-delete-type-permanent: %q", got)
	}
	sdWantList(t, "include=deleted", e.sdList("softdel", container.ListBlobsInclude{Deleted: true, Snapshots: true}), "")
	_, err := bc.Undelete(e.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)

	// Enabled, then disabled: deletes are permanent again, what was
	// soft-deleted meanwhile stays restorable.
	e.sdPolicy(true, 7, false)
	e.sdUpload("softdel", "kept", []byte("kept"), nil)
	e.sdDelete(e.sdBlob("softdel", "kept"), nil)
	e.sdPolicy(false, 0, false)
	e.sdUpload("softdel", "gone", []byte("gone"), nil)
	if got := e.sdDelete(e.sdBlob("softdel", "gone"), nil); got != "true" {
		t.Fatalf("x-ms-delete-type-permanent after disabling: %q", got)
	}
	sdWantList(t, "after disabling", e.sdList("softdel", container.ListBlobsInclude{Deleted: true}), "kept (deleted)")
	_, err = e.sdBlob("softdel", "kept").Undelete(e.ctx, nil)
	must(t, err)
	if got, _ := e.sdRead(e.sdBlob("softdel", "kept")); string(got) != "kept" {
		t.Fatalf("restored %q", got)
	}
}

// TestSoftDeleteExpiry: after the retention period the collector purges
// soft-deleted blobs and their data is freed. The SDK signs with the real
// time and the server rejects more than 15 minutes of skew, so the clock
// is moved forward only around direct collector calls and set back to the
// real time before the next SDK call.
func TestSoftDeleteExpiry(t *testing.T) {
	e := start(t)
	e.container("softdel")
	e.sdPolicy(true, 1, false)
	small := []byte("small soft-deleted blob")
	large := bytes.Repeat([]byte("L"), 100<<10) // a chunk file, not embedded in the record
	e.sdUpload("softdel", "small", small, nil)
	e.sdUpload("softdel", "large", large, nil)
	e.sdUpload("softdel", "live", []byte("stays"), nil)
	deletedAt := e.clock.Now()
	e.sdDelete(e.sdBlob("softdel", "small"), nil)
	e.sdDelete(e.sdBlob("softdel", "large"), nil)
	sdWantList(t, "soft-deleted", e.sdList("softdel", container.ListBlobsInclude{Deleted: true}), "large (deleted), live, small (deleted)")

	collect := func(at time.Time) int {
		t.Helper()
		e.clock.Set(at)
		defer e.clock.Set(time.Now())
		n, err := e.app.Blob.CollectGarbage(e.ctx)
		must(t, err)
		return n
	}
	const day = 24 * time.Hour
	// Within the retention period nothing is purged or freed, however
	// long after the collector's grace period.
	if n := collect(deletedAt.Add(day - time.Minute)); n != 0 {
		t.Fatalf("freed %d items before expiry", n)
	}
	sdWantList(t, "before expiry", e.sdList("softdel", container.ListBlobsInclude{Deleted: true}), "large (deleted), live, small (deleted)")
	// At expiry the records are purged. Only the large blob's chunk is a
	// data item (the small body was embedded in its record and went with
	// it): on a store only this server uses it is freed in the same pass
	// (extent.TrackViews); on PostgreSQL, shared with other front ends,
	// after the grace period (10 minutes).
	atExpiry, afterGrace := 1, 0
	if sharedStore() {
		atExpiry, afterGrace = 0, 1
	}
	if n := collect(deletedAt.Add(day)); n != atExpiry {
		t.Fatalf("freed %d items at expiry, want %d", n, atExpiry)
	}
	if n := collect(deletedAt.Add(day + 10*time.Minute)); n != afterGrace {
		t.Fatalf("freed %d items after the grace period, want %d", n, afterGrace)
	}
	if n := collect(deletedAt.Add(day + 20*time.Minute)); n != 0 {
		t.Fatalf("second pass freed %d", n)
	}
	sdWantList(t, "after purge", e.sdList("softdel", container.ListBlobsInclude{Deleted: true}), "live")
	_, err := e.sdBlob("softdel", "small").Undelete(e.ctx, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	if got, _ := e.sdRead(e.sdBlob("softdel", "live")); string(got) != "stays" {
		t.Fatalf("live blob: %q", got)
	}
}

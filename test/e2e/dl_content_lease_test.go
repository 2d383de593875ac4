package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	bloblease "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/datalakeerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/lease"
	"github.com/cerulean-storage/cerulean/internal/app"
)

const (
	leaseA = "c3b5a0e2-6a43-4d2f-9a51-0c7f6f0d1a11"
	leaseB = "5d0e3c55-1c4b-4d8e-8a55-7e2b1b7c9b22"
)

func leaseState(t *testing.T, e *dlEnv, f *file.Client) string {
	t.Helper()
	p, err := f.GetProperties(e.ctx, nil)
	must(t, err)
	return string(*p.LeaseState)
}

func withLease(id string) *file.AccessConditions {
	return &file.AccessConditions{LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(id)}}
}

// TestDLContentLeases: a path's one lease, taken through the datalake
// SDK's lease client (Lease Blob on the Blob view), through append's and
// flush's x-ms-lease-action, and through Path - Lease on the dfs
// endpoint, is honoured by append, flush, delete, rename and the Blob
// view's writes, and expires on the injected clock.
func TestDLContentLeases(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("leases")
	f := fs.NewFileClient("f")
	_, err := f.Create(e.ctx, nil)
	must(t, err)

	lc, err := lease.NewPathClient(f, &lease.PathClientOptions{LeaseID: to.Ptr(leaseA)})
	must(t, err)
	_, err = lc.AcquireLease(e.ctx, 15, nil)
	must(t, err)
	if st := leaseState(t, e, f); st != "leased" {
		t.Fatalf("lease state %s", st)
	}
	data := []byte("leased data")
	wantDL(t, get(f.AppendData(e.ctx, 0, body(data), nil)), 412, string(datalakeerror.LeaseIDMissing))
	wantDL(t, get(f.AppendData(e.ctx, 0, body(data), &file.AppendDataOptions{LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(leaseB)}})), 412, "LeaseIdMismatchWithPathOperation")
	_, err = f.AppendData(e.ctx, 0, body(data), &file.AppendDataOptions{LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(leaseA)}})
	must(t, err)
	wantDL(t, get(f.FlushData(e.ctx, int64(len(data)), nil)), 412, string(datalakeerror.LeaseIDMissing))
	_, err = f.FlushData(e.ctx, int64(len(data)), &file.FlushDataOptions{AccessConditions: withLease(leaseA)})
	must(t, err)
	// Delete and rename honour it (x-ms-lease-id, x-ms-source-lease-id).
	wantDL(t, get(f.Delete(e.ctx, nil)), 412, string(datalakeerror.LeaseIDMissing))
	wantDL(t, get(f.Rename(e.ctx, "g", nil)), 412, string(datalakeerror.LeaseIDMissing))
	// The Blob view's writes too.
	bc := client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("leases").NewBlobClient("f")
	_, err = bc.SetMetadata(e.ctx, map[string]*string{"a": to.Ptr("b")}, nil)
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.LeaseIDMissing)
	// A second acquire with another id: 409 LeaseAlreadyPresent.
	blc, err := bloblease.NewBlobClient(bc, &bloblease.BlobClientOptions{LeaseID: to.Ptr(leaseB)})
	must(t, err)
	_, err = blc.AcquireLease(e.ctx, 20, nil)
	wantCode(t, err, http.StatusConflict, bloberror.LeaseAlreadyPresent)
	// The lease expires on the fake clock.
	e.clock.Advance(16 * time.Second)
	if st := leaseState(t, e, f); st != "expired" {
		t.Fatalf("lease state after 16s: %s", st)
	}
	renamed := fs.NewFileClient("g")
	_, err = f.Rename(e.ctx, "g", nil)
	must(t, err)
	if got := download(t, e, renamed); string(got) != string(data) {
		t.Fatalf("after rename: %q", got)
	}

	// Append's and flush's lease actions.
	g := fs.NewFileClient("h")
	_, err = g.Create(e.ctx, nil)
	must(t, err)
	_, err = g.AppendData(e.ctx, 0, body(data), &file.AppendDataOptions{LeaseAction: &file.LeaseActionAcquire, LeaseDuration: to.Ptr(int64(15)), ProposedLeaseID: to.Ptr(leaseA)})
	must(t, err)
	if st := leaseState(t, e, g); st != "leased" {
		t.Fatalf("after append with acquire: %s", st)
	}
	_, err = g.FlushData(e.ctx, int64(len(data)), &file.FlushDataOptions{LeaseAction: &file.LeaseActionRelease, AccessConditions: withLease(leaseA)})
	must(t, err)
	if st := leaseState(t, e, g); st != "available" {
		t.Fatalf("after flush with release: %s", st)
	}
	_, err = g.AppendData(e.ctx, int64(len(data)), body(data), &file.AppendDataOptions{LeaseAction: &file.LeaseActionAcquireRelease, LeaseDuration: to.Ptr(int64(-1)), ProposedLeaseID: to.Ptr(leaseB)})
	must(t, err)
	if st := leaseState(t, e, g); st != "available" {
		t.Fatalf("after append with acquire-release: %s", st)
	}
	_, err = g.FlushData(e.ctx, 2*int64(len(data)), &file.FlushDataOptions{LeaseAction: &file.LeaseActionAcquire, LeaseDuration: to.Ptr(int64(15)), ProposedLeaseID: to.Ptr(leaseB)})
	must(t, err)
	e.clock.Advance(10 * time.Second)
	_, err = g.AppendData(e.ctx, 2*int64(len(data)), body(data), &file.AppendDataOptions{LeaseAction: &file.LeaseActionRenew, LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(leaseB)}})
	must(t, err)
	e.clock.Advance(10 * time.Second) // 20s after the acquire, 10s after the renewal
	if st := leaseState(t, e, g); st != "leased" {
		t.Fatalf("after auto-renew: %s", st)
	}

	// Path - Lease on the dfs endpoint.
	resp, _ := e.raw(http.MethodPost, "/leases/h", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1", "x-ms-proposed-lease-id": leaseA}, nil)
	if resp.StatusCode != http.StatusConflict || resp.Header.Get("x-ms-error-code") != "LeaseAlreadyPresent" {
		t.Fatalf("acquire of a leased path: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	resp, _ = e.raw(http.MethodPost, "/leases/h", map[string]string{"x-ms-lease-action": "change", "x-ms-lease-id": leaseB, "x-ms-proposed-lease-id": leaseA}, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("x-ms-lease-id") != leaseA {
		t.Fatalf("change: %d %s", resp.StatusCode, resp.Header.Get("x-ms-lease-id"))
	}
	resp, _ = e.raw(http.MethodPost, "/leases/h", map[string]string{"x-ms-lease-action": "release", "x-ms-lease-id": leaseB}, nil)
	if resp.StatusCode != http.StatusConflict || resp.Header.Get("x-ms-error-code") != "LeaseIdMismatchWithLeaseOperation" {
		t.Fatalf("release with the old id: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	resp, _ = e.raw(http.MethodPost, "/leases/h", map[string]string{"x-ms-lease-action": "break", "x-ms-lease-break-period": "0"}, nil)
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get("x-ms-lease-time") != "0" {
		t.Fatalf("break: %d %s", resp.StatusCode, resp.Header.Get("x-ms-lease-time"))
	}
	resp, _ = e.raw(http.MethodDelete, "/leases/h?recursive=false", map[string]string{"x-ms-lease-id": leaseA}, nil)
	if resp.StatusCode != http.StatusPreconditionFailed || resp.Header.Get("x-ms-error-code") != "LeaseNotPresent" {
		t.Fatalf("delete naming a broken lease: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	_, err = g.Delete(e.ctx, nil)
	must(t, err)
	// Path Create with a lease (azdatalake's
	// TestFileAppendAndFlushDataWithLeasedFile creates its file so).
	k := fs.NewFileClient("k")
	_, err = k.Create(e.ctx, &file.CreateOptions{ProposedLeaseID: to.Ptr(leaseA), LeaseDuration: to.Ptr(int64(15))})
	must(t, err)
	if st := leaseState(t, e, k); st != "leased" {
		t.Fatalf("after create with a lease: %s", st)
	}
	wantDL(t, get(k.AppendData(e.ctx, 0, body(data), nil)), 412, string(datalakeerror.LeaseIDMissing))
	_, err = k.AppendData(e.ctx, 0, body(data), &file.AppendDataOptions{LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(leaseA)}})
	must(t, err)
	// Append with flush=true and release (azdatalake's
	// TestFileAppendDataWithReleaseLease): flushed and released at once.
	_, err = k.AppendData(e.ctx, int64(len(data)), body(data), &file.AppendDataOptions{LeaseAction: &file.LeaseActionRelease,
		LeaseAccessConditions: &file.LeaseAccessConditions{LeaseID: to.Ptr(leaseA)}, Flush: to.Ptr(true)})
	must(t, err)
	if st := leaseState(t, e, k); st != "available" {
		t.Fatalf("after append+flush with release: %s", st)
	}
	if got := download(t, e, k); string(got) != string(data)+string(data) {
		t.Fatalf("after append+flush: %q", got)
	}
	// Creating over it again takes its lease id once leased.
	kl, err := lease.NewPathClient(k, &lease.PathClientOptions{LeaseID: to.Ptr(leaseB)})
	must(t, err)
	_, err = kl.AcquireLease(e.ctx, 15, nil)
	must(t, err)
	wantDL(t, get(k.Create(e.ctx, nil)), 412, string(datalakeerror.LeaseIDMissing))
	resp, _ = e.raw(http.MethodPut, "/leases/k2?resource=file", map[string]string{"x-ms-lease-duration": "15"}, nil)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "MissingRequiredHeader" {
		t.Fatalf("create with a duration and no proposed id: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	resp, _ = e.raw(http.MethodPost, "/leases/nope", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "15"}, nil)
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("x-ms-error-code") != "PathNotFound" {
		t.Fatalf("lease of a missing path: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
}

package e2e

// End-to-end tests of Lease File through azfile's lease package, and of the
// lease gate on file writes. Unless another source is named, the rules come
// from Lease File
// (https://learn.microsoft.com/en-us/rest/api/storageservices/lease-file);
// "(inferred)" marks Cerulean's reading where no source says.

import (
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
)

// fiLease is a lease client for f with lease ID id ("" lets the SDK
// generate one).
func fiLease(t *testing.T, f *file.Client, id string) *lease.FileClient {
	t.Helper()
	var o *lease.FileClientOptions
	if id != "" {
		o = &lease.FileClientOptions{LeaseID: &id}
	}
	lc, err := lease.NewFileClient(f, o)
	must(t, err)
	return lc
}

func fiLeaseOf(id string) *file.LeaseAccessConditions {
	return &file.LeaseAccessConditions{LeaseID: &id}
}

func TestFileLeaseLifecycle(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "f", 16)
	before := e.props(f)
	lc := fiLease(t, f, "")
	var raw *http.Response
	acq, err := lc.Acquire(fiCapture(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != http.StatusCreated || acq.LeaseID == nil || *acq.LeaseID != *lc.LeaseID() {
		t.Fatalf("acquire: %d, lease id %s (client %s)", raw.StatusCode, fiStr(acq.LeaseID), *lc.LeaseID())
	}
	// Lease File does not modify ETag or Last-Modified (Lease File).
	if *acq.ETag != *before.ETag || !acq.LastModified.Equal(*before.LastModified) {
		t.Fatalf("acquire changed ETag %s -> %s", *before.ETag, *acq.ETag)
	}
	p := e.props(f)
	if *p.LeaseState != lease.StateTypeLeased || *p.LeaseStatus != lease.StatusTypeLocked || *p.LeaseDuration != lease.DurationTypeInfinite || *p.ETag != *before.ETag {
		t.Fatalf("leased file: state %s status %s duration %s", *p.LeaseState, *p.LeaseStatus, *p.LeaseDuration)
	}
	// Acquiring again with the same ID is allowed; another ID is not.
	_, err = lc.Acquire(e.ctx, nil)
	must(t, err)
	_, err = fiLease(t, f, "").Acquire(e.ctx, nil)
	wantFileCode(t, err, http.StatusConflict, "LeaseAlreadyPresent")

	// Change the ID: the client follows, the old ID is refused.
	old := *lc.LeaseID()
	newID := "11111111-2222-3333-4444-555555555555"
	ch, err := lc.Change(fiCapture(e.ctx, &raw), newID, nil)
	must(t, err)
	if raw.StatusCode != http.StatusOK || fiStr(ch.LeaseID) != newID {
		t.Fatalf("change: %d %s", raw.StatusCode, fiStr(ch.LeaseID))
	}
	_, err = f.SetMetadata(e.ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("1")}, LeaseAccessConditions: fiLeaseOf(old)})
	wantFileCode(t, err, http.StatusPreconditionFailed, "LeaseIdMismatchWithFileOperation")
	_, err = fiLease(t, f, old).Release(e.ctx, nil)
	wantFileCode(t, err, http.StatusConflict, "LeaseIdMismatchWithLeaseOperation")

	// Release makes the file available.
	_, err = lc.Release(fiCapture(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != http.StatusOK {
		t.Fatalf("release: %d", raw.StatusCode)
	}
	if p := e.props(f); *p.LeaseState != lease.StateTypeAvailable || *p.LeaseStatus != lease.StatusTypeUnlocked {
		t.Fatalf("released: %s %s", *p.LeaseState, *p.LeaseStatus)
	}
	_, err = lc.Release(e.ctx, nil)
	wantFileCode(t, err, http.StatusConflict, "LeaseIdMismatchWithLeaseOperation")

	// Break is immediate (202, x-ms-lease-time 0): broken, unlocked.
	_, err = lc.Acquire(e.ctx, nil)
	must(t, err)
	_, err = fiLease(t, f, "").Break(fiCapture(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != http.StatusAccepted || raw.Header.Get("x-ms-lease-time") != "0" {
		t.Fatalf("break: %d lease-time %q", raw.StatusCode, raw.Header.Get("x-ms-lease-time"))
	}
	if p := e.props(f); *p.LeaseState != lease.StateTypeBroken || *p.LeaseStatus != lease.StatusTypeUnlocked {
		t.Fatalf("broken: %s %s", *p.LeaseState, *p.LeaseStatus)
	}
	// Broken: change fails, a new acquire by anyone succeeds (Lease File).
	_, err = lc.Change(e.ctx, old, nil)
	wantFileCode(t, err, http.StatusConflict, "LeaseNotPresentWithLeaseOperation")
	other := fiLease(t, f, "")
	_, err = other.Acquire(e.ctx, nil)
	must(t, err)
	_, err = other.Release(e.ctx, nil)
	must(t, err)
	// Break on an available file fails.
	_, err = other.Break(e.ctx, nil)
	wantFileCode(t, err, http.StatusConflict, "LeaseNotPresentWithLeaseOperation")
}

func TestFileLeaseGatesWrites(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "f", 16)
	lc := fiLease(t, f, "")
	_, err := lc.Acquire(e.ctx, nil)
	must(t, err)
	id := *lc.LeaseID()
	wrong := "00000000-1111-2222-3333-444444444444"

	type write struct {
		name string
		do   func(*file.LeaseAccessConditions) error
	}
	writes := []write{
		{"put range", func(l *file.LeaseAccessConditions) error {
			_, err := f.UploadRange(e.ctx, 0, fiBody([]byte("abcd")), &file.UploadRangeOptions{LeaseAccessConditions: l})
			return err
		}},
		{"clear range", func(l *file.LeaseAccessConditions) error {
			_, err := f.ClearRange(e.ctx, file.HTTPRange{Offset: 0, Count: 2}, &file.ClearRangeOptions{LeaseAccessConditions: l})
			return err
		}},
		{"set metadata", func(l *file.LeaseAccessConditions) error {
			_, err := f.SetMetadata(e.ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"k": to.Ptr("v")}, LeaseAccessConditions: l})
			return err
		}},
		{"set http headers", func(l *file.LeaseAccessConditions) error {
			_, err := f.SetHTTPHeaders(e.ctx, &file.SetHTTPHeadersOptions{HTTPHeaders: &file.HTTPHeaders{ContentType: to.Ptr("text/plain")}, LeaseAccessConditions: l})
			return err
		}},
		{"resize", func(l *file.LeaseAccessConditions) error {
			_, err := f.Resize(e.ctx, 32, &file.ResizeOptions{LeaseAccessConditions: l})
			return err
		}},
		{"create", func(l *file.LeaseAccessConditions) error {
			_, err := f.Create(e.ctx, 32, &file.CreateOptions{LeaseAccessConditions: l})
			return err
		}},
	}
	for _, w := range writes {
		// Lease File: "If the lease ID is not included, these operations
		// will fail on a leased file with 412"; a wrong ID is 412
		// LeaseIdMismatchWithFileOperation (azfile's recorded lease tests).
		wantFileCode(t, w.do(nil), http.StatusPreconditionFailed, "LeaseIdMissing")
		wantFileCode(t, w.do(fiLeaseOf(wrong)), http.StatusPreconditionFailed, "LeaseIdMismatchWithFileOperation")
		if err := w.do(fiLeaseOf(id)); err != nil {
			t.Fatalf("%s with the lease ID: %v", w.name, err)
		}
	}
	// Delete needs the ID too.
	_, err = f.Delete(e.ctx, nil)
	wantFileCode(t, err, http.StatusPreconditionFailed, "LeaseIdMissing")

	// Reads need no ID, but a wrong one fails (Lease File; azfile's recorded
	// lease tests for GET).
	_, err = f.GetProperties(e.ctx, nil)
	must(t, err)
	_, err = f.DownloadStream(e.ctx, &file.DownloadStreamOptions{LeaseAccessConditions: fiLeaseOf(wrong)})
	wantFileCode(t, err, http.StatusPreconditionFailed, "LeaseIdMismatchWithFileOperation")
	r, err := f.DownloadStream(e.ctx, &file.DownloadStreamOptions{LeaseAccessConditions: fiLeaseOf(id)})
	must(t, err)
	r.Body.Close()

	// Broken: writes without an ID succeed again (Lease File), with one fail.
	_, err = lc.Break(e.ctx, nil)
	must(t, err)
	_, err = f.SetMetadata(e.ctx, &file.SetMetadataOptions{LeaseAccessConditions: fiLeaseOf(id)})
	wantFileCode(t, err, http.StatusPreconditionFailed, "LeaseNotPresentWithFileOperation")
	for _, w := range writes {
		if err := w.do(nil); err != nil {
			t.Fatalf("%s after break: %v", w.name, err)
		}
	}
	_, err = f.Delete(e.ctx, nil)
	must(t, err)

	// Lease a missing file, a directory, a file of a snapshot.
	_, err = fiLease(t, fileAt(s, "none"), "").Acquire(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	e.mkdir(s, "d")
	_, err = fiLease(t, fileAt(s, "d"), "").Acquire(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	g := e.mkfile(s, "g", 1)
	snap, err := s.CreateSnapshot(e.ctx, nil)
	must(t, err)
	ss, err := s.WithSnapshot(*snap.Snapshot)
	must(t, err)
	_, err = fiLease(t, fileAt(ss, "g"), "").Acquire(e.ctx, nil)
	wantFileCode(t, err, http.StatusBadRequest, "")
	e.props(g)
}

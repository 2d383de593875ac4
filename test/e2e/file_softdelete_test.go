package e2e

// Share soft delete end to end through azfile: Delete Share with a share
// delete retention period keeps the share, List Shares include=deleted
// shows it, Restore Share brings it back with its files and snapshots,
// and the retention period ends on the injected clock.

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

// startFileSoftDelete is startFile with --share-soft-delete days.
func startFileSoftDelete(t *testing.T, days int) *fileEnv {
	t.Helper()
	clk := clock.NewFake(time.Now())
	cfg := backendConfig(t)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort = -1, -1, -1, 0
	cfg.Clock, cfg.GCEvery = clk, time.Hour
	cfg.ShareSoftDelete = days
	a, err := app.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	cred, err := service.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	opts := fileClientOptions()
	opts.PerCallPolicies = append(opts.PerCallPolicies, sdDatePolicy{clk})
	c, err := service.NewClientWithSharedKeyCredential(a.FileURL, cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fileEnv{t: t, app: a, clock: clk, svc: c, ctx: context.Background()}
}

// sdDatePolicy dates every request (x-ms-date, signed by the Shared Key
// policy, which keeps a date already set under this lower-case key) at
// the server's fake clock, so a test can move it by days and stay within
// the allowed clock skew.
type sdDatePolicy struct{ clk *clock.Fake }

func (p sdDatePolicy) Do(req *policy.Request) (*http.Response, error) {
	req.Raw().Header["x-ms-date"] = []string{p.clk.Now().UTC().Format(http.TimeFormat)}
	return req.Next()
}

// deletedShares lists the deleted shares named name (include=deleted).
func (e *fileEnv) deletedShares(name string) []*service.Share {
	e.t.Helper()
	var out []*service.Share
	pg := e.svc.NewListSharesPager(&service.ListSharesOptions{Prefix: &name, Include: service.ListSharesInclude{Deleted: true, Metadata: true}})
	for pg.More() {
		resp, err := pg.NextPage(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, s := range resp.Shares {
			if *s.Name == name && s.Deleted != nil && *s.Deleted {
				out = append(out, s)
			}
		}
	}
	return out
}

// sdWrite makes f a file holding text.
func (e *fileEnv) sdWrite(f *file.Client, text string) {
	e.t.Helper()
	if _, err := f.Create(e.ctx, int64(len(text)), nil); err != nil {
		e.t.Fatal(err)
	}
	e.put(f, 0, []byte(text))
}

func (e *fileEnv) readAll(f *file.Client) string {
	e.t.Helper()
	resp, err := f.DownloadStream(e.ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func TestFileShareSoftDeleteRestore(t *testing.T) {
	e := startFileSoftDelete(t, 7)
	name := fileName("soft")
	s := e.svc.NewShareClient(name)
	if _, err := s.Create(e.ctx, &share.CreateOptions{Quota: to.Ptr(int32(77)), Metadata: map[string]*string{"k": to.Ptr("v")}}); err != nil {
		t.Fatal(err)
	}
	e.mkdir(s, "d")
	f := fileAt(s, "d/a.txt")
	e.sdWrite(f, "before snapshot")
	snap, err := s.CreateSnapshot(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.sdWrite(f, "after snapshot!")

	// Deleting a share with snapshots still needs x-ms-delete-snapshots.
	_, err = s.Delete(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.ShareHasSnapshots)
	e.clock.Advance(time.Hour)
	deletedAt := e.clock.Now()
	if _, err := s.Delete(e.ctx, &share.DeleteOptions{DeleteSnapshots: to.Ptr(share.DeleteSnapshotsOptionTypeInclude)}); err != nil {
		t.Fatal(err)
	}
	// Gone for every operation.
	_, err = s.GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ShareNotFound)
	_, err = f.GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ShareNotFound)

	// Listed as deleted, with version, deletion time and days left.
	e.clock.Advance(36 * time.Hour)
	del := e.deletedShares(name)
	if len(del) != 1 {
		t.Fatalf("deleted shares %d, want 1", len(del))
	}
	d := del[0]
	if d.Version == nil || *d.Version == "" || d.Properties.DeletedTime == nil || d.Properties.RemainingRetentionDays == nil {
		t.Fatalf("deleted share %+v / %+v", d, d.Properties)
	}
	if got := d.Properties.DeletedTime.Unix(); got != deletedAt.Unix() {
		t.Errorf("DeletedTime %v, want %v", d.Properties.DeletedTime, deletedAt)
	}
	if got := *d.Properties.RemainingRetentionDays; got != 6 { // 7 days less 1.5
		t.Errorf("RemainingRetentionDays %d, want 6", got)
	}
	if *d.Properties.Quota != 77 || *d.Metadata["k"] != "v" {
		t.Errorf("deleted share's properties %+v metadata %v", d.Properties, d.Metadata)
	}
	// Without include=deleted it is not listed.
	pg := e.svc.NewListSharesPager(&service.ListSharesOptions{Prefix: &name})
	resp, err := pg.NextPage(e.ctx)
	if err != nil || len(resp.Shares) != 0 {
		t.Fatalf("plain listing %v, %v", resp.Shares, err)
	}

	// An unknown version is 404.
	_, err = s.Restore(e.ctx, "01D60F8BB59A4652", nil)
	wantFileCode(t, err, 404, fileerror.ShareNotFound)

	// The name can be used again meanwhile; restoring onto it is 409.
	if _, err := s.Create(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	e.mkfile(s, "other.txt", 3)
	_, err = s.Restore(e.ctx, *d.Version, nil)
	wantFileCode(t, err, 409, fileerror.ShareAlreadyExists)
	if _, err := s.Delete(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := len(e.deletedShares(name)); got != 2 {
		t.Fatalf("deleted shares after the second delete %d, want 2", got)
	}

	// Restore brings back the first one: files, metadata, snapshot.
	rr, err := s.Restore(e.ctx, *d.Version, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rr.ETag == nil || rr.LastModified == nil {
		t.Errorf("restore response %+v", rr)
	}
	p, err := s.GetProperties(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *p.Quota != 77 || *p.Metadata["K"] != "v" {
		t.Errorf("restored properties quota %d metadata %v", *p.Quota, p.Metadata)
	}
	if got := e.readAll(f); got != "after snapshot!" {
		t.Errorf("restored file %q", got)
	}
	if _, err := fileAt(s, "other.txt").GetProperties(e.ctx, nil); err == nil {
		t.Error("the second share's file is in the restored one")
	}
	snapShare, err := s.WithSnapshot(*snap.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.readAll(fileAt(snapShare, "d/a.txt")); got != "before snapshot" {
		t.Errorf("restored snapshot's file %q", got)
	}
	// The restored version is no longer listed as deleted; the other is.
	if del := e.deletedShares(name); len(del) != 1 || *del[0].Version == *d.Version {
		t.Fatalf("deleted shares after restore %v", del)
	}
	// Writes work on the restored share.
	e.sdWrite(f, "written again")
	if got := e.readAll(f); got != "written again" {
		t.Errorf("file after restore and write %q", got)
	}
}

// After the retention period a deleted share is gone for good: not
// listed, not restorable, and its records reclaimed.
func TestFileShareSoftDeleteExpiry(t *testing.T) {
	e := startFileSoftDelete(t, 2)
	name := fileName("expire")
	s := e.svc.NewShareClient(name)
	if _, err := s.Create(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	e.sdWrite(fileAt(s, "x"), "data")
	if _, err := s.Delete(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	del := e.deletedShares(name)
	if len(del) != 1 {
		t.Fatalf("deleted shares %d, want 1", len(del))
	}
	e.clock.Advance(48*time.Hour - time.Second)
	if got := len(e.deletedShares(name)); got != 1 {
		t.Fatalf("a second before expiry: %d deleted shares, want 1", got)
	}
	e.clock.Advance(time.Second)
	if got := len(e.deletedShares(name)); got != 0 {
		t.Fatalf("at expiry: %d deleted shares, want 0", got)
	}
	_, err := s.Restore(e.ctx, *del[0].Version, nil)
	wantFileCode(t, err, 404, fileerror.ShareNotFound)
	steps, err := e.app.Blob.Reclaimer().Drain(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if steps == 0 {
		t.Error("the reclaimer found nothing of the expired share to reclaim")
	}
	if steps, err := e.app.Blob.Reclaimer().Drain(e.ctx); err != nil || steps != 0 {
		t.Errorf("second drain: %d steps, %v; want nothing left", steps, err)
	}
	_, err = s.Restore(e.ctx, *del[0].Version, nil)
	wantFileCode(t, err, 404, fileerror.ShareNotFound)
}

// With retention off, Delete Share is permanent, as before: nothing is
// listed as deleted and Restore Share finds nothing.
func TestFileShareSoftDeleteOff(t *testing.T) {
	e := startFileSoftDelete(t, 0)
	name := fileName("hard")
	s := e.svc.NewShareClient(name)
	if _, err := s.Create(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := len(e.deletedShares(name)); got != 0 {
		t.Fatalf("%d deleted shares with soft delete off", got)
	}
	_, err := s.Restore(e.ctx, "0000000000000001", nil)
	wantFileCode(t, err, 404, fileerror.ShareNotFound)
}

// A leased share is deleted with its lease ID (412 LeaseIdMissing
// without, as for a permanent delete) and comes back from Restore Share
// unleased.
func TestFileShareSoftDeleteLeased(t *testing.T) {
	e := startFileSoftDelete(t, 1)
	name := fileName("leased")
	s := e.svc.NewShareClient(name)
	if _, err := s.Create(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	const id = "c820a799-76d7-4ee2-6e15-546f19325c2c"
	lc, err := lease.NewShareClient(s, &lease.ShareClientOptions{LeaseID: to.Ptr(id)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lc.Acquire(e.ctx, -1, nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.Delete(e.ctx, nil)
	wantFileCode(t, err, 412, "LeaseIdMissing")
	if got := len(e.deletedShares(name)); got != 0 {
		t.Fatalf("%d deleted shares after a refused delete", got)
	}
	if _, err := s.Delete(e.ctx, &share.DeleteOptions{LeaseAccessConditions: &share.LeaseAccessConditions{LeaseID: to.Ptr(id)}}); err != nil {
		t.Fatal(err)
	}
	del := e.deletedShares(name)
	if len(del) != 1 {
		t.Fatalf("%d deleted shares, want 1", len(del))
	}
	if _, err := s.Restore(e.ctx, *del[0].Version, nil); err != nil {
		t.Fatal(err)
	}
	p, err := s.GetProperties(e.ctx, nil)
	if err != nil || *p.LeaseState != "available" || *p.LeaseStatus != "unlocked" {
		t.Fatalf("restored share %+v, %v", p, err)
	}
}

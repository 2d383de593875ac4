package e2e

// Clock control (--clock-control, internal/clockctl): the server runs on
// the real clock plus an offset, advanced through the admin endpoint on
// the service ports, and the SDKs see leases, break periods, visibility
// timeouts, TTLs, SAS windows and soft-delete retention move with it.
// These tests use no fake clock: the server's time is clockctl's, and
// the SDKs go on signing with the real time, hours behind it.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/clockctl"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
	"github.com/cerulean-storage/cerulean/internal/server"
)

type ckEnv struct {
	t   *testing.T
	app *app.App
	c   *azblob.Client
	q   *azqueue.ServiceClient
	ctx context.Context

	closeOnce sync.Once
}

// close stops the server (once; the test's cleanup calls it too).
func (e *ckEnv) close() {
	e.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.app.Close(ctx); err != nil {
			e.t.Errorf("close: %v", err)
		}
	})
}

// ckStartCfg starts a Blob and Queue server on cfg's store, with clock
// control when control is set and without any fake clock.
func ckStartCfg(t *testing.T, cfg app.Config, control bool) *ckEnv {
	t.Helper()
	cfg.BlobPort, cfg.QueuePort = 0, 0
	cfg.TablePort, cfg.FilePort, cfg.DFSPort, cfg.SMBPort, cfg.MetricsPort = -1, -1, -1, -1, -1
	cfg.ClockControl, cfg.GCEvery = control, time.Hour
	a, err := app.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := &ckEnv{t: t, app: a, c: client(t, a.BlobURL, app.DevKey), q: quClient(t, a.QueueURL, app.DevKey), ctx: context.Background()}
	t.Cleanup(e.close)
	return e
}

func ckStart(t *testing.T, control bool) *ckEnv {
	t.Helper()
	return ckStartCfg(t, backendConfig(t), control)
}

// admin sends method to the admin endpoint path (under
// server.ReservedPrefix) on service svc's port and returns the status
// and the decoded State (zero for an error answer).
func (e *ckEnv) admin(svc, method, path string, body string) (int, clockctl.State) {
	e.t.Helper()
	u := "http://" + app.ClientAddr(e.app.Endpoints()[svc]) + server.ReservedPrefix + path
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	must(e.t, err)
	resp, err := http.DefaultClient.Do(req)
	must(e.t, err)
	defer resp.Body.Close()
	var st clockctl.State
	if resp.StatusCode == http.StatusOK {
		must(e.t, json.NewDecoder(resp.Body).Decode(&st))
	}
	return resp.StatusCode, st
}

// advance moves the server's clock forward by d through the Blob port.
func (e *ckEnv) advance(d time.Duration) clockctl.State {
	e.t.Helper()
	code, st := e.admin("blob", http.MethodPost, "/clock/advance?by="+d.String(), "")
	if code != http.StatusOK {
		e.t.Fatalf("advance by %s: status %d", d, code)
	}
	return st
}

func (e *ckEnv) blob(cont, name string) *blockblob.Client {
	e.t.Helper()
	if _, err := e.c.CreateContainer(e.ctx, cont, nil); err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		e.t.Fatal(err)
	}
	bc := e.c.ServiceClient().NewContainerClient(cont).NewBlockBlobClient(name)
	_, err := bc.UploadBuffer(e.ctx, []byte("clock"), nil)
	must(e.t, err)
	return bc
}

func ckLease(t *testing.T, bc *blockblob.Client, id string) *lease.BlobClient {
	t.Helper()
	lc, err := lease.NewBlobClient(bc, &lease.BlobClientOptions{LeaseID: to.Ptr(id)})
	must(t, err)
	return lc
}

func (e *ckEnv) leaseState(bc *blockblob.Client) lease.StateType {
	e.t.Helper()
	p, err := bc.GetProperties(e.ctx, nil)
	must(e.t, err)
	return *p.LeaseState
}

const (
	ckLeaseA = "aaaaaaaa-0000-0000-0000-000000000001"
	ckLeaseB = "bbbbbbbb-0000-0000-0000-000000000002"
)

// TestClockLeaseExpiry: a 60 s lease is expired once the clock is
// advanced by 61 s, and another lease id acquires the blob (the issue's
// first SDK scenario).
func TestClockLeaseExpiry(t *testing.T) {
	e := ckStart(t, true)
	bc := e.blob("ckexpiry", "b")
	_, err := ckLease(t, bc, ckLeaseA).AcquireLease(e.ctx, 60, nil)
	must(t, err)
	_, err = ckLease(t, bc, ckLeaseB).AcquireLease(e.ctx, 60, nil)
	wantCode(t, err, http.StatusConflict, bloberror.LeaseAlreadyPresent)
	st := e.advance(61 * time.Second)
	if st.Offset != "1m1s" || st.Now.Sub(st.Wall) != 61*time.Second {
		t.Fatalf("state after the advance: %+v", st)
	}
	if s := e.leaseState(bc); s != lease.StateTypeExpired {
		t.Fatalf("lease state %s after 61 s, want expired", s)
	}
	_, err = ckLease(t, bc, ckLeaseB).AcquireLease(e.ctx, 60, nil)
	must(t, err)
	// The first holder's lease is gone: its write is refused.
	_, err = bc.UploadBuffer(e.ctx, []byte("x"), &blockblob.UploadBufferOptions{AccessConditions: &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: to.Ptr(ckLeaseA)}}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.LeaseIDMismatchWithBlobOperation)
}

// TestClockLeaseBreakPeriod: a broken lease stays "breaking" for its
// break period and is broken once the clock passes its end.
func TestClockLeaseBreakPeriod(t *testing.T) {
	e := ckStart(t, true)
	bc := e.blob("ckbreak", "b")
	a := ckLease(t, bc, ckLeaseA)
	_, err := a.AcquireLease(e.ctx, -1, nil)
	must(t, err)
	_, err = a.BreakLease(e.ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](45)})
	must(t, err)
	e.advance(30 * time.Second)
	if s := e.leaseState(bc); s != lease.StateTypeBreaking {
		t.Fatalf("lease state %s 30 s into a 45 s break, want breaking", s)
	}
	_, err = ckLease(t, bc, ckLeaseB).AcquireLease(e.ctx, 15, nil)
	wantCode(t, err, http.StatusConflict, bloberror.LeaseAlreadyPresent)
	e.advance(16 * time.Second)
	if s := e.leaseState(bc); s != lease.StateTypeBroken {
		t.Fatalf("lease state %s after the break period, want broken", s)
	}
	_, err = ckLease(t, bc, ckLeaseB).AcquireLease(e.ctx, 15, nil)
	must(t, err)
}

// TestClockQueueVisibility: once the clock passes a message's visibility
// timeout it is dequeued again, with a new pop receipt (the issue's
// second SDK scenario); the first receipt is dead.
func TestClockQueueVisibility(t *testing.T) {
	e := ckStart(t, true)
	q := e.q.NewQueueClient("ckvisibility")
	_, err := q.Create(e.ctx, nil)
	quMust(t, err)
	quEnqueue(t, e.ctx, q, "job", nil)
	first := quDequeue(t, e.ctx, q, 1, 30)[0]
	if got := quDequeue(t, e.ctx, q, 1, 30); len(got) != 0 {
		t.Fatal("dequeued again within the visibility timeout")
	}
	e.advance(31 * time.Second)
	got := quDequeue(t, e.ctx, q, 1, 30)
	if len(got) != 1 {
		t.Fatal("not visible again after the visibility timeout")
	}
	second := got[0]
	if *second.MessageID != *first.MessageID || *second.DequeueCount != 2 || *second.PopReceipt == *first.PopReceipt {
		t.Fatalf("second dequeue: id %s (want %s), count %d, receipt %s (first %s)", *second.MessageID, *first.MessageID, *second.DequeueCount, *second.PopReceipt, *first.PopReceipt)
	}
	_, err = q.DeleteMessage(e.ctx, *first.MessageID, *first.PopReceipt, nil)
	quWant(t, err, http.StatusNotFound, queueerror.MessageNotFound)
	_, err = q.DeleteMessage(e.ctx, *second.MessageID, *second.PopReceipt, nil)
	quMust(t, err)
}

// TestClockQueueTTL: a message is gone once the clock passes its time to
// live: a 60 s one after 61 s, one of the default 7 days after 7 days.
func TestClockQueueTTL(t *testing.T) {
	e := ckStart(t, true)
	q := e.q.NewQueueClient("ckttl")
	_, err := q.Create(e.ctx, nil)
	quMust(t, err)
	quEnqueue(t, e.ctx, q, "minute", &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr[int32](60)})
	quEnqueue(t, e.ctx, q, "week", nil)
	quEnqueue(t, e.ctx, q, "forever", &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr[int32](-1)})
	if p := quPeekTexts(t, e.ctx, q); len(p) != 3 {
		t.Fatalf("peek %v", p)
	}
	e.advance(61 * time.Second)
	if p := strings.Join(quPeekTexts(t, e.ctx, q), ","); p != "week,forever" {
		t.Fatalf("after 61 s: peek %q, want week,forever", p)
	}
	e.advance(7 * 24 * time.Hour)
	if p := strings.Join(quPeekTexts(t, e.ctx, q), ","); p != "forever" {
		t.Fatalf("after 7 days: peek %q, want forever", p)
	}
	got := quDequeue(t, e.ctx, q, 32, 30)
	if len(got) != 1 || *got[0].MessageText != "forever" {
		t.Fatalf("dequeued %d messages after 7 days", len(got))
	}
}

// TestClockSASExpiry: a SAS valid for an hour works until the clock is
// advanced by two hours, then fails with 403 AuthenticationFailed, while
// Shared Key requests, signed with the clients' real time, go on working
// (the date skew is measured against the wall clock).
func TestClockSASExpiry(t *testing.T) {
	e := ckStart(t, true)
	bc := e.blob("cksas", "b")
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	now := time.Now().UTC()
	qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, StartTime: now.Add(-5 * time.Minute), ExpiryTime: now.Add(time.Hour),
		Permissions: to.Ptr(sas.BlobPermissions{Read: true}).String(), ContainerName: "cksas", BlobName: "b"}.SignWithSharedKey(cred)
	must(t, err)
	sc, err := blob.NewClientWithNoCredential(bc.URL()+"?"+qp.Encode(), &blob.ClientOptions{ClientOptions: clientOptions().ClientOptions})
	must(t, err)
	read := func() error {
		r, err := sc.DownloadStream(e.ctx, nil)
		if err == nil {
			r.Body.Close()
		}
		return err
	}
	must(t, read())
	e.advance(2 * time.Hour)
	wantCode(t, read(), http.StatusForbidden, bloberror.AuthenticationFailed)
	// Shared Key still authenticates two hours behind the server.
	p, err := bc.GetProperties(e.ctx, nil)
	must(t, err)
	if d := time.Until(*p.Date); d < 2*time.Hour-time.Minute || d > 2*time.Hour+time.Minute {
		t.Fatalf("Date %v is %v from the real time, want 2 h ahead", p.Date, d)
	}
}

// TestClockSoftDeleteRetention: a soft-deleted blob can be listed and
// undeleted within its retention, not once the clock passes it.
func TestClockSoftDeleteRetention(t *testing.T) {
	e := ckStart(t, true)
	_, err := e.c.ServiceClient().SetProperties(e.ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr[int32](1)}})
	must(t, err)
	kept, gone := e.blob("cksoft", "kept"), e.blob("cksoft", "gone")
	for _, bc := range []*blockblob.Client{kept, gone} {
		_, err := bc.Delete(e.ctx, nil)
		must(t, err)
	}
	deleted := func() []string {
		var names []string
		pager := e.c.ServiceClient().NewContainerClient("cksoft").NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Deleted: true}})
		for pager.More() {
			page, err := pager.NextPage(e.ctx)
			must(t, err)
			for _, it := range page.Segment.BlobItems {
				names = append(names, *it.Name)
			}
		}
		return names
	}
	if got := strings.Join(deleted(), ","); got != "gone,kept" {
		t.Fatalf("soft-deleted blobs %q", got)
	}
	e.advance(23 * time.Hour)
	_, err = kept.Undelete(e.ctx, nil)
	must(t, err)
	e.advance(time.Hour + time.Minute)
	if got := strings.Join(deleted(), ","); got != "kept" {
		t.Fatalf("after the retention: listed %q, want kept", got)
	}
	_, err = gone.Undelete(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
}

// TestClockControlOff: without --clock-control the endpoint answers 404
// to every method and path, and nothing moves the clock.
func TestClockControlOff(t *testing.T) {
	e := ckStart(t, false)
	bc := e.blob("ckoff", "b")
	_, err := ckLease(t, bc, ckLeaseA).AcquireLease(e.ctx, 60, nil)
	must(t, err)
	for _, svc := range []string{"blob", "queue"} {
		for _, r := range []struct{ method, path, body string }{
			{http.MethodGet, "/clock", ""},
			{http.MethodPost, "/clock/advance?by=61s", ""},
			{http.MethodPost, "/clock/advance", `{"by":"61s"}`},
			{http.MethodPut, "/clock", ""},
		} {
			if code, _ := e.admin(svc, r.method, r.path, r.body); code != http.StatusNotFound {
				t.Fatalf("%s %s %s on %s: %d, want 404", r.method, r.path, r.body, svc, code)
			}
		}
	}
	_, err = ckLease(t, bc, ckLeaseB).AcquireLease(e.ctx, 60, nil)
	wantCode(t, err, http.StatusConflict, bloberror.LeaseAlreadyPresent)
	p, err := bc.GetProperties(e.ctx, nil)
	must(t, err)
	if d := time.Until(*p.Date); d > time.Minute || d < -time.Minute {
		t.Fatalf("Date %v is %v from the real time", p.Date, d)
	}
}

// TestClockNeverBackwards: an advance by zero, a negative or a malformed
// duration is refused with 400 and changes nothing; every advance moves
// Last-Modified forwards.
func TestClockNeverBackwards(t *testing.T) {
	e := ckStart(t, true)
	bc := e.blob("ckback", "b")
	e.advance(time.Hour)
	for _, r := range []struct{ path, body string }{
		{"/clock/advance?by=-1s", ""},
		{"/clock/advance?by=-2h", ""},
		{"/clock/advance?by=0s", ""},
		{"/clock/advance?by=61", ""},
		{"/clock/advance?by=", ""},
		{"/clock/advance", ""},
		{"/clock/advance", `{"by":"-30m"}`},
		{"/clock/advance", `{"to":"2000-01-01T00:00:00Z"}`},
		{"/clock/advance?by=1000000h", ""},
	} {
		if code, _ := e.admin("blob", http.MethodPost, r.path, r.body); code != http.StatusBadRequest {
			t.Fatalf("POST %s %s: %d, want 400", r.path, r.body, code)
		}
	}
	if code, _ := e.admin("blob", http.MethodGet, "/clock/advance?by=1s", ""); code != http.StatusMethodNotAllowed {
		t.Fatalf("GET of advance: %d, want 405", code)
	}
	code, st := e.admin("queue", http.MethodGet, "/clock", "")
	if code != http.StatusOK || st.OffsetNanos != int64(time.Hour) {
		t.Fatalf("GET /clock on the queue port: %d %+v, want the offset of 1h", code, st)
	}
	p1, err := bc.GetProperties(e.ctx, nil)
	must(t, err)
	// A JSON body advances as the query does.
	if code, st := e.admin("queue", http.MethodPost, "/clock/advance", `{"by":"90s"}`); code != http.StatusOK || st.Offset != "1h1m30s" {
		t.Fatalf("advance by a JSON body: %d %+v", code, st)
	}
	_, err = bc.UploadBuffer(e.ctx, []byte("later"), nil)
	must(t, err)
	p2, err := bc.GetProperties(e.ctx, nil)
	must(t, err)
	if !p2.LastModified.After(*p1.LastModified) || p2.LastModified.Sub(*p1.LastModified) < 90*time.Second {
		t.Fatalf("Last-Modified %v then %v: want at least 90 s later", p1.LastModified, p2.LastModified)
	}
}

// TestClockRestart: the offset is a record of the store: a server
// started again on the same embedded store (with --clock-control) goes
// on from it, so its time never falls behind what it stored.
func TestClockRestart(t *testing.T) {
	cfg := backendConfig(t)
	if cfg.InMemory || cfg.Postgres != "" {
		t.Skip("the embedded store alone is reopened by a new process (PostgreSQL: TestClockSharedFrontEnds)")
	}
	e := ckStartCfg(t, cfg, true)
	e.advance(3 * time.Hour)
	e.close()
	e2 := ckStartCfg(t, cfg, true)
	if code, st := e2.admin("blob", http.MethodGet, "/clock", ""); code != http.StatusOK || st.Offset != "3h0m0s" {
		t.Fatalf("after the restart: %d %+v, want the offset of 3h", code, st)
	}
	e2.close()
	// Without the flag the stored offset stays (what was written on that
	// time must not move backwards), and nothing can advance it.
	e3 := ckStartCfg(t, cfg, false)
	if code, _ := e3.admin("blob", http.MethodPost, "/clock/advance?by=1s", ""); code != http.StatusNotFound {
		t.Fatalf("advance without the flag: %d, want 404", code)
	}
	_, err := e3.c.ServiceClient().NewContainerClient("nosuch").GetProperties(e3.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.ContainerNotFound)
	resp, err := http.Get(e3.app.BlobURL + "?comp=list")
	must(t, err)
	resp.Body.Close()
	date, err := http.ParseTime(resp.Header.Get("Date"))
	must(t, err)
	if d := time.Until(date); d < 3*time.Hour-time.Minute || d > 3*time.Hour+time.Minute {
		t.Fatalf("Date %v is %v from the real time, want the stored 3 h", date, d)
	}
}

// TestClockSharedFrontEnds: on PostgreSQL two front ends share the
// offset through the store: the advance through one is seen by the very
// next request to the other.
func TestClockSharedFrontEnds(t *testing.T) {
	if os.Getenv(pgtest.EnvVar) == "" {
		t.Skipf("%s is not set (bash scripts/with-postgres.sh)", pgtest.EnvVar)
	}
	cfg := backendConfig(t)
	a := ckStartCfg(t, cfg, true)
	b := ckStartCfg(t, cfg, true)
	bcA := a.blob("ckshared", "b")
	bcB := b.c.ServiceClient().NewContainerClient("ckshared").NewBlockBlobClient("b")
	for round := 0; round < 3; round++ {
		_, err := ckLease(t, bcA, ckLeaseA).AcquireLease(a.ctx, 60, nil)
		must(t, err)
		// B reads the clock right before the advance: its copy is fresh.
		_, err = ckLease(t, bcB, ckLeaseB).AcquireLease(b.ctx, 60, nil)
		wantCode(t, err, http.StatusConflict, bloberror.LeaseAlreadyPresent)
		a.advance(61 * time.Second)
		_, err = ckLease(t, bcB, ckLeaseB).AcquireLease(b.ctx, 60, nil)
		must(t, err)
		_, err = ckLease(t, bcB, ckLeaseB).ReleaseLease(b.ctx, nil)
		must(t, err)
	}
	code, st := b.admin("queue", http.MethodGet, "/clock", "")
	if code != http.StatusOK || st.OffsetNanos != int64(3*61*time.Second) || !st.Shared {
		t.Fatalf("B's clock: %d %+v, want the shared offset of 3m3s", code, st)
	}
	// A third front end started later begins from the stored offset.
	c := ckStartCfg(t, cfg, true)
	if code, st := c.admin("blob", http.MethodGet, "/clock", ""); code != http.StatusOK || st.OffsetNanos != int64(3*61*time.Second) {
		t.Fatalf("a new front end: %d %+v", code, st)
	}
	// One without the flag would not follow the advances: refused.
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort, cfg.DFSPort, cfg.SMBPort, cfg.MetricsPort = 0, -1, -1, -1, -1, -1, -1
	if a, err := app.Start(cfg); err == nil || !strings.Contains(err.Error(), "--clock-control") {
		if a != nil {
			_ = a.Close(context.Background())
		}
		t.Fatalf("a front end without --clock-control on an advanced database: %v, want refused", err)
	}
}

// TestClockErrorBodyTime: the Time of an error body is the server's time,
// as its Date header is, not the wall clock's.
func TestClockErrorBodyTime(t *testing.T) {
	e := ckStart(t, true)
	e.blob("ckerr", "b")
	e.advance(5 * time.Hour)
	// Anonymous, on a private container: 404 ResourceNotFound with a body.
	resp, err := http.Get(e.app.BlobURL + "/ckerr/b")
	must(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	must(t, err)
	_, after, ok := strings.Cut(string(body), "Time:")
	if resp.StatusCode != http.StatusNotFound || !ok || len(after) < 28 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	at, err := time.Parse("2006-01-02T15:04:05.0000000Z", after[:28])
	must(t, err)
	date, err := http.ParseTime(resp.Header.Get("Date"))
	must(t, err)
	if d := time.Until(at); d < 5*time.Hour-time.Minute || d > 5*time.Hour+time.Minute || !at.Equal(date) {
		t.Fatalf("Time %v (Date %v) is %v from the real time, want 5 h ahead as the Date", at, date, d)
	}
}

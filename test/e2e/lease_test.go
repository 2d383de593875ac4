package e2e

import (
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/google/uuid"
)

// lc returns a lease client for blob name with lease id id ("" = a new random id).
func (b *blobT) lc(name, id string) *lease.BlobClient {
	b.t.Helper()
	var o *lease.BlobClientOptions
	if id != "" {
		o = &lease.BlobClientOptions{LeaseID: to.Ptr(id)}
	}
	c, err := lease.NewBlobClient(b.bb(name), o)
	must(b.t, err)
	return c
}

// wantLease checks what Get Blob Properties and Get Blob report (§3.1).
func (b *blobT) wantLease(name string, status lease.StatusType, state lease.StateType, dur lease.DurationType) {
	b.t.Helper()
	p := b.props(b.bb(name))
	if bxVal(p.LeaseStatus) != status || bxVal(p.LeaseState) != state || bxVal(p.LeaseDuration) != dur {
		b.t.Fatalf("lease status/state/duration: got %s/%s/%s, want %s/%s/%s", bxVal(p.LeaseStatus), bxVal(p.LeaseState), bxVal(p.LeaseDuration), status, state, dur)
	}
	r, err := b.bb(name).DownloadStream(b.ctx, nil)
	must(b.t, err)
	r.Body.Close()
	if bxVal(r.LeaseStatus) != status || bxVal(r.LeaseState) != state || bxVal(r.LeaseDuration) != dur {
		b.t.Fatalf("Get Blob lease status/state/duration: got %s/%s/%s, want %s/%s/%s", bxVal(r.LeaseStatus), bxVal(r.LeaseState), bxVal(r.LeaseDuration), status, state, dur)
	}
}

func (b *blobT) wantLeased(name string, dur lease.DurationType) {
	b.t.Helper()
	b.wantLease(name, lease.StatusTypeLocked, lease.StateTypeLeased, dur)
}

func bxLAC(id string) *blob.LeaseAccessConditions {
	return &blob.LeaseAccessConditions{LeaseID: to.Ptr(id)}
}

func bxLeaseAC(id string) *blob.AccessConditions {
	if id == "" {
		return nil
	}
	return &blob.AccessConditions{LeaseAccessConditions: bxLAC(id)}
}

func TestLeaseAcquire(t *testing.T) {
	b := newBlobT(t)
	b.put("a", []byte("x"), nil)
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeAvailable, "")

	A := b.lc("a", "")
	var raw *http.Response
	r, err := A.AcquireLease(policy.WithCaptureResponse(b.ctx, &raw), -1, nil)
	must(t, err)
	if raw.StatusCode != http.StatusCreated || bxVal(r.LeaseID) != *A.LeaseID() {
		t.Fatalf("acquire: status %d, id %q want %q", raw.StatusCode, bxVal(r.LeaseID), *A.LeaseID())
	}
	b.wantLeased("a", lease.DurationTypeInfinite)

	// Another id: LeaseAlreadyPresent.
	_, err = b.lc("a", "").AcquireLease(b.ctx, -1, nil)
	wantCode(t, err, 409, bloberror.LeaseAlreadyPresent)
	// The same proposed id: idempotent, and the duration is replaced.
	_, err = A.AcquireLease(b.ctx, -1, nil)
	must(t, err)
	b.wantLeased("a", lease.DurationTypeInfinite)
	_, err = A.AcquireLease(b.ctx, 15, nil)
	must(t, err)
	b.wantLeased("a", lease.DurationTypeFixed)
	b.clock.Advance(16 * time.Second)
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeExpired, "")

	// An expired lease can be taken by someone else.
	B := b.lc("a", "")
	_, err = B.AcquireLease(b.ctx, 60, nil)
	must(t, err)
	b.wantLeased("a", lease.DurationTypeFixed)
	_, err = b.bb("a").SetMetadata(b.ctx, bxMeta("by", "b"), &blob.SetMetadataOptions{AccessConditions: bxLeaseAC(*B.LeaseID())})
	must(t, err)
	_, err = b.bb("a").SetMetadata(b.ctx, bxMeta("by", "a"), &blob.SetMetadataOptions{AccessConditions: bxLeaseAC(*A.LeaseID())})
	wantCode(t, err, 412, bloberror.LeaseIDMismatchWithBlobOperation)

	// Acquire on a missing blob.
	_, err = b.lc("missing", "").AcquireLease(b.ctx, -1, nil)
	wantCode(t, err, 404, bloberror.BlobNotFound)
	// A proposed id that is not a GUID.
	ctx := bxWithHeader(b.ctx, "x-ms-proposed-lease-id", "invalid")
	_, err = b.lc("a", "").AcquireLease(ctx, -1, nil)
	wantCode(t, err, 400, bloberror.InvalidHeaderValue)
}

func TestLeaseAcquireWithoutProposedID(t *testing.T) {
	b := newBlobT(t)
	b.put("a", []byte("x"), nil)
	noID := bxWithoutHeader(b.ctx, "x-ms-proposed-lease-id")
	sdk := b.lc("a", "")
	r, err := sdk.AcquireLease(noID, 20, nil)
	must(t, err)
	id := bxVal(r.LeaseID)
	if id == *sdk.LeaseID() {
		t.Fatal("the proposed lease id was sent")
	}
	if _, err := uuid.Parse(id); err != nil {
		t.Fatalf("server-generated lease id %q: %v", id, err)
	}
	b.wantLeased("a", lease.DurationTypeFixed)
	// Acquiring twice with no proposed id fails the second time.
	_, err = b.lc("a", "").AcquireLease(noID, 20, nil)
	wantCode(t, err, 409, bloberror.LeaseAlreadyPresent)
	// The generated id works.
	_, err = b.lc("a", id).RenewLease(b.ctx, nil)
	must(t, err)
	_, err = b.lc("a", id).ReleaseLease(b.ctx, nil)
	must(t, err)
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeAvailable, "")
}

func TestLeaseDurationAndBreakPeriodLimits(t *testing.T) {
	b := newBlobT(t)
	b.put("a", []byte("x"), nil)
	for _, d := range []int32{14, 61, 0, -2, 1000} {
		_, err := b.lc("a", "").AcquireLease(b.ctx, d, nil)
		wantCode(t, err, 400, bloberror.InvalidHeaderValue)
	}
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeAvailable, "")
	for _, d := range []int32{15, 60, -1} {
		A := b.lc("a", "")
		_, err := A.AcquireLease(b.ctx, d, nil)
		must(t, err)
		_, err = A.ReleaseLease(b.ctx, nil)
		must(t, err)
	}
	A := b.lc("a", "")
	_, err := A.AcquireLease(b.ctx, -1, nil)
	must(t, err)
	_, err = A.BreakLease(b.ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](61)})
	wantCode(t, err, 400, bloberror.InvalidHeaderValue)
	b.wantLeased("a", lease.DurationTypeInfinite)
	// Missing duration on acquire (raw).
	ctx := bxWithoutHeader(b.ctx, "x-ms-lease-duration")
	_, err = b.lc("a", "").AcquireLease(ctx, 15, nil)
	wantCode(t, err, 400, bloberror.MissingRequiredHeader)
	// Unknown action (raw).
	ctx = bxWithHeader(b.ctx, "x-ms-lease-action", "steal")
	_, err = A.RenewLease(ctx, nil)
	wantCode(t, err, 400, bloberror.InvalidHeaderValue)
}

func TestLeaseChange(t *testing.T) {
	b := newBlobT(t)
	b.put("a", []byte("x"), nil)
	A := b.lc("a", "")
	_, err := A.AcquireLease(b.ctx, 30, nil)
	must(t, err)
	idA := *A.LeaseID()
	idC := uuid.NewString()

	b.clock.Advance(10 * time.Second)
	r, err := A.ChangeLease(b.ctx, idC, nil)
	must(t, err)
	if bxVal(r.LeaseID) != idC {
		t.Fatalf("change returned id %q, want %q", bxVal(r.LeaseID), idC)
	}
	b.wantLeased("a", lease.DurationTypeFixed)
	// The old id no longer writes; the new one does.
	_, err = b.bb("a").SetMetadata(b.ctx, nil, &blob.SetMetadataOptions{AccessConditions: bxLeaseAC(idA)})
	wantCode(t, err, 412, bloberror.LeaseIDMismatchWithBlobOperation)
	_, err = b.bb("a").SetMetadata(b.ctx, nil, &blob.SetMetadataOptions{AccessConditions: bxLeaseAC(idC)})
	must(t, err)
	// Retry of the change (old id, proposed = current): succeeds.
	_, err = b.lc("a", idA).ChangeLease(b.ctx, idC, nil)
	must(t, err)
	// Wrong id, proposing yet another id: mismatch.
	_, err = b.lc("a", idA).ChangeLease(b.ctx, uuid.NewString(), nil)
	wantCode(t, err, 409, bloberror.LeaseIDMismatchWithLeaseOperation)
	// Change keeps the expiry: 30 s from acquire, 10 already gone.
	b.clock.Advance(19 * time.Second)
	b.wantLeased("a", lease.DurationTypeFixed)
	b.clock.Advance(2 * time.Second)
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeExpired, "")
	// Change on an expired lease: not present.
	_, err = b.lc("a", idC).ChangeLease(b.ctx, uuid.NewString(), nil)
	wantCode(t, err, 409, bloberror.LeaseNotPresentWithLeaseOperation)
	// ... and on a blob never leased.
	b.put("fresh", []byte("x"), nil)
	_, err = b.lc("fresh", idC).ChangeLease(b.ctx, uuid.NewString(), nil)
	wantCode(t, err, 409, bloberror.LeaseNotPresentWithLeaseOperation)
	// Change needs a GUID.
	C := b.lc("a", idC)
	_, err = C.RenewLease(b.ctx, nil)
	must(t, err)
	_, err = C.ChangeLease(b.ctx, "not-a-guid", nil)
	wantCode(t, err, 400, bloberror.InvalidHeaderValue)
}

func TestLeaseRelease(t *testing.T) {
	b := newBlobT(t)
	b.put("a", []byte("x"), nil)
	A := b.lc("a", "")
	_, err := A.AcquireLease(b.ctx, -1, nil)
	must(t, err)
	_, err = b.lc("a", "").ReleaseLease(b.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseIDMismatchWithLeaseOperation)
	b.wantLeased("a", lease.DurationTypeInfinite)
	var raw *http.Response
	_, err = A.ReleaseLease(policy.WithCaptureResponse(b.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != 200 {
		t.Fatalf("release status %d", raw.StatusCode)
	}
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeAvailable, "")
	// Releasing twice fails; so does renewing a released lease.
	_, err = A.ReleaseLease(b.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseIDMismatchWithLeaseOperation)
	_, err = A.RenewLease(b.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseIDMismatchWithLeaseOperation)
	// Writes need no id now, and reject one.
	_, err = b.bb("a").SetMetadata(b.ctx, bxMeta("k", "v"), nil)
	must(t, err)
	_, err = b.bb("a").SetMetadata(b.ctx, bxMeta("k", "v"), &blob.SetMetadataOptions{AccessConditions: bxLeaseAC(*A.LeaseID())})
	wantCode(t, err, 412, bloberror.LeaseNotPresentWithBlobOperation)
	// Anyone can acquire.
	_, err = b.lc("a", "").AcquireLease(b.ctx, 15, nil)
	must(t, err)
}

func TestLeaseRenewAndExpiry(t *testing.T) {
	b := newBlobT(t)
	b.put("a", []byte("x"), nil)
	A := b.lc("a", "")
	_, err := A.AcquireLease(b.ctx, 15, nil)
	must(t, err)

	// Renew restarts the clock.
	b.clock.Advance(10 * time.Second)
	var raw *http.Response
	r, err := A.RenewLease(policy.WithCaptureResponse(b.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != 200 || bxVal(r.LeaseID) != *A.LeaseID() {
		t.Fatalf("renew: status %d id %q", raw.StatusCode, bxVal(r.LeaseID))
	}
	b.clock.Advance(10 * time.Second)
	b.wantLeased("a", lease.DurationTypeFixed)
	_, err = b.bb("a").SetMetadata(b.ctx, nil, nil)
	wantCode(t, err, 412, bloberror.LeaseIDMissing)
	b.clock.Advance(5 * time.Second)
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeExpired, "")

	// Renew with another id fails in any state.
	_, err = b.lc("a", "").RenewLease(b.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseIDMismatchWithLeaseOperation)

	// Expired, only read since: renew works, with the original duration.
	b.read(b.bb("a"))
	_, err = A.RenewLease(b.ctx, nil)
	must(t, err)
	b.wantLeased("a", lease.DurationTypeFixed)
	b.clock.Advance(14 * time.Second)
	b.wantLeased("a", lease.DurationTypeFixed)
	b.clock.Advance(2 * time.Second)
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeExpired, "")

	// Expired, then written (no id needed once expired): renew fails.
	_, err = b.bb("a").SetMetadata(b.ctx, bxMeta("w", "1"), nil)
	must(t, err)
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeAvailable, "")
	_, err = A.RenewLease(b.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseIDMismatchWithLeaseOperation)

	// An infinite lease stays infinite when renewed.
	_, err = A.AcquireLease(b.ctx, -1, nil)
	must(t, err)
	b.clock.Advance(70 * time.Second)
	_, err = A.RenewLease(b.ctx, nil)
	must(t, err)
	b.wantLeased("a", lease.DurationTypeInfinite)

	// A write with the id of an expired lease is refused.
	_, err = A.AcquireLease(b.ctx, 15, nil)
	must(t, err)
	b.clock.Advance(16 * time.Second)
	_, err = b.bb("a").SetMetadata(b.ctx, nil, &blob.SetMetadataOptions{AccessConditions: bxLeaseAC(*A.LeaseID())})
	wantCode(t, err, 412, "")
	// Put Block on an expired lease with no id: allowed.
	_, err = b.bb("a").StageBlock(b.ctx, base64.StdEncoding.EncodeToString([]byte("b1")), bxBody([]byte("z")), nil)
	must(t, err)
}

func TestLeaseBreak(t *testing.T) {
	b := newBlobT(t)
	b.put("a", []byte("x"), nil)
	A := b.lc("a", "")

	// Break with no lease.
	_, err := A.BreakLease(b.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseNotPresentWithLeaseOperation)

	// Infinite lease, no period: broken at once.
	_, err = A.AcquireLease(b.ctx, -1, nil)
	must(t, err)
	var raw *http.Response
	r, err := A.BreakLease(policy.WithCaptureResponse(b.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != http.StatusAccepted || bxVal(r.LeaseTime) != 0 {
		t.Fatalf("break: status %d, lease time %d", raw.StatusCode, bxVal(r.LeaseTime))
	}
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeBroken, "")
	// Broken: break again is fine, renew is not, writes need no id.
	_, err = A.BreakLease(b.ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](10)})
	must(t, err)
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeBroken, "")
	_, err = A.RenewLease(b.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseIsBrokenAndCannotBeRenewed)
	_, err = A.ChangeLease(b.ctx, uuid.NewString(), nil)
	wantCode(t, err, 409, bloberror.LeaseNotPresentWithLeaseOperation)
	_, err = b.bb("a").SetMetadata(b.ctx, nil, &blob.SetMetadataOptions{AccessConditions: bxLeaseAC(*A.LeaseID())})
	wantCode(t, err, 412, bloberror.LeaseNotPresentWithBlobOperation)
	// Broken: the same id may acquire again.
	_, err = A.AcquireLease(b.ctx, -1, nil)
	must(t, err)
	b.wantLeased("a", lease.DurationTypeInfinite)

	// Infinite lease, period 10: breaking for 10 s.
	r, err = A.BreakLease(b.ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](10)})
	must(t, err)
	if bxVal(r.LeaseTime) != 10 {
		t.Fatalf("lease time %d, want 10", bxVal(r.LeaseTime))
	}
	b.wantLease("a", lease.StatusTypeLocked, lease.StateTypeBreaking, "")
	// Breaking: locked for writes, special lease errors.
	_, err = b.bb("a").SetMetadata(b.ctx, nil, nil)
	wantCode(t, err, 412, bloberror.LeaseIDMissing)
	_, err = b.bb("a").SetMetadata(b.ctx, bxMeta("during", "break"), &blob.SetMetadataOptions{AccessConditions: bxLeaseAC(*A.LeaseID())})
	must(t, err)
	_, err = A.AcquireLease(b.ctx, -1, nil)
	wantCode(t, err, 409, bloberror.LeaseIsBreakingAndCannotBeAcquired)
	_, err = b.lc("a", "").AcquireLease(b.ctx, -1, nil)
	wantCode(t, err, 409, bloberror.LeaseAlreadyPresent)
	_, err = A.RenewLease(b.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseIsBrokenAndCannotBeRenewed)
	_, err = b.lc("a", *A.LeaseID()).ChangeLease(b.ctx, uuid.NewString(), nil)
	wantCode(t, err, 409, bloberror.LeaseIsBreakingAndCannotBeChanged)
	_, err = b.lc("a", "").ChangeLease(b.ctx, uuid.NewString(), nil)
	wantCode(t, err, 409, bloberror.LeaseIDMismatchWithLeaseOperation)
	_, err = b.lc("a", "").ReleaseLease(b.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseIDMismatchWithLeaseOperation)
	// Break again with a shorter period: the earlier time wins.
	b.clock.Advance(2 * time.Second)
	r, err = b.lc("a", "").BreakLease(b.ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](3)})
	must(t, err)
	if bxVal(r.LeaseTime) != 3 {
		t.Fatalf("lease time %d, want 3", bxVal(r.LeaseTime))
	}
	// ... and a longer one does not extend it.
	r, err = A.BreakLease(b.ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](60)})
	must(t, err)
	if bxVal(r.LeaseTime) != 3 {
		t.Fatalf("lease time %d, want 3", bxVal(r.LeaseTime))
	}
	b.clock.Advance(3 * time.Second)
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeBroken, "")
	_, err = b.bb("a").SetMetadata(b.ctx, nil, nil)
	must(t, err)
	// Broken with another id: a new lease.
	B := b.lc("a", "")
	_, err = B.AcquireLease(b.ctx, 20, nil)
	must(t, err)

	// Fixed lease, period longer than the time left: breaks at expiry.
	b.clock.Advance(5 * time.Second)
	r, err = B.BreakLease(b.ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](60)})
	must(t, err)
	if bxVal(r.LeaseTime) != 15 {
		t.Fatalf("lease time %d, want 15", bxVal(r.LeaseTime))
	}
	b.wantLease("a", lease.StatusTypeLocked, lease.StateTypeBreaking, "")
	// Breaking: release with the id works.
	_, err = B.ReleaseLease(b.ctx, nil)
	must(t, err)
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeAvailable, "")

	// Fixed lease, no period: breaking until it would expire.
	_, err = B.AcquireLease(b.ctx, 30, nil)
	must(t, err)
	b.clock.Advance(10 * time.Second)
	r, err = B.BreakLease(b.ctx, nil)
	must(t, err)
	if bxVal(r.LeaseTime) != 20 {
		t.Fatalf("lease time %d, want 20", bxVal(r.LeaseTime))
	}
	b.clock.Advance(19 * time.Second)
	b.wantLease("a", lease.StatusTypeLocked, lease.StateTypeBreaking, "")
	b.clock.Advance(time.Second)
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeBroken, "")
	// Broken: release with the id returns the blob to available.
	_, err = B.ReleaseLease(b.ctx, nil)
	must(t, err)
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeAvailable, "")

	// Break period 0 on a fixed lease: broken at once.
	_, err = B.AcquireLease(b.ctx, 60, nil)
	must(t, err)
	r, err = b.lc("a", "").BreakLease(b.ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](0)})
	must(t, err)
	if bxVal(r.LeaseTime) != 0 {
		t.Fatalf("lease time %d, want 0", bxVal(r.LeaseTime))
	}
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeBroken, "")

	// An expired lease breaks straight to broken.
	_, err = B.AcquireLease(b.ctx, 15, nil)
	must(t, err)
	b.clock.Advance(16 * time.Second)
	_, err = B.BreakLease(b.ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](30)})
	must(t, err)
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeBroken, "")
}

// bxLeasedOp is a write that a lease gates, run with a given lease id ("" = none).
type bxLeasedOp struct {
	name string
	do   func(b *blobT, c *blockblob.Client, id string) error
}

func bxLeasedOps() []bxLeasedOp {
	blockID := base64.StdEncoding.EncodeToString([]byte("block-1"))
	return []bxLeasedOp{
		{"Put Blob", func(b *blobT, c *blockblob.Client, id string) error {
			_, err := c.Upload(b.ctx, bxBody([]byte("overwrite")), &blockblob.UploadOptions{AccessConditions: bxLeaseAC(id), Metadata: bxMeta("by", "put")})
			return err
		}},
		{"Set Metadata", func(b *blobT, c *blockblob.Client, id string) error {
			_, err := c.SetMetadata(b.ctx, bxMeta("by", "meta"), &blob.SetMetadataOptions{AccessConditions: bxLeaseAC(id)})
			return err
		}},
		{"Set Properties", func(b *blobT, c *blockblob.Client, id string) error {
			_, err := c.SetHTTPHeaders(b.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/leased")}, &blob.SetHTTPHeadersOptions{AccessConditions: bxLeaseAC(id)})
			return err
		}},
		{"Put Block", func(b *blobT, c *blockblob.Client, id string) error {
			var o *blockblob.StageBlockOptions
			if id != "" {
				o = &blockblob.StageBlockOptions{LeaseAccessConditions: bxLAC(id)}
			}
			_, err := c.StageBlock(b.ctx, blockID, bxBody([]byte("block")), o)
			return err
		}},
		{"Put Block List", func(b *blobT, c *blockblob.Client, id string) error {
			_, err := c.CommitBlockList(b.ctx, nil, &blockblob.CommitBlockListOptions{AccessConditions: bxLeaseAC(id), Metadata: bxMeta("by", "list")})
			return err
		}},
		{"Copy Blob", func(b *blobT, c *blockblob.Client, id string) error {
			_, err := c.StartCopyFromURL(b.ctx, b.bb("src").URL(), &blob.StartCopyFromURLOptions{AccessConditions: bxLeaseAC(id)})
			return err
		}},
		{"Copy Blob From URL", func(b *blobT, c *blockblob.Client, id string) error {
			_, err := c.CopyFromURL(b.ctx, b.bb("src").URL(), &blob.CopyFromURLOptions{BlobAccessConditions: bxLeaseAC(id)})
			return err
		}},
		{"Delete", func(b *blobT, c *blockblob.Client, id string) error {
			_, err := c.Delete(b.ctx, &blob.DeleteOptions{AccessConditions: bxLeaseAC(id)})
			return err
		}},
	}
}

func TestLeaseGatesWrites(t *testing.T) {
	b := newBlobT(t)
	b.put("src", []byte("copy source"), nil)
	for _, op := range bxLeasedOps() {
		t.Run(op.name, func(t *testing.T) {
			defer b.use(t)()
			name := "g-" + op.name
			c := b.bb(name)
			b.put(name, []byte("original"), &blockblob.UploadOptions{Metadata: bxMeta("orig", "1")})
			A := b.lc(name, "")
			_, err := A.AcquireLease(b.ctx, -1, nil)
			must(t, err)
			before := b.state(c)

			wantCode(t, op.do(b, c, ""), 412, bloberror.LeaseIDMissing)
			b.wantUnchanged("no lease id", c, before)
			wantCode(t, op.do(b, c, uuid.NewString()), 412, bloberror.LeaseIDMismatchWithBlobOperation)
			b.wantUnchanged("wrong lease id", c, before)
			must(t, op.do(b, c, *A.LeaseID()))
			if op.name == "Delete" {
				_, err := c.GetProperties(b.ctx, nil)
				wantCode(t, err, 404, bloberror.BlobNotFound)
				// The lease went with the blob: a new blob is free.
				b.put(name, []byte("new"), nil)
				b.wantLease(name, lease.StatusTypeUnlocked, lease.StateTypeAvailable, "")
				return
			}
			// The write kept the lease (overwrite with the right id included).
			b.wantLeased(name, lease.DurationTypeInfinite)
			if op.name != "Put Block" {
				if after := b.state(c); after.etag == before.etag {
					t.Fatal("write with the lease id did not change the ETag")
				}
			}
			_, err = A.RenewLease(b.ctx, nil)
			must(t, err)

			// Breaking is still locked.
			_, err = A.BreakLease(b.ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](5)})
			must(t, err)
			wantCode(t, op.do(b, c, ""), 412, bloberror.LeaseIDMissing)
			b.clock.Advance(5 * time.Second)
			// Broken: an id is refused, no id is fine.
			wantCode(t, op.do(b, c, *A.LeaseID()), 412, bloberror.LeaseNotPresentWithBlobOperation)
			must(t, op.do(b, c, ""))
		})
	}
	// Put Block on a leased blob that has no committed content yet is not
	// possible (a lease needs a blob); on a missing blob an id is refused.
	_, err := b.bb("nothing").StageBlock(b.ctx, base64.StdEncoding.EncodeToString([]byte("block-1")), bxBody([]byte("x")), &blockblob.StageBlockOptions{LeaseAccessConditions: bxLAC(uuid.NewString())})
	wantCode(t, err, 412, bloberror.LeaseNotPresentWithBlobOperation)
	_, err = b.bb("nothing2").Upload(b.ctx, bxBody([]byte("x")), &blockblob.UploadOptions{AccessConditions: bxLeaseAC(uuid.NewString())})
	wantCode(t, err, 412, bloberror.LeaseNotPresentWithBlobOperation)
}

func TestLeaseReadsAndSnapshots(t *testing.T) {
	b := newBlobT(t)
	b.put("a", []byte("leased content"), nil)
	A := b.lc("a", "")
	_, err := A.AcquireLease(b.ctx, -1, nil)
	must(t, err)
	c := b.bb("a")

	// Reads need no id; a wrong id is refused; the right one works.
	b.read(c)
	_, err = c.DownloadStream(b.ctx, &blob.DownloadStreamOptions{AccessConditions: bxLeaseAC(uuid.NewString())})
	wantCode(t, err, 412, bloberror.LeaseIDMismatchWithBlobOperation)
	_, err = c.GetProperties(b.ctx, &blob.GetPropertiesOptions{AccessConditions: bxLeaseAC(uuid.NewString())})
	wantCode(t, err, 412, bloberror.LeaseIDMismatchWithBlobOperation)
	_, err = c.GetProperties(b.ctx, &blob.GetPropertiesOptions{AccessConditions: bxLeaseAC(*A.LeaseID())})
	must(t, err)
	_, err = c.GetBlockList(b.ctx, blockblob.BlockListTypeAll, &blockblob.GetBlockListOptions{AccessConditions: bxLeaseAC(uuid.NewString())})
	wantCode(t, err, 412, bloberror.LeaseIDMismatchWithBlobOperation)

	// Snapshot: id optional, must match; the snapshot has no lease.
	_, err = c.CreateSnapshot(b.ctx, &blob.CreateSnapshotOptions{AccessConditions: bxLeaseAC(uuid.NewString())})
	wantCode(t, err, 412, bloberror.LeaseIDMismatchWithBlobOperation)
	s1, err := c.CreateSnapshot(b.ctx, nil)
	must(t, err)
	_, err = c.CreateSnapshot(b.ctx, &blob.CreateSnapshotOptions{AccessConditions: bxLeaseAC(*A.LeaseID())})
	must(t, err)
	sp := b.props(b.snap("a", *s1.Snapshot))
	if bxVal(sp.LeaseState) == lease.StateTypeLeased || bxVal(sp.LeaseStatus) == lease.StatusTypeLocked {
		t.Fatalf("snapshot reports the base blob's lease: %s/%s", bxVal(sp.LeaseStatus), bxVal(sp.LeaseState))
	}
	// Deleting a snapshot of a leased blob needs no lease id.
	_, err = b.snap("a", *s1.Snapshot).Delete(b.ctx, nil)
	must(t, err)
	// Reading with an id after release: not present.
	_, err = A.ReleaseLease(b.ctx, nil)
	must(t, err)
	_, err = c.DownloadStream(b.ctx, &blob.DownloadStreamOptions{AccessConditions: bxLeaseAC(*A.LeaseID())})
	wantCode(t, err, 412, bloberror.LeaseNotPresentWithBlobOperation)
}

func TestLeaseDoesNotChangeETag(t *testing.T) {
	b := newBlobT(t)
	up := b.put("a", []byte("x"), nil)
	c := b.bb("a")
	same := func(what string, etag string, lm *time.Time) {
		t.Helper()
		if etag != bxETag(up.ETag) {
			t.Fatalf("%s: response ETag %s, want %s", what, etag, bxETag(up.ETag))
		}
		if lm == nil || !lm.Equal(*up.LastModified) {
			t.Fatalf("%s: response Last-Modified %v, want %v", what, lm, up.LastModified)
		}
		p := b.props(c)
		if bxETag(p.ETag) != bxETag(up.ETag) || !p.LastModified.Equal(*up.LastModified) {
			t.Fatalf("%s changed the blob: ETag %s, Last-Modified %v", what, bxETag(p.ETag), p.LastModified)
		}
	}
	A := b.lc("a", "")
	b.clock.Advance(2 * time.Second)
	r1, err := A.AcquireLease(b.ctx, 15, nil)
	must(t, err)
	same("acquire", bxETag(r1.ETag), r1.LastModified)
	b.clock.Advance(2 * time.Second)
	r2, err := A.RenewLease(b.ctx, nil)
	must(t, err)
	same("renew", bxETag(r2.ETag), r2.LastModified)
	b.clock.Advance(2 * time.Second)
	r3, err := A.ChangeLease(b.ctx, uuid.NewString(), nil)
	must(t, err)
	same("change", bxETag(r3.ETag), r3.LastModified)
	b.clock.Advance(2 * time.Second)
	r4, err := A.BreakLease(b.ctx, &lease.BlobBreakOptions{BreakPeriod: to.Ptr[int32](1)})
	must(t, err)
	same("break", bxETag(r4.ETag), r4.LastModified)
	b.clock.Advance(2 * time.Second)
	r5, err := A.ReleaseLease(b.ctx, nil)
	must(t, err)
	same("release", bxETag(r5.ETag), r5.LastModified)
	// If-Match with the original ETag still works after all of that.
	_, err = c.SetMetadata(b.ctx, bxMeta("k", "v"), &blob.SetMetadataOptions{AccessConditions: bxMAC(&blob.ModifiedAccessConditions{IfMatch: up.ETag})})
	must(t, err)
}

func TestLeaseKeptOnOverwrite(t *testing.T) {
	b := newBlobT(t)
	b.put("a", []byte("v1"), nil)
	A := b.lc("a", "")
	_, err := A.AcquireLease(b.ctx, 20, nil)
	must(t, err)
	b.clock.Advance(10 * time.Second)
	// Overwrite with the right id: the lease and its expiry are kept.
	b.put("a", []byte("v2"), &blockblob.UploadOptions{AccessConditions: bxLeaseAC(*A.LeaseID())})
	if got := b.read(b.bb("a")); string(got) != "v2" {
		t.Fatalf("content %q", got)
	}
	b.wantLeased("a", lease.DurationTypeFixed)
	_, err = b.bb("a").Upload(b.ctx, bxBody([]byte("v3")), nil)
	wantCode(t, err, 412, bloberror.LeaseIDMissing)
	b.clock.Advance(11 * time.Second)
	b.wantLease("a", lease.StatusTypeUnlocked, lease.StateTypeExpired, "")
	// Written while leased, then expired with no write since: renewable.
	_, err = A.RenewLease(b.ctx, nil)
	must(t, err)
	b.wantLeased("a", lease.DurationTypeFixed)
}

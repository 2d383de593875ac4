package e2e

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// startImmutability is start with blob versioning and version-level
// immutability support on (--blob-versioning --blob-immutability).
func startImmutability(t *testing.T) *env {
	t.Helper()
	a, clk := startAppWith(t, func(c *app.Config) { c.BlobVersioning, c.BlobImmutability = true, true })
	return &env{t: t, app: a, clock: clk, c: client(t, a.BlobURL, app.DevKey), ctx: context.Background()}
}

var (
	modeUnlocked = blob.ImmutabilityPolicySettingUnlocked
	modeLocked   = blob.ImmutabilityPolicySettingLocked
)

func setPolicy(e *env, c *blob.Client, until time.Time, mode blob.ImmutabilityPolicySetting) error {
	_, err := c.SetImmutabilityPolicy(e.ctx, until, &blob.SetImmutabilityPolicyOptions{Mode: &mode})
	return err
}

// TestImmutabilityPolicyAndLegalHold walks a blob version through an
// Unlocked policy, a legal hold, an overwrite (allowed: it makes a new
// version), locking, and expiry on the server's clock, checking each
// refusal by its code (azblob's recorded TestSetImmutabilityPolicy,
// TestDeleteImmutabilityPolicy and TestSetLegalHold; "Version-level
// WORM policies", scenarios).
func TestImmutabilityPolicyAndLegalHold(t *testing.T) {
	e := startImmutability(t)
	e.container("worm")
	cc := e.c.ServiceClient().NewContainerClient("worm")
	cp, err := cc.GetProperties(e.ctx, nil)
	must(t, err)
	if cp.IsImmutableStorageWithVersioningEnabled == nil || !*cp.IsImmutableStorageWithVersioningEnabled {
		t.Fatal("container: x-ms-immutable-storage-with-versioning-enabled not true")
	}
	bb := cc.NewBlockBlobClient("b")
	first := must2(bb.UploadBuffer(e.ctx, []byte("first"), nil))
	bc := bb.BlobClient()
	now := e.clock.Now().UTC().Truncate(time.Second)

	// Unlocked: set, read back, shortened.
	until := now.Add(8 * time.Minute)
	r, err := bc.SetImmutabilityPolicy(e.ctx, until, &blob.SetImmutabilityPolicyOptions{Mode: &modeUnlocked})
	must(t, err)
	if !r.ImmutabilityPolicyExpiry.Equal(until) {
		t.Fatalf("set answered until %v, want %v", r.ImmutabilityPolicyExpiry, until)
	}
	props := must2(bc.GetProperties(e.ctx, nil))
	if props.ImmutabilityPolicyExpiresOn == nil || !props.ImmutabilityPolicyExpiresOn.Equal(until) ||
		props.ImmutabilityPolicyMode == nil || *props.ImmutabilityPolicyMode != blob.ImmutabilityPolicyMode("unlocked") {
		t.Fatalf("properties: until %v mode %v", props.ImmutabilityPolicyExpiresOn, props.ImmutabilityPolicyMode)
	}
	_, err = bc.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)
	_, err = bc.SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v")}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)
	until = now.Add(5 * time.Minute)
	must(t, setPolicy(e, bc, until, modeUnlocked)) // an Unlocked policy may be shortened
	wantCode(t, setPolicy(e, bc, now.Add(-time.Minute), modeUnlocked), http.StatusBadRequest, bloberror.InvalidHeaderValue)
	// If-Unmodified-Since, the one condition the operation takes.
	_, err = bc.SetImmutabilityPolicy(e.ctx, until, &blob.SetImmutabilityPolicyOptions{Mode: &modeUnlocked,
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfUnmodifiedSince: to.Ptr(now.Add(-time.Hour))}})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = bc.SetImmutabilityPolicy(e.ctx, until, &blob.SetImmutabilityPolicyOptions{Mode: &modeUnlocked,
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfUnmodifiedSince: to.Ptr(now.Add(time.Minute))}})
	must(t, err)

	// A legal hold, reported by reads and listings; it wins over the policy.
	lh, err := bc.SetLegalHold(e.ctx, true, nil)
	must(t, err)
	if lh.LegalHold == nil || !*lh.LegalHold {
		t.Fatal("Set Blob Legal Hold did not answer x-ms-legal-hold: true")
	}
	_, err = bc.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold"))
	dl := must2(bc.DownloadStream(e.ctx, nil))
	dl.Body.Close()
	if dl.LegalHold == nil || !*dl.LegalHold || dl.ImmutabilityPolicyExpiresOn == nil {
		t.Fatal("Get Blob: legal hold or policy missing")
	}
	// Reads, tags and leases stay allowed.
	_, err = bc.SetTags(e.ctx, map[string]string{"t": "1"}, nil)
	must(t, err)
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{ImmutabilityPolicy: true, LegalHold: true}})
	page := must2(pager.NextPage(e.ctx))
	if len(page.Segment.BlobItems) != 1 {
		t.Fatalf("listed %d blobs", len(page.Segment.BlobItems))
	}
	lp := page.Segment.BlobItems[0].Properties
	if lp.LegalHold == nil || !*lp.LegalHold || lp.ImmutabilityPolicyExpiresOn == nil || !lp.ImmutabilityPolicyExpiresOn.Equal(until) ||
		lp.ImmutabilityPolicyMode == nil || *lp.ImmutabilityPolicyMode != blob.ImmutabilityPolicyMode("unlocked") {
		t.Fatalf("listing: hold %v until %v mode %v", lp.LegalHold, lp.ImmutabilityPolicyExpiresOn, lp.ImmutabilityPolicyMode)
	}

	// An overwrite is allowed: the protected state becomes a previous
	// version, with its policy and hold; the new current version has none.
	second := must2(bb.UploadBuffer(e.ctx, []byte("second"), nil))
	props = must2(bc.GetProperties(e.ctx, nil))
	if props.ImmutabilityPolicyExpiresOn != nil || (props.LegalHold != nil && *props.LegalHold) {
		t.Fatal("the new current version inherited the policy or hold")
	}
	prev := must2(bc.WithVersionID(*first.VersionID))
	vp := must2(prev.GetProperties(e.ctx, nil))
	if vp.LegalHold == nil || !*vp.LegalHold || vp.ImmutabilityPolicyExpiresOn == nil {
		t.Fatal("the previous version lost its policy or hold")
	}
	_, err = prev.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold"))
	must2(prev.SetLegalHold(e.ctx, false, nil))
	_, err = prev.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)

	// Locked: extend only; no unlock, no shortening, no delete.
	must(t, setPolicy(e, prev, until, modeLocked))
	wantCode(t, setPolicy(e, prev, until.Add(-time.Minute), modeLocked), http.StatusConflict, bloberror.BlobImmutableDueToPolicy)
	wantCode(t, setPolicy(e, prev, until.Add(time.Minute), modeUnlocked), http.StatusConflict, bloberror.BlobImmutableDueToPolicy)
	_, err = prev.DeleteImmutabilityPolicy(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.ImmutabilityPolicyDeleteOnLockedPolicy)
	until = until.Add(2 * time.Minute)
	must(t, setPolicy(e, prev, until, modeLocked))
	vp = must2(prev.GetProperties(e.ctx, nil))
	if *vp.ImmutabilityPolicyMode != blob.ImmutabilityPolicyMode("locked") || !vp.ImmutabilityPolicyExpiresOn.Equal(until) {
		t.Fatalf("locked policy reads %v until %v", *vp.ImmutabilityPolicyMode, vp.ImmutabilityPolicyExpiresOn)
	}

	// The current version under an Unlocked policy: the policy is
	// deleted, then the blob is.
	cur := must2(bc.WithVersionID(*second.VersionID))
	must(t, setPolicy(e, cur, now.Add(5*time.Minute), modeUnlocked))
	_, err = bc.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)
	must2(bc.DeleteImmutabilityPolicy(e.ctx, nil))
	must2(bc.Delete(e.ctx, nil))

	// The container holds versions: it cannot be deleted.
	_, err = cc.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("ContainerImmutableStorageWithVersioningEnabled"))

	// Expiry on the server's clock: the locked version can be deleted,
	// and then the container (within the 15 minutes a request date may
	// differ from the server's).
	e.clock.Advance(10 * time.Minute)
	must2(prev.Delete(e.ctx, nil))
	pager = cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Versions: true}})
	for pager.More() {
		for _, it := range must2(pager.NextPage(e.ctx)).Segment.BlobItems {
			v := must2(cc.NewBlobClient(*it.Name).WithVersionID(*it.VersionID))
			must2(v.Delete(e.ctx, nil))
		}
	}
	must2(cc.Delete(e.ctx, nil))
}

// TestImmutabilityOnWrite: Put Blob and Put Block List set a policy and
// legal hold on the version they make (azblob's recorded
// TestUploadBlockWithImmutabilityPolicy and
// TestPutBlockListWithImmutabilityPolicy); Set Blob Metadata and Put Page
// stay refused after the policy expired, Delete Blob does not.
func TestImmutabilityOnWrite(t *testing.T) {
	e := startImmutability(t)
	e.container("wrt")
	cc := e.c.ServiceClient().NewContainerClient("wrt")
	until := e.clock.Now().UTC().Truncate(time.Second).Add(5 * time.Minute)
	bb := cc.NewBlockBlobClient("up")
	_, err := bb.Upload(e.ctx, streamOf("x"), &blockblob.UploadOptions{ImmutabilityPolicyExpiryTime: &until, ImmutabilityPolicyMode: &modeUnlocked, LegalHold: to.Ptr(true)})
	must(t, err)
	p := must2(bb.GetProperties(e.ctx, nil))
	if p.ImmutabilityPolicyMode == nil || *p.ImmutabilityPolicyMode != blob.ImmutabilityPolicyMode("unlocked") || p.LegalHold == nil || !*p.LegalHold {
		t.Fatal("Put Blob did not set the policy and hold")
	}
	must2(bb.SetLegalHold(e.ctx, false, nil))
	must2(bb.DeleteImmutabilityPolicy(e.ctx, nil))
	must2(bb.Delete(e.ctx, nil))

	bl := cc.NewBlockBlobClient("list")
	id := "AAAA"
	must2(bl.StageBlock(e.ctx, id, streamOf("block"), nil))
	_, err = bl.CommitBlockList(e.ctx, []string{id}, &blockblob.CommitBlockListOptions{ImmutabilityPolicyExpiryTime: &until, ImmutabilityPolicyMode: &modeLocked})
	must(t, err)
	p = must2(bl.GetProperties(e.ctx, nil))
	if p.ImmutabilityPolicyMode == nil || *p.ImmutabilityPolicyMode != blob.ImmutabilityPolicyMode("locked") {
		t.Fatal("Put Block List did not set the policy")
	}

	// Copy Blob: the copy takes the request's policy and hold, not the
	// source's; a snapshot has none of its own until set.
	src := cc.NewBlockBlobClient("src")
	must2(src.UploadBuffer(e.ctx, []byte("source"), nil))
	must2(src.SetLegalHold(e.ctx, true, nil))
	snap := must2(src.CreateSnapshot(e.ctx, nil))
	sc := must2(src.WithSnapshot(*snap.Snapshot))
	if sp := must2(sc.GetProperties(e.ctx, nil)); sp.LegalHold != nil && *sp.LegalHold {
		t.Fatal("the snapshot took the blob's legal hold")
	}
	must2(sc.SetLegalHold(e.ctx, true, nil))
	_, err = sc.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold"))
	must2(src.SetLegalHold(e.ctx, false, nil))
	_, err = src.Delete(e.ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)})
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold"))
	must2(src.SetLegalHold(e.ctx, true, nil))
	must2(sc.SetLegalHold(e.ctx, false, nil))
	must2(sc.Delete(e.ctx, nil))
	plain := cc.NewBlobClient("copy-plain")
	must2(plain.CopyFromURL(e.ctx, src.URL(), nil))
	if cp := must2(plain.GetProperties(e.ctx, nil)); cp.LegalHold != nil && *cp.LegalHold {
		t.Fatal("the copy took the source's legal hold")
	}
	held := cc.NewBlobClient("copy-held")
	must2(held.StartCopyFromURL(e.ctx, src.URL(), &blob.StartCopyFromURLOptions{ImmutabilityPolicyExpiry: &until, ImmutabilityPolicyMode: &modeUnlocked}))
	_, err = held.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)
	must2(src.SetLegalHold(e.ctx, false, nil))

	pb := cc.NewPageBlobClient("page")
	// (azblob's pageblob.CreateOptions sends x-ms-legal-hold only.)
	_, err = pb.Create(e.ctx, 1024, &pageblob.CreateOptions{LegalHold: to.Ptr(true)})
	must(t, err)
	_, err = pb.UploadPages(e.ctx, streamOf(string(make([]byte, 512))), blob.HTTPRange{Offset: 0, Count: 512}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold"))
	must2(pb.SetLegalHold(e.ctx, false, nil))
	must(t, setPolicy(e, pb.BlobClient(), until, modeUnlocked))
	_, err = pb.UploadPages(e.ctx, streamOf(string(make([]byte, 512))), blob.HTTPRange{Offset: 0, Count: 512}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)

	e.clock.Advance(10 * time.Minute)
	_, err = bl.SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v")}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)
	_, err = pb.UploadPages(e.ctx, streamOf(string(make([]byte, 512))), blob.HTTPRange{Offset: 0, Count: 512}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)
	must2(bl.Delete(e.ctx, nil))
	must2(pb.Delete(e.ctx, nil))
	must2(held.Delete(e.ctx, nil))
}

// TestImmutabilityNotSupported: with versioning but without
// version-level immutability support, the operations and the write
// headers are refused and the container reports no support.
func TestImmutabilityNotSupported(t *testing.T) {
	e := startVersioning(t)
	e.container("plain")
	cc := e.c.ServiceClient().NewContainerClient("plain")
	cp := must2(cc.GetProperties(e.ctx, nil))
	if cp.IsImmutableStorageWithVersioningEnabled != nil && *cp.IsImmutableStorageWithVersioningEnabled {
		t.Fatal("container reports version-level immutability support")
	}
	bb := cc.NewBlockBlobClient("b")
	must2(bb.UploadBuffer(e.ctx, []byte("x"), nil))
	until := e.clock.Now().Add(time.Hour)
	wantCode(t, setPolicy(e, bb.BlobClient(), until, modeUnlocked), http.StatusBadRequest, bloberror.InvalidOperation)
	_, err := bb.SetLegalHold(e.ctx, true, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidOperation)
	_, err = bb.DeleteImmutabilityPolicy(e.ctx, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidOperation)
	_, err = bb.Upload(e.ctx, streamOf("y"), &blockblob.UploadOptions{LegalHold: to.Ptr(true)})
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidOperation)
	must2(bb.Delete(e.ctx, nil))
	must2(cc.Delete(e.ctx, nil))
}

// TestImmutabilitySAS: the three operations take the i permission, in a
// service SAS and an account SAS.
func TestImmutabilitySAS(t *testing.T) {
	e := startImmutability(t)
	e.container("isas")
	bb := e.c.ServiceClient().NewContainerClient("isas").NewBlockBlobClient("b")
	must2(bb.UploadBuffer(e.ctx, []byte("x"), nil))
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	now := time.Now().UTC()
	svc := func(p sas.BlobPermissions) *blob.Client {
		qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, StartTime: now.Add(-5 * time.Minute), ExpiryTime: now.Add(time.Hour),
			Permissions: p.String(), ContainerName: "isas", BlobName: "b"}.SignWithSharedKey(cred)
		must(t, err)
		c, err := blob.NewClientWithNoCredential(bb.URL()+"?"+qp.Encode(), &blob.ClientOptions{ClientOptions: clientOptions().ClientOptions})
		must(t, err)
		return c
	}
	acct := func(p sas.AccountPermissions) *blob.Client {
		qp, err := sas.AccountSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, StartTime: now.Add(-5 * time.Minute), ExpiryTime: now.Add(time.Hour),
			Permissions: p.String(), ResourceTypes: (&sas.AccountResourceTypes{Object: true}).String()}.SignWithSharedKey(cred)
		must(t, err)
		c, err := blob.NewClientWithNoCredential(bb.URL()+"?"+qp.Encode(), &blob.ClientOptions{ClientOptions: clientOptions().ClientOptions})
		must(t, err)
		return c
	}
	until := e.clock.Now().Add(time.Hour)
	w := svc(sas.BlobPermissions{Read: true, Write: true, Delete: true})
	wantCode(t, setPolicy(e, w, until, modeUnlocked), http.StatusForbidden, bloberror.AuthorizationPermissionMismatch)
	_, err = w.SetLegalHold(e.ctx, true, nil)
	wantCode(t, err, http.StatusForbidden, bloberror.AuthorizationPermissionMismatch)
	i := svc(sas.BlobPermissions{SetImmutabilityPolicy: true})
	must(t, setPolicy(e, i, until, modeUnlocked))
	must2(i.SetLegalHold(e.ctx, true, nil))
	must2(i.SetLegalHold(e.ctx, false, nil))
	must2(i.DeleteImmutabilityPolicy(e.ctx, nil))
	aw := acct(sas.AccountPermissions{Read: true, Write: true})
	_, err = aw.SetLegalHold(e.ctx, true, nil)
	wantCode(t, err, http.StatusForbidden, bloberror.AuthorizationPermissionMismatch)
	ai := acct(sas.AccountPermissions{SetImmutabilityPolicy: true})
	must(t, setPolicy(e, ai, until, modeUnlocked))
	must2(ai.DeleteImmutabilityPolicy(e.ctx, nil))
}

// TestImmutabilityHierarchical: a hierarchical account keeps no
// versions, so writes asking for a policy or hold are refused there too
// ("Version-level WORM policies": not supported with a hierarchical
// namespace).
func TestImmutabilityHierarchical(t *testing.T) {
	a, clk := startAppWith(t, func(c *app.Config) { c.HierarchicalNamespace, c.BlobImmutability = true, true })
	e := &env{t: t, app: a, clock: clk, c: client(t, a.BlobURL, app.DevKey), ctx: context.Background()}
	e.container("hier")
	bb := e.c.ServiceClient().NewContainerClient("hier").NewBlockBlobClient("f")
	_, err := bb.Upload(e.ctx, streamOf("x"), &blockblob.UploadOptions{LegalHold: to.Ptr(true)})
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidOperation)
	must2(bb.UploadBuffer(e.ctx, []byte("x"), nil))
	_, err = bb.SetLegalHold(e.ctx, true, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidOperation)
}

// TestImmutabilityPerAccount: ":immutability" in --accounts gives the
// containers of that account alone version-level immutability support;
// another versioned account's containers refuse a legal hold.
func TestImmutabilityPerAccount(t *testing.T) {
	s := "worm:" + app.DevKey + ":versioning:immutability;plain:" + app.DevKey + ":versioning"
	accts, err := app.ParseAccounts(s)
	must(t, err)
	a, clk := startAppWith(t, func(c *app.Config) {
		c.Accounts, c.VersioningAccounts, c.ImmutabilityAccounts = accts, app.VersioningAccounts(s), app.ImmutabilityAccounts(s)
	})
	u := must2(url.Parse(a.BlobURL))
	base := u.Scheme + "://" + u.Host
	for _, tc := range []struct {
		account string
		on      bool
	}{{"worm", true}, {"plain", false}} {
		e := &env{t: t, app: a, clock: clk, c: clientAs(t, base+"/"+tc.account, tc.account, app.DevKey), ctx: context.Background()}
		e.container("ctr")
		cc := e.c.ServiceClient().NewContainerClient("ctr")
		cp := must2(cc.GetProperties(e.ctx, nil))
		if got := cp.IsImmutableStorageWithVersioningEnabled != nil && *cp.IsImmutableStorageWithVersioningEnabled; got != tc.on {
			t.Fatalf("%s: container support %v, want %v", tc.account, got, tc.on)
		}
		bb := cc.NewBlockBlobClient("b")
		must2(bb.UploadBuffer(e.ctx, []byte("x"), nil))
		_, err := bb.SetLegalHold(e.ctx, true, nil)
		if tc.on {
			must(t, err)
			_, err = bb.Delete(e.ctx, nil)
			wantCode(t, err, http.StatusConflict, "BlobImmutableDueToLegalHold")
		} else {
			wantCode(t, err, http.StatusBadRequest, bloberror.InvalidOperation)
		}
	}
}

// headerPolicy adds fixed headers to every request of a client.
type headerPolicy map[string]string

func (h headerPolicy) Do(req *policy.Request) (*http.Response, error) {
	for k, v := range h {
		req.Raw().Header.Set(k, v)
	}
	return req.Next()
}

// TestImmutabilityPutBlobFromURL: Put Blob From URL takes the
// x-ms-immutability-policy-until-date/-mode and x-ms-legal-hold headers
// as Put Blob does (azblob's UploadBlobFromURL does not send them; a
// policy adds them), and refuses them where the container has no
// version-level immutability support.
func TestImmutabilityPutBlobFromURL(t *testing.T) {
	e := startImmutability(t)
	_, err := e.c.CreateContainer(e.ctx, "pub", &azblob.CreateContainerOptions{Access: to.Ptr(azblob.PublicAccessTypeBlob)})
	must(t, err)
	src := e.c.ServiceClient().NewContainerClient("pub").NewBlockBlobClient("src")
	must2(src.UploadBuffer(e.ctx, []byte("source"), nil))
	until := e.clock.Now().UTC().Truncate(time.Second).Add(5 * time.Minute)
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	opts := clientOptions()
	opts.PerCallPolicies = append(opts.PerCallPolicies, headerPolicy{
		"x-ms-immutability-policy-until-date": until.Format(http.TimeFormat),
		"x-ms-immutability-policy-mode":       "Unlocked",
		"x-ms-legal-hold":                     "true",
	})
	hc, err := azblob.NewClientWithSharedKeyCredential(e.app.BlobURL, cred, opts)
	must(t, err)
	dst := hc.ServiceClient().NewContainerClient("pub").NewBlockBlobClient("dst")
	must2(dst.UploadBlobFromURL(e.ctx, src.URL(), nil))
	p := must2(e.c.ServiceClient().NewContainerClient("pub").NewBlobClient("dst").GetProperties(e.ctx, nil))
	if p.ImmutabilityPolicyExpiresOn == nil || !p.ImmutabilityPolicyExpiresOn.Equal(until) || p.LegalHold == nil || !*p.LegalHold {
		t.Fatalf("Put Blob From URL: until %v hold %v", p.ImmutabilityPolicyExpiresOn, p.LegalHold)
	}
	_, err = e.c.ServiceClient().NewContainerClient("pub").NewBlobClient("dst").Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold"))

	// Without support (versioning off) the headers are refused.
	a, clk := startAppWith(t, func(*app.Config) {})
	plain := &env{t: t, app: a, clock: clk, c: client(t, a.BlobURL, app.DevKey), ctx: context.Background()}
	_, err = plain.c.CreateContainer(plain.ctx, "pub", &azblob.CreateContainerOptions{Access: to.Ptr(azblob.PublicAccessTypeBlob)})
	must(t, err)
	psrc := plain.c.ServiceClient().NewContainerClient("pub").NewBlockBlobClient("src")
	must2(psrc.UploadBuffer(plain.ctx, []byte("source"), nil))
	hc2, err := azblob.NewClientWithSharedKeyCredential(a.BlobURL, cred, opts)
	must(t, err)
	_, err = hc2.ServiceClient().NewContainerClient("pub").NewBlockBlobClient("dst").UploadBlobFromURL(plain.ctx, psrc.URL(), nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidOperation)
}

package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/cerulean-storage/cerulean/internal/app"
	cblob "github.com/cerulean-storage/cerulean/internal/blob"
)

// TestDefaultVersionPolicy: on a container with version-level
// immutability support, the container's time-based retention policy
// (set through the admin endpoint, as ARM's immutabilityPolicies/default)
// is the default policy of the versions written into it: an upload
// without a policy of its own inherits it (Unlocked while the default is,
// Locked once it is locked), an upload with its own overrides it, an
// overwrite gives the new current version the default while the previous
// one keeps its own, and the container itself refuses nothing that
// version-level rules allow ("Version-level WORM policies",
// immutable-version-level-worm-policies: "Configure a policy on the
// current version", its upload table and "Configure a policy on a
// previous version").
func TestDefaultVersionPolicy(t *testing.T) {
	// Requests dated by the server's clock (sdDatePolicy), which the
	// test moves on.
	a, clk := startAppWith(t, func(c *app.Config) { c.BlobVersioning, c.BlobImmutability = true, true })
	opts := clientOptions()
	opts.PerCallPolicies = append(opts.PerCallPolicies, sdDatePolicy{clk})
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	c, err := azblob.NewClientWithSharedKeyCredential(a.BlobURL, cred, opts)
	must(t, err)
	e := &env{t: t, app: a, clock: clk, c: c, ctx: context.Background()}
	adm := newWORMAdmin(t, a.BlobURL, clk)
	e.container("dvp")
	cc := e.c.ServiceClient().NewContainerClient("dvp")
	// A blob written before the default keeps no policy.
	before := cc.NewBlockBlobClient("before")
	must2(before.UploadBuffer(e.ctx, []byte("x"), nil))

	adm.ok(http.MethodPut, "dvp/immutabilityPolicies/default", "", policyBody(3, nil))
	if _, _, out := adm.do(http.MethodGet, "dvp", "", nil); out["immutableStorageWithVersioning"].(map[string]any)["enabled"] != true {
		t.Fatalf("settings: %v", out)
	}
	policyOf := func(c *blob.Client) (*time.Time, string) {
		t.Helper()
		p := must2(c.GetProperties(e.ctx, nil))
		mode := ""
		if p.ImmutabilityPolicyMode != nil {
			mode = string(*p.ImmutabilityPolicyMode)
		}
		return p.ImmutabilityPolicyExpiresOn, mode
	}
	if until, _ := policyOf(before.BlobClient()); until != nil {
		t.Fatalf("a blob written before the default has a policy until %v", until)
	}

	bb := cc.NewBlockBlobClient("b")
	first := must2(bb.UploadBuffer(e.ctx, []byte("one"), nil))
	now := e.clock.Now().UTC()
	until, mode := policyOf(bb.BlobClient())
	want := now.Add(72 * time.Hour)
	if until == nil || until.Sub(want).Abs() > 2*time.Second || mode != "unlocked" {
		t.Fatalf("inherited policy: until %v (want %v) mode %q", until, want, mode)
	}
	// Protected as its own policy protects it; the container-level
	// rules do not apply (Set Blob Metadata of an unprotected blob of
	// the container passes).
	_, err = bb.BlobClient().Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)
	_, err = bb.BlobClient().SetMetadata(e.ctx, map[string]*string{"k": &[]string{"v"}[0]}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)
	must2(before.BlobClient().SetMetadata(e.ctx, map[string]*string{"k": &[]string{"v"}[0]}, nil))

	// An overwrite makes a new version: the previous one keeps its
	// policy, the new current version inherits the default anew.
	e.clock.Advance(time.Hour)
	must2(bb.UploadBuffer(e.ctx, []byte("two"), nil))
	prev, err := bb.BlobClient().WithVersionID(*first.VersionID)
	must(t, err)
	if pu, _ := policyOf(prev); pu == nil || !pu.Equal(*until) {
		t.Fatalf("previous version's policy until %v, want %v", pu, until)
	}
	if cu, _ := policyOf(bb.BlobClient()); cu == nil || !cu.After(*until) {
		t.Fatalf("current version's policy until %v, want after %v", cu, until)
	}

	// An upload with a policy of its own overrides the default.
	own := e.clock.Now().UTC().Add(24 * time.Hour).Truncate(time.Second)
	ob := cc.NewBlockBlobClient("own")
	must2(ob.Upload(e.ctx, streamOf("x"), &blockblob.UploadOptions{ImmutabilityPolicyExpiryTime: &own, ImmutabilityPolicyMode: &modeUnlocked}))
	if ou, _ := policyOf(ob.BlobClient()); ou == nil || !ou.Equal(own) {
		t.Fatalf("own policy until %v, want %v", ou, own)
	}

	// Locked default: what inherits it is Locked (deleting the policy
	// is refused); the blobs inherited before stay Unlocked.
	etag := adm.ok(http.MethodGet, "dvp/immutabilityPolicies/default", "", nil)
	adm.ok(http.MethodPost, "dvp/immutabilityPolicies/default/lock", etag, nil)
	lb := cc.NewBlockBlobClient("locked")
	must2(lb.UploadBuffer(e.ctx, []byte("x"), nil))
	if _, m := policyOf(lb.BlobClient()); m != "locked" {
		t.Fatalf("inherited from a locked default: mode %q", m)
	}
	_, err = lb.BlobClient().DeleteImmutabilityPolicy(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, "ImmutabilityPolicyDeleteOnLockedPolicy")
	if _, m := policyOf(prev); m != "unlocked" {
		t.Fatalf("a version inherited before the lock reads %q", m)
	}

	// Past every period, deletes pass; the container goes once empty.
	e.clock.Advance(5 * 24 * time.Hour)
	_, err = cc.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, "ContainerImmutableStorageWithVersioningEnabled")
}

// TestAccountDefaultVersionPolicy: --blob-immutability-policy is the
// accounts' default version-level policy: a version written without a
// policy of its own gets it, a container's default takes precedence over
// it and a write's own policy over both (ARM's
// ImmutableStorageAccount.immutabilityPolicy: "The object-level
// immutability policy has higher precedence than the container-level
// immutability policy, which has a higher precedence than the
// account-level immutability policy").
func TestAccountDefaultVersionPolicy(t *testing.T) {
	a, clk := startAppWith(t, func(c *app.Config) {
		c.BlobVersioning, c.BlobImmutability = true, true
		c.ImmutabilityPolicy = &cblob.DefaultPolicy{Days: 2, Locked: true}
	})
	e := &env{t: t, app: a, clock: clk, c: client(t, a.BlobURL, app.DevKey), ctx: context.Background()}
	adm := newWORMAdmin(t, a.BlobURL, nil)
	e.container("acctdef")
	cc := e.c.ServiceClient().NewContainerClient("acctdef")
	check := func(name string, days time.Duration, mode string) {
		t.Helper()
		p := must2(cc.NewBlobClient(name).GetProperties(e.ctx, nil))
		want := clk.Now().UTC().Add(days * 24 * time.Hour)
		if p.ImmutabilityPolicyExpiresOn == nil || p.ImmutabilityPolicyExpiresOn.Sub(want).Abs() > 2*time.Second ||
			p.ImmutabilityPolicyMode == nil || string(*p.ImmutabilityPolicyMode) != mode {
			t.Fatalf("%s: until %v mode %v, want %v %s", name, p.ImmutabilityPolicyExpiresOn, p.ImmutabilityPolicyMode, want, mode)
		}
	}
	must2(cc.NewBlockBlobClient("a").UploadBuffer(e.ctx, []byte("x"), nil))
	check("a", 2, "locked")
	_, err := cc.NewBlobClient("a").Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)

	adm.ok(http.MethodPut, "acctdef/immutabilityPolicies/default", "", policyBody(5, nil))
	must2(cc.NewBlockBlobClient("c").UploadBuffer(e.ctx, []byte("x"), nil))
	check("c", 5, "unlocked")

	own := clk.Now().UTC().Add(24 * time.Hour).Truncate(time.Second)
	must2(cc.NewBlockBlobClient("o").Upload(e.ctx, streamOf("x"), &blockblob.UploadOptions{ImmutabilityPolicyExpiryTime: &own, ImmutabilityPolicyMode: &modeUnlocked}))
	check("o", 1, "unlocked")
}

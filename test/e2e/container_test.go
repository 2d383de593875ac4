package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
)

func (e *env) ctClient(name string) *container.Client {
	return e.c.ServiceClient().NewContainerClient(name)
}

// ctWantMeta compares metadata case-insensitively on keys: the Go SDK reads
// metadata back from canonicalised response header names.
func ctWantMeta(t *testing.T, got map[string]*string, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("metadata %v, want %v", ctDeref(got), want)
	}
	for k, v := range want {
		found := false
		for gk, gv := range got {
			if strings.EqualFold(gk, k) && gv != nil && *gv == v {
				found = true
			}
		}
		if !found {
			t.Fatalf("metadata %v, want %v", ctDeref(got), want)
		}
	}
}

func ctDeref(m map[string]*string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

func ctPtrMeta(m map[string]string) map[string]*string {
	out := map[string]*string{}
	for k, v := range m {
		out[k] = to.Ptr(v)
	}
	return out
}

func TestContainerCreate(t *testing.T) {
	e := start(t)
	var raw *http.Response
	resp, err := e.ctClient("cont1").Create(runtime.WithCaptureResponse(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d", raw.StatusCode)
	}
	svWantCommon(t, raw.Header)
	if resp.ETag == nil || !strings.HasPrefix(string(*resp.ETag), `"0x`) || resp.LastModified == nil {
		t.Fatalf("create: ETag %v Last-Modified %v", resp.ETag, resp.LastModified)
	}
	if d := resp.LastModified.Sub(e.clock.Now().Truncate(time.Second)); d != 0 {
		t.Fatalf("Last-Modified %v, server clock %v", resp.LastModified, e.clock.Now())
	}

	_, err = e.ctClient("cont1").Create(e.ctx, nil)
	wantCode(t, err, 409, bloberror.ContainerAlreadyExists)
	_, err = e.c.CreateContainer(e.ctx, "cont1", &container.CreateOptions{Metadata: ctPtrMeta(map[string]string{"a": "b"})})
	wantCode(t, err, 409, bloberror.ContainerAlreadyExists)
	// The failed create left the container alone.
	p, err := e.ctClient("cont1").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ETag != *resp.ETag || len(p.Metadata) != 0 {
		t.Fatalf("failed create modified the container: %v %v", *p.ETag, ctDeref(p.Metadata))
	}

	// The system containers may be created, but for $logs, Storage
	// Analytics' own (TestReservedContainerNames).
	for _, name := range []string{"$root", "$web"} {
		_, err := e.ctClient(name).Create(e.ctx, nil)
		must(t, err)
	}
}

func TestContainerInvalidNames(t *testing.T) {
	e := start(t)
	cases := []struct {
		name string
		code bloberror.Code
	}{
		{"ab", bloberror.OutOfRangeInput},
		{"a", bloberror.OutOfRangeInput},
		{strings.Repeat("a", 64), bloberror.OutOfRangeInput},
		{"Abc", bloberror.InvalidResourceName},
		{"abC", bloberror.InvalidResourceName},
		{"a--b", bloberror.InvalidResourceName},
		{"-abc", bloberror.InvalidResourceName},
		{"abc-", bloberror.InvalidResourceName},
		{"ab_c", bloberror.InvalidResourceName},
		{"ab.c", bloberror.InvalidResourceName},
		{"foo bar", bloberror.InvalidResourceName},
		{"$other", bloberror.InvalidResourceName},
	}
	for _, c := range cases {
		_, err := e.ctClient(c.name).Create(e.ctx, nil)
		t.Run(c.name, func(t *testing.T) { wantCode(t, err, 400, c.code) })
	}
	// Boundary lengths are accepted.
	for _, name := range []string{"abc", strings.Repeat("a", 63), "a-b-c", "0a9"} {
		_, err := e.ctClient(name).Create(e.ctx, nil)
		must(t, err)
	}
	// Nothing invalid was created.
	n := 0
	pager := e.c.NewListContainersPager(nil)
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(t, err)
		n += len(page.ContainerItems)
	}
	if n != 4 {
		t.Fatalf("%d containers, want 4", n)
	}
}

func TestContainerGetProperties(t *testing.T) {
	e := start(t)
	meta := map[string]string{"project": "cerulean", "Owner": "Team A"}
	cr, err := e.ctClient("props").Create(e.ctx, &container.CreateOptions{
		Metadata: ctPtrMeta(meta),
		Access:   to.Ptr(container.PublicAccessTypeBlob),
	})
	must(t, err)
	var raw *http.Response
	p, err := e.ctClient("props").GetProperties(runtime.WithCaptureResponse(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != 200 {
		t.Fatalf("status %d", raw.StatusCode)
	}
	svWantCommon(t, raw.Header)
	if *p.ETag != *cr.ETag || !p.LastModified.Equal(*cr.LastModified) {
		t.Fatalf("ETag/Last-Modified %v %v, create said %v %v", *p.ETag, p.LastModified, *cr.ETag, cr.LastModified)
	}
	ctWantMeta(t, p.Metadata, meta)
	if p.LeaseState == nil || *p.LeaseState != lease.StateTypeAvailable ||
		p.LeaseStatus == nil || *p.LeaseStatus != lease.StatusTypeUnlocked || p.LeaseDuration != nil {
		t.Fatalf("lease %v %v %v", p.LeaseState, p.LeaseStatus, p.LeaseDuration)
	}
	if p.BlobPublicAccess == nil || *p.BlobPublicAccess != container.PublicAccessTypeBlob {
		t.Fatalf("public access %v", p.BlobPublicAccess)
	}
	if p.HasImmutabilityPolicy == nil || *p.HasImmutabilityPolicy || p.HasLegalHold == nil || *p.HasLegalHold {
		t.Fatalf("immutability %v legal hold %v", p.HasImmutabilityPolicy, p.HasLegalHold)
	}

	// A private container reports no public access header.
	e.container("private")
	p, err = e.ctClient("private").GetProperties(e.ctx, nil)
	must(t, err)
	if p.BlobPublicAccess != nil || len(p.Metadata) != 0 {
		t.Fatalf("private: access %v meta %v", *p.BlobPublicAccess, ctDeref(p.Metadata))
	}

	_, err = e.ctClient("missing").GetProperties(e.ctx, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	// HEAD form: no body, but the code is in x-ms-error-code.
	r := e.svSigned(http.MethodHead, "/missing?restype=container", nil, nil)
	svWantRaw(t, r, 404, string(bloberror.ContainerNotFound))
	if len(r.body) != 0 {
		t.Fatalf("HEAD error has a body: %q", r.body)
	}
	r = e.svSigned(http.MethodHead, "/props?restype=container", nil, nil)
	svWantRaw(t, r, 200, "")
	if r.header.Get("ETag") != string(*cr.ETag) || r.header.Get("x-ms-blob-public-access") != "blob" || r.header.Get("x-ms-lease-state") != "available" {
		t.Fatalf("HEAD headers %v", r.header)
	}
}

func TestContainerSetMetadata(t *testing.T) {
	e := start(t)
	cr, err := e.ctClient("meta").Create(e.ctx, &container.CreateOptions{Metadata: ctPtrMeta(map[string]string{"old": "1"})})
	must(t, err)

	// Several writes within one second of the (frozen) server clock: each
	// gets a new ETag; Last-Modified keeps its one-second resolution.
	seen := map[string]bool{string(*cr.ETag): true}
	var last container.SetMetadataResponse
	for i := range 5 {
		var raw *http.Response
		m := map[string]string{"k": strings.Repeat("v", i+1), "n": "x"}
		last, err = e.ctClient("meta").SetMetadata(runtime.WithCaptureResponse(e.ctx, &raw), &container.SetMetadataOptions{Metadata: ctPtrMeta(m)})
		must(t, err)
		if raw.StatusCode != 200 {
			t.Fatalf("set metadata: %d", raw.StatusCode)
		}
		if last.ETag == nil || seen[string(*last.ETag)] {
			t.Fatalf("write %d reused ETag %v", i, last.ETag)
		}
		seen[string(*last.ETag)] = true
		p, err := e.ctClient("meta").GetProperties(e.ctx, nil)
		must(t, err)
		ctWantMeta(t, p.Metadata, m) // replaced, not merged: "old" is gone
		if *p.ETag != *last.ETag || !p.LastModified.Equal(*last.LastModified) {
			t.Fatalf("properties %v %v after set %v %v", *p.ETag, p.LastModified, *last.ETag, last.LastModified)
		}
	}

	// No metadata clears it.
	_, err = e.ctClient("meta").SetMetadata(e.ctx, nil)
	must(t, err)
	p, err := e.ctClient("meta").GetProperties(e.ctx, nil)
	must(t, err)
	if len(p.Metadata) != 0 {
		t.Fatalf("metadata not cleared: %v", ctDeref(p.Metadata))
	}

	// If-Modified-Since equal to Last-Modified is not met (strictly later).
	_, err = e.ctClient("meta").SetMetadata(e.ctx, &container.SetMetadataOptions{
		Metadata:                 ctPtrMeta(map[string]string{"x": "y"}),
		ModifiedAccessConditions: &container.ModifiedAccessConditions{IfModifiedSince: p.LastModified},
	})
	wantCode(t, err, 412, bloberror.ConditionNotMet)
	_, err = e.ctClient("meta").SetMetadata(e.ctx, &container.SetMetadataOptions{
		Metadata:                 ctPtrMeta(map[string]string{"x": "y"}),
		ModifiedAccessConditions: &container.ModifiedAccessConditions{IfModifiedSince: to.Ptr(p.LastModified.Add(-time.Second))},
	})
	must(t, err)

	_, err = e.ctClient("nometa").SetMetadata(e.ctx, &container.SetMetadataOptions{Metadata: ctPtrMeta(map[string]string{"a": "b"})})
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	// Invalid metadata names.
	_, err = e.ctClient("meta").SetMetadata(e.ctx, &container.SetMetadataOptions{Metadata: ctPtrMeta(map[string]string{"1abc": "b"})})
	wantCode(t, err, 400, bloberror.InvalidMetadata)
}

func TestContainerACL(t *testing.T) {
	e := start(t)
	e.container("acl")
	start := e.clock.Now().Truncate(time.Second)
	expiry := start.Add(48 * time.Hour)
	policies := []*container.SignedIdentifier{
		{ID: to.Ptr("readers"), AccessPolicy: &container.AccessPolicy{Start: to.Ptr(start), Expiry: to.Ptr(expiry), Permission: to.Ptr("rl")}},
		{ID: to.Ptr("writers"), AccessPolicy: &container.AccessPolicy{Expiry: to.Ptr(expiry), Permission: to.Ptr("racwdl")}},
		{ID: to.Ptr("noTimes"), AccessPolicy: &container.AccessPolicy{Permission: to.Ptr("r")}},
	}
	var raw *http.Response
	sr, err := e.ctClient("acl").SetAccessPolicy(runtime.WithCaptureResponse(e.ctx, &raw), &container.SetAccessPolicyOptions{
		Access:       to.Ptr(container.PublicAccessTypeContainer),
		ContainerACL: policies,
	})
	must(t, err)
	if raw.StatusCode != 200 || sr.ETag == nil {
		t.Fatalf("set ACL: %d %v", raw.StatusCode, sr.ETag)
	}
	gr, err := e.ctClient("acl").GetAccessPolicy(runtime.WithCaptureResponse(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != 200 {
		t.Fatalf("get ACL: %d", raw.StatusCode)
	}
	if gr.BlobPublicAccess == nil || *gr.BlobPublicAccess != container.PublicAccessTypeContainer || *gr.ETag != *sr.ETag {
		t.Fatalf("get ACL: access %v ETag %v", gr.BlobPublicAccess, gr.ETag)
	}
	if len(gr.SignedIdentifiers) != 3 {
		t.Fatalf("%d identifiers", len(gr.SignedIdentifiers))
	}
	for i, want := range policies {
		got := gr.SignedIdentifiers[i]
		if *got.ID != *want.ID || *got.AccessPolicy.Permission != *want.AccessPolicy.Permission ||
			!ctSameTime(got.AccessPolicy.Start, want.AccessPolicy.Start) || !ctSameTime(got.AccessPolicy.Expiry, want.AccessPolicy.Expiry) {
			t.Fatalf("identifier %d: %+v, want %+v", i, *got.AccessPolicy, *want.AccessPolicy)
		}
	}
	p, err := e.ctClient("acl").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.BlobPublicAccess != container.PublicAccessTypeContainer {
		t.Fatalf("properties public access %v", *p.BlobPublicAccess)
	}

	// Set ACL replaces everything: access "blob" and no policies.
	_, err = e.ctClient("acl").SetAccessPolicy(e.ctx, &container.SetAccessPolicyOptions{Access: to.Ptr(container.PublicAccessTypeBlob)})
	must(t, err)
	gr, err = e.ctClient("acl").GetAccessPolicy(e.ctx, nil)
	must(t, err)
	if *gr.BlobPublicAccess != container.PublicAccessTypeBlob || len(gr.SignedIdentifiers) != 0 {
		t.Fatalf("after replace: %v %d", *gr.BlobPublicAccess, len(gr.SignedIdentifiers))
	}
	// No access header makes the container private.
	_, err = e.ctClient("acl").SetAccessPolicy(e.ctx, nil)
	must(t, err)
	gr, err = e.ctClient("acl").GetAccessPolicy(e.ctx, nil)
	must(t, err)
	if gr.BlobPublicAccess != nil {
		t.Fatalf("still public: %v", *gr.BlobPublicAccess)
	}
	p, err = e.ctClient("acl").GetProperties(e.ctx, nil)
	must(t, err)
	if p.BlobPublicAccess != nil {
		t.Fatalf("properties still public: %v", *p.BlobPublicAccess)
	}

	// More than five policies.
	six := make([]*container.SignedIdentifier, 6)
	for i := range six {
		six[i] = &container.SignedIdentifier{ID: to.Ptr("id" + string(rune('0'+i))), AccessPolicy: &container.AccessPolicy{Permission: to.Ptr("r")}}
	}
	_, err = e.ctClient("acl").SetAccessPolicy(e.ctx, &container.SetAccessPolicyOptions{ContainerACL: six})
	wantCode(t, err, 400, bloberror.InvalidXMLDocument)
	// Five are fine.
	_, err = e.ctClient("acl").SetAccessPolicy(e.ctx, &container.SetAccessPolicyOptions{ContainerACL: six[:5]})
	must(t, err)
	// An identifier longer than 64 characters, or missing.
	_, err = e.ctClient("acl").SetAccessPolicy(e.ctx, &container.SetAccessPolicyOptions{ContainerACL: []*container.SignedIdentifier{
		{ID: to.Ptr(strings.Repeat("a", 65)), AccessPolicy: &container.AccessPolicy{Permission: to.Ptr("r")}}}})
	wantCode(t, err, 400, bloberror.InvalidXMLDocument)
	_, err = e.ctClient("acl").SetAccessPolicy(e.ctx, &container.SetAccessPolicyOptions{ContainerACL: []*container.SignedIdentifier{
		{AccessPolicy: &container.AccessPolicy{Permission: to.Ptr("rw")}}}})
	wantCode(t, err, 400, bloberror.InvalidXMLDocument)
	gr, err = e.ctClient("acl").GetAccessPolicy(e.ctx, nil)
	must(t, err)
	if len(gr.SignedIdentifiers) != 5 {
		t.Fatalf("rejected Set changed the ACL: %d identifiers", len(gr.SignedIdentifiers))
	}
	// Invalid public access level.
	r := e.svSigned(http.MethodPut, "/acl?restype=container&comp=acl", map[string]string{"x-ms-blob-public-access": "everyone"}, nil)
	svWantRaw(t, r, 400, string(bloberror.InvalidHeaderValue))

	_, err = e.ctClient("noacl").GetAccessPolicy(e.ctx, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	_, err = e.ctClient("noacl").SetAccessPolicy(e.ctx, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
}

func ctSameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

func TestContainerDelete(t *testing.T) {
	e := start(t)
	e.container("del")
	_, err := e.c.UploadBuffer(e.ctx, "del", "blob", []byte("data"), nil)
	must(t, err)
	var raw *http.Response
	_, err = e.ctClient("del").Delete(runtime.WithCaptureResponse(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != http.StatusAccepted {
		t.Fatalf("delete: %d", raw.StatusCode)
	}
	svWantCommon(t, raw.Header)
	_, err = e.ctClient("del").GetProperties(e.ctx, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	_, err = e.ctClient("del").Delete(e.ctx, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	_, err = e.c.DownloadStream(e.ctx, "del", "blob", nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)

	// Re-created once its reclaim is over, the container is empty.
	e.recreateContainer("del")
	pager := e.ctClient("del").NewListBlobsFlatPager(nil)
	page, err := pager.NextPage(e.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 0 {
		t.Fatalf("re-created container lists %d blobs", len(page.Segment.BlobItems))
	}
}

func TestContainerDeleteConditions(t *testing.T) {
	e := start(t)
	cr, err := e.ctClient("cond").Create(e.ctx, nil)
	must(t, err)
	lm := *cr.LastModified
	del := func(c container.ModifiedAccessConditions) error {
		_, err := e.ctClient("cond").Delete(e.ctx, &container.DeleteOptions{AccessConditions: &container.AccessConditions{ModifiedAccessConditions: &c}})
		return err
	}
	e.clock.Advance(5 * time.Second)
	// If-Modified-Since: not modified since its creation time or later.
	wantCode(t, del(container.ModifiedAccessConditions{IfModifiedSince: to.Ptr(lm)}), 412, bloberror.ConditionNotMet)
	wantCode(t, del(container.ModifiedAccessConditions{IfModifiedSince: to.Ptr(lm.Add(time.Second))}), 412, bloberror.ConditionNotMet)
	// If-Unmodified-Since before its creation.
	wantCode(t, del(container.ModifiedAccessConditions{IfUnmodifiedSince: to.Ptr(lm.Add(-time.Second))}), 412, bloberror.ConditionNotMet)
	// The HEAD-less 412 still names the code on a raw request.
	r := e.svSigned(http.MethodDelete, "/cond?restype=container", map[string]string{"If-Unmodified-Since": lm.Add(-time.Hour).UTC().Format(http.TimeFormat)}, nil)
	svWantRaw(t, r, 412, string(bloberror.ConditionNotMet))
	svWantErrorBody(t, r, string(bloberror.ConditionNotMet))
	if _, err := e.ctClient("cond").GetProperties(e.ctx, nil); err != nil {
		t.Fatalf("container gone after failed conditional deletes: %v", err)
	}
	// If-Match is not supported on Delete Container.
	r = e.svSigned(http.MethodDelete, "/cond?restype=container", map[string]string{"If-Match": string(*cr.ETag)}, nil)
	if r.status != 400 {
		t.Fatalf("If-Match on Delete Container: %d %s", r.status, r.header.Get("x-ms-error-code"))
	}
	// Met conditions delete.
	must(t, del(container.ModifiedAccessConditions{IfModifiedSince: to.Ptr(lm.Add(-time.Second)), IfUnmodifiedSince: to.Ptr(lm)}))
	_, err = e.ctClient("cond").GetProperties(e.ctx, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
}

var ctLeaseIDs = []string{"c820a799-76d7-4ee2-6e15-546f19325c2c", "326cc5e1-746e-4af8-4811-a50e6629a8ca", "8c4d4d8e-5d0b-4a59-9c43-6b2a0f0a1e77"}

func TestContainerLeaseLifecycle(t *testing.T) {
	e := start(t)
	cr, err := e.ctClient("leased").Create(e.ctx, nil)
	must(t, err)
	lc, err := lease.NewContainerClient(e.ctClient("leased"), &lease.ContainerClientOptions{LeaseID: to.Ptr(ctLeaseIDs[0])})
	must(t, err)

	var raw *http.Response
	acq, err := lc.AcquireLease(runtime.WithCaptureResponse(e.ctx, &raw), -1, nil)
	must(t, err)
	if raw.StatusCode != http.StatusCreated || acq.LeaseID == nil || *acq.LeaseID != ctLeaseIDs[0] {
		t.Fatalf("acquire: %d %v", raw.StatusCode, acq.LeaseID)
	}
	// A lease action does not modify the container.
	if *acq.ETag != *cr.ETag {
		t.Fatalf("acquire changed the ETag")
	}
	p, err := e.ctClient("leased").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.LeaseState != lease.StateTypeLeased || *p.LeaseStatus != lease.StatusTypeLocked || p.LeaseDuration == nil || *p.LeaseDuration != lease.DurationTypeInfinite {
		t.Fatalf("leased: %v %v %v", *p.LeaseState, *p.LeaseStatus, p.LeaseDuration)
	}
	// Acquiring again with another id fails.
	other, err := lease.NewContainerClient(e.ctClient("leased"), &lease.ContainerClientOptions{LeaseID: to.Ptr(ctLeaseIDs[1])})
	must(t, err)
	_, err = other.AcquireLease(e.ctx, 15, nil)
	wantCode(t, err, 409, bloberror.LeaseAlreadyPresent)
	_, err = other.RenewLease(e.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseIDMismatchWithLeaseOperation)
	_, err = other.ReleaseLease(e.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseIDMismatchWithLeaseOperation)

	// Renew (200).
	rn, err := lc.RenewLease(runtime.WithCaptureResponse(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != 200 || *rn.LeaseID != ctLeaseIDs[0] {
		t.Fatalf("renew: %d %v", raw.StatusCode, *rn.LeaseID)
	}
	// Change (200): the old id stops working.
	ch, err := lc.ChangeLease(runtime.WithCaptureResponse(e.ctx, &raw), ctLeaseIDs[2], nil)
	must(t, err)
	if raw.StatusCode != 200 || *ch.LeaseID != ctLeaseIDs[2] || *lc.LeaseID() != ctLeaseIDs[2] {
		t.Fatalf("change: %d %v", raw.StatusCode, *ch.LeaseID)
	}
	stale, err := lease.NewContainerClient(e.ctClient("leased"), &lease.ContainerClientOptions{LeaseID: to.Ptr(ctLeaseIDs[0])})
	must(t, err)
	_, err = stale.RenewLease(e.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseIDMismatchWithLeaseOperation)

	// Release (200) → available.
	_, err = lc.ReleaseLease(runtime.WithCaptureResponse(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != 200 {
		t.Fatalf("release: %d", raw.StatusCode)
	}
	p, err = e.ctClient("leased").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.LeaseState != lease.StateTypeAvailable || *p.LeaseStatus != lease.StatusTypeUnlocked || p.LeaseDuration != nil {
		t.Fatalf("released: %v %v %v", *p.LeaseState, *p.LeaseStatus, p.LeaseDuration)
	}
	_, err = lc.ReleaseLease(e.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseIDMismatchWithLeaseOperation)
	_, err = lc.BreakLease(e.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseNotPresentWithLeaseOperation)

	// Break an infinite lease with no period: broken at once (202, time 0).
	_, err = lc.AcquireLease(e.ctx, -1, nil)
	must(t, err)
	br, err := other.BreakLease(runtime.WithCaptureResponse(e.ctx, &raw), nil) // any caller may break
	must(t, err)
	if raw.StatusCode != http.StatusAccepted || br.LeaseTime == nil || *br.LeaseTime != 0 {
		t.Fatalf("break: %d %v", raw.StatusCode, br.LeaseTime)
	}
	p, err = e.ctClient("leased").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.LeaseState != lease.StateTypeBroken || *p.LeaseStatus != lease.StatusTypeUnlocked {
		t.Fatalf("broken: %v %v", *p.LeaseState, *p.LeaseStatus)
	}
	_, err = lc.RenewLease(e.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseIsBrokenAndCannotBeRenewed)

	// Break with a period: breaking, then broken once the clock passes it.
	_, err = lc.AcquireLease(e.ctx, 30, nil)
	must(t, err)
	br, err = lc.BreakLease(e.ctx, &lease.ContainerBreakOptions{BreakPeriod: to.Ptr(int32(10))})
	must(t, err)
	if *br.LeaseTime != 10 {
		t.Fatalf("break period: lease time %d", *br.LeaseTime)
	}
	p, err = e.ctClient("leased").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.LeaseState != lease.StateTypeBreaking || *p.LeaseStatus != lease.StatusTypeLocked {
		t.Fatalf("breaking: %v %v", *p.LeaseState, *p.LeaseStatus)
	}
	_, err = lc.AcquireLease(e.ctx, 15, nil)
	wantCode(t, err, 409, bloberror.LeaseIsBreakingAndCannotBeAcquired)
	_, err = lc.ChangeLease(e.ctx, ctLeaseIDs[1], nil)
	wantCode(t, err, 409, bloberror.LeaseIsBreakingAndCannotBeChanged)
	// While breaking the container is still locked against deletion.
	_, err = e.ctClient("leased").Delete(e.ctx, nil)
	wantCode(t, err, 412, bloberror.LeaseIDMissing)
	e.clock.Advance(11 * time.Second)
	p, err = e.ctClient("leased").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.LeaseState != lease.StateTypeBroken || *p.LeaseStatus != lease.StatusTypeUnlocked {
		t.Fatalf("after break period: %v %v", *p.LeaseState, *p.LeaseStatus)
	}
	// A broken lease can be acquired again, by anyone.
	_, err = other.AcquireLease(e.ctx, 15, nil)
	must(t, err)

	// Invalid durations and ids are 400.
	_, err = e.ctClient("leased").GetProperties(e.ctx, nil)
	must(t, err)
	r := e.svSigned(http.MethodPut, "/leased?restype=container&comp=lease", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "14"}, nil)
	svWantRaw(t, r, 400, string(bloberror.InvalidHeaderValue))
	r = e.svSigned(http.MethodPut, "/leased?restype=container&comp=lease", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "61"}, nil)
	svWantRaw(t, r, 400, string(bloberror.InvalidHeaderValue))
	r = e.svSigned(http.MethodPut, "/leased?restype=container&comp=lease", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "20", "x-ms-proposed-lease-id": "invalid"}, nil)
	svWantRaw(t, r, 400, string(bloberror.InvalidHeaderValue))

	// Lease on a missing container.
	ml, err := lease.NewContainerClient(e.ctClient("nolease"), nil)
	must(t, err)
	_, err = ml.AcquireLease(e.ctx, 15, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
}

func TestContainerLeaseGatesOnlyDelete(t *testing.T) {
	e := start(t)
	e.container("gate")
	lc, err := lease.NewContainerClient(e.ctClient("gate"), &lease.ContainerClientOptions{LeaseID: to.Ptr(ctLeaseIDs[0])})
	must(t, err)
	_, err = lc.AcquireLease(e.ctx, -1, nil)
	must(t, err)
	wrong := &container.LeaseAccessConditions{LeaseID: to.Ptr(ctLeaseIDs[1])}
	right := &container.LeaseAccessConditions{LeaseID: to.Ptr(ctLeaseIDs[0])}

	// Delete Container needs the id.
	_, err = e.ctClient("gate").Delete(e.ctx, nil)
	wantCode(t, err, 412, bloberror.LeaseIDMissing)
	_, err = e.ctClient("gate").Delete(e.ctx, &container.DeleteOptions{AccessConditions: &container.AccessConditions{LeaseAccessConditions: wrong}})
	wantCode(t, err, 412, bloberror.LeaseIDMismatchWithContainerOperation)

	// Everything else works without it...
	_, err = e.ctClient("gate").SetMetadata(e.ctx, &container.SetMetadataOptions{Metadata: ctPtrMeta(map[string]string{"a": "1"})})
	must(t, err)
	_, err = e.ctClient("gate").GetProperties(e.ctx, nil)
	must(t, err)
	_, err = e.ctClient("gate").SetAccessPolicy(e.ctx, &container.SetAccessPolicyOptions{Access: to.Ptr(container.PublicAccessTypeBlob)})
	must(t, err)
	_, err = e.ctClient("gate").GetAccessPolicy(e.ctx, nil)
	must(t, err)
	// ...blob writes inside the container too...
	_, err = e.c.UploadBuffer(e.ctx, "gate", "b", []byte("x"), nil)
	must(t, err)
	// ...and with the right id; a wrong id is refused.
	_, err = e.ctClient("gate").SetMetadata(e.ctx, &container.SetMetadataOptions{Metadata: ctPtrMeta(map[string]string{"a": "2"}), LeaseAccessConditions: right})
	must(t, err)
	_, err = e.ctClient("gate").SetMetadata(e.ctx, &container.SetMetadataOptions{Metadata: ctPtrMeta(map[string]string{"a": "3"}), LeaseAccessConditions: wrong})
	wantCode(t, err, 412, bloberror.LeaseIDMismatchWithContainerOperation)
	_, err = e.ctClient("gate").GetProperties(e.ctx, &container.GetPropertiesOptions{LeaseAccessConditions: wrong})
	wantCode(t, err, 412, bloberror.LeaseIDMismatchWithContainerOperation)
	p, err := e.ctClient("gate").GetProperties(e.ctx, &container.GetPropertiesOptions{LeaseAccessConditions: right})
	must(t, err)
	ctWantMeta(t, p.Metadata, map[string]string{"a": "2"})
	_, err = e.ctClient("gate").GetAccessPolicy(e.ctx, &container.GetAccessPolicyOptions{LeaseAccessConditions: wrong})
	wantCode(t, err, 412, bloberror.LeaseIDMismatchWithContainerOperation)
	// The HEAD form of a lease mismatch is a bare 412 with the code header.
	r := e.svSigned(http.MethodHead, "/gate?restype=container", map[string]string{"x-ms-lease-id": ctLeaseIDs[1]}, nil)
	svWantRaw(t, r, 412, string(bloberror.LeaseIDMismatchWithContainerOperation))
	if len(r.body) != 0 {
		t.Fatalf("HEAD error has a body")
	}

	// Deleting with the right id works (202).
	var raw *http.Response
	_, err = e.ctClient("gate").Delete(runtime.WithCaptureResponse(e.ctx, &raw), &container.DeleteOptions{AccessConditions: &container.AccessConditions{LeaseAccessConditions: right}})
	must(t, err)
	if raw.StatusCode != http.StatusAccepted {
		t.Fatalf("delete: %d", raw.StatusCode)
	}

	// A lease id on an unleased container: LeaseNotPresentWithContainerOperation.
	e.container("gate2")
	_, err = e.ctClient("gate2").Delete(e.ctx, &container.DeleteOptions{AccessConditions: &container.AccessConditions{LeaseAccessConditions: right}})
	wantCode(t, err, 412, bloberror.LeaseNotPresentWithContainerOperation)
	_, err = e.ctClient("gate2").SetMetadata(e.ctx, &container.SetMetadataOptions{LeaseAccessConditions: right})
	wantCode(t, err, 412, bloberror.LeaseNotPresentWithContainerOperation)
}

func TestContainerLeaseExpiry(t *testing.T) {
	e := start(t)
	cr, err := e.ctClient("expiry").Create(e.ctx, nil)
	must(t, err)
	lc, err := lease.NewContainerClient(e.ctClient("expiry"), &lease.ContainerClientOptions{LeaseID: to.Ptr(ctLeaseIDs[0])})
	must(t, err)
	_, err = lc.AcquireLease(e.ctx, 15, nil)
	must(t, err)
	p, err := e.ctClient("expiry").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.LeaseDuration != lease.DurationTypeFixed {
		t.Fatalf("duration %v", *p.LeaseDuration)
	}
	e.clock.Advance(14 * time.Second)
	_, err = e.ctClient("expiry").Delete(e.ctx, nil)
	wantCode(t, err, 412, bloberror.LeaseIDMissing)

	// Renewing restarts the 15 s.
	_, err = lc.RenewLease(e.ctx, nil)
	must(t, err)
	e.clock.Advance(14 * time.Second)
	_, err = e.ctClient("expiry").Delete(e.ctx, nil)
	wantCode(t, err, 412, bloberror.LeaseIDMissing)

	e.clock.Advance(2 * time.Second)
	p, err = e.ctClient("expiry").GetProperties(e.ctx, nil)
	must(t, err)
	if *p.LeaseState != lease.StateTypeExpired || *p.LeaseStatus != lease.StatusTypeUnlocked || p.LeaseDuration != nil {
		t.Fatalf("expired: %v %v %v", *p.LeaseState, *p.LeaseStatus, p.LeaseDuration)
	}
	if *p.ETag != *cr.ETag {
		t.Fatalf("lease actions changed the ETag")
	}
	// An expired lease can still be renewed by its holder.
	_, err = lc.RenewLease(e.ctx, nil)
	must(t, err)
	e.clock.Advance(16 * time.Second)
	// Once expired, another client may acquire.
	other, err := lease.NewContainerClient(e.ctClient("expiry"), &lease.ContainerClientOptions{LeaseID: to.Ptr(ctLeaseIDs[1])})
	must(t, err)
	_, err = other.AcquireLease(e.ctx, 20, nil)
	must(t, err)
	_, err = lc.RenewLease(e.ctx, nil)
	wantCode(t, err, 409, bloberror.LeaseIDMismatchWithLeaseOperation)
	e.clock.Advance(21 * time.Second)
	// Expired: delete without an id succeeds.
	_, err = e.ctClient("expiry").Delete(e.ctx, nil)
	must(t, err)
}

package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestVersioningSAS: deleting a version takes the delete-version
// permission x (d alone is refused, x alone deletes no base blob), in a
// service SAS and an account SAS; a service SAS for one version (sr=bv)
// reads that version and no other.
func TestVersioningSAS(t *testing.T) {
	e := startVersioning(t)
	e.container("vsas")
	bb := e.c.ServiceClient().NewContainerClient("vsas").NewBlockBlobClient("b")
	var ids []string
	for _, s := range []string{"one", "two", "three"} {
		r, err := bb.UploadBuffer(e.ctx, []byte(s), nil)
		must(t, err)
		ids = append(ids, *r.VersionID)
	}
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	now := time.Now().UTC()
	svc := func(p sas.BlobPermissions, version string) string {
		qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, StartTime: now.Add(-5 * time.Minute), ExpiryTime: now.Add(time.Hour),
			Permissions: p.String(), ContainerName: "vsas", BlobName: "b", BlobVersion: version}.SignWithSharedKey(cred)
		must(t, err)
		return qp.Encode()
	}
	client := func(query, vid string) *blob.Client {
		u := bb.URL() + "?" + query
		if vid != "" {
			u += "&versionid=" + vid
		}
		c, err := blob.NewClientWithNoCredential(u, &blob.ClientOptions{ClientOptions: clientOptions().ClientOptions})
		must(t, err)
		return c
	}
	_, err = client(svc(sas.BlobPermissions{Delete: true}, ""), ids[0]).Delete(e.ctx, nil)
	wantCode(t, err, http.StatusForbidden, bloberror.AuthorizationPermissionMismatch)
	_, err = client(svc(sas.BlobPermissions{DeletePreviousVersion: true}, ""), "").Delete(e.ctx, nil)
	wantCode(t, err, http.StatusForbidden, bloberror.AuthorizationPermissionMismatch)
	_, err = client(svc(sas.BlobPermissions{DeletePreviousVersion: true}, ""), ids[0]).Delete(e.ctx, nil)
	must(t, err)
	// sr=bv: the version signed, and no other.
	q := svc(sas.BlobPermissions{Read: true}, ids[1])
	p, err := client(q, ids[1]).GetProperties(e.ctx, nil)
	must(t, err)
	if *p.VersionID != ids[1] {
		t.Fatalf("sr=bv read version %s", *p.VersionID)
	}
	_, err = client(q, ids[2]).GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusForbidden, bloberror.AuthenticationFailed)
	// Account SAS: x deletes a version, d does not.
	acct := func(p sas.AccountPermissions) string {
		qp, err := sas.AccountSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, StartTime: now.Add(-5 * time.Minute), ExpiryTime: now.Add(time.Hour),
			Permissions: p.String(), ResourceTypes: to.Ptr(sas.AccountResourceTypes{Object: true}).String()}.SignWithSharedKey(cred)
		must(t, err)
		return qp.Encode()
	}
	_, err = client(acct(sas.AccountPermissions{Delete: true}), ids[1]).Delete(e.ctx, nil)
	wantCode(t, err, http.StatusForbidden, bloberror.AuthorizationPermissionMismatch)
	_, err = client(acct(sas.AccountPermissions{DeletePreviousVersion: true}), ids[1]).Delete(e.ctx, nil)
	must(t, err)
	if got := e.listVersions("vsas", "", false, 0); len(got) != 1 || got[0] != "b@"+ids[2]+"*" {
		t.Fatalf("after the deletes: %v", got)
	}
}

// TestVersioningBatch: a Blob Batch deletes versions and sets a version's
// tier, by versionid, leaving the current version alone.
func TestVersioningBatch(t *testing.T) {
	e := startVersioning(t)
	e.container("vbatch")
	cc := e.c.ServiceClient().NewContainerClient("vbatch")
	bb := cc.NewBlockBlobClient("b")
	var ids []string
	for _, s := range []string{"one", "two", "three"} {
		r, err := bb.UploadBuffer(e.ctx, []byte(s), nil)
		must(t, err)
		ids = append(ids, *r.VersionID)
	}
	del, err := cc.NewBatchBuilder()
	must(t, err)
	must(t, del.Delete("b", &container.BatchDeleteOptions{VersionID: &ids[0]}))
	r, err := cc.SubmitBatch(e.ctx, del, nil)
	must(t, err)
	for _, it := range r.Responses {
		must(t, it.Error)
	}
	tier, err := cc.NewBatchBuilder()
	must(t, err)
	must(t, tier.SetTier("b", blob.AccessTierCool, &container.BatchSetTierOptions{VersionID: &ids[1]}))
	r, err = cc.SubmitBatch(e.ctx, tier, nil)
	must(t, err)
	for _, it := range r.Responses {
		must(t, it.Error)
	}
	if got := e.listVersions("vbatch", "", false, 0); len(got) != 2 || got[0] != "b@"+ids[1] {
		t.Fatalf("after the batch delete: %v", got)
	}
	p, err := must2(bb.WithVersionID(ids[1])).GetProperties(e.ctx, nil)
	must(t, err)
	if p.AccessTier == nil || *p.AccessTier != "Cool" {
		t.Fatalf("version tier %v", p.AccessTier)
	}
	p, err = bb.GetProperties(e.ctx, nil)
	must(t, err)
	if p.AccessTier == nil || *p.AccessTier != "Hot" {
		t.Fatalf("current tier %v, want Hot", p.AccessTier)
	}
}

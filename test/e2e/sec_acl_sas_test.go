package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	bsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestDLSetAccessControlSASLetters: a SAS changes permissions and ACLs
// (x-ms-permissions, x-ms-acl) with p and the owner and owning group
// (x-ms-owner, x-ms-group) with o (Create a service SAS, "Permissions
// for a directory, container, or blob"), for setAccessControl and
// setAccessControlRecursive alike; either letter used to pass for all
// four headers. Failed before the fix (the o SAS changed the
// permissions, the p SAS the owner).
func TestDLSetAccessControlSASLetters(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("aclsas")
	_, err := fs.NewFileClient("d/f").Create(e.ctx, nil)
	must(t, err)
	opts := azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: e.hc}
	fileAs := func(perms string) *file.Client {
		c, err := file.NewClientWithNoCredential(fs.NewFileClient("d/f").DFSURL()+"?"+e.dlSAS("aclsas", "d/f", perms), &file.ClientOptions{ClientOptions: opts})
		must(t, err)
		return c
	}
	dirAs := func(perms string) *directory.Client {
		c, err := directory.NewClientWithNoCredential(fs.NewDirectoryClient("d").DFSURL()+"?"+e.dlSAS("aclsas", "", perms), &directory.ClientOptions{ClientOptions: opts})
		must(t, err)
		return c
	}
	state := func() string {
		r, err := fs.NewFileClient("d/f").GetAccessControl(e.ctx, nil)
		must(t, err)
		return fmt.Sprintf("%s %s %s %s", *r.Owner, *r.Group, *r.Permissions, *r.ACL)
	}
	set := func(o *file.SetAccessControlOptions) func(string) error {
		return func(perms string) error { _, err := fileAs(perms).SetAccessControl(e.ctx, o); return err }
	}
	perms := set(&file.SetAccessControlOptions{Permissions: to.Ptr("rwx------")})
	acl := set(&file.SetAccessControlOptions{ACL: to.Ptr("user::rwx,group::---,other::---")})
	owner := set(&file.SetAccessControlOptions{Owner: to.Ptr("alice")})
	group := set(&file.SetAccessControlOptions{Group: to.Ptr("staff")})
	ownerAndPerms := set(&file.SetAccessControlOptions{Owner: to.Ptr("bob"), Permissions: to.Ptr("rwxr-x---")})
	recursive := func(perms string) error {
		_, err := dirAs(perms).SetAccessControlRecursive(e.ctx, "user::rwx,group::r-x,other::---", nil)
		return err
	}
	for _, tc := range []struct {
		name  string
		op    func(string) error
		perms string
		ok    bool
	}{
		{"permissions with o", perms, "o", false},
		{"ACL with o", acl, "o", false},
		{"owner with p", owner, "p", false},
		{"group with p", group, "p", false},
		{"owner and permissions with p", ownerAndPerms, "p", false},
		{"owner and permissions with o", ownerAndPerms, "o", false},
		{"recursive ACL with o", recursive, "o", false},
		{"permissions with p", perms, "p", true},
		{"ACL with p", acl, "p", true},
		{"owner with o", owner, "o", true},
		{"group with o", group, "o", true},
		{"owner and permissions with op", ownerAndPerms, "op", true},
		{"recursive ACL with p", recursive, "p", true},
	} {
		before := state()
		err := tc.op(tc.perms)
		if tc.ok {
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			continue
		}
		wantDL(t, err, 403, "AuthorizationPermissionMismatch")
		if after := state(); after != before {
			t.Fatalf("%s: refused but changed %q to %q", tc.name, before, after)
		}
	}
}

// TestDLSetAccessControlAccountSAS: an account SAS has no letter for
// access control (Create an account SAS: p is Process, for queue
// messages; the Data Lake account SAS permissions are r, a, c, w, d and
// l, azure-sdk-for-net DataLakeAccountSasPermissions), so even one with
// every letter cannot set permissions, an ACL or an owner: 403
// AuthorizationPermissionMismatch, nothing changed. It used to pass with
// p. Failed before the fix.
func TestDLSetAccessControlAccountSAS(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("aclacct")
	_, err := fs.NewFileClient("f").Create(e.ctx, nil)
	must(t, err)
	bcred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	q, err := bsas.AccountSignatureValues{Protocol: bsas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().UTC().Add(time.Hour),
		Permissions:   (&bsas.AccountPermissions{Read: true, Write: true, Delete: true, List: true, Add: true, Create: true, Update: true, Process: true}).String(),
		ResourceTypes: (&bsas.AccountResourceTypes{Service: true, Container: true, Object: true}).String()}.SignWithSharedKey(bcred)
	must(t, err)
	before, err := fs.NewFileClient("f").GetAccessControl(e.ctx, nil)
	must(t, err)
	c, err := file.NewClientWithNoCredential(fs.NewFileClient("f").DFSURL()+"?"+q.Encode(), &file.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: e.hc}})
	must(t, err)
	for _, o := range []*file.SetAccessControlOptions{{Permissions: to.Ptr("rwx------")}, {ACL: to.Ptr("user::rwx,group::---,other::---")}, {Owner: to.Ptr("alice")}} {
		_, err = c.SetAccessControl(e.ctx, o)
		wantDL(t, err, 403, "AuthorizationPermissionMismatch")
	}
	after, err := fs.NewFileClient("f").GetAccessControl(e.ctx, nil)
	must(t, err)
	if *after.ACL != *before.ACL || *after.Owner != *before.Owner {
		t.Fatalf("refused account SAS changed %s/%s to %s/%s", *before.Owner, *before.ACL, *after.Owner, *after.ACL)
	}
}

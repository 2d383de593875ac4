package e2e

import (
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
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

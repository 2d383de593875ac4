package e2e

import (
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/sas"
)

// TestDLServiceSAS: a filesystem SAS (sr=c) made by the SDK authorizes
// the dfs operations its letters grant: r and l list paths; creating a
// file takes c or w (403 AuthorizationPermissionMismatch without);
// setting access control takes p.
func TestDLServiceSAS(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("sasfs")
	_, err := fs.NewDirectoryClient("d").Create(e.ctx, nil)
	must(t, err)
	client := func(p sas.FileSystemPermissions) *filesystem.Client {
		u, err := fs.GetSASURL(p, time.Now().Add(time.Hour), nil)
		must(t, err)
		c, err := filesystem.NewClientWithNoCredential(u, &filesystem.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: e.hc}})
		must(t, err)
		return c
	}
	ro := client(sas.FileSystemPermissions{Read: true, List: true})
	page, err := ro.NewListPathsPager(true, nil).NextPage(e.ctx)
	must(t, err)
	if len(page.Paths) != 1 || *page.Paths[0].Name != "d" {
		t.Fatalf("listed %v", page.Paths)
	}
	_, err = ro.NewFileClient("d/f").Create(e.ctx, nil)
	wantDL(t, err, 403, "AuthorizationPermissionMismatch")
	rw := client(sas.FileSystemPermissions{Read: true, Create: true, Write: true, ModifyPermissions: true})
	_, err = rw.NewFileClient("d/f").Create(e.ctx, nil)
	must(t, err)
	_, err = rw.NewFileClient("d/f").SetAccessControl(e.ctx, &file.SetAccessControlOptions{Permissions: to.Ptr("0640")})
	must(t, err)
	_, err = ro.NewFileClient("d/f").SetAccessControl(e.ctx, &file.SetAccessControlOptions{Permissions: to.Ptr("0600")})
	wantDL(t, err, 403, "AuthorizationPermissionMismatch")
}

package e2e

import (
	"strings"
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

// TestDLRenameWithSAS: the SDK's rename with a SAS on both the source
// client and the destination path (azdatalake TestFileRenameUsingSAS):
// the source header carries the SAS after the path, the destination
// request is authorized by the SAS's m (move) and c/w letters.
func TestDLRenameWithSAS(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("sasmv")
	q, err := sas.DatalakeSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().UTC().Add(time.Hour), FileSystemName: "sasmv",
		Permissions: (&sas.FilePermissions{Read: true, Create: true, Write: true, Move: true, Delete: true, List: true}).String()}.SignWithSharedKey(e.cred)
	must(t, err)
	tok := q.Encode()
	opts := &file.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: e.hc}}
	src, err := file.NewClientWithNoCredential(fs.DFSURL()+"/file1?"+tok, opts)
	must(t, err)
	_, err = src.Create(e.ctx, nil)
	must(t, err)
	_, err = src.Rename(e.ctx, "file2?"+tok, nil)
	must(t, err)
	if got := strings.Join(listAll(t, e, fs, "", true, 10), ","); got != "file2" {
		t.Fatalf("after rename: %s", got)
	}
}

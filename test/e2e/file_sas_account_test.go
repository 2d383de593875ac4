package e2e

import (
	"io"
	"net/http"
	"testing"
	"time"

	bsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	blobservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestSASFileAccount: an account SAS on the File service is held to its
// resource types (service: list shares and service properties;
// container: shares; object: directories and files), to its permission
// letters, to its expiry and to its services (a token signed for Blob
// does not open File).
func TestSASFileAccount(t *testing.T) {
	e := startFile(t)
	s := e.share()
	sname := fiShareName(t, s)
	f := e.mkfile(s, "f", 10)
	e.put(f, 0, []byte("0123456789"))
	cred, err := service.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	// The SDK's GetSASURL signs HTTPS-only tokens; these tests speak HTTP.
	mkAt := func(exp time.Time, rt sas.AccountResourceTypes, p sas.AccountPermissions) *service.Client {
		t.Helper()
		qp, err := sas.AccountSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: exp, Permissions: p.String(), ResourceTypes: rt.String()}.SignWithSharedKey(cred)
		must(t, err)
		c, err := service.NewClientWithNoCredential(e.app.FileURL+"?"+qp.Encode(), fileClientOptions())
		must(t, err)
		return c
	}
	mk := func(rt sas.AccountResourceTypes, p sas.AccountPermissions) *service.Client {
		return mkAt(time.Now().Add(time.Hour), rt, p)
	}
	all := sas.AccountResourceTypes{Service: true, Container: true, Object: true}

	// List on every level: shares list; nothing is created.
	c := mk(all, sas.AccountPermissions{List: true})
	_, err = c.NewListSharesPager(nil).NextPage(e.ctx)
	must(t, err)
	_, err = c.CreateShare(e.ctx, "sasnew", nil)
	wantFileCode(t, err, http.StatusForbidden, fileerror.AuthorizationPermissionMismatch)

	// Objects only: the file reads; the share (container) and the share
	// list (service) are out of reach; writing needs w.
	c = mk(sas.AccountResourceTypes{Object: true}, sas.AccountPermissions{Read: true, List: true})
	fc := c.NewShareClient(sname).NewRootDirectoryClient().NewFileClient("f")
	r, err := fc.DownloadStream(e.ctx, nil)
	must(t, err)
	got, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if string(got) != "0123456789" {
		t.Fatalf("read %q through an account SAS", got)
	}
	_, err = c.NewShareClient(sname).GetProperties(e.ctx, nil)
	wantFileCode(t, err, http.StatusForbidden, fileerror.AuthorizationResourceTypeMismatch)
	_, err = c.NewListSharesPager(nil).NextPage(e.ctx)
	wantFileCode(t, err, http.StatusForbidden, fileerror.AuthorizationResourceTypeMismatch)
	_, err = fc.UploadRange(e.ctx, 0, fiBody([]byte("x")), nil)
	wantFileCode(t, err, http.StatusForbidden, fileerror.AuthorizationPermissionMismatch)

	// Objects with r, w and c: a new file is created and written; deleting
	// it needs d.
	c = mk(sas.AccountResourceTypes{Object: true}, sas.AccountPermissions{Read: true, Write: true, Create: true})
	nf := c.NewShareClient(sname).NewRootDirectoryClient().NewFileClient("new")
	_, err = nf.Create(e.ctx, 3, nil)
	must(t, err)
	_, err = nf.UploadRange(e.ctx, 0, fiBody([]byte("abc")), nil)
	must(t, err)
	if got := e.read(s.NewRootDirectoryClient().NewFileClient("new"), 0, 3); string(got) != "abc" {
		t.Fatalf("SAS write reads back %q", got)
	}
	_, err = nf.Delete(e.ctx, nil)
	wantFileCode(t, err, http.StatusForbidden, fileerror.AuthorizationPermissionMismatch)

	// Containers with c and d: a share is created and deleted.
	c = mk(sas.AccountResourceTypes{Container: true}, sas.AccountPermissions{Create: true, Delete: true})
	_, err = c.CreateShare(e.ctx, "sasshare", nil)
	must(t, err)
	_, err = c.DeleteShare(e.ctx, "sasshare", nil)
	must(t, err)

	// An expired token authenticates nothing.
	c = mkAt(time.Now().Add(-time.Minute), all, sas.AccountPermissions{Read: true, List: true})
	_, err = c.NewListSharesPager(nil).NextPage(e.ctx)
	wantFileCode(t, err, http.StatusForbidden, fileerror.AuthenticationFailed)

	// A token signed for the Blob service (ss=b), with every right, does
	// not open the File service.
	bcred, err := blobservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	bqp, err := bsas.AccountSignatureValues{Protocol: bsas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour),
		Permissions:   (&bsas.AccountPermissions{Read: true, List: true}).String(),
		ResourceTypes: (&bsas.AccountResourceTypes{Service: true, Container: true, Object: true}).String()}.SignWithSharedKey(bcred)
	must(t, err)
	bc, err := service.NewClientWithNoCredential(e.app.FileURL+"?"+bqp.Encode(), fileClientOptions())
	must(t, err)
	_, err = bc.NewListSharesPager(nil).NextPage(e.ctx)
	wantFileCode(t, err, http.StatusForbidden, "AuthorizationServiceMismatch")
}

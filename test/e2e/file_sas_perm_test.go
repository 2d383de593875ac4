package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestSASFilePermissions: each permission letter of a share SAS (sr=s, built
// by azfile's sas package) against each directory and file operation. Without
// any letter the operation needs: 403 AuthorizationPermissionMismatch and
// nothing written; each needed letter alone allows it (Create a service SAS,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas,
// permissions for a file/share).
func TestSASFilePermissions(t *testing.T) {
	e := startFile(t)
	s := e.share()
	name := fiShareName(t, s)
	seed := e.mkfile(s, "seed", 5)
	e.put(seed, 0, []byte("hello"))
	_, err := s.NewDirectoryClient("keepdir").Create(e.ctx, nil)
	must(t, err)
	cred, err := service.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	exp := time.Now().Add(time.Hour)
	sasShare := func(perms string) *share.Client {
		t.Helper()
		var p sas.SharePermissions
		for _, l := range perms {
			switch l {
			case 'r':
				p.Read = true
			case 'c':
				p.Create = true
			case 'w':
				p.Write = true
			case 'd':
				p.Delete = true
			case 'l':
				p.List = true
			}
		}
		qp, err := sas.SignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ShareName: name, Permissions: p.String(), ExpiryTime: exp}.SignWithSharedKey(cred)
		must(t, err)
		c, err := share.NewClientWithNoCredential(s.URL()+"?"+qp.Encode(), (*share.ClientOptions)(fileClientOptions()))
		must(t, err)
		return c
	}
	exists := func(path string) bool {
		_, err := fileAt(s, path).GetProperties(e.ctx, nil)
		return err == nil
	}
	dirExists := func(path string) bool {
		_, err := s.NewDirectoryClient(path).GetProperties(e.ctx, nil)
		return err == nil
	}
	const all = "rcwdl"
	cases := []struct {
		name  string
		need  string
		op    func(c *share.Client, i int) error
		check func(t *testing.T, i int) // after a refused call: nothing written
		setup func(t *testing.T)
	}{
		{name: "ListFilesAndDirectories", need: "l", op: func(c *share.Client, _ int) error {
			_, err := c.NewRootDirectoryClient().NewListFilesAndDirectoriesPager(nil).NextPage(e.ctx)
			return err
		}},
		{name: "ListHandles", need: "l", op: func(c *share.Client, _ int) error {
			_, err := fileAt(c, "seed").ListHandles(e.ctx, nil)
			return err
		}},
		{name: "GetFileProperties", need: "r", op: func(c *share.Client, _ int) error {
			_, err := fileAt(c, "seed").GetProperties(e.ctx, nil)
			return err
		}},
		{name: "GetFile", need: "r", op: func(c *share.Client, _ int) error {
			_, err := fileAt(c, "seed").DownloadBuffer(e.ctx, make([]byte, 5), nil)
			return err
		}},
		{name: "GetDirectoryProperties", need: "r", op: func(c *share.Client, _ int) error {
			_, err := c.NewDirectoryClient("keepdir").GetProperties(e.ctx, nil)
			return err
		}},
		{name: "CreateFile", need: "cw", op: func(c *share.Client, i int) error {
			_, err := fileAt(c, fmt.Sprintf("new%d", i)).Create(e.ctx, 10, nil)
			return err
		}, check: func(t *testing.T, i int) {
			if exists(fmt.Sprintf("new%d", i)) {
				t.Fatal("a refused Create File created the file")
			}
		}},
		{name: "CreateDirectory", need: "cw", op: func(c *share.Client, i int) error {
			_, err := c.NewDirectoryClient(fmt.Sprintf("dir%d", i)).Create(e.ctx, nil)
			return err
		}, check: func(t *testing.T, i int) {
			if dirExists(fmt.Sprintf("dir%d", i)) {
				t.Fatal("a refused Create Directory created it")
			}
		}},
		{name: "PutRange", need: "w", op: func(c *share.Client, _ int) error {
			_, err := fileAt(c, "seed").UploadRange(e.ctx, 0, fiBody([]byte("HELLO")), nil)
			return err
		}, check: func(t *testing.T, _ int) {
			if got := e.read(seed, 0, 5); string(got) != "hello" {
				t.Fatalf("a refused Put Range wrote: %q", got)
			}
		}},
		{name: "SetFileMetadata", need: "w", op: func(c *share.Client, _ int) error {
			_, err := fileAt(c, "seed").SetMetadata(e.ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"k": to.Ptr("v")}})
			return err
		}, check: func(t *testing.T, _ int) {
			if md := e.props(seed).Metadata; len(md) != 0 {
				t.Fatalf("a refused Set Metadata wrote %v", md)
			}
		}},
		{name: "SetDirectoryMetadata", need: "w", op: func(c *share.Client, _ int) error {
			_, err := c.NewDirectoryClient("keepdir").SetMetadata(e.ctx, &directory.SetMetadataOptions{Metadata: map[string]*string{"k": to.Ptr("v")}})
			return err
		}, check: func(t *testing.T, _ int) {
			p, err := s.NewDirectoryClient("keepdir").GetProperties(e.ctx, nil)
			must(t, err)
			if len(p.Metadata) != 0 {
				t.Fatalf("a refused Set Metadata wrote %v", p.Metadata)
			}
		}},
		{name: "DeleteFile", need: "d", setup: func(t *testing.T) { e.mkfile(s, "del", 1) }, op: func(c *share.Client, _ int) error {
			_, err := fileAt(c, "del").Delete(e.ctx, nil)
			return err
		}, check: func(t *testing.T, _ int) {
			if !exists("del") {
				t.Fatal("a refused Delete File removed the file")
			}
		}},
		{name: "DeleteDirectory", need: "d", setup: func(t *testing.T) {
			_, err := s.NewDirectoryClient("deldir").Create(e.ctx, nil)
			must(t, err)
		}, op: func(c *share.Client, _ int) error {
			_, err := c.NewDirectoryClient("deldir").Delete(e.ctx, nil)
			return err
		}, check: func(t *testing.T, _ int) {
			if !dirExists("deldir") {
				t.Fatal("a refused Delete Directory removed it")
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup(t)
			}
			var without strings.Builder
			for _, l := range all {
				if !strings.ContainsRune(tc.need, l) {
					without.WriteRune(l)
				}
			}
			err := tc.op(sasShare(without.String()), 0)
			wantFileCode(t, err, http.StatusForbidden, fileerror.AuthorizationPermissionMismatch)
			if tc.check != nil {
				tc.check(t, 0)
			}
			for i, l := range tc.need {
				if i > 0 && tc.setup != nil {
					tc.setup(t) // the previous letter's call removed it
				}
				if err := tc.op(sasShare(string(l)), i+1); err != nil {
					t.Errorf("with %q alone: %v", l, err)
				}
			}
		})
	}
}

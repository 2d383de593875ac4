package smb

import (
	"io"
	"net"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/cerulean-storage/cerulean/internal/app"
	gosmb2 "github.com/hirochachacha/go-smb2"
)

// statusBadNetworkName is STATUS_BAD_NETWORK_NAME (MS-ERREF 2.3.1), the
// TREE_CONNECT answer for a share that does not exist (MS-SMB2 3.3.5.7).
const statusBadNetworkName = 0xC00000CC

// A soft-deleted share is not there for an SMB client: TREE_CONNECT
// answers STATUS_BAD_NETWORK_NAME; once restored over REST it mounts
// again with its files.
func TestSoftDeletedShareNotConnectable(t *testing.T) {
	e := startWith(t, func(c *app.Config) { c.ShareSoftDelete = 1 })
	sc := e.share("softgone")
	e.upload(sc, "kept.txt", []byte("still here"))
	if _, err := sc.Delete(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", e.app.SMBAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	d := &gosmb2.Dialer{Initiator: &gosmb2.NTLMInitiator{User: app.DevAccount, Password: app.DevKey}}
	s, err := d.DialContext(e.ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Logoff()
	if fs, err := s.Mount("softgone"); err == nil {
		_ = fs.Umount()
		t.Fatal("mounted a deleted share")
	} else if !ntStatus(err, statusBadNetworkName) {
		t.Fatalf("mount of a deleted share: %v, want STATUS_BAD_NETWORK_NAME", err)
	}

	name := "softgone"
	pg := e.svc.NewListSharesPager(&service.ListSharesOptions{Prefix: &name, Include: service.ListSharesInclude{Deleted: true}})
	resp, err := pg.NextPage(e.ctx)
	if err != nil || len(resp.Shares) != 1 || resp.Shares[0].Version == nil {
		t.Fatalf("deleted shares %v, %v", resp.Shares, err)
	}
	if _, err := sc.Restore(e.ctx, *resp.Shares[0].Version, nil); err != nil {
		t.Fatal(err)
	}
	fs := e.mount("softgone")
	f, err := fs.Open("kept.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil || string(b) != "still here" {
		t.Fatalf("restored file over SMB: %q, %v", b, err)
	}
}

package smb

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/smbfs"
)

// NTSTATUS codes the tests expect.
const (
	statusSharingViolation = 0xC0000043
	statusDeletePending    = 0xC0000056
	statusObjectNotFound   = 0xC0000034
)

// TestShareModesAcrossSessions: two go-smb2 sessions on two connections.
// go-smb2 opens with share read|write and deletes through an open with
// DELETE access sharing delete only, so the delete conflicts with the
// other session's open (MS-FSA 2.1.5.1.2.2) while a second read/write
// open does not.
func TestShareModesAcrossSessions(t *testing.T) {
	e := start(t)
	e.share("modes")
	a, b := e.mount("modes"), e.mount("modes")
	if err := a.WriteFile("held.txt", []byte("held"), 0o644); err != nil {
		t.Fatal(err)
	}
	fa, err := a.OpenFile("held.txt", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := b.OpenFile("held.txt", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("a second read/write open with compatible share modes: %v", err)
	}
	if _, err := fb.WriteAt([]byte("HE"), 0); err != nil {
		t.Fatal(err)
	}
	fb.Close()
	if err := b.Remove("held.txt"); !ntStatus(err, statusSharingViolation) {
		t.Fatalf("delete while another session holds the file: %v, want SHARING_VIOLATION", err)
	}
	if err := b.Rename("held.txt", "moved.txt"); !ntStatus(err, statusSharingViolation) {
		t.Fatalf("rename while another session holds the file: %v, want SHARING_VIOLATION", err)
	}
	got := make([]byte, 4)
	if _, err := fa.ReadAt(got, 0); err != nil || string(got) != "HEld" {
		t.Fatalf("read through the first open: %q %v", got, err)
	}
	fa.Close()
	if err := b.Remove("held.txt"); err != nil {
		t.Fatalf("delete once the file is closed: %v", err)
	}
	if _, err := a.Stat("held.txt"); !ntStatus(err, statusObjectNotFound) && !os.IsNotExist(err) {
		t.Fatalf("stat after delete: %v", err)
	}
}

// TestRESTSharingViolation: while an SMB client holds a file open, REST
// operations that need access the SMB open's share mode denies get 409
// SharingViolation, Delete File always does, and operations that need no
// access still work; once closed, REST works again.
func TestRESTSharingViolation(t *testing.T) {
	e := start(t)
	sc := e.share("restsv")
	e.upload(sc, "f.txt", []byte("0123456789"))
	fs := e.mount("restsv")
	f, err := fs.OpenFile("f.txt", os.O_RDWR, 0) // share read|write
	if err != nil {
		t.Fatal(err)
	}
	fc := fileClient(sc, "f.txt")
	if _, err := fc.Delete(e.ctx, nil); !hasCode(err, fileerror.SharingViolation) {
		t.Fatalf("Delete File while open over SMB: %v, want SharingViolation", err)
	}
	// Read and write are shared: REST reads and writes work.
	if data, err := e.download(sc, "f.txt"); err != nil || string(data) != "0123456789" {
		t.Fatalf("Get File: %q %v", data, err)
	}
	if _, err := fc.UploadRange(e.ctx, 0, streaming.NopCloser(strings.NewReader("AB")), nil); err != nil {
		t.Fatalf("Put Range: %v", err)
	}
	got := make([]byte, 2)
	if _, err := f.ReadAt(got, 0); err != nil || string(got) != "AB" {
		t.Fatalf("SMB read of a REST write: %q %v", got, err)
	}
	if _, err := fc.GetProperties(e.ctx, nil); err != nil {
		t.Fatalf("Get File Properties needs no access: %v", err)
	}
	f.Close()
	if _, err := fc.Delete(e.ctx, nil); err != nil {
		t.Fatalf("Delete File after the SMB close: %v", err)
	}
}

// TestDeletePendingVisibility: a file whose delete was requested over
// SMB while another handle (one sharing delete, here attribute-only, as
// Explorer's property sheets hold) stays open is delete-pending: new SMB
// opens get DELETE_PENDING, REST gets 409 DeletePending and does not list
// it; it disappears when the last handle closes.
func TestDeletePendingVisibility(t *testing.T) {
	e := start(t)
	sc := e.share("pending")
	e.upload(sc, "doomed.txt", []byte("bye"))
	e.upload(sc, "kept.txt", []byte("hi"))

	// The other handle: opened through the File service's Go API as a
	// second front end would (go-smb2 always asks for data access).
	v := smbfs.New(e.app.File, "test-holder")
	if err := v.Heartbeat(e.ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	held, err := v.Open(e.ctx, file.OpenRequest{Account: "devstoreaccount1", Share: "pending", Path: []string{"doomed.txt"},
		DesiredAccess: file.AccessReadAttributes, ShareAccess: 7, Disposition: file.DispOpen, SessionID: "holder"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Retire(context.Background()) })

	fs := e.mount("pending")
	if err := fs.Remove("doomed.txt"); err != nil {
		t.Fatalf("SMB delete: %v", err)
	}
	if _, err := fs.Open("doomed.txt"); !ntStatus(err, statusDeletePending) {
		t.Fatalf("SMB open of a delete-pending file: %v, want DELETE_PENDING", err)
	}
	fc := fileClient(sc, "doomed.txt")
	if _, err := fc.GetProperties(e.ctx, nil); !hasCode(err, fileerror.DeletePending) {
		t.Fatalf("REST on a delete-pending file: %v, want 409 DeletePending", err)
	}
	if names := e.list(sc.NewRootDirectoryClient()); !slices.Equal(names, []string{"kept.txt"}) {
		t.Fatalf("REST listing shows %v, want only kept.txt", names)
	}
	// SMB listings still show it (as smbd and Windows do).
	infos, err := fs.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var smbNames []string
	for _, fi := range infos {
		smbNames = append(smbNames, fi.Name())
	}
	if !slices.Contains(smbNames, "doomed.txt") {
		t.Fatalf("SMB listing %v lacks the pending file", smbNames)
	}
	// The last handle closes: the file is gone for everyone.
	if _, err := v.Close(e.ctx, held); err != nil {
		t.Fatal(err)
	}
	if _, err := fc.GetProperties(e.ctx, nil); !hasCode(err, fileerror.ResourceNotFound) {
		t.Fatalf("REST after the last close: %v, want 404", err)
	}
	if _, err := fs.Stat("doomed.txt"); !os.IsNotExist(err) && !ntStatus(err, statusObjectNotFound) {
		t.Fatalf("SMB stat after the last close: %v", err)
	}
}

// TestLostConnectionClosesHandles: handles of a connection that goes
// away are closed, so the file is free again over REST.
func TestLostConnectionClosesHandles(t *testing.T) {
	e := start(t)
	sc := e.share("lost")
	e.upload(sc, "f.txt", []byte("x"))
	fs := e.mount("lost")
	if _, err := fs.OpenFile("f.txt", os.O_RDWR, 0); err != nil {
		t.Fatal(err)
	}
	fc := fileClient(sc, "f.txt")
	if _, err := fc.Delete(e.ctx, nil); !hasCode(err, fileerror.SharingViolation) {
		t.Fatalf("Delete File while open: %v", err)
	}
	// List Handles shows the SMB handle.
	pager, err := fc.ListHandles(e.ctx, nil)
	if err != nil || len(pager.Handles) != 1 {
		t.Fatalf("List Handles: %+v %v", pager, err)
	}
	_ = fs.Umount() // TREE_DISCONNECT closes the tree's opens
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := fc.Delete(e.ctx, nil)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Delete File after the tree disconnect: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

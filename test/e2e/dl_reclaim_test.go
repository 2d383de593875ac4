package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/datalakeerror"
)

// TestFilesystemBeingDeleted: through azdatalake on a hierarchical
// account, Delete Filesystem answers 202 at once and the filesystem is
// reclaimed in the background (held here before the first step): a
// create of the name meanwhile is 409 FilesystemBeingDeleted and the
// filesystem is 404; released, the name can be created again, empty.
func TestFilesystemBeingDeleted(t *testing.T) {
	e := startDL(t, true)
	held, release := holdReclaim(t, e.app.Blob.Reclaimer())
	fs := e.fs("doomedfs")
	_, err := fs.Create(e.ctx, nil)
	must(t, err)
	for i := 0; i < 10; i++ {
		_, err := fs.NewFileClient(fmt.Sprintf("dir/f%02d", i)).Create(e.ctx, nil)
		must(t, err)
	}
	_, err = fs.Delete(e.ctx, nil)
	must(t, err)
	held()
	// azdatalake sends Create Filesystem to the Blob endpoint and names
	// its ContainerBeingDeleted FileSystemBeingDeleted.
	_, err = fs.Create(e.ctx, nil)
	wantDL(t, err, http.StatusConflict, string(datalakeerror.FileSystemBeingDeleted))
	_, err = fs.GetProperties(e.ctx, nil)
	wantDL(t, err, http.StatusNotFound, string(datalakeerror.FileSystemNotFound))
	release()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := fs.Create(e.ctx, nil)
		if err == nil {
			break
		}
		wantDL(t, err, http.StatusConflict, string(datalakeerror.FileSystemBeingDeleted))
		if time.Now().After(deadline) {
			t.Fatal("filesystem still being deleted after 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	pager := fs.NewListPathsPager(true, nil)
	page, err := pager.NextPage(e.ctx)
	must(t, err)
	if len(page.Paths) != 0 {
		t.Fatalf("recreated filesystem lists %d paths", len(page.Paths))
	}
}

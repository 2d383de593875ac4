package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
)

// TestShareBeingDeleted: through azfile, Delete Share answers 202 and
// the share's files are purged in the background (held here before the
// purge's first step): meanwhile Create Share of the name is 409
// ShareBeingDeleted and the share is 404 ShareNotFound; released, the
// name can be created again, empty. It fails before the change: the
// purge ran in the request, so the create succeeded at once.
func TestShareBeingDeleted(t *testing.T) {
	e := startFile(t)
	held, release := holdReclaim(t, e.app.Blob.Reclaimer())
	sc := e.share()
	for i := 0; i < 20; i++ {
		fc := sc.NewRootDirectoryClient().NewFileClient(fmt.Sprintf("f%02d", i))
		_, err := fc.Create(e.ctx, 1, nil)
		must(t, err)
	}
	_, err := sc.Delete(e.ctx, nil)
	must(t, err)
	held()
	_, err = sc.Create(e.ctx, nil)
	wantFileCode(t, err, http.StatusConflict, fileerror.ShareBeingDeleted)
	_, err = sc.GetProperties(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ShareNotFound)
	release()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := sc.Create(e.ctx, nil)
		if err == nil {
			break
		}
		wantFileCode(t, err, http.StatusConflict, fileerror.ShareBeingDeleted)
		if time.Now().After(deadline) {
			t.Fatal("share still being deleted after 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	pager := sc.NewRootDirectoryClient().NewListFilesAndDirectoriesPager(nil)
	page, err := pager.NextPage(e.ctx)
	must(t, err)
	if n := len(page.Segment.Files) + len(page.Segment.Directories); n != 0 {
		t.Fatalf("recreated share lists %d items", n)
	}
}

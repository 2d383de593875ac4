package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
)

// TestContainerBeingDeleted: through the SDK, Delete Container answers
// 202 at once and the container is reclaimed in the background (Delete
// Container, Remarks): while the reclaim runs (held here before its
// first step), a create of the name is 409 ContainerBeingDeleted, the
// container and its blobs are 404, List Containers does not show it, and
// other containers work as before; once the reclaim ends the name can be
// created again, empty.
func TestContainerBeingDeleted(t *testing.T) {
	e := start(t)
	held, release := holdReclaim(t, e.app.Blob.Reclaimer())
	e.container("doomed")
	e.container("kept")
	for i := 0; i < 20; i++ {
		_, err := e.c.UploadBuffer(e.ctx, "doomed", fmt.Sprintf("b%02d", i), []byte("data"), nil)
		must(t, err)
	}
	var raw *http.Response
	_, err := e.ctClient("doomed").Delete(runtime.WithCaptureResponse(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != http.StatusAccepted {
		t.Fatalf("Delete Container: %d, want 202", raw.StatusCode)
	}
	held()

	_, err = e.ctClient("doomed").Create(e.ctx, nil)
	wantCode(t, err, 409, bloberror.ContainerBeingDeleted)
	_, err = e.ctClient("doomed").GetProperties(e.ctx, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	_, err = e.ctClient("doomed").NewBlobClient("b01").GetProperties(e.ctx, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	_, err = e.c.UploadBuffer(e.ctx, "doomed", "late", []byte("x"), nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	_, err = e.ctClient("doomed").Delete(e.ctx, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	pager := e.c.NewListContainersPager(nil)
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(t, err)
		for _, c := range page.ContainerItems {
			if *c.Name == "doomed" {
				t.Fatal("List Containers shows the container being deleted")
			}
		}
	}
	_, err = e.c.UploadBuffer(e.ctx, "kept", "during", []byte("fine"), nil)
	must(t, err)

	release()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := e.ctClient("doomed").Create(e.ctx, nil)
		if err == nil {
			break
		}
		wantCode(t, err, 409, bloberror.ContainerBeingDeleted)
		if time.Now().After(deadline) {
			t.Fatal("still being deleted after 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	bp := e.ctClient("doomed").NewListBlobsFlatPager(nil)
	page, err := bp.NextPage(e.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 0 {
		t.Fatalf("recreated container lists %d blobs", len(page.Segment.BlobItems))
	}
}

// recreateContainer creates container name, which was just deleted:
// while the background reclaim of the deleted one runs, Create Container
// answers 409 ContainerBeingDeleted (as Azure does for at least 30 s),
// so it tries again until the reclaim is over.
func (e *env) recreateContainer(name string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := e.c.CreateContainer(e.ctx, name, nil)
		if err == nil {
			return
		}
		wantCode(e.t, err, 409, bloberror.ContainerBeingDeleted)
		if time.Now().After(deadline) {
			e.t.Fatalf("container %s still being deleted after 10 s", name)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestShutdownDuringReclaim: the server stops within a second while a
// reclaim runs (held here between two of its steps, as a long one
// would be): Close cancels the reclaimer, which stops between two
// transactions, and no request waits on it.
func TestShutdownDuringReclaim(t *testing.T) {
	cfg := backendConfig(t)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort, cfg.DFSPort, cfg.SMBPort = 0, -1, -1, -1, -1, -1
	a, err := app.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := client(t, a.BlobURL, app.DevKey)
	ctx := context.Background()
	held := make(chan struct{}, 1)
	a.Blob.Reclaimer().SetBeforeStep(func(ctx context.Context) error {
		select {
		case held <- struct{}{}:
		default:
		}
		<-ctx.Done() // a reclaim that would go on for ever
		return ctx.Err()
	})
	_, err = c.CreateContainer(ctx, "big", nil)
	must(t, err)
	for i := 0; i < 10; i++ {
		_, err := c.UploadBuffer(ctx, "big", fmt.Sprint(i), []byte("x"), nil)
		must(t, err)
	}
	_, err = c.DeleteContainer(ctx, "big", nil)
	must(t, err)
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the reclaimer did not start")
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := a.Close(cctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Close took %v during a reclaim, want under a second", d)
	}
}

// holdReclaim holds r before each of its steps until release is called
// (or the server stops). It returns once the reclaimer is held: a round
// that read the hook as unset before it was installed could otherwise
// still run a step, and reclaim what the caller deletes next, while held
// waited for the round after it (seen on a loaded PostgreSQL run, where
// that round's transaction started late). The reclaimer is held by the
// time holdReclaim returns (the test fails if it never is), so held, the
// callers' marker that a reclaim is in progress, has nothing to wait for.
func holdReclaim(t *testing.T, r *reclaim.Reclaimer) (held func(), release func()) {
	t.Helper()
	hold := make(chan struct{})
	started := make(chan struct{}, 1)
	r.SetBeforeStep(func(ctx context.Context) error {
		select {
		case started <- struct{}{}:
		default:
		}
		select {
		case <-hold:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	var once sync.Once
	release = func() { once.Do(func() { close(hold) }) }
	r.Kick()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		release()
		t.Fatal("the reclaimer did not start")
	}
	return func() { t.Helper() }, release
}

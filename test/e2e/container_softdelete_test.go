package e2e

// Container soft delete end to end through azblob: with
// --container-soft-delete, Delete Container keeps the container, List
// Containers include=deleted shows it, Restore Container brings it back
// with its blobs, and the retention period ends on the injected clock.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// startContainerSoftDelete starts the Blob service with
// --container-soft-delete days on a fake clock, and a client dating its
// requests at that clock.
func startContainerSoftDelete(t *testing.T, days int) (*env, *service.Client) {
	t.Helper()
	a, clk := startAppWith(t, func(c *app.Config) { c.ContainerSoftDelete = days })
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	opts := clientOptions()
	opts.PerCallPolicies = append(opts.PerCallPolicies, sdDatePolicy{clk})
	c, err := azblob.NewClientWithSharedKeyCredential(a.BlobURL, cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, app: a, clock: clk, c: c, ctx: context.Background()}, c.ServiceClient()
}

// deletedContainers lists the deleted containers named name.
func deletedContainers(t *testing.T, svc *service.Client, name string) []*service.ContainerItem {
	t.Helper()
	var out []*service.ContainerItem
	pg := svc.NewListContainersPager(&service.ListContainersOptions{Prefix: &name, Include: service.ListContainersInclude{Deleted: true, Metadata: true}})
	for pg.More() {
		resp, err := pg.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range resp.ContainerItems {
			if *c.Name == name && c.Deleted != nil && *c.Deleted {
				out = append(out, c)
			}
		}
	}
	return out
}

func readBlobText(t *testing.T, e *env, cont, name string) string {
	t.Helper()
	resp, err := e.c.DownloadStream(e.ctx, cont, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestContainerSoftDeleteRestore(t *testing.T) {
	e, svc := startContainerSoftDelete(t, 7)
	const name = "softc"
	cc := svc.NewContainerClient(name)
	_, err := cc.Create(e.ctx, &container.CreateOptions{Metadata: map[string]*string{"k": to.Ptr("v")}})
	must(t, err)
	const n = 300
	for i := 0; i < n; i++ {
		_, err := e.c.UploadBuffer(e.ctx, name, fmt.Sprintf("b%03d", i), []byte(fmt.Sprintf("content %d", i)), &blockblob.UploadBufferOptions{
			Metadata: map[string]*string{"i": to.Ptr(fmt.Sprint(i))}, Tags: map[string]string{"t": "x"}})
		must(t, err)
	}
	bc := cc.NewBlockBlobClient("b007")
	snap, err := bc.CreateSnapshot(e.ctx, nil)
	must(t, err)
	_, err = bc.Upload(e.ctx, streamOf("after snapshot"), nil)
	must(t, err)
	_, err = bc.StageBlock(e.ctx, "YmxrMDAwMQ==", streamOf("staged"), nil)
	must(t, err)

	e.clock.Advance(time.Hour)
	deletedAt := e.clock.Now()
	var raw *http.Response
	_, err = cc.Delete(runtime.WithCaptureResponse(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != http.StatusAccepted {
		t.Fatalf("Delete Container: %d, want 202", raw.StatusCode)
	}
	_, err = cc.GetProperties(e.ctx, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	_, err = bc.GetProperties(e.ctx, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)

	// Listed as deleted, with version, deletion time and days left;
	// not listed without include=deleted.
	e.clock.Advance(36 * time.Hour)
	del := deletedContainers(t, svc, name)
	if len(del) != 1 {
		t.Fatalf("deleted containers %d, want 1", len(del))
	}
	d := del[0]
	if d.Version == nil || len(*d.Version) != 16 || d.Properties.DeletedTime == nil || d.Properties.RemainingRetentionDays == nil {
		t.Fatalf("deleted container %+v / %+v", d, d.Properties)
	}
	if got := d.Properties.DeletedTime.Unix(); got != deletedAt.Unix() {
		t.Errorf("DeletedTime %v, want %v", d.Properties.DeletedTime, deletedAt)
	}
	if got := *d.Properties.RemainingRetentionDays; got != 5 { // 7 days less 1.5, whole days left
		t.Errorf("RemainingRetentionDays %d, want 5", got)
	}
	if *d.Metadata["k"] != "v" {
		t.Errorf("deleted container's metadata %v", d.Metadata)
	}
	pg := svc.NewListContainersPager(&service.ListContainersOptions{Prefix: to.Ptr(name)})
	resp, err := pg.NextPage(e.ctx)
	if err != nil || len(resp.ContainerItems) != 0 {
		t.Fatalf("plain listing %v, %v", resp.ContainerItems, err)
	}

	// Unknown version: 404 ContainerNotFound.
	_, err = svc.RestoreContainer(e.ctx, name, "01D60F8BB59A4652", nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)

	// The name can be used again meanwhile (once the move is over);
	// restoring onto it is 409.
	if _, err := e.app.Blob.ReclaimContainers(e.ctx); err != nil {
		t.Fatal(err)
	}
	_, err = cc.Create(e.ctx, nil)
	must(t, err)
	_, err = e.c.UploadBuffer(e.ctx, name, "other", []byte("other"), nil)
	must(t, err)
	_, err = svc.RestoreContainer(e.ctx, name, *d.Version, nil)
	wantCode(t, err, 409, bloberror.ContainerAlreadyExists)
	_, err = cc.Delete(e.ctx, nil)
	must(t, err)
	if got := len(deletedContainers(t, svc, name)); got != 2 {
		t.Fatalf("deleted containers after the second delete %d, want 2", got)
	}

	// Restore brings the first back: blobs, properties, metadata, tags,
	// snapshot, uncommitted block.
	raw = nil
	_, err = svc.RestoreContainer(runtime.WithCaptureResponse(e.ctx, &raw), name, *d.Version, nil)
	must(t, err)
	if raw.StatusCode != http.StatusCreated {
		t.Fatalf("Restore Container: %d, want 201", raw.StatusCode)
	}
	p, err := cc.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.Metadata["K"] != "v" && *p.Metadata["k"] != "v" {
		t.Errorf("restored container metadata %v", p.Metadata)
	}
	count := 0
	bp := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Metadata: true, Tags: true, Snapshots: true}})
	for bp.More() {
		page, err := bp.NextPage(e.ctx)
		must(t, err)
		for _, it := range page.Segment.BlobItems {
			count++
			if *it.Name == "other" {
				t.Error("the second container's blob is in the restored one")
			}
			if it.Snapshot == nil && *it.Name != "b007" && (it.Metadata["i"] == nil || it.BlobTags == nil || len(it.BlobTags.BlobTagSet) != 1) {
				t.Errorf("restored blob %s: metadata %v tags %+v", *it.Name, it.Metadata, it.BlobTags)
			}
		}
	}
	if count != n+1 {
		t.Errorf("restored container lists %d blobs and snapshots, want %d", count, n+1)
	}
	if got := readBlobText(t, e, name, "b123"); got != "content 123" {
		t.Errorf("restored blob %q", got)
	}
	if got := readBlobText(t, e, name, "b007"); got != "after snapshot" {
		t.Errorf("restored blob %q", got)
	}
	sc, err := bc.WithSnapshot(*snap.Snapshot)
	must(t, err)
	sr, err := sc.DownloadStream(e.ctx, nil)
	must(t, err)
	sb, _ := io.ReadAll(sr.Body)
	sr.Body.Close()
	if string(sb) != "content 7" {
		t.Errorf("restored snapshot %q", sb)
	}
	bl, err := bc.GetBlockList(e.ctx, blockblob.BlockListTypeUncommitted, nil)
	must(t, err)
	if len(bl.UncommittedBlocks) != 1 {
		t.Errorf("restored uncommitted blocks %d, want 1", len(bl.UncommittedBlocks))
	}
	tags, err := cc.NewBlobClient("b008").GetTags(e.ctx, nil)
	must(t, err)
	if len(tags.BlobTagSet) != 1 {
		t.Errorf("restored tags %+v", tags.BlobTagSet)
	}
	if del := deletedContainers(t, svc, name); len(del) != 1 || *del[0].Version == *d.Version {
		t.Fatalf("deleted containers after restore %v", del)
	}
	// Writes work on the restored container.
	_, err = e.c.UploadBuffer(e.ctx, name, "b123", []byte("written again"), nil)
	must(t, err)
	if got := readBlobText(t, e, name, "b123"); got != "written again" {
		t.Errorf("blob after restore and write %q", got)
	}
}

// After the retention period a deleted container is gone for good: not
// listed, not restorable, and its records reclaimed.
func TestContainerSoftDeleteExpiry(t *testing.T) {
	e, svc := startContainerSoftDelete(t, 2)
	const name = "expiring"
	cc := svc.NewContainerClient(name)
	_, err := cc.Create(e.ctx, nil)
	must(t, err)
	_, err = e.c.UploadBuffer(e.ctx, name, "x", []byte("data"), nil)
	must(t, err)
	_, err = cc.Delete(e.ctx, nil)
	must(t, err)
	del := deletedContainers(t, svc, name)
	if len(del) != 1 {
		t.Fatalf("deleted containers %d, want 1", len(del))
	}
	e.clock.Advance(48*time.Hour - time.Second)
	if got := len(deletedContainers(t, svc, name)); got != 1 {
		t.Fatalf("a second before expiry: %d deleted containers, want 1", got)
	}
	e.clock.Advance(time.Second)
	if got := len(deletedContainers(t, svc, name)); got != 0 {
		t.Fatalf("at expiry: %d deleted containers, want 0", got)
	}
	_, err = svc.RestoreContainer(e.ctx, name, *del[0].Version, nil)
	wantCode(t, err, 404, bloberror.ContainerNotFound)
	steps := 0
	for i := 0; i < 3; i++ {
		n, err := e.app.Blob.Reclaimer().Drain(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		steps += n
	}
	// The background round the expiry kicks may take the tombstone.
	if steps == 0 {
		t.Error("the reclaimer found nothing of the expired container to reclaim")
	}
	if n, err := e.app.Blob.Reclaimer().Drain(e.ctx); err != nil || n != 0 {
		t.Errorf("last drain: %d steps, %v; want nothing left", n, err)
	}
}

// Restore Container needs both headers: 400 MissingRequiredHeader.
func TestContainerSoftDeleteRestoreHeaders(t *testing.T) {
	e, svc := startContainerSoftDelete(t, 1)
	_, err := svc.RestoreContainer(e.ctx, "c", "", nil)
	wantCode(t, err, 400, bloberror.MissingRequiredHeader)
}

package crash

import (
	"context"
	"errors"
	"fmt"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"math/rand/v2"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// Delete Container returns at once and reclaims the container's blobs in
// the background, in bounded transactions (internal/reclaim). The
// container deleter fills containers of its own with small blobs and
// deletes them, so that kills land before, during and after reclaims;
// after each restart a container whose delete was acknowledged must be
// gone (404), its name must come free within reclaimWait (the reclaim
// resumed after the restart) and a container created then must be empty;
// a delete without answer leaves the container whole (every blob) or
// gone. The rest of the model checks that nothing else was lost.

// reclaimWait bounds the wait for a resumed reclaim to free a name.
const reclaimWait = 60 * time.Second

// contObj is one of the deleter's containers.
type contObj struct {
	blobs   int    // blobs written, all acknowledged, before the delete
	acked   []bool // while filling: which of the blobs were acknowledged
	filling bool   // created (acknowledged), not every blob acknowledged yet
	st      state  // present (filled), deleting (delete without answer), absent (delete acknowledged)
	checked bool   // its name was freed and the new container found empty: nothing more to check
}

// containerDeleter fills a container and deletes it, again and again. A
// container whose filling a kill cut short is filled on in the next
// trial (uploads are idempotent), so that even a slow backend gets
// whole containers to delete.
func containerDeleter(m *model, cl *clients, trial int, rng *rand.Rand, stopped stopFn, busy busyFn) {
	for seq := 0; !stopped(); seq++ {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		m.mu.Lock()
		var name string
		var c *contObj
		for n, x := range m.conts {
			if x.filling {
				name, c = n, x
				break
			}
		}
		m.mu.Unlock()
		if c == nil {
			name = fmt.Sprintf("del-%d-%d", trial, seq)
			// More blobs than one reclaim transaction removes (256),
			// so a kill can land between two of its steps.
			n := 300 + rng.IntN(300)
			busy(1)
			_, err := cl.blob.CreateContainer(ctx, name, nil)
			busy(-1)
			if err != nil {
				cancel()
				return // killed: a container without acknowledged creation is not modelled
			}
			c = &contObj{blobs: n, acked: make([]bool, n), filling: true, st: present}
			m.mu.Lock()
			m.conts[name] = c
			m.mu.Unlock()
		}
		// Uploaded by 8 clients so that a container fills quickly.
		busy(1)
		err := fillAcked(&m.mu, c.acked, c.blobs, func(i int) error {
			_, err := cl.blob.UploadBuffer(ctx, name, fmt.Sprintf("b%04d", i), []byte{byte(i)}, nil)
			return err
		})
		busy(-1)
		if err != nil {
			cancel()
			return // killed while filling: the next trial fills on
		}
		m.mu.Lock()
		c.filling, c.acked = false, nil
		m.mu.Unlock()
		busy(1)
		_, err = cl.blob.DeleteContainer(ctx, name, nil)
		busy(-1)
		cancel()
		m.outcome(err, 0)
		m.mu.Lock()
		if err == nil {
			c.st = absent
		} else {
			c.st = deleting
		}
		m.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// verifyContainers checks the deleter's containers after a restart (m.mu
// held).
func verifyContainers(ctx context.Context, m *model, cl *clients, bad func(string, ...any)) {
	for name, c := range m.conts {
		if c.checked {
			continue
		}
		cc := cl.blob.ServiceClient().NewContainerClient(name)
		_, err := cc.GetProperties(ctx, nil)
		if c.filling {
			// Created (acknowledged), not deleted: it must exist.
			if err != nil {
				bad("container %s: its creation was acknowledged, yet: %v", name, err)
			}
			continue
		}
		switch {
		case err == nil && c.st == absent:
			bad("container %s: exists after its delete was acknowledged", name)
			continue
		case err == nil:
			// Present, or a delete without answer that did not happen:
			// every blob must be there.
			if got, err := countBlobs(ctx, cc); err != nil {
				bad("container %s: list blobs: %v", name, err)
			} else if got != c.blobs {
				bad("container %s: %d blobs, want all %d (a delete without answer is whole or nothing)", name, got, c.blobs)
			}
			c.st = present
			continue
		case !bloberror.HasCode(err, bloberror.ContainerNotFound):
			bad("container %s: Get Container Properties: %v, want 404 ContainerNotFound", name, err)
			continue
		case c.st == present:
			bad("container %s: gone, though no delete was sent", name)
			continue
		}
		// Gone: the reclaim resumed after the restart frees the name.
		deadline := time.Now().Add(reclaimWait)
		for {
			_, err := cl.blob.CreateContainer(ctx, name, nil)
			if err == nil {
				break
			}
			var re *azcore.ResponseError
			if !errors.As(err, &re) || re.ErrorCode != string(bloberror.ContainerBeingDeleted) {
				bad("container %s: create after the delete: %v, want success or 409 ContainerBeingDeleted", name, err)
				break
			}
			if time.Now().After(deadline) {
				bad("container %s: still being deleted %v after the restart: the reclaim did not resume", name, reclaimWait)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		page, err := cc.NewListBlobsFlatPager(nil).NextPage(ctx)
		if err != nil {
			bad("container %s: list blobs of the recreated container: %v", name, err)
		} else if k := len(page.Segment.BlobItems); k != 0 {
			bad("container %s: recreated after its delete, it lists %d blobs of the deleted one", name, k)
		}
		c.st, c.checked = absent, true
	}
}

// countBlobs is how many blobs List Blobs shows in the container.
func countBlobs(ctx context.Context, cc *container.Client) (int, error) {
	return countPaged(ctx, cc.NewListBlobsFlatPager(nil), func(p container.ListBlobsFlatResponse) int { return len(p.Segment.BlobItems) })
}

// countPaged sums n over the pages of p.
func countPaged[T any](ctx context.Context, p *runtime.Pager[T], n func(T) int) (int, error) {
	got := 0
	for p.More() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return got, err
		}
		got += n(page)
	}
	return got, nil
}

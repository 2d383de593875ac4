package crash

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
)

// Container soft delete (a server run with --container-soft-delete):
// Delete Container moves the container's records off its name, Restore
// Container moves them back, both in bounded transactions that a kill
// can cut short and the Reclaimer's sweep finishes after the restart.
// The container soft deleter fills containers with more blobs than one
// move transaction moves (256), deletes and restores them, and is killed
// at a random time; after each restart a container is either live with
// every blob or deleted and restorable with every blob, never half of
// each: the check restores a deleted one and counts. A second soft
// deleter does the same on an account with a hierarchical namespace,
// whose containers are filesystems: it writes files in a tree of
// directories through the Blob API and soft-deletes more of them than
// one move transaction moves (Blob soft delete is on for that account),
// so a filesystem's delete moves its root in the delete's transaction
// and its soft-deleted paths in several; after each restart a filesystem
// is live, or deleted and restorable, with every directory, every file
// and every soft-deleted path. It runs on a server of its own, so the
// main trials keep testing Delete Container without soft delete.

// hnsAccount is the soft-delete server's hierarchical account.
const hnsAccount = "hnslake"

// csdPathDeletes is how many of a hierarchical container's files its
// filler soft-deletes: more than one move transaction carries (256).
const csdPathDeletes = 270

// csdCont is one of the container soft deleter's containers.
type csdCont struct {
	blobs   int
	acked   []bool // while filling: which blobs were acknowledged
	dacked  []bool // while filling a hierarchical one: which deletes were acknowledged
	hier    bool   // a filesystem of hnsAccount: files in directories, csdPathDeletes of them soft-deleted
	filling bool   // created (acknowledged), not every blob acknowledged yet
	st      state  // present; deleting: soft-deleted or a delete/restore without answer
	checked bool   // verified whole after a restart
}

type csdModel struct {
	mu    sync.Mutex
	conts map[string]*csdCont
	ops   int
	errs  []string
}

// csdBlobName is blob i of a container of the soft deleters: in a
// hierarchical one a file three levels down, in one of twelve
// directories (made by the Blob API's writes).
func csdBlobName(hier bool, i int) string {
	if hier {
		return fmt.Sprintf("d%d/e%d/f%04d", i%3, (i/3)%4, i)
	}
	return fmt.Sprintf("b%04d", i)
}

// containerSoftDeleter fills, deletes and restores containers of cl's
// account, hierarchical ones (hier) on hnsAccount.
func containerSoftDeleter(m *csdModel, cl *azblob.Client, hier bool, trial int, rng *rand.Rand, stopped stopFn) {
	for seq := 0; !stopped(); seq++ {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		var name string
		var c *csdCont
		m.mu.Lock()
		for k, x := range m.conts {
			if x.filling && x.hier == hier {
				name, c = k, x
				break
			}
		}
		m.mu.Unlock()
		if c == nil {
			name = fmt.Sprintf("csd-%d-%d", trial, seq)
			if hier {
				name = "h" + name
			}
			n := 300 + rng.IntN(100)
			if _, err := cl.CreateContainer(ctx, name, nil); err != nil {
				cancel()
				return // killed: a container without acknowledged creation is not modelled
			}
			c = &csdCont{blobs: n, acked: make([]bool, n), hier: hier, filling: true, st: present}
			if hier {
				c.dacked = make([]bool, csdPathDeletes)
			}
			m.mu.Lock()
			m.conts[name] = c
			m.mu.Unlock()
		}
		err := fillAcked(&m.mu, c.acked, c.blobs, func(i int) error {
			_, err := cl.UploadBuffer(ctx, name, csdBlobName(hier, i), []byte{byte(i)}, nil)
			return err
		})
		if err == nil && hier {
			err = fillAcked(&m.mu, c.dacked, csdPathDeletes, func(i int) error {
				_, err := cl.DeleteBlob(ctx, name, csdBlobName(true, i), nil)
				if bloberror.HasCode(err, bloberror.BlobNotFound) {
					return nil // deleted before a kill took its answer
				}
				return err
			})
		}
		if err != nil {
			cancel()
			return // killed while filling: the next trial fills on
		}
		m.mu.Lock()
		c.filling, c.acked, c.dacked = false, nil, nil
		m.ops++
		m.mu.Unlock()
		_, err = cl.DeleteContainer(ctx, name, nil)
		m.mu.Lock()
		c.st = deleting // deleted, or maybe (no answer)
		m.mu.Unlock()
		if err != nil {
			cancel()
			return
		}
		ver, err := csdVersion(ctx, cl.ServiceClient(), name)
		if err == nil && ver != "" {
			m.mu.Lock()
			m.ops++
			m.mu.Unlock()
			_, err = cl.ServiceClient().RestoreContainer(ctx, name, ver, nil)
			if err == nil {
				m.mu.Lock()
				c.st = present
				m.mu.Unlock()
			}
		}
		cancel()
		if err != nil {
			return
		}
	}
}

// csdVersion is the version of the deleted container name listed by List
// Containers include=deleted ("" when none is).
func csdVersion(ctx context.Context, svc *service.Client, name string) (string, error) {
	pg := svc.NewListContainersPager(&service.ListContainersOptions{Prefix: &name, Include: service.ListContainersInclude{Deleted: true}})
	ver := ""
	for pg.More() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return "", err
		}
		for _, it := range page.ContainerItems {
			if *it.Name == name && it.Deleted != nil && *it.Deleted && it.Version != nil {
				ver = *it.Version
			}
		}
	}
	return ver, nil
}

// verifySoftDeletedContainers checks the soft deleters' containers after
// a restart: each is live with every blob, or deleted and restorable with
// every blob; a move the kill cut short is finished by the sweep within
// reclaimWait. hcl is the client of hnsAccount.
func verifySoftDeletedContainers(ctx context.Context, m *csdModel, flat, hcl *azblob.Client) {
	m.mu.Lock()
	defer m.mu.Unlock()
	bad := func(format string, args ...any) { m.errs = append(m.errs, fmt.Sprintf(format, args...)) }
	for name, c := range m.conts {
		cl := flat
		if c.hier {
			cl = hcl
		}
		cc := cl.ServiceClient().NewContainerClient(name)
		if c.filling {
			if _, err := cc.GetProperties(ctx, nil); err != nil {
				bad("container %s: its creation was acknowledged, yet: %v", name, err)
			}
			continue
		}
		if c.checked {
			continue
		}
		deadline := time.Now().Add(reclaimWait)
		for {
			_, err := cc.GetProperties(ctx, nil)
			if err != nil && !bloberror.HasCode(err, bloberror.ContainerNotFound) {
				bad("container %s: Get Container Properties: %v", name, err)
				break
			}
			if err != nil && c.st == present {
				bad("container %s: gone, though its restore (or creation) was acknowledged", name)
				break
			}
			if err != nil {
				ver, lerr := csdVersion(ctx, cl.ServiceClient(), name)
				if lerr != nil {
					bad("container %s: list deleted containers: %v", name, lerr)
					break
				}
				if ver == "" {
					// Neither live nor listed: a restore the sweep has
					// not finished yet.
					if time.Now().After(deadline) {
						bad("container %s: neither live nor deleted %v after the restart", name, reclaimWait)
						break
					}
					time.Sleep(50 * time.Millisecond)
					continue
				}
				if _, err := cl.ServiceClient().RestoreContainer(ctx, name, ver, nil); err != nil {
					if bloberror.HasCode(err, bloberror.ContainerBeingDeleted) && time.Now().Before(deadline) {
						time.Sleep(50 * time.Millisecond) // its delete's move is still running
						continue
					}
					bad("container %s: restore after the restart: %v", name, err)
					break
				}
			}
			if c.hier {
				verifyFilesystem(ctx, cc, name, c.blobs, bad)
			} else {
				if got, err := countBlobs(ctx, cc); err != nil {
					bad("container %s: list blobs: %v", name, err)
				} else if got != c.blobs {
					bad("container %s: %d blobs, want all %d (a delete or restore is whole or nothing)", name, got, c.blobs)
				}
			}
			c.st, c.checked = present, true
			break
		}
	}
}

// verifyFilesystem checks a hierarchical container of files files, of
// which the first csdPathDeletes are soft-deleted: it lists its 15
// directories, the files left and the soft-deleted paths (List Blobs
// include=deleted, which lists a hierarchical account's directories as
// hdi_isfolder blobs).
func verifyFilesystem(ctx context.Context, cc *container.Client, name string, files int, bad func(string, ...any)) {
	dirs, live, deleted := 0, 0, 0
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Deleted: true}})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			bad("container %s: list blobs: %v", name, err)
			return
		}
		for _, it := range page.Segment.BlobItems {
			switch {
			case !strings.Contains(*it.Name, "/f"):
				dirs++
			case it.Deleted != nil && *it.Deleted:
				deleted++
			default:
				live++
			}
		}
	}
	if dirs != 15 || live != files-csdPathDeletes || deleted != csdPathDeletes {
		bad("container %s: %d directories, %d files, %d soft-deleted paths; want 15, %d, %d (a delete or restore is whole or nothing)",
			name, dirs, live, deleted, files-csdPathDeletes, csdPathDeletes)
	}
}

// hnsClient is an azblob client of hnsAccount on the server at port,
// over the transport of cl.
func hnsClient(t *testing.T, port int, cl *clients) *azblob.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(hnsAccount, app.DevKey)
	must(t, err)
	opts := azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: &http.Client{Transport: cl.tr, Timeout: opTimeout}}
	c, err := azblob.NewClientWithSharedKeyCredential(fmt.Sprintf("http://127.0.0.1:%d/%s", port, hnsAccount), cred, &azblob.ClientOptions{ClientOptions: opts})
	must(t, err)
	return c
}

// TestContainerSoftDeleteCrashTrials: see the comment above. It runs with
// the crash trials (CERULEAN_CRASH_TRIALS), on a server of its own on the
// four ports after theirs.
func TestContainerSoftDeleteCrashTrials(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crash trials run real servers")
	}
	trials, port := trialSetup(t, 4) // the main trials' four ports stay theirs
	srv := &server{bin: buildBinary(t), data: filepath.Join(t.TempDir(), "data"), log: filepath.Join(t.TempDir(), "cerulean.log"), port: port,
		extra: []string{"--container-soft-delete", "7", "--accounts", app.DevAccount + ":" + app.DevKey + ";" + hnsAccount + ":" + app.DevKey + ":hns"}}
	backend := "embedded store"
	if os.Getenv(pgtest.EnvVar) != "" {
		srv.dsn, _ = pgtest.Schema(t)
		backend = "PostgreSQL backend"
	}
	t.Cleanup(func() {
		srv.stop(t)
		if t.Failed() {
			t.Logf("server log (last lines):\n%s", tail(srv.log, 40))
		}
	})
	srv.start(t)
	// Blob soft delete on the hierarchical account: its filler's
	// deletes keep soft-deleted paths.
	{
		cl := newClients(t, port)
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		_, err := hnsClient(t, port, cl).ServiceClient().SetProperties(ctx, &service.SetPropertiesOptions{
			DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7))}})
		cancel()
		must(t, err)
		cl.tr.CloseIdleConnections()
	}
	m := &csdModel{conts: map[string]*csdCont{}}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 2))
	for trial := 1; trial <= trials && len(m.errs) == 0; trial++ {
		cl := newClients(t, port)
		stop := make(chan struct{})
		stopped := func() bool {
			select {
			case <-stop:
				return true
			default:
				return false
			}
		}
		var wg sync.WaitGroup
		wg.Add(2)
		wrng := rand.New(rand.NewPCG(rng.Uint64(), 3))
		hrng := rand.New(rand.NewPCG(rng.Uint64(), 4))
		go func() {
			defer wg.Done()
			containerSoftDeleter(m, cl.blob, false, trial, wrng, stopped)
		}()
		hcl := hnsClient(t, port, cl)
		go func() {
			defer wg.Done()
			containerSoftDeleter(m, hcl, true, trial, hrng, stopped)
		}()
		time.Sleep(time.Duration(300+rng.IntN(2200)) * time.Millisecond)
		close(stop)
		srv.kill()
		wg.Wait()
		cl.tr.CloseIdleConnections()
		srv.start(t)
		cl = newClients(t, port)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		verifySoftDeletedContainers(ctx, m, cl.blob, hnsClient(t, port, cl))
		cancel()
		cl.tr.CloseIdleConnections()
	}
	for _, e := range m.errs {
		t.Error(e)
	}
	filled, checked, hier := 0, 0, 0
	for _, c := range m.conts {
		if !c.filling {
			filled++
			if c.hier {
				hier++
			}
		}
		if c.checked {
			checked++
		}
	}
	t.Logf("container soft delete crash trials on the %s, seed %d: %d containers (%d hierarchical) filled and deleted or restored (%d requests), %d found whole after a restart; violations: %d",
		backend, seed, filled, hier, m.ops, checked, len(m.errs))
}

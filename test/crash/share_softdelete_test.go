package crash

import (
	"context"
	"fmt"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"math/rand/v2"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	azfileservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
)

// Share soft delete (the server runs with --share-soft-delete): Delete
// Share moves the share's records off its name, Restore Share moves them
// back, both in bounded transactions that a kill can cut short and the
// reclaimer's sweep finishes after the restart. The share soft deleter
// fills shares of its own with more files than one move transaction
// moves (256), deletes and restores them; after each restart a share is
// either live with every file or deleted and restorable with every file,
// never half of each: the check restores a deleted one and counts.

// sdShare is one of the soft deleter's shares.
type sdShare struct {
	files   int
	acked   []bool // while filling: which files were acknowledged
	filling bool   // created (acknowledged), not every file acknowledged yet
	st      state  // present; deleting: soft-deleted or a delete/restore without answer
	checked bool   // verified whole after a restart
}

func shareSoftDeleter(m *model, cl *clients, trial int, rng *rand.Rand, stopped stopFn, busy busyFn) {
	for seq := 0; !stopped(); seq++ {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		// A share whose filling a kill cut short is filled on (file
		// creates are idempotent), so that a slow backend gets whole
		// shares to delete too.
		var name string
		var s *sdShare
		m.mu.Lock()
		for k, x := range m.sdShares {
			if x.filling {
				name, s = k, x
				break
			}
		}
		m.mu.Unlock()
		if s == nil {
			name = fmt.Sprintf("sd-%d-%d", trial, seq)
			n := 300 + rng.IntN(100)
			busy(1)
			_, err := cl.files.NewShareClient(name).Create(ctx, nil)
			busy(-1)
			if err != nil {
				cancel()
				return // killed: a share without acknowledged creation is not modelled
			}
			s = &sdShare{files: n, acked: make([]bool, n), filling: true, st: present}
			m.mu.Lock()
			m.sdShares[name] = s
			m.mu.Unlock()
		}
		sc := cl.files.NewShareClient(name)
		busy(1)
		err := fillAcked(&m.mu, s.acked, s.files, func(i int) error {
			_, err := sc.NewRootDirectoryClient().NewFileClient(fmt.Sprintf("f%04d", i)).Create(ctx, 1, nil)
			return err
		})
		busy(-1)
		if err != nil {
			cancel()
			return // killed while filling: the next trial fills on
		}
		m.mu.Lock()
		s.filling, s.acked = false, nil
		m.mu.Unlock()
		busy(1)
		_, err = sc.Delete(ctx, nil)
		busy(-1)
		m.outcome(err, 0)
		m.mu.Lock()
		s.st = deleting // deleted, or maybe (no answer)
		m.mu.Unlock()
		if err != nil {
			cancel()
			return
		}
		busy(1)
		ver, err := sdVersion(ctx, cl.files, name)
		if err == nil && ver != "" {
			_, err = sc.Restore(ctx, ver, nil)
			m.outcome(err, 0)
			if err == nil {
				m.mu.Lock()
				s.st = present
				m.mu.Unlock()
			}
		}
		busy(-1)
		cancel()
		if err != nil {
			return
		}
	}
}

// sdVersion is the version of the deleted share name listed by List
// Shares include=deleted ("" when none is).
func sdVersion(ctx context.Context, svc *azfileservice.Client, name string) (string, error) {
	pg := svc.NewListSharesPager(&azfileservice.ListSharesOptions{Prefix: &name, Include: azfileservice.ListSharesInclude{Deleted: true}})
	ver := ""
	for pg.More() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return "", err
		}
		for _, it := range page.Shares {
			if *it.Name == name && it.Deleted != nil && *it.Deleted && it.Version != nil {
				ver = *it.Version
			}
		}
	}
	return ver, nil
}

// sdCount counts the files of share sc's root directory.
func sdCount(ctx context.Context, sc *share.Client) (int, error) {
	return countPaged(ctx, sc.NewRootDirectoryClient().NewListFilesAndDirectoriesPager(nil), func(p directory.ListFilesAndDirectoriesResponse) int { return len(p.Segment.Files) })
}

// verifySoftDeletedShares checks the soft deleter's shares after a
// restart (m.mu held): each is live with every file, or deleted and
// restorable with every file; a move the kill cut short is finished by
// the sweep within reclaimWait.
func verifySoftDeletedShares(ctx context.Context, m *model, cl *clients, bad func(string, ...any)) {
	for name, s := range m.sdShares {
		sc := cl.files.NewShareClient(name)
		if s.filling {
			// Created (acknowledged), not deleted: it must exist.
			if _, err := sc.GetProperties(ctx, nil); err != nil {
				bad("share %s: its creation was acknowledged, yet: %v", name, err)
			}
			continue
		}
		if s.checked {
			continue
		}
		deadline := time.Now().Add(reclaimWait)
		for {
			_, err := sc.GetProperties(ctx, nil)
			if err != nil && !fileerror.HasCode(err, fileerror.ShareNotFound) {
				bad("share %s: Get Share Properties: %v", name, err)
				break
			}
			if err != nil && s.st == present {
				bad("share %s: gone, though its restore (or creation) was acknowledged", name)
				break
			}
			if err != nil {
				ver, lerr := sdVersion(ctx, cl.files, name)
				if lerr != nil {
					bad("share %s: list deleted shares: %v", name, lerr)
					break
				}
				if ver == "" {
					// Neither live nor listed: a restore the sweep
					// has not finished yet.
					if time.Now().After(deadline) {
						bad("share %s: neither live nor deleted %v after the restart", name, reclaimWait)
						break
					}
					time.Sleep(50 * time.Millisecond)
					continue
				}
				if _, err := sc.Restore(ctx, ver, nil); err != nil {
					if fileerror.HasCode(err, fileerror.ShareBeingDeleted) && time.Now().Before(deadline) {
						time.Sleep(50 * time.Millisecond) // its delete's move is still running
						continue
					}
					bad("share %s: restore after the restart: %v", name, err)
					break
				}
			}
			got, err := sdCount(ctx, sc)
			if err != nil {
				bad("share %s: list files: %v", name, err)
			} else if got != s.files {
				bad("share %s: %d files, want all %d (a delete or restore is whole or nothing)", name, got, s.files)
			}
			s.st, s.checked = present, true
			break
		}
	}
}

// sdSummary counts the soft deleter's shares for the trials' report.
func sdSummary(m *model) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	filled, checked := 0, 0
	for _, s := range m.sdShares {
		if !s.filling {
			filled++
		}
		if s.checked {
			checked++
		}
	}
	return fmt.Sprintf("%d shares filled and deleted or restored, %d found whole after a restart", filled, checked)
}

package blob

import (
	"context"
	"fmt"
	"time"

	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
)

// Delete Container returns at once and reclaims in the background, as
// Azure does (Delete Container, Remarks: the container is marked for
// deletion and deleted later; meanwhile a Create Container of the name
// fails with 409 ContainerBeingDeleted and every other operation on it,
// its blobs' included, with 404). Its transaction replaces the container
// record by a tombstone (reclaim.Mark, kind "container"); every operation
// loads the container record in its own transaction, so the container
// and its blobs are gone for them at once, and listings (List Containers
// reads the container records, Find Blobs by Tags skips blob records
// whose container record is gone) never show it half deleted. The
// Reclaimer removes its blob records, soft-deleted records (with their
// expiry index entries) and uncommitted blocks in bounded transactions,
// releasing their data references, and the tombstone with the last.

// Reclaimer is the Blob service's background reclaimer (deleted
// containers, and the Data Lake namespace's detached trees): the process
// runs it (Reclaimer.Run) for as long as it serves.
func (s *Service) Reclaimer() *reclaim.Reclaimer { return s.reclaim }

// newReclaimer builds s's Reclaimer.
func (s *Service) newReclaimer() *reclaim.Reclaimer {
	r := reclaim.New(s.store, s.clock, s.log, 0)
	r.Register(reclaimKindContainer, reclaimContainerStep)
	r.AddSweep(func(ctx context.Context) (bool, error) {
		if s.hns == nil {
			return false, nil
		}
		return s.hns.CollectStep(ctx, s.store, 0, s.Reclaim)
	})
	// Soft-deleted containers: moves left over, expiries.
	r.AddSweep(s.SweepDeletedContainers)
	return r
}

// reclaimContainerStep removes up to batch records of a deleted
// container (reclaim.Step).
func reclaimContainerStep(tx kv.Tx, parts []string, _ []byte, now time.Time, batch int) (bool, error) {
	if len(parts) != 2 {
		return false, fmt.Errorf("blob: malformed container tombstone %q", parts)
	}
	acct, c := parts[0], parts[1]
	left := batch
	var keys [][]byte
	var refs []extent.Part
	for _, prefix := range [][]byte{blobsPrefix(acct, c), deletedPrefix(acct, c), kv.Key("u", acct, c), containerVersionsPrefix(acct, c)} {
		if left == 0 {
			break
		}
		var derr error
		n := 0
		err := tx.Scan(prefix, kv.PrefixEnd(prefix), left, false, func(k, v []byte) bool {
			// A record that does not decode stops the reclaim: its
			// chunk references and expiry entry are unknown and would
			// leak. The tombstone stays, and the error is logged.
			var p refsOf
			if derr = p.read(k, v); derr != nil {
				return false
			}
			n++
			keys = append(keys, append([]byte(nil), k...))
			refs = append(refs, p.Parts...)
			if f, ok := kv.Split(k); ok && len(f) == 5 && p.Del != nil {
				keys = append(keys, expiryKey(p.Del.Expires, f[1], f[2], f[3], f[4]))
			}
			return true
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return false, err
		}
		left -= n
	}
	for _, k := range keys {
		if err := tx.Delete(k); err != nil {
			return false, err
		}
	}
	if err := extent.AdjustRefs(tx, now, refs, nil); err != nil {
		return false, err
	}
	if left > 0 {
		// The soft-deleted paths of the filesystem of an expired
		// deleted container (domain_containersd.go) become garbage for
		// the namespace's collector; a container deleted for good has
		// none left (ns.DeleteFilesystem ended them).
		n, err := ns.DropDeletedPaths(tx, ns.FS{Account: acct, Filesystem: c}, left)
		if err != nil {
			return false, err
		}
		left -= n
	}
	return left > 0, nil
}

// ReclaimContainers runs the Reclaimer until no deleted container (nor
// detached Data Lake tree) is left, for tests and tools; the server runs
// it in the background.
func (s *Service) ReclaimContainers(ctx context.Context) (int, error) {
	return s.reclaim.Drain(ctx)
}

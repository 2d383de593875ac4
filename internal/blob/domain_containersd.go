package blob

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Container soft delete ("Soft delete for containers"; Restore
// Container, https://learn.microsoft.com/en-us/rest/api/storageservices/restore-container;
// List Containers include=deleted).
//
// With a container delete retention period (SetContainerSoftDelete: on
// Azure a management-plane setting of the account, so the Blob Service
// Properties have no element for it), Delete Container of a container
// of a flat account keeps it as one deleted version: its record
// ("c", account, container) becomes ("cx", account, container, version)
// and its blob records ("b"), soft-deleted blobs ("bd", with their
// expiry index entries "bx"), versions ("bv") and uncommitted blocks
// ("u") move, in bounded transactions, from the container's name to an
// alias (container "/" version: '/' is never in a container name), values
// unchanged, so their data references move with them. The name can be
// created again at once; the container of that name is a new one. A
// move in progress is a job record ("cm", account, container): while it
// exists Create Container and Restore Container of the name answer 409
// ContainerBeingDeleted. The delete runs reclaim.Inline move
// transactions itself; the Reclaimer's sweep (SweepDeletedContainers)
// finishes a larger container's move, or one a stopped process left.
// Restore Container moves the records back the same way and writes the
// container record in the move's last transaction, so the container is
// either deleted with all its blobs or live with all of them. Once the
// retention period is over (on the injected clock) the deleted version
// is neither listed nor restorable, and the sweep turns it into the
// container tombstone of its alias (container_reclaim.go), which reclaims
// its records and bytes.
//
// A hierarchical account's container is a filesystem of the namespace
// too, and is kept the same way: Azure's container soft delete covers
// Data Lake Storage accounts, whose SDKs list deleted filesystems through
// List Containers include=deleted and restore them with Restore Container
// on the blob endpoint (azure-sdk-for-net DataLakeServiceClient.UndeleteFileSystem;
// azure-sdk-for-go azdatalake service.ListFileSystemsInclude.Deleted;
// @azure/storage-file-datalake 12.4.0, "Added support for Container Soft
// Delete"). Its tree is keyed under node ids, never under its name, so
// the delete's transaction moves the filesystem's root record to the
// alias (ns.KeepFilesystem, one write) and every directory and file, with
// its owner, group, ACL, properties, tags, lease and content reference,
// goes with it; the file contents, pending appends and snapshots are
// keyed by node id and stay where they are. What does name the
// filesystem moves with the blob records: its soft-deleted paths ("dld"),
// each with its retention index entry (ns.MoveRetention), and the
// uncommitted blocks of its files ("u"). Restore Container moves the root
// back in the move's last transaction, with the container record, so the
// dfs endpoint, which resolves paths from the root, sees the filesystem
// exactly when the Blob endpoint sees the container. At expiry the root
// of the alias is detached (ns.DetachRoot) with the tombstone's
// transaction, and the tombstone's steps end its soft-deleted paths
// (ns.DropDeletedPaths), so the namespace's collector reclaims the tree
// and its bytes.

// deletedContainer is a soft-deleted container: its record as it was.
type deletedContainer struct {
	Deleted time.Time  `json:"t"`
	Expires time.Time  `json:"x"`
	Rec     *container `json:"c"`
	// Moving: the records are still being moved to the alias (the
	// delete), or back (Restoring).
	Moving    bool `json:"mv,omitempty"`
	Restoring bool `json:"rs,omitempty"`
}

// containerMove is a move of a container's records between its name and
// an alias.
type containerMove struct {
	Version string `json:"v"`
	Restore bool   `json:"r,omitempty"`
	// From is the deleted container's name when a restore gives it
	// another one ("": the job's own).
	From string `json:"f,omitempty"`
}

func deletedContainerKey(acct, c, version string) []byte { return kv.Key("cx", acct, c, version) }
func deletedContainersPrefix(acct string) []byte         { return kv.Key("cx", acct) }
func containerMoveKey(acct, c string) []byte             { return kv.Key("cm", acct, c) }

// containerAlias is where the records of deleted version version of
// container c live; '/' is not allowed in a container name.
func containerAlias(c, version string) string { return c + "/" + version }

// containerMoveBatch bounds the records one move transaction moves.
const containerMoveBatch = reclaim.Batch

// SetContainerSoftDelete sets the container delete retention, in days
// (0: off), the server gives account's containers. Call it before the
// service answers requests.
func (s *Service) SetContainerSoftDelete(days func(account string) int) { s.containerSD = days }

// containerRetention is the container delete retention of acct in days,
// 0 when off.
func (s *Service) containerRetention(acct string) int {
	if s.containerSD == nil {
		return 0
	}
	return s.containerSD(acct)
}

// newContainerVersion returns the version of a container deleted at now:
// its Windows file time (100 ns ticks since 1601) in 16 hex digits, as
// Azure's versions look, moved forward past a version of the name that
// exists.
func newContainerVersion(tx kv.Tx, acct, c string, now time.Time) (string, error) {
	return reclaim.FreeVersion(tx, uint64(now.UnixNano()/100)+116444736000000000, func(v string) []byte {
		return deletedContainerKey(acct, c, v)
	})
}

// softDeleteContainer replaces the record rec of container c (its
// conditions and lease already checked) by a deleted version and a move
// job, inside tx; the filesystem's tree, when it has one, goes to the
// alias at once.
func (s *Service) softDeleteContainer(tx kv.Tx, acct, c string, rec *container, days int, now time.Time) error {
	v, err := newContainerVersion(tx, acct, c, now)
	if err != nil {
		return err
	}
	if s.hns != nil {
		if _, err := ns.KeepFilesystem(tx, ns.FS{Account: acct, Filesystem: c}, containerAlias(c, v)); err != nil {
			return err
		}
	}
	// A deleted container has no lease: Delete Container of a leased
	// container needed its lease ID, and the restored one is not leased.
	rec.Lease = lease.Lease{}
	d := deletedContainer{Deleted: now, Expires: now.Add(time.Duration(days) * 24 * time.Hour), Rec: rec, Moving: true}
	if err := tx.Delete(ContainerKey(acct, c)); err != nil {
		return err
	}
	if err := kv.PutJSON(tx, deletedContainerKey(acct, c, v), &d); err != nil {
		return err
	}
	return kv.PutJSON(tx, containerMoveKey(acct, c), containerMove{Version: v})
}

// containerMoving reports whether a move of container c's records is in
// progress.
func containerMoving(tx kv.Tx, acct, c string) (bool, error) {
	_, err := tx.Get(containerMoveKey(acct, c))
	if err == kv.ErrNotFound {
		return false, nil
	}
	return err == nil, err
}

// containerMoveStep runs one bounded transaction of the move of
// container c; done when there is no move (left).
func (s *Service) containerMoveStep(ctx context.Context, acct, c string) (done bool, err error) {
	err = s.store.Update(ctx, func(tx kv.Tx) error {
		done = false
		var job containerMove
		ok, err := kv.GetJSON(tx, containerMoveKey(acct, c), &job)
		if err != nil || !ok {
			done = true
			return err
		}
		src := c
		if job.From != "" {
			src = job.From
		}
		var d deletedContainer
		ok, err = kv.GetJSON(tx, deletedContainerKey(acct, src, job.Version), &d)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("blob: container move of %s/%s without its deleted version %s/%s", acct, c, src, job.Version)
		}
		from, to := c, containerAlias(src, job.Version)
		if job.Restore {
			from, to = to, from
		}
		more, err := moveContainerRecords(tx, acct, from, to, containerMoveBatch)
		if err != nil || more {
			return err
		}
		done = true
		if !job.Restore {
			d.Moving = false
			if err := kv.PutJSON(tx, deletedContainerKey(acct, c, job.Version), &d); err != nil {
				return err
			}
			return tx.Delete(containerMoveKey(acct, c))
		}
		if err := s.restoreFilesystem(tx, acct, c, containerAlias(src, job.Version)); err != nil {
			return err
		}
		if err := kv.PutJSON(tx, ContainerKey(acct, c), d.Rec); err != nil {
			return err
		}
		if err := tx.Delete(deletedContainerKey(acct, src, job.Version)); err != nil {
			return err
		}
		return tx.Delete(containerMoveKey(acct, c))
	})
	return done, err
}

// runContainerMove runs the move of container c in at most maxTx
// transactions (0: as many as it takes) and reports whether it is over.
func (s *Service) runContainerMove(ctx context.Context, acct, c string, maxTx int) (bool, error) {
	return reclaim.Steps(ctx, s.containerMove(acct, c), maxTx)
}

// containerMove is the step of the move of container c.
func (s *Service) containerMove(acct, c string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) { return s.containerMoveStep(ctx, acct, c) }
}

// moveContainerRecords moves up to limit records of container from to
// container to: blobs and snapshots, soft-deleted ones (with their
// expiry index entries), versions (with theirs), uncommitted blocks and
// the soft-deleted paths of its filesystem (with their retention index
// entries), values unchanged. It reports whether more remain.
func moveContainerRecords(tx kv.Tx, acct, from, to string, limit int) (more bool, err error) {
	var ranges []reclaim.Range
	for _, fam := range []string{"b", "bd", "bv", "u"} {
		r := reclaim.Range{From: kv.Key(fam, acct, from), To: kv.Key(fam, acct, to)}
		if fam == "bd" || fam == "bv" {
			r.Each = func(k, v []byte) error { return moveExpiryEntry(tx, fam, k, v, from, to) }
		}
		ranges = append(ranges, r)
	}
	dFrom := ns.DeletedPathsPrefix(ns.FS{Account: acct, Filesystem: from})
	dTo := ns.DeletedPathsPrefix(ns.FS{Account: acct, Filesystem: to})
	ranges = append(ranges, reclaim.Range{From: dFrom, To: dTo, Each: func(k, v []byte) error {
		return ns.MoveRetention(tx, k, v, append(bytes.Clone(dTo), k[len(dFrom):]...))
	}})
	return reclaim.MoveRecords(tx, ranges, limit)
}

// restoreFilesystem moves the filesystem's root kept under alias back as
// the root of container c, in the transaction that makes c live again.
// A container deleted while its account was flat has none: on a
// hierarchical account it gets a new root, as Create Container gives
// one (hierLayout.containerCreated).
func (s *Service) restoreFilesystem(tx kv.Tx, acct, c, alias string) error {
	if s.hns == nil {
		return nil
	}
	fs := ns.FS{Account: acct, Filesystem: c}
	// No root of the name lives without its container; one left by a
	// process of an older version would refuse the restore for ever.
	if err := detachFilesystem(s.hns, tx, ContainerRef{Account: acct, Container: c}); err != nil {
		return err
	}
	back, err := ns.RestoreFilesystem(tx, alias, fs)
	if err != nil || back || !s.Hierarchical(acct) {
		return err
	}
	_, err = s.hns.CreateFilesystem(tx, fs, ns.FilesystemInput{})
	return err
}

// moveExpiryEntry moves the expiry index entry of the soft-deleted
// record (key k, value v, under "bd" or "bv") of container from to
// container to.
func moveExpiryEntry(tx kv.Tx, ns string, k, v []byte, from, to string) error {
	var p refsOf
	if err := p.read(k, v); err != nil {
		return err
	}
	f, ok := kv.Split(k)
	if p.Del == nil || !ok || len(f) != 5 {
		return nil
	}
	last := f[4]
	if ns == "bv" {
		last = versionExpiryMark + f[4]
	}
	old := expiryKey(p.Del.Expires, f[1], from, f[3], last)
	val, err := tx.Get(old)
	if err == kv.ErrNotFound {
		return nil // already purged, or never indexed
	} else if err != nil {
		return err
	}
	if err := tx.Put(expiryKey(p.Del.Expires, f[1], to, f[3], last), val); err != nil {
		return err
	}
	return tx.Delete(old)
}

// finishContainerMove runs the move of c in the request: reclaim.Inline
// transactions, the Reclaimer the rest.
func (s *Service) finishContainerMove(ctx context.Context, acct, c string) error {
	return s.reclaim.RunJob(ctx, s.containerMove(acct, c))
}

// DeletedContainer is what List Containers include=deleted shows of a
// soft-deleted container.
type DeletedContainer struct {
	Version string
	Deleted time.Time
	// RemainingDays is Azure's RemainingRetentionDays.
	RemainingDays int
}

// deletedMarker is the marker of a deleted container of a listing: its
// name and version apart by '/', which no container name has.
func deletedMarker(name, version string) string { return name + "/" + version }

// splitMarker is the name and deleted version ("" for a live container)
// of a List Containers marker.
func splitMarker(m string) (name, version string) {
	name, version, _ = strings.Cut(m, "/")
	return name, version
}

// RestoreContainerInput is Restore Container of the container Ref.
type RestoreContainerInput struct {
	Call
	Ref ContainerRef
	// DeletedName and DeletedVersion are x-ms-deleted-container-name and
	// x-ms-deleted-container-version.
	DeletedName, DeletedVersion string
}

// RestoreContainer is Restore Container: the deleted version
// DeletedVersion of container DeletedName becomes the live container
// Ref again, with its blobs, snapshots, versions, uncommitted blocks,
// metadata and access policies. A live container of the name is 409
// ContainerAlreadyExists, one being deleted (or restored) 409
// ContainerBeingDeleted, a version that does not exist or whose
// retention is over 404 ContainerNotFound (azure-sdk-for-net,
// UndeleteBlobContainerAsync_Error).
func (s *Service) RestoreContainer(ctx context.Context, in RestoreContainerInput) error {
	if err := wire.ReservedContainer(in.Ref.Container); err != nil {
		return err
	}
	now := s.now(in.Call)
	acct, c := in.Ref.Account, in.Ref.Container
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		var d deletedContainer
		ok, err := kv.GetJSON(tx, deletedContainerKey(acct, in.DeletedName, in.DeletedVersion), &d)
		if err != nil {
			return err
		}
		if !ok || d.Restoring || !now.Before(d.Expires) {
			return azerr.New(azerr.ContainerNotFound)
		}
		if _, err := tx.Get(ContainerKey(acct, c)); err == nil {
			return azerr.New(azerr.ContainerAlreadyExists)
		} else if err != kv.ErrNotFound {
			return err
		}
		if busy, err := containerMoving(tx, acct, c); err != nil {
			return err
		} else if busy || d.Moving {
			return azerr.New(azerr.ContainerBeingDeleted)
		}
		if busy, err := containerBeingDeleted(tx, acct, c); err != nil {
			return err
		} else if busy {
			return azerr.New(azerr.ContainerBeingDeleted)
		}
		d.Restoring = true
		if err := kv.PutJSON(tx, deletedContainerKey(acct, in.DeletedName, in.DeletedVersion), &d); err != nil {
			return err
		}
		job := containerMove{Version: in.DeletedVersion, Restore: true}
		if in.DeletedName != c {
			job.From = in.DeletedName
		}
		return kv.PutJSON(tx, containerMoveKey(acct, c), job)
	})
	if err != nil {
		return err
	}
	// The restore answers once the container is live: every move
	// transaction runs here (the records of a container under restore
	// are where no reader looks); a process stopped meanwhile leaves it
	// to the Reclaimer's sweep.
	_, err = s.runContainerMove(context.WithoutCancel(ctx), acct, c, 0)
	return err
}

// SweepDeletedContainers runs one bounded step of the work soft-deleted
// containers leave: a transaction of a move left over (a container
// larger than its delete's inline transactions, or a process stopped
// mid-move), or the expiry of a deleted container whose retention is
// over at the clock's time, which becomes the container tombstone of its
// alias. It reports whether it did something. The Reclaimer runs it as a
// sweep.
func (s *Service) SweepDeletedContainers(ctx context.Context) (bool, error) {
	var acct, c, ver string
	var isMove bool
	now := s.clock.Now()
	err := s.store.View(ctx, func(tx kv.Tx) error {
		acct, c, ver, isMove = "", "", "", false
		pre := kv.Key("cm")
		if err := tx.Scan(pre, kv.PrefixEnd(pre), 1, false, func(k, _ []byte) bool {
			if p, ok := kv.Split(k); ok && len(p) == 3 {
				acct, c, isMove = p[1], p[2], true
			}
			return false
		}); err != nil || isMove {
			return err
		}
		pre = kv.Key("cx")
		var derr error
		err := tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, v []byte) bool {
			p, ok := kv.Split(k)
			if !ok || len(p) != 4 {
				return true
			}
			var d deletedContainer
			if derr = json.Unmarshal(v, &d); derr != nil {
				return false
			}
			if !d.Moving && !d.Restoring && !now.Before(d.Expires) {
				acct, c, ver = p[1], p[2], p[3]
				return false
			}
			return true
		})
		if err == nil {
			err = derr
		}
		return err
	})
	if err != nil || c == "" {
		return false, err
	}
	if isMove {
		_, err := s.containerMoveStep(ctx, acct, c)
		return err == nil, err
	}
	return true, s.expireContainer(ctx, acct, c, ver)
}

// expireContainer turns the expired deleted version ver of container c
// into the container tombstone of its alias, which the Reclaimer
// reclaims (reclaimContainerStep) in the same round.
func (s *Service) expireContainer(ctx context.Context, acct, c, ver string) error {
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		var d deletedContainer
		ok, err := kv.GetJSON(tx, deletedContainerKey(acct, c, ver), &d)
		if err != nil || !ok || d.Moving || d.Restoring || s.clock.Now().Before(d.Expires) {
			return err
		}
		if s.hns != nil {
			// The tree goes to the collector now; the tombstone's steps
			// end the soft-deleted paths (reclaimContainerStep).
			if _, err := ns.DetachRoot(tx, ns.FS{Account: acct, Filesystem: containerAlias(c, ver)}); err != nil {
				return err
			}
		}
		if err := reclaim.Mark(tx, nil, reclaimKindContainer, acct, containerAlias(c, ver)); err != nil {
			return err
		}
		return tx.Delete(deletedContainerKey(acct, c, ver))
	})
	if err == nil {
		s.reclaim.Kick() // the tombstone, in the next round
	}
	return err
}

// reclaimKindContainer is the tombstone kind of a deleted container:
// parts account, container.
const reclaimKindContainer = "container"

// containerBeingDeleted reports whether container c of acct is still
// being reclaimed.
func containerBeingDeleted(tx kv.Tx, acct, c string) (bool, error) {
	return reclaim.Pending(tx, reclaimKindContainer, acct, c)
}

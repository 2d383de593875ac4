package file

import (
	"context"
	"fmt"
	"sort"
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// Share soft delete (Azure Files, "Enable soft delete on Azure file
// shares"; Restore Share,
// https://learn.microsoft.com/en-us/rest/api/storageservices/restore-share).
//
// With a share delete retention period for the account, Delete Share of
// the live share keeps it, with its snapshots, as one deleted version:
// its records ("fs", account, share, snapshot) become one record
// ("fsx", account, share, version) and its entries, ID index and
// permissions move, in bounded transactions, from the share's name to
// an alias (share "/" version: '/' is never in a share name), so the
// name can be created again and a later Restore Share finds the name
// taken (409 ShareAlreadyExists). A move in progress is a job record
// ("fsm", account, share): while it exists Create Share and Restore
// Share of the name answer 409 ShareBeingDeleted; the request runs the
// move (reclaim.Inline transactions with the background reclaimer), the
// reclaimer's sweep finishes one left over (a larger share, or a
// process that stopped). Restore Share moves the records back the same
// way and makes the share live in the move's last transaction. Once the
// retention period is over (on the injected clock) the deleted version
// is invisible and not restorable, and the sweep turns it into the
// tombstones of domain_purge.go, which reclaim its records and bytes.

// deletedShare is a soft-deleted share: the records of its versions
// ("" the share, the snapshots' timestamps) as they were when deleted.
type deletedShare struct {
	Deleted  time.Time         `json:"t"`
	Days     int               `json:"d"`
	Versions map[string]*Share `json:"v"`
	// Moving: the records are still being moved to the alias (the
	// delete), or back (Restoring).
	Moving    bool `json:"mv,omitempty"`
	Restoring bool `json:"rs,omitempty"`
}

// expires is when the retention period of d ends.
func (d *deletedShare) expires() time.Time {
	return d.Deleted.Add(time.Duration(d.Days) * 24 * time.Hour)
}

// moveJob is a move of a share's records between its name and an alias.
type moveJob struct {
	Version string `json:"v"`
	Restore bool   `json:"r,omitempty"`
	// From is the deleted share's name when a restore gives it another
	// one ("": the job's own).
	From string `json:"f,omitempty"`
}

func deletedKey(acct, sh, version string) []byte { return kv.Key("fsx", acct, sh, version) }
func deletedPrefix(acct string) []byte           { return kv.Key("fsx", acct) }
func moveKey(acct, sh string) []byte             { return kv.Key("fsm", acct, sh) }

// aliasName is where the records of deleted version version of share sh
// live; '/' is not allowed in a share name, so no share has it.
func aliasName(sh, version string) string { return sh + "/" + version }

// SetShareSoftDelete sets the share delete retention, in days, the
// server gives account (0: off). It applies on top of the account's File
// Service Properties: an account whose ShareDeleteRetentionPolicy is not
// enabled gets this one, and Get File Service Properties shows it.
func (s *Service) SetShareSoftDelete(days func(account string) int) {
	s.props.SetOverlay(func(account string, p *svcprops.Properties) {
		if r := p.ShareDeleteRetentionPolicy; r != nil && r.Enabled {
			return
		}
		if d := days(account); d > 0 {
			p.ShareDeleteRetentionPolicy = &svcprops.Retention{Enabled: true, Days: &d}
		}
	})
}

// retentionDays is the share delete retention of acct in days, 0 when
// off: the ShareDeleteRetentionPolicy of its File Service Properties
// (with the server's setting, SetShareSoftDelete).
func (s *Service) retentionDays(tx kv.Tx, acct string) (int, error) {
	p, err := s.props.Load(tx, acct)
	if err != nil {
		return 0, err
	}
	if r := p.ShareDeleteRetentionPolicy; r != nil && r.Enabled && r.Days != nil && *r.Days > 0 {
		return *r.Days, nil
	}
	return 0, nil
}

// newDeletedVersion returns the version of a share deleted at now: the
// 100 ns ticks since the Unix epoch in 16 hex digits, moved forward past
// a version of the name that exists.
func newDeletedVersion(tx kv.Tx, acct, sh string, now time.Time) (string, error) {
	return reclaim.FreeVersion(tx, uint64(now.UnixNano()/100), func(v string) []byte { return deletedKey(acct, sh, v) })
}

// softDelete replaces the records of share sh (versions: "" and its
// snapshots, already checked) by a deleted version and a move job,
// inside tx.
func softDelete(tx kv.Tx, acct, sh string, versions []string, days int, now time.Time) error {
	v, err := newDeletedVersion(tx, acct, sh, now)
	if err != nil {
		return err
	}
	d := deletedShare{Deleted: now, Days: days, Versions: map[string]*Share{}, Moving: true}
	for _, ver := range versions {
		rec, err := loadShare(tx, acct, sh, ver)
		if err != nil {
			return err
		}
		// A deleted share has no lease: Delete Share of a leased share
		// needed its lease ID, and the restored share is not leased.
		rec.Lease = lease.Lease{}
		d.Versions[ver] = rec
		if err := tx.Delete(shareKey(acct, sh, ver)); err != nil {
			return err
		}
	}
	if err := kv.PutJSON(tx, deletedKey(acct, sh, v), &d); err != nil {
		return err
	}
	return kv.PutJSON(tx, moveKey(acct, sh), moveJob{Version: v})
}

// moving reports whether a move of share sh's records is in progress.
func moving(tx kv.Tx, acct, sh string) (bool, error) {
	_, err := tx.Get(moveKey(acct, sh))
	if err == kv.ErrNotFound {
		return false, nil
	}
	return err == nil, err
}

// moveStep runs one bounded transaction of the move of share sh; done
// when there is no move (left).
func (s *Service) moveStep(ctx context.Context, acct, sh string) (done bool, err error) {
	err = s.store.Update(ctx, func(tx kv.Tx) error {
		done = false
		var job moveJob
		ok, err := kv.GetJSON(tx, moveKey(acct, sh), &job)
		if err != nil || !ok {
			done = true
			return err
		}
		src := sh // the deleted version's name
		if job.From != "" {
			src = job.From
		}
		var d deletedShare
		ok, err = kv.GetJSON(tx, deletedKey(acct, src, job.Version), &d)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("file: share move of %s/%s without its deleted version %s/%s", acct, sh, src, job.Version)
		}
		from, to := sh, aliasName(src, job.Version)
		if job.Restore {
			from, to = to, from
		}
		more, err := moveRecords(tx, acct, from, to, sortedVersions(d.Versions), purgeBatch)
		if err != nil || more {
			return err
		}
		if !job.Restore {
			// The handles of the deleted share go with it.
			if more, err := handle.PurgeShare(tx, acct, sh, purgeBatch); err != nil || more {
				return err
			}
			d.Moving = false
			done = true
			if err := kv.PutJSON(tx, deletedKey(acct, sh, job.Version), &d); err != nil {
				return err
			}
			return tx.Delete(moveKey(acct, sh))
		}
		for ver, rec := range d.Versions {
			if err := kv.PutJSON(tx, shareKey(acct, sh, ver), rec); err != nil {
				return err
			}
		}
		done = true
		if err := tx.Delete(deletedKey(acct, src, job.Version)); err != nil {
			return err
		}
		return tx.Delete(moveKey(acct, sh))
	})
	return done, err
}

// runMove runs the move of share sh in at most maxTx transactions (0: as
// many as it takes) and reports whether it is over.
func (s *Service) runMove(ctx context.Context, acct, sh string, maxTx int) (bool, error) {
	return reclaim.Steps(ctx, s.move(acct, sh), maxTx)
}

// move is the step of the move of share sh.
func (s *Service) move(acct, sh string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) { return s.moveStep(ctx, acct, sh) }
}

func sortedVersions(m map[string]*Share) []string {
	out := make([]string, 0, len(m))
	for v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// moveRecords moves up to limit records (entries, ID index records of
// versions, and the permissions) from share name from to share name to,
// values unchanged (data references move with them). It reports whether
// more remain.
func moveRecords(tx kv.Tx, acct, from, to string, versions []string, limit int) (more bool, err error) {
	var ranges []reclaim.Range
	for _, v := range versions {
		ranges = append(ranges,
			reclaim.Range{From: entriesPrefix(acct, from, v), To: entriesPrefix(acct, to, v)},
			reclaim.Range{From: idsPrefix(acct, from, v), To: idsPrefix(acct, to, v)})
	}
	ranges = append(ranges, reclaim.Range{From: permsPrefix(acct, from), To: permsPrefix(acct, to)})
	return reclaim.MoveRecords(tx, ranges, limit)
}

// finishMove runs the move of sh in the request: reclaim.Inline
// transactions with the background reclaimer (which finishes the rest),
// all of it without.
func (s *Service) finishMove(ctx context.Context, acct, sh string) error {
	return s.reclaimer.RunJob(ctx, s.move(acct, sh))
}

// DeletedShare is a soft-deleted share of a listing.
type DeletedShare struct {
	Name, Version string
	Share         *Share
	Deleted       time.Time
	// RemainingDays is the whole days of retention left (Azure's
	// RemainingRetentionDays).
	RemainingDays int
}

// listDeleted returns the deleted shares of acct whose names start with
// prefix, still retained at now and not being restored, by name and
// version.
func listDeleted(tx kv.Tx, acct, prefix string, now time.Time) ([]DeletedShare, error) {
	start := kv.AppendPartial(append([]byte(nil), deletedPrefix(acct)...), prefix)
	var out []DeletedShare
	var derr error
	err := tx.Scan(start, kv.PrefixEnd(start), 0, false, func(k, v []byte) bool {
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 4 {
			return true
		}
		var d deletedShare
		if derr = json.Unmarshal(v, &d); derr != nil {
			return false
		}
		if d.Restoring || !now.Before(d.expires()) || d.Versions[""] == nil {
			return true
		}
		left := d.expires().Sub(now)
		days := int(left / (24 * time.Hour))
		if left%(24*time.Hour) != 0 {
			days++
		}
		out = append(out, DeletedShare{Name: parts[2], Version: parts[3], Share: d.Versions[""], Deleted: d.Deleted, RemainingDays: days})
		return true
	})
	if err == nil {
		err = derr
	}
	return out, err
}

// RestoreShareInput is the input of RestoreShare.
type RestoreShareInput struct {
	Ref
	// DeletedName and DeletedVersion are x-ms-deleted-share-name and
	// x-ms-deleted-share-version.
	DeletedName, DeletedVersion string
}

// RestoreShare is Restore Share: the deleted version DeletedVersion of
// share DeletedName becomes the live share Share again (the name to use
// for the restored share, Restore Share's restoredShareName: usually the
// same), with its files, metadata and snapshots. A live share of the
// name is 409 ShareAlreadyExists, a share of the name being deleted or
// restored 409 ShareBeingDeleted, a version that does not exist or whose
// retention is over 404 ShareNotFound.
func (s *Service) RestoreShare(ctx context.Context, in RestoreShareInput) (ShareOutput, error) {
	acct, sh, now := in.Account, in.Share, in.Now
	var rec *Share
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		var d deletedShare
		ok, err := kv.GetJSON(tx, deletedKey(acct, in.DeletedName, in.DeletedVersion), &d)
		if err != nil {
			return err
		}
		if !ok || d.Restoring || !now.Before(d.expires()) {
			return azerr.New(azerr.ShareNotFound)
		}
		if _, err := tx.Get(shareKey(acct, sh, "")); err == nil {
			return azerr.New(azerr.ShareAlreadyExists)
		} else if err != kv.ErrNotFound {
			return err
		}
		if busy, err := moving(tx, acct, sh); err != nil {
			return err
		} else if busy || d.Moving {
			return azerr.New(azerr.ShareBeingDeleted)
		}
		if pending, err := hasTombstones(tx, acct, sh); err != nil {
			return err
		} else if pending {
			return azerr.New(azerr.ShareBeingDeleted)
		}
		d.Restoring = true
		rec = d.Versions[""]
		if err := kv.PutJSON(tx, deletedKey(acct, in.DeletedName, in.DeletedVersion), &d); err != nil {
			return err
		}
		job := moveJob{Version: in.DeletedVersion, Restore: true}
		if in.DeletedName != sh {
			job.From = in.DeletedName
		}
		return kv.PutJSON(tx, moveKey(acct, sh), job)
	})
	if err != nil {
		return ShareOutput{}, err
	}
	// The restore answers once the share is live: every move transaction
	// runs here (the records of a share under restore are in neither
	// place a reader looks); a process stopped meanwhile finishes it in
	// the reclaimer's sweep (or PurgeDeletedShares at start).
	if _, err := s.runMove(context.WithoutCancel(ctx), acct, sh, 0); err != nil {
		return ShareOutput{}, err
	}
	return ShareOutput{Share: rec}, nil
}

// SweepDeletedShares runs one bounded step of the work soft-deleted
// shares leave: a transaction of a move left over (a share larger than
// its delete's inline transactions, or a process stopped mid-move), or
// the purge of a deleted share whose retention is over at the clock's
// time, which becomes tombstones of its alias's versions that the purge
// (domain_purge.go) reclaims. It reports whether it did something. The
// background reclaimer runs it as a sweep; without one, call it until
// it reports false.
func (s *Service) SweepDeletedShares(ctx context.Context) (bool, error) {
	var acct, sh, ver string
	var isMove bool
	now := s.clock.Now()
	err := s.store.View(ctx, func(tx kv.Tx) error {
		acct, sh, ver, isMove = "", "", "", false
		pre := kv.Key("fsm")
		if err := tx.Scan(pre, kv.PrefixEnd(pre), 1, false, func(k, _ []byte) bool {
			if p, ok := kv.Split(k); ok && len(p) == 3 {
				acct, sh, isMove = p[1], p[2], true
			}
			return false
		}); err != nil || isMove {
			return err
		}
		pre = kv.Key("fsx")
		var derr error
		err := tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, v []byte) bool {
			p, ok := kv.Split(k)
			if !ok || len(p) != 4 {
				return true
			}
			var d deletedShare
			if derr = json.Unmarshal(v, &d); derr != nil {
				return false
			}
			if !d.Moving && !d.Restoring && !now.Before(d.expires()) {
				acct, sh, ver = p[1], p[2], p[3]
				return false
			}
			return true
		})
		if err == nil {
			err = derr
		}
		return err
	})
	if err != nil || sh == "" {
		return false, err
	}
	if isMove {
		_, err := s.moveStep(ctx, acct, sh)
		return err == nil, err
	}
	return true, s.expire(ctx, acct, sh, ver)
}

// expire turns the expired deleted version ver of share sh into purge
// tombstones of its alias, then purges them as Delete Share does.
func (s *Service) expire(ctx context.Context, acct, sh, ver string) error {
	alias := aliasName(sh, ver)
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		var d deletedShare
		ok, err := kv.GetJSON(tx, deletedKey(acct, sh, ver), &d)
		if err != nil || !ok || d.Moving || d.Restoring || s.clock.Now().Before(d.expires()) {
			return err
		}
		for v := range d.Versions {
			if err := kv.PutJSON(tx, tombstoneKey(acct, alias, v), tombstone{Deleted: d.Deleted}); err != nil {
				return err
			}
		}
		return tx.Delete(deletedKey(acct, sh, ver))
	})
	if err != nil {
		return err
	}
	if s.reclaimer != nil {
		return nil // PurgeStep, in the same round, takes the tombstones
	}
	return s.purgeShare(ctx, acct, alias)
}

// SetReclaimer makes Delete Share leave the purge to r.
func (s *Service) SetReclaimer(r *reclaim.Reclaimer) {
	s.reclaimer = r
	r.AddSweep(s.SweepDeletedShares)
	r.AddSweep(s.PurgeStep)
}

// PurgeDeletedShares finishes the purge of every share deleted before the
// process stopped. Call it at start-up (it is idempotent and safe next to
// running requests). With a background reclaimer it does nothing: the
// reclaimer purges them, paced, from its first round.
func (s *Service) PurgeDeletedShares(ctx context.Context) error {
	if s.reclaimer != nil {
		return nil // the background reclaimer purges them, paced
	}
	for {
		did, err := s.SweepDeletedShares(ctx)
		if err != nil {
			return err
		}
		if !did {
			break
		}
	}
	type name struct{ acct, sh string }
	var names []name
	err := s.store.View(ctx, func(tx kv.Tx) error {
		names = names[:0]
		pre := kv.Key("fsd")
		return tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, _ []byte) bool {
			parts, ok := kv.Split(k)
			if ok && len(parts) == 4 && (len(names) == 0 || names[len(names)-1] != name{parts[1], parts[2]}) {
				names = append(names, name{parts[1], parts[2]})
			}
			return true
		})
	})
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := s.purgeShare(ctx, n.acct, n.sh); err != nil {
			return err
		}
	}
	return nil
}

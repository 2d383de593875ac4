package file

import (
	"bytes"
	"context"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// The File REST share operations as domain methods: each takes a typed
// input (a Ref naming the share, and the parsed request values), runs in
// its own kv transaction with the request's time and returns the stored
// record for the front end (filerest: share.go, share_acl.go, share_delete.go,
// share_snapshot.go, shares_list.go) to render.

// ShareOptions are the share properties Create Share and Set Share
// Properties set; nil or "" fields are left as they are (or at their
// defaults on create).
type ShareOptions struct {
	Quota     *int   // GiB
	Tier      string // access tier, canonical spelling
	Protocols string // "SMB" or "NFS"; Create Share only
	Squash    string // NFS root squash
	DirLease  *bool  // SMB directory leases
	SnapVDir  *bool  // NFS snapshot virtual directory access
}

// apply sets the options on sh at now. Root squash is an NFS setting:
// on an SMB share it is 400 InvalidHeaderValue (inferred).
func (o ShareOptions) apply(sh *Share, now time.Time) error {
	if o.Squash != "" && sh.Protocols != ProtoNFS {
		return azerr.InvalidHeader("x-ms-root-squash", o.Squash)
	}
	if o.Quota != nil {
		sh.Quota = *o.Quota
	}
	if o.Tier != "" && o.Tier != sh.Tier {
		sh.Tier, sh.TierSince = o.Tier, now
	}
	if o.Squash != "" {
		sh.Squash = o.Squash
	}
	if o.DirLease != nil {
		sh.DirLease = o.DirLease
	}
	if o.SnapVDir != nil {
		sh.SnapVDir = o.SnapVDir
	}
	return nil
}

// CreateShareInput is the input of CreateShare.
type CreateShareInput struct {
	Ref
	Meta    map[string]string
	Options ShareOptions
}

// CreateShare is Create Share
// (https://learn.microsoft.com/en-us/rest/api/storageservices/create-share):
// 409 ShareAlreadyExists for a live share, 409 ShareBeingDeleted while a
// deleted share of the name is still being purged.
func (s *Service) CreateShare(ctx context.Context, in CreateShareInput) (ShareOutput, error) {
	acct, name, now := in.Account, in.Share, in.Now
	// A share deleted under this name may still have records being
	// purged: the background reclaimer's (409 ShareBeingDeleted below
	// until it is done) or, without one, finished here first so the
	// new share starts empty.
	if s.reclaimer != nil {
		s.reclaimer.Kick()
	} else if err := s.purgeShare(ctx, acct, name); err != nil {
		return ShareOutput{}, err
	}
	var sh *Share
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		if _, err := tx.Get(shareKey(acct, name, "")); err == nil {
			return azerr.New(azerr.ShareAlreadyExists)
		} else if err != kv.ErrNotFound {
			return err
		}
		if busy, err := moving(tx, acct, name); err != nil {
			return err
		} else if busy {
			// A soft delete still moving its records (domain_softdelete.go).
			return azerr.New(azerr.ShareBeingDeleted)
		}
		if pending, err := hasTombstones(tx, acct, name); err != nil {
			return err
		} else if pending {
			// Still being purged (or deleted again while we purged):
			// 409 ShareBeingDeleted (Azure Files error codes).
			return azerr.New(azerr.ShareBeingDeleted)
		}
		sh = &Share{Created: now, Modified: now, ETag: newETag(now), Quota: defaultQuotaGiB, Meta: in.Meta, Protocols: ProtoSMB}
		if in.Options.Protocols != "" {
			sh.Protocols = in.Options.Protocols
		}
		sh.Tier, sh.TierSince = "TransactionOptimized", now
		if sh.Protocols == ProtoNFS {
			sh.Tier, sh.Squash = "Premium", "NoRootSquash"
		}
		if err := in.Options.apply(sh, now); err != nil {
			return err
		}
		if err := kv.PutJSON(tx, shareKey(acct, name, ""), sh); err != nil {
			return err
		}
		return newRoot(tx, acct, name, now)
	})
	return ShareOutput{Share: sh}, err
}

// GetSharePropertiesInput is the input of GetShareProperties.
type GetSharePropertiesInput struct{ Ref }

// GetShareProperties is Get Share Properties and Get Share Metadata, of
// the share or of a snapshot; a lease ID, when sent, must match.
func (s *Service) GetShareProperties(ctx context.Context, in GetSharePropertiesInput) (ShareOutput, error) {
	c := in.caller()
	sh, err := s.dom().readShare(ctx, &c)
	return ShareOutput{Share: sh}, err
}

// SetSharePropertiesInput is the input of SetShareProperties.
type SetSharePropertiesInput struct {
	Ref
	Options ShareOptions
}

// SetShareProperties is Set Share Properties: quota, tier, root squash
// and the directory-lease and snapshot-directory switches.
func (s *Service) SetShareProperties(ctx context.Context, in SetSharePropertiesInput) (ShareOutput, error) {
	c := in.caller()
	sh, err := s.dom().updateShare(ctx, &c, true, func(_ kv.Tx, sh *Share) error {
		if err := shareLeaseRead(sh, &c); err != nil {
			return err
		}
		return in.Options.apply(sh, c.at)
	})
	return ShareOutput{Share: sh}, err
}

// SetShareMetadataInput is the input of SetShareMetadata.
type SetShareMetadataInput struct {
	Ref
	Meta map[string]string
}

// SetShareMetadata is Set Share Metadata: it replaces the share's
// metadata.
func (s *Service) SetShareMetadata(ctx context.Context, in SetShareMetadataInput) (ShareOutput, error) {
	c := in.caller()
	sh, err := s.dom().updateShare(ctx, &c, true, func(_ kv.Tx, sh *Share) error {
		if err := shareLeaseRead(sh, &c); err != nil {
			return err
		}
		sh.Meta = in.Meta
		return nil
	})
	return ShareOutput{Share: sh}, err
}

// SetShareACLInput is the input of SetShareACL.
type SetShareACLInput struct {
	Ref
	// ACL is the new set of stored access policies (empty: none).
	ACL []signedID
}

// SetShareACL is Set Share ACL: it replaces the stored access policies.
// Get Share ACL reads them from GetShareProperties' record.
func (s *Service) SetShareACL(ctx context.Context, in SetShareACLInput) (ShareOutput, error) {
	c := in.caller()
	sh, err := s.dom().updateShare(ctx, &c, true, func(_ kv.Tx, sh *Share) error {
		if err := shareLeaseRead(sh, &c); err != nil {
			return err
		}
		sh.ACL = in.ACL
		return nil
	})
	return ShareOutput{Share: sh}, err
}

// LeaseShareInput is the input of LeaseShare.
type LeaseShareInput struct {
	Ref
	Request lease.Request
}

// LeaseShareOutput is the result of LeaseShare.
type LeaseShareOutput struct {
	Result lease.Result
	Share  *Share
}

// LeaseShare is Lease Share, on the share or on a snapshot (see
// domain.leaseShare).
func (s *Service) LeaseShare(ctx context.Context, in LeaseShareInput) (LeaseShareOutput, error) {
	c := in.caller()
	out, err := s.dom().leaseShare(ctx, &c, in.Request)
	if err != nil {
		return LeaseShareOutput{}, err
	}
	return LeaseShareOutput{Result: out.res, Share: out.sh}, nil
}

// GetShareStatsInput is the input of GetShareStats.
type GetShareStatsInput struct{ Ref }

// GetShareStatsOutput is the result of GetShareStats.
type GetShareStatsOutput struct {
	Share *Share
	// UsageBytes is the sum of the live share's file sizes.
	UsageBytes int64
}

// GetShareStats is Get Share Stats. UsageBytes is the sum of the file
// sizes of the live share, not the bytes allocated: a 1 TiB file just
// created reports 1 TiB (azfile TestSetAndGetStatistics, recorded).
func (s *Service) GetShareStats(ctx context.Context, in GetShareStatsInput) (GetShareStatsOutput, error) {
	var out GetShareStatsOutput
	c := in.caller()
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		if out.Share, err = loadShare(tx, c.acct, c.share, ""); err != nil {
			return err
		}
		if err := shareLeaseRead(out.Share, &c); err != nil {
			return err
		}
		out.UsageBytes, err = shareUsage(tx, c.acct, c.share)
		return err
	})
	return out, err
}

// CreatePermissionInput is the input of CreatePermission.
type CreatePermissionInput struct {
	Ref
	// SDDL is the permission, already validated.
	SDDL string
}

// CreatePermissionOutput is the result of CreatePermission.
type CreatePermissionOutput struct {
	// Key is the permission's key; the same SDDL always gets the same.
	Key string
}

// CreatePermission is Create Permission: it stores an SDDL in the live
// share's permission table.
func (s *Service) CreatePermission(ctx context.Context, in CreatePermissionInput) (CreatePermissionOutput, error) {
	var out CreatePermissionOutput
	err := s.store.Update(ctx, func(tx kv.Tx) (err error) {
		if _, err := loadShare(tx, in.Account, in.Share, ""); err != nil {
			return err
		}
		out.Key, err = storePermission(tx, in.Account, in.Share, in.SDDL)
		return err
	})
	return out, err
}

// GetPermissionInput is the input of GetPermission.
type GetPermissionInput struct {
	Ref
	Key string
}

// GetPermissionOutput is the result of GetPermission.
type GetPermissionOutput struct {
	SDDL string
}

// GetPermission is Get Permission: the SDDL stored under Key. A key the
// share does not have is 400 FileInvalidPermissionKey (Azure Files error
// codes).
func (s *Service) GetPermission(ctx context.Context, in GetPermissionInput) (GetPermissionOutput, error) {
	var out GetPermissionOutput
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		if _, err := loadShare(tx, in.Account, in.Share, ""); err != nil {
			return err
		}
		out.SDDL, err = loadPermission(tx, in.Account, in.Share, in.Key)
		return err
	})
	if err == nil && out.SDDL == "" {
		err = azerr.New(azerr.FileInvalidPermissionKey)
	}
	return out, err
}

// SnapshotShareInput is the input of SnapshotShare.
type SnapshotShareInput struct {
	Ref
	// Meta, when not empty, is the snapshot's metadata instead of the
	// share's.
	Meta map[string]string
}

// SnapshotShareOutput is the result of SnapshotShare.
type SnapshotShareOutput struct {
	// Snapshot is the new snapshot's timestamp (wire.FormatISO7).
	Snapshot string
	// Share is the snapshot's record.
	Share *Share
}

// SnapshotShare is Create Share Snapshot: one transaction copies the
// share record and every entry with its ID index under the snapshot's
// timestamp, taking a reference on every data item the entries use, so
// later writes to the share never change the snapshot (Snapshot Share,
// https://learn.microsoft.com/en-us/rest/api/storageservices/snapshot-share).
// More than 200 snapshots is 409 ShareSnapshotCountExceeded (Azure Files
// scale targets,
// https://learn.microsoft.com/en-us/azure/storage/files/storage-files-scale-targets).
func (s *Service) SnapshotShare(ctx context.Context, in SnapshotShareInput) (SnapshotShareOutput, error) {
	acct, name, now := in.Account, in.Share, in.Now
	var snap string
	var rec Share
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		sh, err := loadShare(tx, acct, name, "")
		if err != nil {
			return err
		}
		snaps, _, err := snapshotsOf(tx, acct, name, now)
		if err != nil {
			return err
		}
		if len(snaps) >= maxShareSnaps {
			return azerr.New(azerr.ShareSnapshotCountExceeded)
		}
		if snap, err = freeSnapshotTime(tx, acct, name, now); err != nil {
			return err
		}
		rec = *sh
		rec.Lease = lease.Lease{}
		if len(in.Meta) > 0 {
			rec.Meta = in.Meta
		}
		if err := kv.PutJSON(tx, shareKey(acct, name, snap), &rec); err != nil {
			return err
		}
		return copyEntries(tx, acct, name, snap, now)
	})
	if err != nil {
		return SnapshotShareOutput{}, err
	}
	return SnapshotShareOutput{Snapshot: snap, Share: &rec}, nil
}

// DeleteShareInput is the input of DeleteShare.
type DeleteShareInput struct {
	Ref
	// DeleteSnapshots is x-ms-delete-snapshots, lower case: "",
	// "include" or "include-leased".
	DeleteSnapshots string
}

// DeleteShareOutput is the result of DeleteShare.
type DeleteShareOutput struct {
	// Deleted are the versions deleted: "" for the live share and the
	// snapshots' timestamps.
	Deleted []string
	// SoftDeleted: the share was kept for the account's share delete
	// retention period (domain_softdelete.go).
	SoftDeleted bool
}

// DeleteShare is Delete Share, of the share or (with Snapshot) of one
// snapshot. A leased share needs its lease ID (412 LeaseIdMissing (azfile
// lease tests TestShareDeleteShareWithoutLeaseId)). A share with snapshots
// needs DeleteSnapshots "include" (409 ShareHasSnapshots (azfile
// TestShareDeleteSnapshotsNoneWithSnapshots)); "include" refuses leased
// snapshots, "include-leased" deletes them too (Delete Share,
// https://learn.microsoft.com/en-us/rest/api/storageservices/delete-share);
// the refusal is 412 LeaseIdMissing (inferred). The records are purged as
// domain_purge.go describes.
func (s *Service) DeleteShare(ctx context.Context, in DeleteShareInput) (DeleteShareOutput, error) {
	acct, name, now, mode := in.Account, in.Share, in.Now, in.DeleteSnapshots
	var doomed []string
	soft := false
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		soft = false
		sh, err := loadShare(tx, acct, name, in.Snapshot)
		if err != nil {
			return err
		}
		if err := lease.CheckWrite(sh.Lease, in.LeaseID, lease.Share, now); err != nil {
			return err
		}
		doomed = []string{in.Snapshot}
		if in.Snapshot == "" {
			snaps, leased, err := snapshotsOf(tx, acct, name, now)
			if err != nil {
				return err
			}
			switch {
			case len(snaps) > 0 && mode == "":
				return azerr.New(azerr.ShareHasSnapshots)
			case leased && mode == "include":
				return azerr.Newf(azerr.LeaseIDMissing, "A snapshot of the share is leased; use x-ms-delete-snapshots: include-leased.")
			}
			doomed = append(doomed, snaps...)
			// With a share delete retention period the share and its
			// snapshots are kept as one deleted version
			// (domain_softdelete.go). A snapshot deleted alone is
			// deleted for good.
			days, err := s.retentionDays(tx, acct)
			if err != nil {
				return err
			}
			if days > 0 {
				soft = true
				return softDelete(tx, acct, name, doomed, days, now)
			}
		}
		for _, v := range doomed {
			if err := tx.Delete(shareKey(acct, name, v)); err != nil {
				return err
			}
			if err := kv.PutJSON(tx, tombstoneKey(acct, name, v), tombstone{Deleted: now}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return DeleteShareOutput{}, err
	}
	if soft {
		// Deleted; moving its records away from the name does not
		// depend on the client waiting, and a failure only delays it.
		if err := s.finishMove(ctx, acct, name); err != nil {
			s.log.Warn("file: moving soft-deleted share", "account", acct, "share", name, "err", err)
		}
		return DeleteShareOutput{Deleted: doomed, SoftDeleted: true}, nil
	}
	// The share is deleted; the purge does not depend on the client
	// waiting for it, and a failure only delays it.
	// With the background reclaimer a small share (each version purged
	// in reclaim.Inline transactions) is still purged before the answer,
	// so its name can be used again at once; a larger one is left to the
	// background.
	ctx = context.WithoutCancel(ctx)
	if s.reclaimer != nil {
		done := s.reclaimer.InlineAllowed()
		for _, v := range doomed {
			if !done {
				break
			}
			ok, err := s.purgeVersionUpTo(ctx, acct, name, v, reclaim.Inline)
			if err != nil {
				s.log.Warn("file: purging deleted share", "account", acct, "share", name, "err", err)
			}
			done = ok && err == nil
		}
		if !done {
			s.reclaimer.Kick()
		}
	} else if err := s.purgeShare(ctx, acct, name); err != nil {
		s.log.Warn("file: purging deleted share", "account", acct, "share", name, "err", err)
	}
	return DeleteShareOutput{Deleted: doomed}, nil
}

// ListSharesInput is the input of ListShares.
type ListSharesInput struct {
	Account string
	// Prefix selects the shares whose names start with it.
	Prefix string
	// Marker is the NextMarker of the previous page ("" for the first).
	Marker string
	// MaxResults bounds the page (at least 1).
	MaxResults int
	// Snapshots lists each share's snapshots after it, oldest first.
	Snapshots bool
	// Deleted lists the soft-deleted shares still retained at Now, each
	// after the live share and snapshots of its name, by version.
	Deleted bool
	// Now is the request's time (Deleted only).
	Now time.Time
}

// ListedShare is one share (or snapshot) of a ListShares page.
type ListedShare struct {
	Name     string
	Snapshot string // "" for the live share
	Share    *Share
	// Deleted is set for a soft-deleted share (ListSharesInput.Deleted).
	Deleted *DeletedShare
}

// ListSharesOutput is a page of ListShares.
type ListSharesOutput struct {
	Shares []ListedShare
	// NextMarker continues the listing; "" when it is complete.
	NextMarker string
}

// deletedMarkerTag starts the marker's last part for a deleted share:
// snapshot timestamps start with a digit.
const deletedMarkerTag = "deleted-"

// ListShares is List Shares: shares by name, each followed by its
// snapshots when asked and its soft-deleted versions when asked, in one
// read transaction.
func (s *Service) ListShares(ctx context.Context, in ListSharesInput) (ListSharesOutput, error) {
	var out ListSharesOutput
	start := kv.AppendPartial(append([]byte(nil), sharesPrefix(in.Account)...), in.Prefix)
	end := kv.PrefixEnd(start)
	var mName, mDeleted string // the marker's name and deleted version
	if in.Marker != "" {
		sh, snap := parseShareMarker(in.Account, in.Marker)
		mName = sh
		mk := shareKey(in.Account, sh, snap)
		if v, ok := strings.CutPrefix(snap, deletedMarkerTag); ok {
			mDeleted = v
			mk = kv.PrefixEnd(shareVersionsPrefix(in.Account, sh))
		}
		if bytes.Compare(mk, start) > 0 {
			start = mk
		}
	}
	err := s.store.View(ctx, func(tx kv.Tx) error {
		out = ListSharesOutput{}
		var live []ListedShare
		var derr error
		err := tx.Scan(start, end, 0, false, func(k, v []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 4 {
				return true
			}
			name, snap := parts[2], parts[3]
			if snap != "" && !in.Snapshots {
				return true
			}
			if len(live) == in.MaxResults+1 {
				return false
			}
			var sh Share
			if derr = json.Unmarshal(v, &sh); derr != nil {
				return false
			}
			live = append(live, ListedShare{Name: name, Snapshot: snap, Share: &sh})
			return true
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return err
		}
		var dead []ListedShare
		if in.Deleted {
			ds, err := listDeleted(tx, in.Account, in.Prefix, in.Now)
			if err != nil {
				return err
			}
			for i := range ds {
				d := &ds[i]
				if in.Marker != "" && (d.Name < mName || d.Name == mName && mDeleted != "" && d.Version < mDeleted) {
					continue
				}
				dead = append(dead, ListedShare{Name: d.Name, Share: d.Share, Deleted: d})
			}
		}
		// Merge: by name; a name's live share and snapshots before its
		// deleted versions.
		all := make([]ListedShare, 0, len(live)+len(dead))
		i, j := 0, 0
		for len(all) <= in.MaxResults && (i < len(live) || j < len(dead)) {
			if j == len(dead) || i < len(live) && live[i].Name <= dead[j].Name {
				all = append(all, live[i])
				i++
			} else {
				all = append(all, dead[j])
				j++
			}
		}
		if len(all) > in.MaxResults {
			next := all[in.MaxResults]
			snap := next.Snapshot
			if next.Deleted != nil {
				snap = deletedMarkerTag + next.Deleted.Version
			}
			out.NextMarker = shareMarker(in.Account, next.Name, snap)
			all = all[:in.MaxResults]
		}
		out.Shares = all
		return nil
	})
	return out, err
}

// freeSnapshotTime returns the snapshot timestamp for a snapshot taken at
// now: now at the service's 100 ns resolution, moved forward past any
// snapshot (or snapshot being purged) with the same timestamp, so
// snapshots of one share are unique even when taken in the same tick.
func freeSnapshotTime(tx kv.Tx, acct, sh string, now time.Time) (string, error) {
	t := now.UTC().Truncate(100 * time.Nanosecond)
	for {
		v := wire.FormatISO7(t)
		taken := false
		for _, k := range [][]byte{shareKey(acct, sh, v), tombstoneKey(acct, sh, v)} {
			_, err := tx.Get(k)
			if err == nil {
				taken = true
			} else if err != kv.ErrNotFound {
				return "", err
			}
		}
		if !taken {
			return v, nil
		}
		t = t.Add(100 * time.Nanosecond)
	}
}

// copyBatch bounds how many entries copyEntries holds in memory at once.
const copyBatch = 256

// copyEntries copies every entry of the live share sh, with its ID index
// record, to snapshot snap, and takes a reference on the data items of
// the copies. File leases are not copied: a snapshot's files are not
// leased.
func copyEntries(tx kv.Tx, acct, sh, snap string, now time.Time) error {
	pre := entriesPrefix(acct, sh, "")
	start, end := pre, kv.PrefixEnd(pre)
	for {
		var batch []*Entry
		var last []byte
		var derr error
		err := tx.Scan(start, end, copyBatch, false, func(k, v []byte) bool {
			last = append(last[:0], k...)
			var e Entry
			if derr = json.Unmarshal(v, &e); derr != nil {
				return false
			}
			batch = append(batch, &e)
			return true
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return err
		}
		var parts []extent.Part
		for _, e := range batch {
			e.Lease = lease.Lease{}
			if err := putEntry(tx, acct, sh, snap, e); err != nil {
				return err
			}
			parts = append(parts, e.Parts...)
		}
		if err := extent.AdjustRefs(tx, now, nil, parts); err != nil {
			return err
		}
		if len(batch) < copyBatch {
			return nil
		}
		start = append(last, 0) // just after the last key
	}
}

// shareUsage returns the used size of the live share sh: the sum of its
// file sizes (what Get Share Stats reports and what the quota, in GiB,
// bounds). It reads every entry of the share, so its cost grows with the
// number of files and directories.
func shareUsage(tx kv.Tx, acct, sh string) (int64, error) {
	var total int64
	var derr error
	pre := entriesPrefix(acct, sh, "")
	err := tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(_, v []byte) bool {
		var e struct {
			Dir  bool  `json:"d"`
			Size int64 `json:"z"`
		}
		if derr = json.Unmarshal(v, &e); derr != nil {
			return false
		}
		if !e.Dir {
			total += e.Size
		}
		return true
	})
	if err == nil {
		err = derr
	}
	return total, err
}

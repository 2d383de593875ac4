// The flat layout (Layout, model.go): an account without a hierarchical
// namespace, whose blob names are their keys. Put Blob, Put Block List,
// Delete Blob and List Blobs for such an account are here; the domain
// methods in domain_*.go reach them through layoutOf.

package blob

import (
	"context"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

func (l *flatLayout) resolve(tx kv.Tx, ref BlobRef, _ time.Time, _ ns.Caller, _ acl.Perm, _ bool) (*blobRec, *PathProperties, error) {
	b, err := l.s.loadBlobOrFeed(tx, ref)
	return b, nil, err
}

func (l *flatLayout) create(ctx context.Context, in PutBlobInput) (PutBlobOutput, error) {
	return l.s.putBlobFlat(ctx, in)
}

func (l *flatLayout) replace(ctx context.Context, in PutBlockListInput) (PutBlockListOutput, error) {
	return l.s.putBlockListFlat(ctx, in)
}

func (l *flatLayout) update(ctx context.Context, ref BlobRef, a Access, op wormOp, _ ns.Caller, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error) {
	return l.s.updateBlob(ctx, ref, a, op, now, fn)
}

func (l *flatLayout) updateTx(tx kv.Tx, ref BlobRef, a Access, op wormOp, _ ns.Caller, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error) {
	return updateBlobTx(tx, ref, a, op, now, fn)
}

func (l *flatLayout) delete(ctx context.Context, in DeleteBlobInput) (DeleteBlobOutput, error) {
	return l.s.deleteBlobFlat(ctx, in)
}

func (l *flatLayout) list(ctx context.Context, in ListBlobsInput) (ListBlobsOutput, error) {
	return l.s.listBlobsFlat(ctx, in)
}

func (l *flatLayout) pageBlobs() error { return nil }

func (l *flatLayout) checkReplace(ctx context.Context, in PutBlockListInput) error {
	return l.s.checkPutBlockListFlat(ctx, in)
}

// source is the blob record (or snapshot, or version) ref names, nil
// when there is none.
func (l *flatLayout) source(tx kv.Tx, ref BlobRef, _ time.Time, _ ns.Caller) (*blobRec, error) {
	return findRef(tx, ref)
}

func (l *flatLayout) containerCreated(kv.Tx, ContainerRef) error { return nil }

// containerDeleted detaches a tree left in the container from a time the
// account was hierarchical (one write; the collector reclaims it).
func (l *flatLayout) containerDeleted(tx kv.Tx, ref ContainerRef) error {
	if l.ns == nil {
		return nil
	}
	return detachFilesystem(l.ns, tx, ref)
}

// putBlobFlat is Put Blob on a flat account (flatLayout.create).
func (s *Service) putBlobFlat(ctx context.Context, in PutBlobInput) (out PutBlobOutput, err error) {
	now := s.now(in.Call)
	if in.CheckFirst && in.Type == BlockBlob {
		if err := s.store.View(ctx, func(tx kv.Tx) error {
			_, err := beginReplace(tx, in.Ref, in.Access, in.CreateOnly, now)
			return err
		}); err != nil {
			return out, err
		}
	}
	// What the transaction and the deferred Finish share, in one
	// allocation (this is the hot path of small uploads): the record, the
	// result, the staged bytes and whether they were recorded, and the
	// parts of in the transaction reads (not all of in into the closure).
	w := &struct {
		rec        blobRec
		nb         *blobRec // rec as stored, stamped
		st         *extent.Staged
		recorded   bool
		ref        BlobRef
		acc        Access
		createOnly bool
	}{rec: in.NewBlob.record(in.Type), ref: in.Ref, acc: in.Access, createOnly: in.CreateOnly}
	rec := &w.rec
	if in.Immutability != nil {
		if rec.Imm, rec.Hold, err = s.checkWriteImmutability(in.Ref.Account, in.Immutability, now); err != nil {
			return out, err
		}
	}
	// The staged chunks are freed at once if the write is refused (see
	// extent.Staged.Finish).
	defer func() { w.st.Finish(ctx, w.recorded) }()
	switch in.Type {
	case BlockBlob:
		body, err := extent.LimitBody(content(in.Body), in.Length, maxPutBlob)
		if err != nil {
			return out, err
		}
		// MD5 and CRC64 are computed whatever the caller sent: Put Blob
		// keeps the MD5 and answers both.
		if w.st, err = s.data.StageEmbeddedSealed(ctx, body, in.Length, cipherOf(in.CPK)); err != nil {
			return out, err
		}
		if err := w.st.CheckDigests(in.Checksums); err != nil {
			return out, err
		}
		rec.Props.ContentMD5 = w.st.MD5
		rec.Size, rec.Parts = w.st.Size, w.st.Parts
	case PageBlob:
		rec.Size, rec.SeqNum = in.Size, in.SequenceNumber
	case AppendBlob:
	default:
		return out, azerr.New(azerr.InvalidBlobType)
	}
	rec.CPK = shaOf(in.CPK) // a new blob takes the key of its request
	err = s.store.Update(ctx, extent.Recording(&w.recorded, s.changing(in.Call, apiPutBlob, w.ref, func(tx kv.Tx) (err error) {
		if w.st != nil {
			if err := w.st.Write(tx); err != nil {
				return err
			}
		}
		w.nb, err = s.replaceBlob(tx, w.ref, w.acc, w.createOnly, now, &w.rec)
		return err
	})))
	if err != nil {
		return out, err
	}
	out = PutBlobOutput{ETag: w.nb.ETag, LastModified: w.nb.Modified, ServerEncrypted: true, VersionID: w.nb.VersionID}
	if w.st != nil {
		out.ContentMD5, out.ContentCRC64 = w.st.MD5, w.st.CRC64
	}
	return out, nil
}

// deleteBlobFlat is Delete Blob on a flat account (flatLayout.delete).
func (s *Service) deleteBlobFlat(ctx context.Context, in DeleteBlobInput) (DeleteBlobOutput, error) {
	ref, acc, ds, permanent := in.Ref, in.Access, in.DeleteSnapshots, in.Permanent
	if permanent && ref.Snapshot == "" && ref.VersionID == "" {
		return DeleteBlobOutput{}, errPermanentDelete("Permanent delete applies only to a soft-deleted snapshot or version: give snapshot=.")
	}
	now := s.now(in.Call)
	soft := false
	// A version id names a previous version, deleted alone, or the
	// current one, whose deletion is the base blob's (domain_versions.go).
	vid := ref.VersionID
	ref.VersionID = ""
	err := s.store.Update(ctx, s.changing(in.Call, apiDeleteBlob, ref, func(tx kv.Tx) error {
		soft = false
		if vid != "" {
			vref := ref
			vref.VersionID = vid
			if permanent {
				return deleteVersionPermanently(tx, vref, acc, now)
			}
			if cur, err := isCurrentVersion(tx, vref); err != nil || !cur {
				if err != nil {
					return err
				}
				soft, err = deleteVersion(tx, vref, acc, now)
				return err
			}
		}
		pol, err := loadRetention(tx, ref.Account)
		if err != nil {
			return err
		}
		if permanent {
			return deletePermanently(tx, ref, now, pol, func(b *blobRec) error { return acc.checkConds(b, ref.Container) })
		}
		b, w, err := loadBlobWORM(tx, ref) // w: containerworm.go
		if err != nil {
			return err
		}
		mark := pol.mark(now)
		if ds != DeleteSnapshotsOnly {
			if err := b.deleteProtected(now); err != nil {
				return err
			}
			if err := w.refuse(b, wormDelete, now); err != nil {
				return err
			}
		}
		if ref.Snapshot != "" {
			if err := acc.checkConds(b, ref.Container); err != nil {
				return err
			}
			if err := tx.Delete(BlobKey(ref.Account, ref.Container, ref.Blob, ref.Snapshot)); err != nil {
				return err
			}
			if pol.on {
				soft = true
				return putDeleted(tx, ref.Account, ref.Container, ref.Blob, ref.Snapshot, b, mark)
			}
			return extent.AdjustRefs(tx, now, b.Parts, nil)
		}
		if err := acc.checkUpdate(b, ref.Container, now); err != nil {
			return err
		}
		// Find the snapshots: they follow the base record in key order.
		prefix := blobVersionsPrefix(ref.Account, ref.Container, ref.Blob)
		var snaps []blobRec
		var snapNames []string
		var derr error
		err = tx.Scan(prefix, kv.PrefixEnd(prefix), 0, false, func(k, v []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 5 || parts[4] == "" {
				return true
			}
			// A snapshot that does not decode fails the delete: skipped, it
			// would outlive its blob with its chunk references held.
			var sb blobRec
			if derr = kv.DecodeJSON(k, v, &sb); derr != nil {
				return false
			}
			snaps = append(snaps, sb)
			snapNames = append(snapNames, parts[4])
			return true
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return err
		}
		// With soft delete off, soft-deleted snapshots still retained
		// count as snapshots (the service refuses to delete such a blob
		// without x-ms-delete-snapshots) and go with include/only; with
		// it on, only live snapshots count.
		var dead []deletedEntry
		present := len(snaps)
		if !pol.on {
			all, err := findDeleted(tx, ref.Account, ref.Container, ref.Blob)
			if err != nil {
				return err
			}
			for _, e := range all {
				if e.snap == "" {
					continue
				}
				dead = append(dead, e)
				if e.rec.Del.retained(now) {
					present++
				}
			}
		}
		if present > 0 && ds == DeleteSnapshotsNone {
			return azerr.New(azerr.SnapshotsPresent)
		}
		for i := range snaps { // a snapshot under a policy or hold stays (immutability.go, containerworm.go)
			if err := snaps[i].deleteProtected(now); err != nil {
				return err
			}
			if err := w.refuse(&snaps[i], wormDelete, now); err != nil {
				return err
			}
		}
		var release []extent.Part
		for i := range snaps {
			if err := tx.Delete(BlobKey(ref.Account, ref.Container, ref.Blob, snapNames[i])); err != nil {
				return err
			}
			if pol.on {
				if err := putDeleted(tx, ref.Account, ref.Container, ref.Blob, snapNames[i], &snaps[i], mark); err != nil {
					return err
				}
			} else {
				release = append(release, snaps[i].Parts...)
			}
		}
		if ds != DeleteSnapshotsNone {
			for _, e := range dead {
				if err := dropDeleted(tx, ref.Account, ref.Container, ref.Blob, e.snap, e.rec); err != nil {
					return err
				}
				release = append(release, e.rec.Parts...)
			}
		}
		if ds != DeleteSnapshotsOnly {
			if err := tx.Delete(BlobKey(ref.Account, ref.Container, ref.Blob, "")); err != nil {
				return err
			}
			if s.versioningOn(ref.Account) {
				// The current version becomes a previous one, with its
				// references: the blob has no current version.
				if err := putVersion(tx, ref, b); err != nil {
					return err
				}
			} else if pol.on {
				if err := putDeleted(tx, ref.Account, ref.Container, ref.Blob, "", b, mark); err != nil {
					return err
				}
			} else {
				release = append(release, b.Parts...)
			}
			if err := s.dropUncommitted(tx, ref, now); err != nil {
				return err
			}
		}
		soft = pol.on
		return extent.AdjustRefs(tx, now, release, nil)
	}))
	if err != nil {
		return DeleteBlobOutput{}, err
	}
	return DeleteBlobOutput{SoftDeleted: soft}, nil
}

// checkPutBlockListFlat is CheckPutBlockList on a flat account
// (flatLayout.checkReplace).
func (s *Service) checkPutBlockListFlat(ctx context.Context, in PutBlockListInput) error {
	now := s.now(in.Call)
	return s.store.View(ctx, func(tx kv.Tx) error {
		_, _, err := blockListTarget(tx, in.Ref, in.Access, in.CreateOnly, now)
		return err
	})
}

// putBlockListFlat is Put Block List's commit on a flat account
// (flatLayout.replace).
func (s *Service) putBlockListFlat(ctx context.Context, in PutBlockListInput) (PutBlockListOutput, error) {
	now := s.now(in.Call)
	ref, acc, createOnly, newb, blocks, sha := in.Ref, in.Access, in.CreateOnly, in.NewBlob, in.Blocks, shaOf(in.CPK)
	var rec *blobRec
	imm, hold, err := s.checkWriteImmutability(ref.Account, newb.Immutability, now)
	if err != nil {
		return PutBlockListOutput{}, err
	}
	err = s.store.Update(ctx, s.changing(in.Call, apiPutBlockList, ref, func(tx kv.Tx) error {
		old, cont, err := blockListTarget(tx, ref, acc, createOnly, now)
		if err != nil {
			return err
		}
		// committed blocks by id, with their parts
		committed := map[string][]extent.Part{}
		if old != nil {
			i := 0
			for _, bl := range old.Blocks {
				committed[bl.Name] = old.Parts[i : i+bl.NParts]
				i += bl.NParts
			}
		}
		nb := newb.record(BlockBlob)
		nb.Imm, nb.Hold = imm, hold
		if nb.Imm == nil {
			nb.Imm = s.inheritedPolicy(ref.Account, cont, now) // immutability.go
		}
		nb.HasBlockList = true
		nb.CPK = sha
		nb.replaces(old, now)
		unc := map[string]*uncommitted{}
		for _, bref := range blocks {
			var parts []extent.Part
			var size int64
			useUncommitted := func() (bool, error) {
				if bref.ID == "" { // the sequence record, not a block
					return false, nil
				}
				u, ok := unc[bref.ID]
				if !ok {
					u = new(uncommitted)
					found, err := kv.GetJSON(tx, BlockKey(ref.Account, ref.Container, ref.Blob, bref.ID), u)
					if err != nil {
						return false, err
					}
					if !found {
						return false, nil
					}
					unc[bref.ID] = u
				}
				if u.CPK != sha {
					// A block is committed with the key it was
					// written with (cpk.go).
					return false, cpkMismatch(u.CPK, sha)
				}
				parts, size = u.Parts, u.Size
				return true, nil
			}
			useCommitted := func() bool {
				cp, ok := committed[bref.ID]
				if !ok || old.CPK != sha {
					return false
				}
				parts = cp
				for _, p := range cp {
					size += p.Len
				}
				return true
			}
			var ok bool
			switch bref.Kind {
			case wire.Committed:
				ok = useCommitted()
			case wire.Uncommitted:
				if ok, err = useUncommitted(); err != nil {
					return err
				}
			default:
				if ok, err = useUncommitted(); err != nil {
					return err
				}
				if !ok {
					ok = useCommitted()
				}
			}
			if !ok {
				return azerr.New(azerr.InvalidBlockList)
			}
			for _, p := range parts {
				p.Off = nb.Size + (p.Off - parts[0].Off)
				nb.Parts = append(nb.Parts, p)
			}
			nb.Blocks = append(nb.Blocks, block{Name: bref.ID, Size: size, NParts: len(parts)})
			nb.Size += size
		}
		for i := range nb.Blocks {
			if blockIDLen(nb.Blocks[i].Name) != blockIDLen(nb.Blocks[0].Name) {
				return azerr.New(azerr.InvalidBlockList)
			}
		}
		if len(nb.Blocks) > maxCommittedBlocks {
			return azerr.New(azerr.BlockCountExceedsLimit)
		}
		// With soft delete on, the replaced list is kept as a soft-deleted
		// snapshot and keeps its references.
		oldParts, err := s.beforeOverwrite(tx, ref, now, old, &nb)
		if err != nil {
			return err
		}
		// the new list takes its references before the uncommitted blocks
		// and the old list release theirs
		if err := extent.AdjustRefs(tx, now, oldParts, nb.Parts); err != nil {
			return err
		}
		if err := s.dropUncommitted(tx, ref, now); err != nil {
			return err
		}
		rec = &nb
		return kv.PutJSON(tx, BlobKey(ref.Account, ref.Container, ref.Blob, ""), &nb)
	}))
	if err != nil {
		return PutBlockListOutput{}, err
	}
	return PutBlockListOutput{ETag: rec.ETag, LastModified: rec.Modified, ServerEncrypted: true, VersionID: rec.VersionID}, nil
}

// listBlobsFlat is List Blobs on a flat account (flatLayout.list).
func (s *Service) listBlobsFlat(ctx context.Context, in ListBlobsInput) (ListBlobsOutput, error) {
	now := s.now(in.Call)
	ref, prefix, delim, marker, maxN, inc := in.Ref, in.Prefix, in.Delimiter, in.Marker, in.MaxResults, in.Include
	var mkind, mname, msnap string
	if marker != "" {
		var ok bool
		if mkind, mname, msnap, ok = decodeMarker(marker); !ok {
			return ListBlobsOutput{}, azerr.Newf(azerr.InvalidQueryParameterValue, "The marker is not valid.").With("QueryParameterName", "marker").With("QueryParameterValue", marker)
		}
	}
	// newScan returns the pass over one record range: "b" (live blobs) or
	// "bd" (soft-deleted ones, same tuple shape).
	newScan := func(ns string, snapshots bool) blobScan {
		atName := func(name string) []byte { return kv.Key(ns, ref.Account, ref.Container, name, "") }
		sc := blobScan{prefix: prefix, delim: delim, snapshots: snapshots}
		// A blob or version marker resumes at the blob's first record: its
		// base record is held back until its snapshots are listed, so it
		// must be read again even when the marker is one of the snapshots.
		// StartFrom starts at the name's first record (its snapshots, then
		// the base blob).
		sc.start, sc.end = resumeRange(kv.Key(ns, ref.Account, ref.Container), prefix, mkind, mname, in.StartFrom, atName)
		switch mkind {
		case "b":
			sc.resume, sc.resumeName, sc.resumeSnap = true, mname, msnap
		case "v":
			// A version: the name's snapshots were all listed.
			sc.resume, sc.resumeName = true, mname
		}
		return sc
	}
	scan := newScan("b", inc.Snapshots)
	ustart, uend := resumeRange(kv.Key("u", ref.Account, ref.Container), prefix, mkind, mname, in.StartFrom,
		func(name string) []byte { return blocksPrefix(ref.Account, ref.Container, name) })
	var entries []listEntry
	err := s.store.View(ctx, func(tx kv.Tx) error {
		if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
			return err
		}
		var err error
		entries, err = scan.collect(tx, maxN+1)
		if err != nil {
			return err
		}
		if inc.Deleted {
			// Soft-deleted blobs, and with include=snapshots their
			// soft-deleted snapshots, still retained at the request's time.
			ds := newScan("bd", inc.Snapshots)
			ds.keep = func(b *blobRec) bool { return b.Del.retained(now) }
			dead, err := ds.collect(tx, maxN+1)
			if err != nil {
				return err
			}
			entries = mergeEntries(entries, dead)
		}
		if inc.Versions {
			vs := newScan("bv", true)
			resumeVersions(&vs, ref, mkind, mname, msnap)
			// Soft-deleted versions with include=deleted, while retained.
			vs.keep = func(b *blobRec) bool { return b.Del == nil || (inc.Deleted && b.Del.retained(now)) }
			vers, err := vs.collect(tx, maxN+1)
			if err != nil {
				return err
			}
			for i := range vers {
				vers[i].version = !vers[i].prefix
			}
			entries = mergeEntries(entries, vers)
		}
		if inc.DeletedWithVersions {
			only, err := collectVersionsOnly(tx, ref, prefix, delim, mkind, mname, maxN+1)
			if err != nil {
				return err
			}
			entries = mergeEntries(entries, only)
		}
		if inc.UncommittedBlobs {
			extra, err := collectUncommitted(tx, ustart, uend, prefix, delim, maxN+1)
			if err != nil {
				return err
			}
			entries = mergeEntries(entries, extra)
		}
		return nil
	})
	if err != nil {
		return ListBlobsOutput{}, err
	}
	var out ListBlobsOutput
	if len(entries) > maxN {
		next := entries[maxN]
		kind := "b"
		if next.prefix {
			kind = "p"
		} else if next.version {
			kind = "v"
		}
		out.NextMarker = encodeMarker(kind, next.name, next.snap)
		entries = entries[:maxN]
	}
	out.Items = make([]ListedBlob, len(entries))
	for i, e := range entries {
		it := &out.Items[i]
		it.Name, it.Snapshot = e.name, e.snap
		switch {
		case e.prefix:
			it.IsPrefix, it.Snapshot = true, ""
		case e.rec == nil:
			it.Uncommitted = true
		default:
			b := e.rec
			if e.version || e.versionsOnly {
				// A previous version: no snapshot, no lease.
				b.prev, it.Snapshot = true, ""
			}
			it.HasVersionsOnly = e.versionsOnly
			it.Properties = b.properties(BlobRef{Account: ref.Account, Container: ref.Container, Blob: e.name, Snapshot: it.Snapshot}, now)
			it.Tags = b.Tags
			if b.Del != nil {
				it.Properties.HasLease = false
				it.Deleted, it.DeletedTime, it.RemainingRetentionDays = true, b.Del.At, b.Del.remainingDays(now)
			}
		}
	}
	return out, nil
}

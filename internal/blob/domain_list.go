package blob

import (
	"context"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// ListBlobsInclude are the records a listing includes besides the live
// base blobs.
type ListBlobsInclude struct {
	Snapshots        bool
	Deleted          bool // soft-deleted blobs (and snapshots) still retained
	UncommittedBlobs bool // blobs with uncommitted blocks only
	// Versions lists the previous versions of each blob, oldest first,
	// after its snapshots and before its current version
	// (domain_versions.go).
	Versions bool
	// DeletedWithVersions lists once each name that has versions and no
	// current version (HasVersionsOnly).
	DeletedWithVersions bool
}

// ListBlobsInput is List Blobs: one page of at most MaxResults entries
// of the blobs whose names start with Prefix, names containing Delimiter
// after the prefix folded into one prefix entry each, from Marker (the
// NextMarker of the previous page; "" for the first).
type ListBlobsInput struct {
	Call
	Ref       ContainerRef
	Prefix    string
	Delimiter string
	Marker    string
	// StartFrom is startFrom: list only names from this one on
	// (inclusive); "" for all. It bounds every page, so a client may send
	// it with each marker or with the first page only.
	StartFrom  string
	MaxResults int
	Include    ListBlobsInclude
	// ShowOnly is showonly of a hierarchical account's listing
	// ("deleted", "directories", "files"; "" for all), which the
	// datalake SDKs' ListDeletedPaths and ListDirectoryPaths send. A flat
	// account's listing does not consult it.
	ShowOnly string
}

// ListedBlob is one entry of a listing.
type ListedBlob struct {
	Name string
	// IsPrefix is a virtual directory (a BlobPrefix): only Name is set.
	IsPrefix bool
	// Uncommitted is a blob with uncommitted blocks only: only Name is set.
	Uncommitted bool
	Snapshot    string
	Properties  BlobProperties // the lease only for a live base blob
	Tags        blobtags.Tags
	// A soft-deleted blob or snapshot: when, and the whole days of
	// retention left.
	Deleted                bool
	DeletedTime            time.Time
	RemainingRetentionDays int
	// DeletionID names a soft-deleted path of a hierarchical account (the
	// id Path Undelete takes in x-ms-undelete-source).
	DeletionID string
	// HasVersionsOnly is a name with versions and no current version
	// (include=deletedwithversions); Properties are its latest version's.
	HasVersionsOnly bool
}

// ListBlobsOutput is one page of a listing; NextMarker is "" on the last.
type ListBlobsOutput struct {
	Items      []ListedBlob
	NextMarker string
}

// ListBlobs is List Blobs
// (https://learn.microsoft.com/en-us/rest/api/storageservices/list-blobs):
// names ascending, a blob's snapshots (oldest first) before the blob,
// from one read transaction.
func (s *Service) ListBlobs(ctx context.Context, in ListBlobsInput) (ListBlobsOutput, error) {
	if s.isFeed(in.Ref.Account, in.Ref.Container) {
		return s.listFeed(ctx, in)
	}
	return s.layoutOf(in.Ref.Account).list(ctx, in)
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
		base := kv.Key(ns, ref.Account, ref.Container)
		rangeStart := kv.AppendPartial(append([]byte(nil), base...), prefix)
		sc := blobScan{start: rangeStart, end: kv.PrefixEnd(rangeStart), prefix: prefix, delim: delim, snapshots: snapshots}
		switch mkind {
		case "b", "v":
			// Resume at the blob's first record: its base record is held
			// back until its snapshots are listed, so it must be read again
			// even when the marker is one of the snapshots.
			sc.start = kv.Key(ns, ref.Account, ref.Container, mname, "")
			sc.resume, sc.resumeName, sc.resumeSnap = true, mname, msnap
			if mkind == "v" {
				// A version: the name's snapshots were all listed.
				sc.resumeSnap = ""
			}
		case "p":
			sc.start = kv.AppendPartial(append([]byte(nil), base...), mname)
		}
		if string(sc.start) < string(rangeStart) {
			sc.start = rangeStart
		}
		if in.StartFrom != "" {
			// The name's first record (its snapshots, then the base blob).
			if from := kv.Key(ns, ref.Account, ref.Container, in.StartFrom, ""); string(sc.start) < string(from) {
				sc.start = from
			}
		}
		return sc
	}
	scan := newScan("b", inc.Snapshots)
	uRangeStart := kv.AppendPartial(kv.Key("u", ref.Account, ref.Container), prefix)
	uend := kv.PrefixEnd(uRangeStart)
	ustart := uRangeStart
	switch mkind {
	case "b", "v":
		ustart = blocksPrefix(ref.Account, ref.Container, mname)
	case "p":
		ustart = kv.AppendPartial(kv.Key("u", ref.Account, ref.Container), mname)
	}
	if string(ustart) < string(uRangeStart) {
		ustart = uRangeStart
	}
	if in.StartFrom != "" {
		if from := blocksPrefix(ref.Account, ref.Container, in.StartFrom); string(ustart) < string(from) {
			ustart = from
		}
	}
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

// ListContainersInput is List Containers: one page of at most
// MaxResults containers whose names start with Prefix, from Marker (the
// previous page's NextMarker, "" for the first). With Deleted
// (include=deleted) the soft-deleted containers still retained are
// listed too, each after the live container of its name.
type ListContainersInput struct {
	Call
	Account    string
	Prefix     string
	Marker     string
	MaxResults int
	Deleted    bool
}

// ListedContainer is one container of a listing; Deleted is set on a
// soft-deleted one.
type ListedContainer struct {
	Name       string
	Properties ContainerProperties
	Deleted    *DeletedContainer
}

// ListContainersOutput is one page of a listing; NextMarker is "" on the
// last.
type ListContainersOutput struct {
	Items      []ListedContainer
	NextMarker string
}

// listedProps are the properties a listing shows of container record c.
func listedProps(c *container, now time.Time) ContainerProperties {
	return ContainerProperties{
		ETag: c.ETag, LastModified: c.Modified, Metadata: c.Meta, Lease: c.Lease.Effective(now), PublicAccess: c.PublicAccess,
		DefaultEncryptionScope: "$account-encryption-key",
		HasImmutabilityPolicy:  c.WORM != nil && c.WORM.Policy != nil, HasLegalHold: c.WORM.holding(),
	}
}

// ListContainers is List Containers
// (https://learn.microsoft.com/en-us/rest/api/storageservices/list-containers2).
// A page's NextMarker is the name of the next container, or, for a
// deleted one, its name and version apart by '/' (deletedMarker).
func (s *Service) ListContainers(ctx context.Context, in ListContainersInput) (ListContainersOutput, error) {
	now := s.now(in.Call)
	maxN := in.MaxResults
	mName, mVersion := splitMarker(in.Marker)
	base := containersPrefix(in.Account)
	start := kv.AppendPartial(append([]byte(nil), base...), in.Prefix)
	end := kv.PrefixEnd(start)
	if mName != "" && mName > in.Prefix {
		start = ContainerKey(in.Account, mName)
	}
	var out ListContainersOutput
	vlw := s.immutabilityOn(in.Account)
	err := s.store.View(ctx, func(tx kv.Tx) error {
		out = ListContainersOutput{}
		var live []ListedContainer
		var derr error
		err := tx.Scan(start, end, maxN+1, false, func(k, v []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 3 {
				return true
			}
			if mVersion != "" && parts[2] == mName {
				return true // the marker is a deleted version of this name
			}
			var c container
			if derr = kv.DecodeJSON(k, v, &c); derr != nil {
				return false
			}
			p := listedProps(&c, now)
			p.ImmutableStorageWithVersioning = vlw
			live = append(live, ListedContainer{Name: parts[2], Properties: p})
			return len(live) <= maxN
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return err
		}
		var dead []ListedContainer
		if in.Deleted {
			if dead, err = listDeletedContainers(tx, in.Account, in.Prefix, mName, mVersion, now, maxN); err != nil {
				return err
			}
		}
		// Merge by name, a name's live container before its deleted
		// versions.
		all := make([]ListedContainer, 0, maxN+1)
		i, j := 0, 0
		for len(all) <= maxN && (i < len(live) || j < len(dead)) {
			if j == len(dead) || i < len(live) && live[i].Name <= dead[j].Name {
				all = append(all, live[i])
				i++
			} else {
				all = append(all, dead[j])
				j++
			}
		}
		if len(all) > maxN {
			next := all[maxN]
			out.NextMarker = next.Name
			if next.Deleted != nil {
				out.NextMarker = deletedMarker(next.Name, next.Deleted.Version)
			}
			all = all[:maxN]
		}
		out.Items = all
		return nil
	})
	if err != nil {
		return ListContainersOutput{}, err
	}
	return out, nil
}

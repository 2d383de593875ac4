package blob

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

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

// listDeletedContainers returns up to maxN+1 deleted containers of acct
// whose names start with prefix, from (name, version) on, still retained
// at now and not being restored, by name and version.
func listDeletedContainers(tx kv.Tx, acct, prefix, fromName, fromVersion string, now time.Time, maxN int) ([]ListedContainer, error) {
	start := kv.AppendPartial(append([]byte(nil), deletedContainersPrefix(acct)...), prefix)
	end := kv.PrefixEnd(start)
	if fromName != "" && fromName > prefix {
		start = kv.Key("cx", acct, fromName)
	}
	var out []ListedContainer
	var derr error
	err := tx.Scan(start, end, 0, false, func(k, v []byte) bool {
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 4 {
			return true
		}
		if parts[2] == fromName && parts[3] < fromVersion {
			return true
		}
		var d deletedContainer
		if derr = json.Unmarshal(v, &d); derr != nil {
			return false
		}
		if d.Restoring || !now.Before(d.Expires) || d.Rec == nil {
			return true
		}
		del := deletion{At: d.Deleted, Expires: d.Expires}
		out = append(out, ListedContainer{Name: parts[2], Properties: listedProps(d.Rec, now),
			Deleted: &DeletedContainer{Version: parts[3], Deleted: d.Deleted, RemainingDays: del.remainingDays(now)}})
		return len(out) <= maxN
	})
	if err == nil {
		err = derr
	}
	return out, err
}

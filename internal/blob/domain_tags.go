package blob

import (
	"context"
	"encoding/base64"
	"errors"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// GetBlobTags is Get Blob Tags
// (https://learn.microsoft.com/en-us/rest/api/storageservices/get-blob-tags).
func (s *Service) GetBlobTags(ctx context.Context, in GetBlobTagsInput) (blobtags.Tags, error) {
	if hns := s.nsOf(in.Ref.Account); hns != nil {
		return s.getPathTags(ctx, hns, in)
	}
	now := s.now(in.Call)
	ref := in.Ref
	var b *blobRec
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		b, err = loadBlob(tx, ref)
		return err
	})
	if err != nil {
		return nil, err
	}
	if ref.Snapshot == "" {
		if err := lease.CheckRead(b.Lease, in.LeaseID, lease.Blob, now); err != nil {
			return nil, err
		}
	}
	if err := checkBlobIf(in.BlobCond, b.ETag, b.Modified); err != nil {
		return nil, err
	}
	if err := in.IfTags.check(b, ref.Container); err != nil {
		return nil, err
	}
	return b.Tags, nil
}

// SetBlobTags is Set Blob Tags
// (https://learn.microsoft.com/en-us/rest/api/storageservices/set-blob-tags):
// it changes neither the ETag nor Last-Modified.
func (s *Service) SetBlobTags(ctx context.Context, in SetBlobTagsInput) error {
	if hns := s.nsOf(in.Ref.Account); hns != nil {
		return s.setPathTags(ctx, hns, in)
	}
	now := s.now(in.Call)
	ref, leaseID, ifTags, tags := in.Ref, in.LeaseID, in.IfTags, in.Tags
	if len(tags) == 0 {
		tags = nil
	}
	return s.store.Update(ctx, func(tx kv.Tx) error {
		b, err := loadBlob(tx, ref)
		if err != nil {
			return err
		}
		if err := lease.CheckWrite(b.Lease, leaseID, lease.Blob, now); err != nil {
			return err
		}
		if err := checkBlobIf(in.BlobCond, b.ETag, b.Modified); err != nil {
			return err
		}
		if err := ifTags.check(b, ref.Container); err != nil {
			return err
		}
		b.Tags = tags
		return putRec(tx, ref, b)
	})
}

// SetBlobTier is Set Blob Tier
// (https://learn.microsoft.com/en-us/rest/api/storageservices/set-blob-tier):
// it changes neither the ETag nor Last-Modified.
func (s *Service) SetBlobTier(ctx context.Context, in SetBlobTierInput) (SetBlobTierOutput, error) {
	if hns := s.nsOf(in.Ref.Account); hns != nil {
		return s.setPathTier(ctx, hns, in)
	}
	now := s.now(in.Call)
	ref, leaseID, v := in.Ref, in.LeaseID, in.Tier
	var out SetBlobTierOutput
	err := s.store.Update(ctx, s.changing(in.Call, apiSetBlobTier, ref, func(tx kv.Tx) error {
		out = SetBlobTierOutput{}
		b, err := loadBlob(tx, ref)
		if err != nil {
			return err
		}
		if ref.Snapshot == "" { // snapshots have no lease
			if err := lease.CheckWrite(b.Lease, leaseID, lease.Blob, now); err != nil {
				return err
			}
		}
		tier, err := CheckTier(v, b.Type)
		if err != nil {
			return err
		}
		out.Rehydrating = rehydrates(b.Tier, tier)
		changed := now
		b.Tier, b.TierChanged = tier, &changed
		return putRec(tx, ref, b)
	}))
	return out, err
}

// FindBlobsByTags is Find Blobs by Tags
// (https://learn.microsoft.com/en-us/rest/api/storageservices/find-blobs-by-tags):
// a scan of the blob records at one snapshot, so it is never behind the
// writes. The marker is the key of the next blob record.
func (s *Service) FindBlobsByTags(ctx context.Context, in FindBlobsByTagsInput) (FindBlobsByTagsOutput, error) {
	if hns := s.nsOf(in.Account); hns != nil {
		return s.findPathsByTags(ctx, hns, in)
	}
	acct, cont, e, maxN := in.Account, in.Container, in.Where, in.MaxResults
	start := kv.Key("b", acct)
	switch {
	case cont != "":
		start = blobsPrefix(acct, cont)
	case e.Container() != "":
		start = blobsPrefix(acct, e.Container())
	}
	end := kv.PrefixEnd(start)
	if m := in.Marker; m != "" {
		k, err := base64.RawURLEncoding.DecodeString(m)
		if err != nil || string(k) < string(start) || string(k) >= string(end) {
			return FindBlobsByTagsOutput{}, azerr.Newf(azerr.InvalidQueryParameterValue, "The marker is not valid.").With("QueryParameterName", "marker").With("QueryParameterValue", m)
		}
		start = k
	}
	var items []TaggedBlob
	var next []byte
	err := s.store.View(ctx, func(tx kv.Tx) error {
		items, next = items[:0], nil
		if cont != "" {
			if _, err := loadContainer(tx, acct, cont); err != nil {
				return err
			}
		}
		var derr error
		// Blob records of a deleted container stay until the
		// Reclaimer removes them: a container without its record is
		// gone, and so are its blobs.
		live := map[string]bool{}
		err := tx.Scan(start, end, 0, false, func(k, v []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 5 || parts[4] != "" {
				return true // a snapshot
			}
			alive, seen := live[parts[2]]
			if !seen {
				_, gerr := tx.Get(ContainerKey(acct, parts[2]))
				if gerr != nil && !errors.Is(gerr, kv.ErrNotFound) {
					derr = gerr
					return false
				}
				alive = gerr == nil
				live[parts[2]] = alive
			}
			if !alive {
				return true
			}
			var b blobRec
			if derr = kv.DecodeJSON(k, v, &b); derr != nil {
				return false
			}
			if !e.Matches(b.Tags, parts[2]) {
				return true
			}
			if len(items) == maxN {
				next = append([]byte(nil), k...)
				return false
			}
			items = append(items, TaggedBlob{Container: parts[2], Name: parts[3], Tags: b.Tags})
			return true
		})
		if err == nil {
			err = derr
		}
		return err
	})
	if err != nil {
		return FindBlobsByTagsOutput{}, err
	}
	out := FindBlobsByTagsOutput{Items: items}
	if next != nil {
		out.NextMarker = base64.RawURLEncoding.EncodeToString(next)
	}
	return out, nil
}

package blob

import (
	"context"
	"errors"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// Blob index tags of the files of a hierarchical account. A file's tags
// are a fact of its node (ns.Node.Tags), so they move with it on a
// rename, a replacing write (Put Blob, Put Block List, Copy Blob onto
// it) gives it the request's x-ms-tags or none, as on a flat account,
// and a delete takes them away. Get Blob Tags, Set Blob Tags, x-ms-tags,
// x-ms-tag-count, List Blobs include=tags and x-ms-if-tags behave as on
// a flat account. Find Blobs by Tags reads the namespace's tag index,
// keyed by node id, and resolves each file's current path (ns.FindTagged),
// so a rename of a directory costs what it did without tags.
//
// A directory has no tags: Get Blob Tags answers an empty set, as Get
// Blob Properties of a directory answers no x-ms-tag-count, and Set Blob
// Tags or x-ms-tags on a write that makes a directory is 409
// PathConflict, the answer the Blob view gives to the other writes of a
// file's own facts on a directory (Set Blob Tier, Set Blob Expiry): the
// reference describes index tags of blobs, and a directory on the Blob
// view is a marker, not a blob with content.

// getPathTags is Get Blob Tags of a path: the file's tags (a directory
// has none), with the read rules of a flat blob (lease, x-ms-if-tags);
// a snapshot's are the tags the file had when it was taken, as a flat
// snapshot's (the snapshot record keeps them; the index does not).
func (s *Service) getPathTags(ctx context.Context, hns *ns.Namespace, in GetBlobTagsInput) (blobtags.Tags, error) {
	now := s.now(in.Call)
	var b *blobRec
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		b, _, err = loadPath(tx, hns, in.Ref, now, in.Caller, acl.Read)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := lease.CheckRead(b.Lease, in.LeaseID, lease.Blob, now); err != nil {
		return nil, err
	}
	if err := checkBlobIf(in.BlobCond, b.ETag, b.Modified); err != nil {
		return nil, err
	}
	if err := in.IfTags.check(b, in.Ref.Container); err != nil {
		return nil, err
	}
	return b.Tags, nil
}

// setPathTags is Set Blob Tags of a file: the lease and x-ms-if-tags
// rules of a flat blob, then the node's tags replaced in place (no new
// ETag or last-modified time) and the tag index updated, in one
// transaction. An archived file takes tags as any other ("Manage and find
// Azure Blob data with blob index tags": tag updates are allowed for all
// access tiers).
func (s *Service) setPathTags(ctx context.Context, hns *ns.Namespace, in SetBlobTagsInput) error {
	if in.Ref.Snapshot != "" {
		return azerr.New(azerr.InvalidQueryParameterValue)
	}
	now := s.now(in.Call)
	ref, leaseID, ifTags, tags := in.Ref, in.LeaseID, in.IfTags, in.Tags
	return s.store.Update(ctx, func(tx kv.Tx) error {
		if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
			return err
		}
		_, err := hns.SetTags(tx, blobFS(ref), ref.Blob, tags, in.Caller, func(n *ns.Node) error {
			if err := lease.CheckWrite(n.Lease, leaseID, lease.Blob, now); err != nil {
				return err
			}
			if err := checkBlobIf(in.BlobCond, n.ETag, n.Modified); err != nil {
				return err
			}
			return ifTags.check(&blobRec{Tags: n.Tags}, ref.Container)
		})
		if errors.Is(err, ns.ErrInvalidPath) {
			return azerr.New(azerr.BlobNotFound)
		}
		return blobErr(err)
	})
}

// findPathsByTags is Find Blobs by Tags on a hierarchical account: the
// namespace's tag index read for one comparison of the expression (an
// equality when there is one, else a range, else every entry), each
// candidate's path resolved and the whole expression checked on its
// current tags and filesystem (the container of the request, or the
// one @container names). The marker is the next index entry: results
// come in the order of the comparison's values, then node ids, not by
// name.
func (s *Service) findPathsByTags(ctx context.Context, hns *ns.Namespace, in FindBlobsByTagsInput) (FindBlobsByTagsOutput, error) {
	e := in.Where
	var f ns.TagFilter
	for _, t := range e.Terms() {
		if t.Op == "=" {
			f = ns.TagFilter{Key: t.Key, Op: t.Op, Value: t.Value}
			break
		}
		if f.Key == "" {
			f = ns.TagFilter{Key: t.Key, Op: t.Op, Value: t.Value}
		}
	}
	cont := in.Container
	match := func(tags map[string]string, fs string) bool {
		return (cont == "" || fs == cont) && e.Matches(tags, fs)
	}
	var found []ns.TaggedPath
	var next string
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		if cont != "" {
			if _, err := loadContainer(tx, in.Account, cont); err != nil {
				return err
			}
		}
		found, next, err = hns.FindTagged(tx, ns.FindTaggedInput{Account: in.Account, Filter: f, Match: match, Marker: in.Marker, Max: in.MaxResults, Caller: in.Caller})
		return err
	})
	if errors.Is(err, ns.ErrInvalidContinuation) {
		return FindBlobsByTagsOutput{}, azerr.Newf(azerr.InvalidQueryParameterValue, "The marker is not valid.").With("QueryParameterName", "marker").With("QueryParameterValue", in.Marker)
	}
	if err != nil {
		return FindBlobsByTagsOutput{}, err
	}
	out := FindBlobsByTagsOutput{NextMarker: next}
	for _, p := range found {
		out.Items = append(out.Items, TaggedBlob{Container: p.Filesystem, Name: p.Path, Tags: p.Node.Tags})
	}
	return out, nil
}

package blob

import (
	"context"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// The Data Lake operations on an account without a hierarchical
// namespace, over its blobs. Azure's dfs endpoint serves Path Create,
// Path List, Path Delete and Get Properties' getStatus on a flat account
// (azure-sdk-for-net's recorded FileSystemClientTests.GetPathsAsync_NonHns
// lists paths there): a file is a block blob, a directory an empty blob
// with the metadata hdi_isfolder=true (the marker Hadoop's and the SDKs'
// flat-namespace code writes), and a directory's content is the blobs
// named under it. Nothing here is atomic over a directory: a recursive
// delete removes its blobs one by one, as it does on a flat account.
// Path Create and getStatus are Put Blob and Get Blob Properties; the
// dfs endpoint (internal/datalake) calls these for the rest.

// FolderMeta is the metadata that marks a blob standing for a directory.
const FolderMeta = "hdi_isfolder"

// IsFolder reports whether md marks a directory (hdi_isfolder=true, the
// name and value matched without regard to case).
func IsFolder(md map[string]string) bool {
	for k, v := range md {
		if strings.EqualFold(k, FolderMeta) && strings.EqualFold(v, "true") {
			return true
		}
	}
	return false
}

// DeleteFlatPathInput is Path - Delete on a flat account.
type DeleteFlatPathInput struct {
	Call
	// Ref is the path's blob.
	Ref BlobRef
	// Access holds the conditions on the path's own blob.
	Access Access
	// Recursive deletes a directory's blobs with it.
	Recursive bool
}

// DeleteFlatPath deletes a file's blob, or a directory's marker and, with
// Recursive, every blob under it (one at a time; a directory with blobs
// under it and Recursive false is 409 DirectoryNotEmpty). Nothing there
// at all is 404 PathNotFound. The other errors are Blob errors.
func (s *Service) DeleteFlatPath(ctx context.Context, in DeleteFlatPathInput) error {
	ref := in.Ref
	container := ContainerRef{Account: ref.Account, Container: ref.Container}
	p, perr := s.GetBlobProperties(ctx, GetBlobPropertiesInput{Call: in.Call, Ref: ref, NoKey: true})
	if perr != nil && !azerr.Has(perr, azerr.BlobNotFound) {
		return perr
	}
	exists := perr == nil
	if !exists || IsFolder(p.Metadata) {
		// A directory: its marker, blobs under its name, or both.
		under, err := s.ListBlobs(ctx, ListBlobsInput{Call: in.Call, Ref: container, Prefix: ref.Blob + "/", MaxResults: 1})
		if err != nil {
			return err
		}
		switch {
		case len(under.Items) == 0 && !exists:
			return azerr.New(azerr.PathNotFound)
		case len(under.Items) > 0 && !in.Recursive:
			return azerr.New(azerr.DirectoryNotEmpty)
		}
		for len(under.Items) > 0 {
			page, err := s.ListBlobs(ctx, ListBlobsInput{Call: in.Call, Ref: container, Prefix: ref.Blob + "/", MaxResults: 1000})
			if err != nil {
				return err
			}
			for _, it := range page.Items {
				item := BlobRef{Account: ref.Account, Container: ref.Container, Blob: it.Name}
				_, err := s.DeleteBlob(ctx, DeleteBlobInput{Call: in.Call, Ref: item, DeleteSnapshots: DeleteSnapshotsInclude})
				if err != nil && !azerr.Has(err, azerr.BlobNotFound) {
					return err
				}
			}
			under = page
			if page.NextMarker == "" {
				break
			}
		}
		if !exists {
			return nil
		}
	}
	_, err := s.DeleteBlob(ctx, DeleteBlobInput{Call: in.Call, Ref: ref, Access: in.Access, DeleteSnapshots: DeleteSnapshotsInclude})
	return err
}

// ListFlatPathsInput is Path - List on a flat account.
type ListFlatPathsInput struct {
	Call
	Ref ContainerRef
	// Prefix is the directory listed with its trailing "/" ("": the
	// filesystem's root).
	Prefix string
	// Recursive lists every blob under Prefix, else one level (names
	// with a further "/" folded into a directory each).
	Recursive bool
	// StartFrom starts the listing at that name (List Blobs'
	// startFrom), Marker after the last page.
	StartFrom, Marker string
	MaxResults        int
}

// FlatPath is a path of a flat account as Path - List shows it.
type FlatPath struct {
	Name string
	Dir  bool
	// Implied is a directory with no marker blob, there because blobs
	// are named under it: it has no size, times or ETag.
	Implied bool
	// Size, LastModified, Created and ETag are the blob's (Size 0 for a
	// folder marker).
	Size                  int64
	LastModified, Created time.Time
	ETag                  string
}

// ListFlatPathsOutput is one page of Path - List on a flat account.
type ListFlatPathsOutput struct {
	Paths      []FlatPath
	NextMarker string
}

// ListFlatPaths lists the blobs under in.Prefix, a folder marker as the
// directory it stands for. Owners, groups and permissions are not
// reported: a flat account has none. Errors are Blob errors.
func (s *Service) ListFlatPaths(ctx context.Context, in ListFlatPathsInput) (ListFlatPathsOutput, error) {
	lin := ListBlobsInput{Call: in.Call, Ref: in.Ref, Prefix: in.Prefix, Marker: in.Marker, MaxResults: in.MaxResults, StartFrom: in.StartFrom}
	if !in.Recursive {
		lin.Delimiter = "/"
	}
	out, err := s.ListBlobs(ctx, lin)
	if err != nil {
		return ListFlatPathsOutput{}, err
	}
	res := ListFlatPathsOutput{Paths: make([]FlatPath, 0, len(out.Items)), NextMarker: out.NextMarker}
	for _, it := range out.Items {
		if it.IsPrefix {
			// A directory with a marker blob is listed by the marker,
			// which sorts before its "name/" prefix (on this page or an
			// earlier one).
			name := strings.TrimSuffix(it.Name, "/")
			ref := BlobRef{Account: in.Ref.Account, Container: in.Ref.Container, Blob: name}
			m, err := s.GetBlobProperties(ctx, GetBlobPropertiesInput{Call: in.Call, Ref: ref, NoKey: true})
			switch {
			case err == nil && IsFolder(m.Metadata):
				continue
			case err != nil && !azerr.Has(err, azerr.BlobNotFound):
				return ListFlatPathsOutput{}, err
			}
			res.Paths = append(res.Paths, FlatPath{Name: name, Dir: true, Implied: true})
			continue
		}
		p := FlatPath{Name: it.Name, Size: it.Properties.Size, LastModified: it.Properties.LastModified,
			Created: it.Properties.CreationTime, ETag: it.Properties.ETag}
		if IsFolder(it.Properties.Metadata) {
			p.Dir, p.Size = true, 0
		}
		res.Paths = append(res.Paths, p)
	}
	return res, nil
}

package blob

import (
	"context"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// ExpiryOption is x-ms-expiry-option of Set Blob Expiry.
type ExpiryOption string

// Expiry options (Set Blob Expiry).
const (
	ExpiryRelativeToNow      ExpiryOption = "RelativeToNow"
	ExpiryRelativeToCreation ExpiryOption = "RelativeToCreation"
	ExpiryAbsolute           ExpiryOption = "Absolute"
	ExpiryNever              ExpiryOption = "NeverExpire"
)

// SetBlobExpiryInput is Set Blob Expiry: Option with Relative (the
// relative options) or At (Absolute).
type SetBlobExpiryInput struct {
	Call
	Ref      BlobRef
	LeaseID  string
	Option   ExpiryOption
	Relative time.Duration
	At       time.Time
}

// SetBlobExpiryOutput is the file after Set Blob Expiry.
type SetBlobExpiryOutput struct {
	ETag         string
	LastModified time.Time
}

// SetBlobExpiry is Set Blob Expiry
// (https://learn.microsoft.com/en-us/rest/api/storageservices/set-blob-expiry),
// which Azure serves on hierarchical-namespace accounts only (400
// HierarchicalNamespaceNotEnabled elsewhere): the file's expiry, from
// now, from its creation, absolute, or none. From that time on the file
// is gone (reads 404, listings leave it out: ns.Node.Expired) and its
// content goes to the collector when its name is reused. A directory has
// no expiry (400 ExpiryNotSupportedForDirectory).
func (s *Service) SetBlobExpiry(ctx context.Context, in SetBlobExpiryInput) (SetBlobExpiryOutput, error) {
	hns := s.nsOf(in.Ref.Account)
	if hns == nil {
		return SetBlobExpiryOutput{}, azerr.New(azerr.HierarchicalNamespaceNotEnabled)
	}
	if in.Ref.Snapshot != "" {
		return SetBlobExpiryOutput{}, azerr.New(azerr.BlobNotFound)
	}
	now := s.now(in.Call)
	var out SetBlobExpiryOutput
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		n, err := hns.Lookup(tx, blobFS(in.Ref), in.Ref.Blob, in.Caller)
		if err != nil {
			return blobErr(err)
		}
		if n.Dir {
			// Azure's answer to a directory created with an expiry
			// (azure-sdk-for-js's recording "DataLakeDirectoryClient
			// create with absolute expiry"), whose message names Set
			// Expiry.
			return azerr.New(azerr.ExpiryNotSupportedForDirectory)
		}
		var at time.Time
		switch in.Option {
		case ExpiryRelativeToNow:
			at = now.Add(in.Relative)
		case ExpiryRelativeToCreation:
			at = n.Created.Add(in.Relative)
		case ExpiryAbsolute:
			at = in.At
		case ExpiryNever:
		default:
			return azerr.InvalidHeader("x-ms-expiry-option", string(in.Option))
		}
		if err := refuseExpiry(tx, blobFS(in.Ref), n, at, now); err != nil { // hns_worm.go
			return err
		}
		// The file's ETag and Last-Modified stay, as on Azure
		// (azure-sdk-for-js's recording "listPaths - expiryTime
		// absolute": Set Expiry answers, and List Paths then shows, the
		// ETag of the flush before it).
		node, err := hns.Set(tx, blobFS(in.Ref), ns.SetInput{Path: in.Ref.Blob, Expiry: &at, LeaseID: in.LeaseID, Caller: in.Caller, KeepVersion: true})
		if err != nil {
			return blobErr(err)
		}
		out = SetBlobExpiryOutput{ETag: node.ETag, LastModified: node.Modified}
		return nil
	})
	return out, err
}

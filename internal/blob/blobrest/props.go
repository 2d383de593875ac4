package blobrest

import (
	"context"
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// ServiceProperties returns the Blob Service Properties and Stats (the
// implementation every service shares, of kind svcprops.Blob), which the
// route table's service-level entries serve through svcpropsrest.
func (s *Service) ServiceProperties() *svcprops.Service { return s.Props() }

func (s *Service) getAccountInfo(r *req) (server.Response, error) {
	return server.Bodiless(http.StatusOK).
		With("X-Ms-Sku-Name", "Standard_RAGRS").
		With("X-Ms-Account-Kind", "StorageV2").
		With("X-Ms-Is-Hns-Enabled", "false"), nil
}

// authorizeAnonymous lets an unauthenticated request through only where
// the container's public access level allows the routed operation: the
// entries flagged fPublicBlob (reads of blobs) for "blob" and
// "container", those flagged fPublicContainer (listing and container
// properties) for "container". Everything else is hidden as 404 ResourceNotFound (or 401
// for account-level operations), and nothing is read or written.
func (s *Service) authorizeAnonymous(r *req) error {
	if r.container == "" {
		return azerr.New(azerr.NoAuthenticationInformation)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return azerr.New(azerr.NoAuthenticationInformation)
	}
	acl, err := s.GetContainerACL(r.Context(), blob.GetContainerACLInput{Ref: r.containerRef()})
	access := acl.PublicAccess
	if err != nil && !azerr.Has(err, azerr.ContainerNotFound) {
		return err
	}
	// The route entry says which public access level opens it.
	switch f := r.route.Flags; {
	case f&fPublicBlob != 0 && (access == "blob" || access == "container"):
		return nil
	case f&fPublicContainer != 0 && access == "container":
		return nil
	}
	// Recorded real-service tests (the .NET SDK's ExistsAsync_Error) show
	// that from version 2019-12-12 the service answers such reads with
	// 401 NoAuthenticationInformation; older versions hide the resource
	// behind 404 ResourceNotFound.
	if r.Version >= "2019-12-12" {
		return azerr.New(azerr.NoAuthenticationInformation)
	}
	return azerr.New(azerr.ResourceNotFound)
}

// CORSRules returns the account's Blob CORS rules (server.CORSRuler).
func (s *Service) CORSRules(ctx context.Context, account string) ([]svcprops.CORSRule, error) {
	return s.Props().CORSRules(ctx, account)
}

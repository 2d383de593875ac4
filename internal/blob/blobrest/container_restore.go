package blobrest

import (
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// restoreContainer is Restore Container
// (https://learn.microsoft.com/en-us/rest/api/storageservices/restore-container):
// PUT ?restype=container&comp=undelete with x-ms-deleted-container-name
// and x-ms-deleted-container-version, both required; 201 Created once the
// container of the URL is live again.
func (s *Service) restoreContainer(r *req) (server.Response, error) {
	name := strings.TrimSpace(wire.Field(r.Header, "X-Ms-Deleted-Container-Name"))
	version := strings.TrimSpace(wire.Field(r.Header, "X-Ms-Deleted-Container-Version"))
	if name == "" {
		return server.Response{}, azerr.MissingHeader("x-ms-deleted-container-name")
	}
	if version == "" {
		return server.Response{}, azerr.MissingHeader("x-ms-deleted-container-version")
	}
	in := blob.RestoreContainerInput{Call: r.call(), Ref: r.containerRef(), DeletedName: name, DeletedVersion: version}
	if err := s.RestoreContainer(r.Context(), in); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusCreated), nil
}

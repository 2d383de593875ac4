package filerest

import (
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// restoreShare is Restore Share (PUT ?restype=share&comp=undelete,
// https://learn.microsoft.com/en-us/rest/api/storageservices/restore-share):
// x-ms-deleted-share-name and x-ms-deleted-share-version name the
// soft-deleted share, the URL's share the name it is restored under;
// 201 Created with the restored share's ETag and Last-Modified. A
// missing header is 400 MissingRequiredHeader.
func (s *Service) restoreShare(r *req) (server.Response, error) {
	name := strings.TrimSpace(wire.Field(r.Header, "X-Ms-Deleted-Share-Name"))
	version := strings.TrimSpace(wire.Field(r.Header, "X-Ms-Deleted-Share-Version"))
	if name == "" {
		return server.Response{}, azerr.MissingHeader("x-ms-deleted-share-name")
	}
	if version == "" {
		return server.Response{}, azerr.MissingHeader("x-ms-deleted-share-version")
	}
	out, err := s.f.RestoreShare(r.Context(), file.RestoreShareInput{Ref: refOf(r), DeletedName: name, DeletedVersion: version})
	if err != nil {
		return server.Response{}, err
	}
	resp := server.Bodiless(http.StatusCreated)
	setShareETag(&resp, out.Share)
	return resp, nil
}

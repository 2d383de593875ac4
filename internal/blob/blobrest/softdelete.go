package blobrest

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// undeleteBlob is Undelete Blob: it restores the soft-deleted base blob
// and every soft-deleted snapshot of the name that is still retained. A
// blob that is live and has nothing soft-deleted is left as it is (200);
// a name with nothing live or retained is 404 BlobNotFound. Restored
// records keep their ETag and Last-Modified and come back unleased.
//
// With x-ms-undelete-source ("?deletionid={id}") on a hierarchical
// account it is Path Undelete of that soft-deleted path (undeletePath in
// hns_undelete.go).
func (s *Service) undeleteBlob(r *req) (server.Response, error) {
	if src := wire.Field(r.Header, "X-Ms-Undelete-Source"); src != "" && s.Hierarchical(r.Account) {
		return s.undeletePath(r, src)
	}
	if err := s.UndeleteBlob(r.Context(), blob.UndeleteBlobInput{Call: r.call(), Ref: r.ref()}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusOK), nil
}

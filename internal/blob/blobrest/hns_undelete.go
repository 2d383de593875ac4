package blobrest

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/blob"
)

// undeletePath is Path - Undelete on a hierarchical account: PUT
// ?comp=undelete with x-ms-undelete-source "?deletionid={id}", which
// the datalake SDKs (JavaScript, Python, .NET, C++) send to the path's
// Blob URL, so the Blob service answers it on either port,
// with the Blob API's errors: azure-sdk-for-net's recorded
// FileSystemClientTests.UndeletePathAsync_Error is 404 ContainerNotFound
// in XML from the Blob endpoint, and azure-sdk-for-js's recording
// "undelete file and directory - recreate and delete path and undelete
// the path twice" answers 200 with x-ms-resource-type and
// x-ms-creation-time. It restores the soft-deleted path of that deletion
// id at the request's path (UndeletePath).
func (s *Service) undeletePath(w http.ResponseWriter, r *req, src string) error {
	id, err := blob.ParseUndeleteSource(src, r.container, r.name)
	if err != nil {
		return err
	}
	out, err := s.UndeletePath(r.Context(), blob.UndeleteBlobInput{Call: r.call(), Ref: r.ref(), DeletionID: id})
	if err != nil {
		return err
	}
	typ := "file"
	if out.Dir {
		typ = "directory"
	}
	h := w.Header()
	h.Set("x-ms-resource-type", typ)
	h.Set("x-ms-creation-time", out.Created.UTC().Format(http.TimeFormat))
	w.WriteHeader(http.StatusOK)
	return nil
}

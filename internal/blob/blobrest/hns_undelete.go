package blobrest

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
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
func (s *Service) undeletePath(r *req, src string) (server.Response, error) {
	id, err := parseUndeleteSource(src, r.container, r.name)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.UndeletePath(r.Context(), blob.UndeleteBlobInput{Call: r.call(), Ref: r.ref(), DeletionID: id})
	if err != nil {
		return server.Response{}, err
	}
	typ := "file"
	if out.Dir {
		typ = "directory"
	}
	return server.Bodiless(http.StatusOK).
		With("X-Ms-Resource-Type", typ).
		With("X-Ms-Creation-Time", wire.FormatHTTPDate(out.Created)), nil
}

// parseUndeleteSource reads x-ms-undelete-source: an optional path (the
// request's, alone or after its container, with or without a leading
// "/", URL-encoded or not), then "?deletionid=" and the id; anything
// else is 400 InvalidHeaderValue.
func parseUndeleteSource(v, container, path string) (string, error) {
	bad := azerr.InvalidHeader("x-ms-undelete-source", v)
	src, query, ok := strings.Cut(v, "?")
	if !ok {
		return "", bad
	}
	q, err := url.ParseQuery(query)
	id := q.Get("deletionid")
	if err != nil || id == "" {
		return "", bad
	}
	if src != "" {
		if u, err := url.PathUnescape(src); err == nil {
			src = u
		}
		src = strings.TrimPrefix(src, "/")
		if src != path && src != container+"/"+path {
			return "", bad
		}
	}
	return id, nil
}

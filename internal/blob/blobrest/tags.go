package blobrest

import (
	"io"
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Blob index tags (see package blobtags). A blob's tags are part of its
// record: x-ms-tags sets them when Put Blob, Put Block List or Copy Blob
// writes the blob (an overwrite without it leaves none), Set Blob Tags
// replaces them without changing the ETag or Last-Modified, snapshots
// keep the tags they were taken with. x-ms-if-tags makes any operation
// conditional on them (412 ConditionNotMet). Find Blobs by Tags reads
// every base blob of the account or container at the request's snapshot:
// unlike Azure's secondary index, it is never behind the writes.

// getBlobTags is Get Blob Tags' REST handler (also of a snapshot).
func (s *Service) getBlobTags(r *req) (server.Response, error) {
	bc, err := blobIfConds(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	tags, err := s.GetBlobTags(r.Context(), blob.GetBlobTagsInput{Call: r.call(), Ref: r.ref(), LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id"), IfTags: ifTagsHeader(r.Header), BlobCond: bc})
	if err != nil {
		return server.Response{}, err
	}
	body := append([]byte(xmlHeader), blobtags.AppendXML(nil, tags, nil)...)
	return server.XMLDoc(http.StatusOK, body), nil
}

const xmlHeader = `<?xml version="1.0" encoding="utf-8"?>`

// setBlobTags is Set Blob Tags' REST handler.
func (s *Service) setBlobTags(r *req) (server.Response, error) {
	if r.ContentLength > 64<<10 {
		return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	bc, err := blobIfConds(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10+1))
	if err != nil {
		return server.Response{}, azerr.New(azerr.InvalidXMLDocument)
	}
	if len(body) > 64<<10 {
		return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	if err := checkMD5(r.Header, md5Sum(body)); err != nil {
		return server.Response{}, err
	}
	tags, err := blobtags.ParseXML(body)
	if err != nil {
		return server.Response{}, err
	}
	if err := s.SetBlobTags(r.Context(), blob.SetBlobTagsInput{Call: r.call(), Ref: r.ref(), LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id"), IfTags: ifTagsHeader(r.Header), Tags: tags, BlobCond: bc}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusNoContent), nil
}

// findBlobsByTags is Find Blobs by Tags' REST handler, over the account
// (r.container "") or one container.
func (s *Service) findBlobsByTags(r *req) (server.Response, error) {
	where := r.q.Get("where")
	if where == "" {
		return server.Response{}, azerr.New(azerr.MissingRequiredQueryParameter).With("QueryParameterName", "where")
	}
	e, err := blobtags.ParseWhere(where)
	if err != nil {
		return server.Response{}, azerr.Newf(azerr.InvalidQueryParameterValue, "%s", err.Error()).With("QueryParameterName", "where").With("QueryParameterValue", where)
	}
	maxN, err := parseMaxResults(r)
	if err != nil {
		return server.Response{}, err
	}
	found, err := s.FindBlobsByTags(r.Context(), blob.FindBlobsByTagsInput{Call: r.call(), Account: r.Account, Container: r.container, Where: e, Marker: r.q.Get("marker"), MaxResults: maxN})
	if err != nil {
		return server.Response{}, err
	}
	out := []byte(xmlHeader)
	out = append(out, `<EnumerationResults ServiceEndpoint="`...)
	out = wire.AppendXMLAttr(out, r.endpoint())
	out = append(out, '"')
	if r.container != "" {
		out = append(out, ` ContainerName="`...)
		out = wire.AppendXMLAttr(out, r.container)
		out = append(out, '"')
	}
	out = append(out, "><Where>"...)
	out = wire.AppendXMLText(out, where)
	out = append(out, "</Where><Blobs>"...)
	for _, b := range found.Items {
		out = append(out, "<Blob><Name>"...)
		out = wire.AppendXMLText(out, b.Name)
		out = append(out, "</Name><ContainerName>"...)
		out = wire.AppendXMLText(out, b.Container)
		out = append(out, "</ContainerName>"...)
		out = blobtags.AppendXML(out, b.Tags, e.Keys())
		out = append(out, "</Blob>"...)
	}
	out = append(out, "</Blobs>"...)
	if found.NextMarker != "" {
		out = append(out, "<NextMarker>"...)
		out = append(out, found.NextMarker...)
		out = append(out, "</NextMarker>"...)
	} else {
		out = append(out, "<NextMarker />"...)
	}
	out = append(out, "</EnumerationResults>"...)
	return server.XMLDoc(http.StatusOK, out), nil
}

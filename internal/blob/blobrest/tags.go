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

// requestTags reads x-ms-tags.
func requestTags(r *req) (blobtags.Tags, error) {
	return blobtags.ParseHeader(r.Header.Get("X-Ms-Tags"))
}

// getBlobTags is Get Blob Tags' REST handler (also of a snapshot).
func (s *Service) getBlobTags(w http.ResponseWriter, r *req) error {
	bc, err := blobIfConds(r.Header)
	if err != nil {
		return err
	}
	tags, err := s.GetBlobTags(r.Context(), blob.GetBlobTagsInput{Call: r.call(), Ref: r.ref(), LeaseID: r.Header.Get("X-Ms-Lease-Id"), IfTags: ifTagsHeader(r.Header), BlobCond: bc})
	if err != nil {
		return err
	}
	body := append([]byte(xmlHeader), blobtags.AppendXML(nil, tags, nil)...)
	server.WriteXMLDoc(w, http.StatusOK, body)
	return nil
}

const xmlHeader = `<?xml version="1.0" encoding="utf-8"?>`

// setBlobTags is Set Blob Tags' REST handler.
func (s *Service) setBlobTags(w http.ResponseWriter, r *req) error {
	if r.ContentLength > 64<<10 {
		return azerr.New(azerr.RequestBodyTooLarge)
	}
	bc, err := blobIfConds(r.Header)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10+1))
	if err != nil {
		return azerr.New(azerr.InvalidXMLDocument)
	}
	if len(body) > 64<<10 {
		return azerr.New(azerr.RequestBodyTooLarge)
	}
	if err := checkMD5(r.Header, md5Sum(body)); err != nil {
		return err
	}
	tags, err := blobtags.ParseXML(body)
	if err != nil {
		return err
	}
	if err := s.SetBlobTags(r.Context(), blob.SetBlobTagsInput{Call: r.call(), Ref: r.ref(), LeaseID: r.Header.Get("X-Ms-Lease-Id"), IfTags: ifTagsHeader(r.Header), Tags: tags, BlobCond: bc}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// findBlobsByTags is Find Blobs by Tags' REST handler, over the account
// (r.container "") or one container.
func (s *Service) findBlobsByTags(w http.ResponseWriter, r *req) error {
	where := r.q.Get("where")
	if where == "" {
		return azerr.New(azerr.MissingRequiredQueryParameter).With("QueryParameterName", "where")
	}
	e, err := blobtags.ParseWhere(where)
	if err != nil {
		return azerr.Newf(azerr.InvalidQueryParameterValue, "%s", err.Error()).With("QueryParameterName", "where").With("QueryParameterValue", where)
	}
	maxN, err := parseMaxResults(r)
	if err != nil {
		return err
	}
	found, err := s.FindBlobsByTags(r.Context(), blob.FindBlobsByTagsInput{Call: r.call(), Account: r.Account, Container: r.container, Where: e, Marker: r.q.Get("marker"), MaxResults: maxN})
	if err != nil {
		return err
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
	server.WriteXMLDoc(w, http.StatusOK, out)
	return nil
}

package datalake

import (
	"net/http"
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// A filesystem is a container of the account: the Filesystem operations
// are the Blob domain's container operations, with the dfs endpoint's
// headers, errors and list format.

// dateConditions reads If-Modified-Since and If-Unmodified-Since, the
// only conditions the Filesystem operations take (Filesystem - Delete,
// Filesystem - Set Properties).
func dateConditions(h http.Header) (cond.Conditions, error) {
	c, err := cond.Parse(h)
	if err != nil {
		return cond.Conditions{}, err
	}
	return cond.Conditions{IfModifiedSince: c.IfModifiedSince, IfUnmodifiedSince: c.IfUnmodifiedSince}, nil
}

// namespaceEnabled is the x-ms-namespace-enabled value for r's account.
func (s *Service) namespaceEnabled(r *req) string {
	return strconv.FormatBool(s.hier(r.Account))
}

// createFilesystem is Filesystem - Create
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/filesystem/create):
// 201, or 409 FilesystemAlreadyExists.
func (s *Service) createFilesystem(r *req) (server.Response, error) {
	ans := &answer{}
	// A filesystem is a container: the container naming rules, $logs
	// reserved (Filesystem - Create: "The filesystem name must follow the
	// container naming rules").
	if err := wire.ValidNewContainerName(r.filesystem); err != nil {
		return server.Response{}, err
	}
	md, err := parseProperties(r.Header.Get(hProperties))
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.blob.CreateContainer(r.Context(), blob.CreateContainerInput{Call: r.call(), Ref: r.containerRef(), Metadata: md})
	if err != nil {
		return server.Response{}, fsErr(err)
	}
	h := ans
	setETag(h, out.ETag, out.LastModified)
	h.Set("X-Ms-Namespace-Enabled", s.namespaceEnabled(r))
	return ans.done(http.StatusCreated)
}

// deleteFilesystem is Filesystem - Delete
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/filesystem/delete):
// 202; 404 FilesystemNotFound; 412 ConditionNotMet.
func (s *Service) deleteFilesystem(r *req) (server.Response, error) {
	ans := &answer{}
	c, err := dateConditions(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	if err := s.blob.DeleteContainer(r.Context(), blob.DeleteContainerInput{Call: r.call(), Ref: r.containerRef(), Cond: c}); err != nil {
		return server.Response{}, fsErr(err)
	}
	return ans.done(http.StatusAccepted)
}

// getFilesystemProperties is Filesystem - Get Properties
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/filesystem/get-properties):
// the ETag, Last-Modified, x-ms-properties and x-ms-namespace-enabled.
func (s *Service) getFilesystemProperties(r *req) (server.Response, error) {
	ans := &answer{}
	p, err := s.blob.GetContainerProperties(r.Context(), blob.GetContainerPropertiesInput{Call: r.call(), Ref: r.containerRef()})
	if err != nil {
		return server.Response{}, fsErr(err)
	}
	h := ans
	setETag(h, p.ETag, p.LastModified)
	if v := formatProperties(p.Metadata); v != "" {
		h.Set(hProperties, v)
	}
	h.Set("X-Ms-Namespace-Enabled", s.namespaceEnabled(r))
	return ans.done(http.StatusOK)
}

// setFilesystemProperties is Filesystem - Set Properties
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/filesystem/set-properties):
// x-ms-properties replaces the filesystem's properties (all of them are
// removed when it is absent).
func (s *Service) setFilesystemProperties(r *req) (server.Response, error) {
	ans := &answer{}
	md, err := parseProperties(r.Header.Get(hProperties))
	if err != nil {
		return server.Response{}, err
	}
	c, err := dateConditions(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.blob.SetContainerMetadata(r.Context(), blob.SetContainerMetadataInput{Call: r.call(), Ref: r.containerRef(), Cond: c, Metadata: md})
	if err != nil {
		return server.Response{}, fsErr(err)
	}
	setETag(ans, out.ETag, out.LastModified)
	return ans.done(http.StatusOK)
}

// maxListResults is the most items a dfs listing returns per call, and
// its default (Filesystem - List and Path - List, maxResults: "the
// maximum number of items to return ... a maximum of 5,000 items").
const maxListResults = 5000

// parseMaxResults reads maxResults: absent is the maximum, a value that
// is not a positive integer is 400 InvalidQueryParameterValue, a larger
// one is capped.
func parseMaxResults(r *req) (int, error) {
	v := r.q.Get("maxResults")
	if v == "" {
		return maxListResults, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, azerr.InvalidQuery("maxResults", v)
	}
	return min(n, maxListResults), nil
}

type fsJSON struct {
	Name         string `json:"name"`
	LastModified string `json:"lastModified"`
	ETag         string `json:"etag"`
}

// listFilesystems is Filesystem - List
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/filesystem/list):
// {"filesystems":[{name, lastModified, etag}]} in name order, prefix,
// maxResults, and the next page's token in x-ms-continuation.
func (s *Service) listFilesystems(r *req) (server.Response, error) {
	ans := &answer{}
	n, err := parseMaxResults(r)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.blob.ListContainers(r.Context(), blob.ListContainersInput{Call: r.call(), Account: r.Account,
		Prefix: r.q.Get("prefix"), Marker: r.q.Get("continuation"), MaxResults: n})
	if err != nil {
		return server.Response{}, err
	}
	body := struct {
		Filesystems []fsJSON `json:"filesystems"`
	}{Filesystems: make([]fsJSON, 0, len(out.Items))}
	for _, c := range out.Items {
		body.Filesystems = append(body.Filesystems, fsJSON{Name: c.Name, LastModified: wire.FormatHTTPDate(c.Properties.LastModified), ETag: c.Properties.ETag})
	}
	if out.NextMarker != "" {
		ans.Set("X-Ms-Continuation", out.NextMarker)
	}
	return ans.json(http.StatusOK, body)
}

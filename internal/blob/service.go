package blob

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// op is one REST operation handler.
type op func(w http.ResponseWriter, r *req) error

// req is a parsed Blob request.
type req struct {
	*server.Request
	q         url.Values
	container string
	name      string // blob name, "" for container/account requests
	snapshot  string // ?snapshot=
}

// ServeAzure routes a Blob REST request to its operation.
func (s *Service) ServeAzure(w http.ResponseWriter, sr *server.Request) error {
	r := &req{Request: sr, q: sr.URL.Query()}
	path := strings.TrimPrefix(sr.URL.Path, "/")
	// path is /{account}[/{container}[/{blob}]]; the middleware took the account.
	if i := strings.IndexByte(path, '/'); i >= 0 {
		rest := path[i+1:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			r.container, r.name = rest[:j], rest[j+1:]
		} else {
			r.container = rest
		}
	}
	r.snapshot = r.q.Get("snapshot")
	// Structured-message bodies (per-segment CRC64 framing) are not
	// decoded here; refusing them keeps the framing out of stored content.
	if v := r.Header.Get("x-ms-structured-body"); v != "" {
		return azerr.New(azerr.UnsupportedHeader).With("HeaderName", "x-ms-structured-body").With("HeaderValue", v)
	}
	o, err := s.route(r)
	if err != nil {
		return err
	}
	if !r.Authenticated {
		if err := s.authorizeAnonymous(r); err != nil {
			return err
		}
	}
	return o(w, r)
}

func (s *Service) route(r *req) (op, error) {
	comp := r.q.Get("comp")
	restype := r.q.Get("restype")
	m := r.Method
	bad := func() (op, error) {
		if comp != "" {
			return nil, azerr.InvalidQuery("comp", comp)
		}
		return nil, azerr.New(azerr.UnsupportedHTTPVerb)
	}
	// Get Account Information is valid on every level.
	if restype == "account" && comp == "properties" && (m == http.MethodGet || m == http.MethodHead) {
		return s.getAccountInfo, nil
	}
	switch {
	case r.container == "":
		switch {
		case comp == "list" && m == http.MethodGet:
			return s.listContainers, nil
		case restype == "service" && comp == "properties" && m == http.MethodGet:
			return s.getServiceProperties, nil
		case restype == "service" && comp == "properties" && m == http.MethodPut:
			return s.setServiceProperties, nil
		case restype == "service" && comp == "stats" && m == http.MethodGet:
			return s.getServiceStats, nil
		case restype == "container":
			// a container operation without a container name
			return nil, azerr.InvalidQuery("restype", restype)
		}
		return bad()
	case r.name == "":
		if restype != "container" {
			if restype != "" {
				return nil, azerr.InvalidQuery("restype", restype)
			}
			return nil, azerr.New(azerr.InvalidURI)
		}
		switch {
		case comp == "" && m == http.MethodPut:
			return s.createContainer, nil
		case comp == "" && (m == http.MethodGet || m == http.MethodHead):
			return s.getContainerProperties, nil
		case comp == "" && m == http.MethodDelete:
			return s.deleteContainer, nil
		case comp == "metadata" && m == http.MethodPut:
			return s.setContainerMetadata, nil
		case comp == "metadata" && (m == http.MethodGet || m == http.MethodHead):
			return s.getContainerProperties, nil
		case comp == "acl" && (m == http.MethodGet || m == http.MethodHead):
			return s.getContainerACL, nil
		case comp == "acl" && m == http.MethodPut:
			return s.setContainerACL, nil
		case comp == "lease" && m == http.MethodPut:
			return s.leaseContainer, nil
		case comp == "list" && m == http.MethodGet:
			return s.listBlobs, nil
		}
		return bad()
	}
	if r.snapshot != "" && (m == http.MethodPut || m == http.MethodPost) {
		return nil, azerr.Newf(azerr.InvalidQueryParameterValue, "Cannot perform this operation on a blob snapshot.").With("QueryParameterName", "snapshot").With("QueryParameterValue", r.snapshot)
	}
	switch {
	case comp == "" && m == http.MethodPut:
		if r.Header.Get("x-ms-copy-source") != "" {
			return s.copyBlob, nil
		}
		return s.putBlob, nil
	case comp == "" && (m == http.MethodGet || m == http.MethodHead):
		if m == http.MethodHead {
			return s.getBlobProperties, nil
		}
		return s.getBlob, nil
	case comp == "" && m == http.MethodDelete:
		return s.deleteBlob, nil
	case comp == "properties" && m == http.MethodPut:
		return s.setBlobProperties, nil
	case comp == "metadata" && m == http.MethodPut:
		return s.setBlobMetadata, nil
	case comp == "metadata" && (m == http.MethodGet || m == http.MethodHead):
		return s.getBlobProperties, nil
	case comp == "lease" && m == http.MethodPut:
		return s.leaseBlob, nil
	case comp == "snapshot" && m == http.MethodPut:
		return s.snapshotBlob, nil
	case comp == "undelete" && m == http.MethodPut:
		return s.undeleteBlob, nil
	case comp == "copy" && m == http.MethodPut:
		return s.abortCopyBlob, nil
	case comp == "block" && m == http.MethodPut:
		return s.putBlock, nil
	case comp == "blocklist" && m == http.MethodPut:
		return s.putBlockList, nil
	case comp == "blocklist" && m == http.MethodGet:
		return s.getBlockList, nil
	case comp == "page" && m == http.MethodPut:
		return s.putPage, nil
	case comp == "pagelist" && m == http.MethodGet:
		return s.getPageRanges, nil
	case comp == "appendblock" && m == http.MethodPut:
		return s.appendBlock, nil
	}
	return bad()
}

// setCommon sets ETag and Last-Modified.
func setETag(w http.ResponseWriter, etag string, modified time.Time) {
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
}

// contentLength returns the request's declared body length.
func contentLength(r *req) (int64, error) {
	if r.ContentLength >= 0 {
		return r.ContentLength, nil
	}
	if te := r.Header.Get("Transfer-Encoding"); te != "" {
		return -1, nil
	}
	return 0, nil
}

func parseBoolHeader(h http.Header, name string) (bool, error) {
	v := h.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, azerr.InvalidHeader(name, v)
	}
	return b, nil
}

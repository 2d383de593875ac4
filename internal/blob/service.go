package blob

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
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
	name      string    // blob name, "" for container/account requests
	snapshot  string    // ?snapshot=
	opName    string    // the routed operation (see sasRules)
	sas       *auth.SAS // the verified, effective SAS of a SAS request
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
	// Azure takes a '\' in a blob name for a '/': the blob is stored,
	// listed, authorized by SAS and answered under the name with '/'
	// (azure-sdk-for-js special-naming.spec.ts, recorded against Azure:
	// "Azure Storage Server will replace "\" with "/" in the blob names",
	// so its SAS is signed for, and its listing prefix given as, the '/'
	// form). Shared Key signatures cover the URL as sent and were checked
	// before this point.
	r.name = blobName(r.name)
	r.snapshot = r.q.Get("snapshot")
	o, err := s.route(r)
	// Structured-message bodies (per-segment CRC64 framing) are not
	// decoded here; refusing them keeps the framing out of stored content.
	if v := r.Header.Get("x-ms-structured-body"); err == nil && v != "" {
		err = azerr.New(azerr.UnsupportedHeader).With("HeaderName", "x-ms-structured-body").With("HeaderValue", v)
	}
	if err != nil {
		return r.SASFirst(err, server.SASTarget{Container: r.container, Path: r.name}, s.policies(r, r.container))
	}
	if r.SAS != nil {
		if err := s.authorizeSAS(r); err != nil {
			return err
		}
	} else if !r.Authenticated {
		if err := s.authorizeAnonymous(r); err != nil {
			return err
		}
	}
	return o(w, r)
}

// blobName is a blob name as Azure keeps it: each '\\' is a '/'.
func blobName(name string) string { return strings.ReplaceAll(name, "\\", "/") }

func (s *Service) route(r *req) (op, error) {
	comp := r.q.Get("comp")
	restype := r.q.Get("restype")
	m := r.Method
	bad := func() (op, error) { return nil, server.NoRoute(comp) }
	// Get Account Information is valid on every level.
	if restype == "account" && comp == "properties" && (m == http.MethodGet || m == http.MethodHead) {
		return r.as("getAccountInfo", s.getAccountInfo)
	}
	switch {
	case r.container == "":
		switch {
		case comp == "list" && m == http.MethodGet:
			return r.as("listContainers", s.listContainers)
		case restype == "service" && comp == "properties" && m == http.MethodGet:
			return r.as("getServiceProperties", s.getServiceProperties)
		case restype == "service" && comp == "properties" && m == http.MethodPut:
			return r.as("setServiceProperties", s.setServiceProperties)
		case restype == "service" && comp == "stats" && m == http.MethodGet:
			return r.as("getServiceStats", s.getServiceStats)
		case restype == "service" && comp == "userdelegationkey" && m == http.MethodPost:
			return r.as("getUserDelegationKey", s.getUserDelegationKey)
		case comp == "blobs" && m == http.MethodGet:
			return r.as("findBlobsByTagsAccount", s.findBlobsByTags)
		case comp == "batch" && m == http.MethodPost:
			return r.as("submitBatchAccount", s.submitBatch)
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
			return r.as("createContainer", s.createContainer)
		case comp == "" && (m == http.MethodGet || m == http.MethodHead):
			return r.as("getContainerProperties", s.getContainerProperties)
		case comp == "" && m == http.MethodDelete:
			return r.as("deleteContainer", s.deleteContainer)
		case comp == "metadata" && m == http.MethodPut:
			return r.as("setContainerMetadata", s.setContainerMetadata)
		case comp == "metadata" && (m == http.MethodGet || m == http.MethodHead):
			return r.as("getContainerProperties", s.getContainerProperties)
		case comp == "acl" && (m == http.MethodGet || m == http.MethodHead):
			return r.as("getContainerACL", s.getContainerACL)
		case comp == "acl" && m == http.MethodPut:
			return r.as("setContainerACL", s.setContainerACL)
		case comp == "lease" && m == http.MethodPut:
			return r.as("leaseContainer", s.leaseContainer)
		case comp == "list" && m == http.MethodGet:
			return r.as("listBlobs", s.listBlobs)
		case comp == "blobs" && m == http.MethodGet:
			return r.as("findBlobsByTags", s.findBlobsByTags)
		case comp == "batch" && m == http.MethodPost:
			return r.as("submitBatch", s.submitBatch)
		}
		return bad()
	}
	switch {
	case comp == "tier" && m == http.MethodPut:
		return r.as("setBlobTier", s.setBlobTier) // also on a snapshot
	case comp == "tags" && (m == http.MethodGet || m == http.MethodHead):
		return r.as("getBlobTags", s.getBlobTags) // also of a snapshot
	case comp == "tags" && m == http.MethodPut && r.snapshot == "":
		return r.as("setBlobTags", s.setBlobTags)
	}
	if r.snapshot != "" && (m == http.MethodPut || m == http.MethodPost) {
		return nil, azerr.Newf(azerr.InvalidQueryParameterValue, "Cannot perform this operation on a blob snapshot.").With("QueryParameterName", "snapshot").With("QueryParameterValue", r.snapshot)
	}
	switch {
	case comp == "" && m == http.MethodPut:
		if r.Header.Get("x-ms-copy-source") != "" {
			if r.Header.Get("x-ms-blob-type") != "" {
				return r.as("putBlobFromURL", s.putBlobFromURL)
			}
			return r.as("copyBlob", s.copyBlob)
		}
		return r.as("putBlob", s.putBlob)
	case comp == "" && (m == http.MethodGet || m == http.MethodHead):
		if m == http.MethodHead {
			return r.as("getBlobProperties", s.getBlobProperties)
		}
		return r.as("getBlob", s.getBlob)
	case comp == "" && m == http.MethodDelete:
		return r.as("deleteBlob", s.deleteBlob)
	case comp == "properties" && m == http.MethodPut:
		return r.as("setBlobProperties", s.setBlobProperties)
	case comp == "metadata" && m == http.MethodPut:
		return r.as("setBlobMetadata", s.setBlobMetadata)
	case comp == "metadata" && (m == http.MethodGet || m == http.MethodHead):
		return r.as("getBlobProperties", s.getBlobProperties)
	case comp == "lease" && m == http.MethodPut:
		return r.as("leaseBlob", s.leaseBlob)
	case comp == "snapshot" && m == http.MethodPut:
		return r.as("snapshotBlob", s.snapshotBlob)
	case comp == "undelete" && m == http.MethodPut:
		return r.as("undeleteBlob", s.undeleteBlob)
	case comp == "copy" && m == http.MethodPut:
		return r.as("abortCopyBlob", s.abortCopyBlob)
	case comp == "block" && m == http.MethodPut:
		if r.Header.Get("x-ms-copy-source") != "" {
			return r.as("putBlockFromURL", s.putBlockFromURL)
		}
		return r.as("putBlock", s.putBlock)
	case comp == "blocklist" && m == http.MethodPut:
		return r.as("putBlockList", s.putBlockList)
	case comp == "blocklist" && m == http.MethodGet:
		return r.as("getBlockList", s.getBlockList)
	case comp == "page" && m == http.MethodPut:
		if r.Header.Get("x-ms-copy-source") != "" {
			return r.as("putPageFromURL", s.putPageFromURL)
		}
		return r.as("putPage", s.putPage)
	case comp == "pagelist" && m == http.MethodGet:
		return r.as("getPageRanges", s.getPageRanges)
	case comp == "appendblock" && m == http.MethodPut:
		if r.Header.Get("x-ms-copy-source") != "" {
			return r.as("appendBlockFromURL", s.appendBlockFromURL)
		}
		return r.as("appendBlock", s.appendBlock)
	case comp == "seal" && m == http.MethodPut:
		return r.as("sealBlob", s.sealBlob)
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

// Package blobrest is the Blob service's REST front end: the route table
// (routes.go), the parsing of requests into the typed inputs of the
// internal/blob domain, SAS and anonymous authorization, batch, and the
// XML and header rendering of its outputs. Copies from the File service
// reach the domain through the file peer (xcopy.go).
package blobrest

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
	"github.com/cerulean-storage/cerulean/internal/xcopy"
)

// Service serves the Blob REST API (a server.Handler and
// server.CORSRuler) over one blob.Service, whose domain calls it embeds.
type Service struct {
	*blob.Service
	// filePeer is the File service copies may read from (SetFilePeer).
	filePeer atomic.Pointer[xcopy.Peer]
}

// New returns the REST front end of b.
func New(b *blob.Service) *Service { return &Service{Service: b} }

// req is a parsed Blob request.
type req struct {
	*server.Request
	q         url.Values
	level     server.Level // lAccount, lContainer or lBlob (blobPaths)
	container string
	name      string    // blob name, "" for container/account requests
	snapshot  string    // ?snapshot=
	versionID string    // ?versionid= (versions.go)
	route     *route    // the routed operation (blobRoutes)
	sas       *auth.SAS // the verified, effective SAS of a SAS request
	cpk       *blob.CPK // the request's customer-provided key (nil: none)
}

// ServeAzure routes a Blob REST request to its operation (blobDoor).
func (s *Service) ServeAzure(w http.ResponseWriter, sr *server.Request) error {
	return blobDoor.Serve(s, w, sr)
}

// blobDoor is the Blob front end's part of the dispatch: an anonymous
// request is decided after routing, by the container's public access
// (authorizeAnonymous); the extras are the change feed's read-only
// container and the customer-provided key.
var blobDoor = &server.Door[*Service, *req]{
	Paths: blobPaths,
	Parse: newReq,
	Route: (*Service).route,
	Target: func(s *Service, r *req) (server.SASTarget, auth.PolicyLookup) {
		return server.SASTarget{Container: r.container, Path: r.name}, s.policies(r, r.container)
	},
	AuthorizeSAS: (*Service).authorizeSAS,
	Anonymous:    (*Service).authorizeAnonymous,
	Extras:       (*Service).extras,
}

// extras checks an authorized request against the change feed's
// read-only container and reads its customer-provided key, which an
// operation flagged fNoCPK refuses; with a key, the answer echoes its
// SHA-256 (cpkWriter).
func (s *Service) extras(w http.ResponseWriter, r *req) (http.ResponseWriter, error) {
	if err := feedReadOnly(r); err != nil {
		return nil, err
	}
	var err error
	if r.cpk, err = parseCPK(r.Header, r.HTTPS, "x-ms-encryption-"); err != nil {
		return nil, err
	}
	if r.cpk != nil {
		if r.route.Flags&fNoCPK != 0 {
			return nil, errCPKCopy()
		}
		w = &cpkWriter{ResponseWriter: w, sha: r.cpk.SHA}
	}
	return w, nil
}

// newReq parses what routing needs from sr: the container, the blob
// name and the snapshot.
func newReq(sr *server.Request, p server.Path) *req {
	r := &req{Request: sr, q: sr.URL.Query(), level: p.Level, container: p.First, name: p.Rest}
	// Azure takes a '\' in a blob name for a '/': the blob is stored,
	// listed, authorized by SAS and answered under the name with '/'
	// (azure-sdk-for-js special-naming.spec.ts, recorded against Azure:
	// "Azure Storage Server will replace "\" with "/" in the blob names",
	// so its SAS is signed for, and its listing prefix given as, the '/'
	// form). Shared Key signatures cover the URL as sent and were checked
	// before this point.
	r.name = blobName(r.name)
	r.snapshot = r.q.Get("snapshot")
	r.versionID = r.q.Get("versionid")
	return r
}

// blobName is a blob name as Azure keeps it: each '\\' is a '/'.
func blobName(name string) string { return strings.ReplaceAll(name, "\\", "/") }

// route finds r's operation in blobRoutes and records it on r. The
// checks around the table keep the errors of a URL no entry matches: a
// container URL without restype=container, and a write to a blob
// snapshot.
func (s *Service) route(r *req) (*route, error) {
	sel := blobRoutes.Selectors(r.q)
	level := r.level
	m := server.MethodOf(r.Method)
	rt := blobRoutes.Match(m, level, &sel, r.Header, r.q)
	switch level {
	case lAccount:
		if rt == nil && sel.Restype == "container" {
			// a container operation without a container name
			return nil, azerr.InvalidQuery("restype", sel.Restype)
		}
	case lContainer:
		// Every container entry but Get Account Information takes
		// restype=container.
		if rt == nil && sel.Restype != "container" {
			if sel.Restype != "" {
				return nil, azerr.InvalidQuery("restype", sel.Restype)
			}
			return nil, azerr.New(azerr.InvalidURI)
		}
	case lBlob:
		if r.snapshot != "" && m&(server.PUT|server.POST) != 0 && (rt == nil || rt.Flags&fOnSnapshot == 0) {
			return nil, azerr.Newf(azerr.InvalidQueryParameterValue, "Cannot perform this operation on a blob snapshot.").With("QueryParameterName", "snapshot").With("QueryParameterValue", r.snapshot)
		}
		if err := checkVersionTarget(r, m, rt); err != nil {
			return nil, err
		}
	}
	if rt == nil {
		return nil, blobUnsupported.NoRoute(sel)
	}
	r.route, r.Op = rt, rt.Name
	return rt, nil
}

// answer is a typed answer of status with room for n headers: setting
// them allocates once.
func answer(status, n int) server.Response {
	return server.Response{Status: status, Header: make([]server.HeaderField, 0, n)}
}

// setETag sets ETag and Last-Modified.
func setETag(resp *server.Response, etag string, modified time.Time) {
	resp.Set("Etag", etag)
	resp.Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
}

// setMetadata sets an x-ms-meta-{name} header for each entry of meta,
// the name in the case it was stored in, as wire.WriteMetadata writes
// them (not canonicalised: Response.Set would).
func setMetadata(resp *server.Response, meta map[string]string) {
	for k, v := range meta {
		resp.Header = append(resp.Header, server.HeaderField{Name: wire.MetaPrefix + k, Value: v})
	}
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

// parseBoolHeader reads the boolean header key (canonical form, so the
// lookup makes no copy); name is how errors name it.
func parseBoolHeader(h http.Header, key, name string) (bool, error) {
	v := h.Get(key)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, azerr.InvalidHeader(name, v)
	}
	return b, nil
}

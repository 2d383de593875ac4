// Package blobrest is the Blob service's REST front end: the route table
// (routes.go), the parsing of requests into the typed inputs of the
// internal/blob domain, SAS and anonymous authorization, batch, and the
// XML and header rendering of its outputs. Copies from the File service
// reach the domain through the file peer (xcopy.go).
package blobrest

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
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

// Service serves the Blob REST API (a server.AzureHandler and
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

// blobName is a blob name as Azure keeps it: each '\\' is a '/'.
func blobName(name string) string { return strings.ReplaceAll(name, "\\", "/") }

// answer is a typed answer of status with room for n headers: setting
// them allocates once.
func answer(status, n int) server.Response {
	return server.Response{Status: status, Header: make([]server.HeaderField, 0, n)}
}

// setETag sets ETag and Last-Modified.
func setETag(resp *server.Response, etag string, modified time.Time) {
	resp.Set("Etag", etag)
	resp.Set("Last-Modified", wire.FormatHTTPDate(modified))
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
	if te := wire.Field(r.Header, "Transfer-Encoding"); te != "" {
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

// handler is one REST operation: a method of Service.
type handler = func(s *Service, r *req) (server.Response, error)

// route is one entry of the Blob route table.
type route = server.Route[handler]

// The resource levels of a Blob URL: /{account}, /{account}/{container},
// /{account}/{container}/{blob}.
const (
	lAccount server.Level = 1 << iota
	lContainer
	lBlob
	lAll = lAccount | lContainer | lBlob
)

// Route flags.
const (
	// fOnSnapshot: a PUT allowed on a blob snapshot (?snapshot=); every
	// other PUT or POST there is refused (400 InvalidQueryParameterValue).
	fOnSnapshot uint32 = 1 << iota
	// fSASAtLevel: the SAS rule's resource type is the level the URL
	// addresses (Get Account Information takes any SAS valid for it).
	fSASAtLevel
	// fPublicBlob: an anonymous request may call it when the container's
	// public access level is "blob" or "container"; fPublicContainer:
	// when it is "container" (Manage anonymous read access to containers
	// and blobs, "Features available to anonymous users": Get Blob, Get
	// Blob Properties, Get Blob Metadata, Get Block List and Get Page
	// Ranges for both levels; Get Container Properties, Get Container
	// Metadata and List Blobs for full public read access only).
	fPublicBlob
	fPublicContainer
	// fBatchable: a Blob Batch may carry it as a sub-request (Blob
	// Batch: "two types of subrequests: Set Blob Tier for block blobs
	// and Delete Blob"), all of one operation.
	fBatchable
	// fOnVersion: a PUT allowed on a blob version (?versionid=); every
	// other PUT or POST there is refused (versions.go).
	fOnVersion
	// fNoCPK: the operation refuses a customer-provided key (Copy Blob:
	// errCPKCopy).
	fNoCPK
)

const (
	hCopySource  = "x-ms-copy-source"
	hBlobType    = "x-ms-blob-type"
	hLeaseAction = "x-ms-lease-action"
)

// checkMD5 verifies a Content-MD5 header against a digest computed here.
func checkMD5(h http.Header, got []byte) error {
	v := h.Get("Content-Md5")
	if v == "" {
		return nil
	}
	want, err := wire.ParseContentMD5(v)
	if err != nil {
		return err
	}
	if !bytes.Equal(want, got) {
		return azerr.New(azerr.MD5Mismatch).With("UserSpecifiedMd5", v).With("ServerCalculatedMd5", base64.StdEncoding.EncodeToString(got))
	}
	return nil
}

func md5Sum(b []byte) []byte {
	sum := md5.Sum(b)
	return sum[:]
}

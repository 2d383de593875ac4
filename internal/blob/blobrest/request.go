package blobrest

import (
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// The HTTP side of the domain inputs: what every handler reads from a
// request to address a blob and state its access conditions.

// call is the request's time for the domain call, and its caller (see
// caller; nil unless the request carries a bearer token).
func (r *req) call() blob.Call {
	return blob.Call{Now: r.Now, Caller: r.caller(), CPK: r.cpk, RequestID: r.ID, ClientRequestID: wire.Field(r.Header, "X-Ms-Client-Request-Id")}
}

// ref is the blob (or snapshot) the request addresses.
func (r *req) ref() blob.BlobRef {
	return blob.BlobRef{Account: r.Account, Container: r.container, Blob: r.name, Snapshot: r.snapshot, VersionID: r.versionID}
}

// containerRef is the container the request addresses.
func (r *req) containerRef() blob.ContainerRef {
	return blob.ContainerRef{Account: r.Account, Container: r.container}
}

// access is the request's access conditions: conds (parsed by the
// caller, which reports their errors first), x-ms-if-tags and
// x-ms-lease-id.
func (r *req) access(conds cond.Conditions) blob.Access {
	return blob.Access{Cond: conds, IfTags: ifTagsHeader(r.Header), LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id")}
}

// readAccess is access for the reads, which report conditions that do
// not parse only once the blob is found (Access.checkRead).
func (r *req) readAccess() blob.Access {
	conds, err := cond.Parse(r.Header)
	a := r.access(conds)
	a.CondErr = err
	return a
}

// ifTagsHeader parses x-ms-if-tags. A malformed expression is 400
// InvalidHeaderValue, answered where the condition is evaluated.
func ifTagsHeader(h http.Header) blob.TagCondition {
	v := h.Get("X-Ms-If-Tags")
	if v == "" {
		return blob.TagCondition{}
	}
	e, err := blobtags.ParseCondition(v)
	if err != nil {
		return blob.BadTagCondition(azerr.Newf(azerr.InvalidHeaderValue, "%s", err.Error()).With("HeaderName", "x-ms-if-tags").With("HeaderValue", v))
	}
	return blob.NewTagCondition(e)
}

// createOnly reports whether the request's SAS grants create (c) but
// not write (w): "Create (c): Write a new blob, snapshot a blob, or copy
// a blob to a new blob" (Create a service SAS), and users "can create
// new blobs or files, but may not overwrite existing blobs or files"
// (Create an account SAS). The write refuses, in its transaction, to
// replace an existing blob (beginReplace), so the blob cannot appear
// between check and write.
func (r *req) createOnly() bool {
	return r.sas != nil && strings.IndexByte(r.sas.Permissions, 'w') < 0
}

// requestTags reads x-ms-tags.
func requestTags(r *req) (blobtags.Tags, error) {
	return blobtags.ParseHeader(wire.Field(r.Header, "X-Ms-Tags"))
}

package blobrest

import (
	"net/url"
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Blob versioning's REST surface (the domain is internal/blob,
// domain_versions.go): the versionid= query parameter, x-ms-version-id
// and x-ms-is-current-version.

// checkVersionTarget refuses a malformed versionid= and a write addressed
// to a version other than those a version takes (Set Blob Tags, Set Blob
// Tier: fOnVersion), as a write to a snapshot is refused: previous
// versions are immutable.
func checkVersionTarget(r *req, m server.Method, rt *route) error {
	if r.versionID == "" {
		return nil
	}
	bad := azerr.Newf(azerr.InvalidQueryParameterValue, "Value for one of the query parameters specified in the request URI is invalid.").
		With("QueryParameterName", "versionid").With("QueryParameterValue", r.versionID)
	if _, err := wire.ParseSnapshot(r.versionID); err != nil {
		return bad
	}
	if r.snapshot != "" {
		return bad
	}
	if m&(server.PUT|server.POST) != 0 && (rt == nil || rt.Flags&fOnVersion == 0) {
		return azerr.Newf(azerr.InvalidQueryParameterValue, "Cannot perform this operation on a blob version.").
			With("QueryParameterName", "versionid").With("QueryParameterValue", r.versionID)
	}
	return nil
}

// versionSource is the version id of a copy source URL (its versionid
// parameter, checked by copySource), "" for none or with a snapshot.
func versionSource(r *req, snap string) string {
	if snap != "" {
		return ""
	}
	u, err := url.Parse(wire.Field(r.Header, "X-Ms-Copy-Source"))
	if err != nil {
		return ""
	}
	return u.Query().Get("versionid")
}

// setVersionID sets x-ms-version-id when the write made a version.
func setVersionID(resp *server.Response, id string) {
	if id != "" {
		resp.Set("X-Ms-Version-Id", id)
	}
}

// writeVersion sets a read's x-ms-version-id and x-ms-is-current-version
// (a blob written with versioning on has an id; a snapshot reports none).
func writeVersion(h *server.Response, p *blob.BlobProperties) {
	if p.VersionID == "" {
		return
	}
	h.Set("X-Ms-Version-Id", p.VersionID)
	h.Set("X-Ms-Is-Current-Version", strconv.FormatBool(p.IsCurrentVersion))
}

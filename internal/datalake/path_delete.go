package datalake

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// deletePath is Path - Delete
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/path/delete):
// 200. A non-empty directory needs recursive=true (409
// DirectoryNotEmpty); the conditions apply to the path. The path and
// everything under it become unreachable in one transaction (ns.Delete
// detaches the subtree; the collector reclaims it), so the answer never
// carries a continuation: a paginated delete is done in its first call.
// A file with snapshots is 409 SnapshotsPresent (blob.RefuseSnapshots);
// a directory goes with the snapshots of the files below it.
// x-ms-delete-type-permanent says whether the path is gone for good
// ("true") or soft-deleted ("false", with its x-ms-deletion-id for Path
// - Undelete), as Azure answers (azure-sdk-for-js recordings
// "undelete file and directory - recreate and delete path and undelete
// the path twice" and "append with acquire lease").
func (s *Service) deletePath(r *req) (server.Response, error) {
	ans := &answer{}
	recursive, err := parseBool(r, "recursive", false)
	if err != nil {
		return server.Response{}, err
	}
	if _, err := parseBool(r, "paginated", false); err != nil {
		return server.Response{}, err
	}
	c, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	if !s.hier(r.Account) {
		return s.deletePathFlat(r, recursive, c)
	}
	in := ns.DeleteInput{Path: r.path, Recursive: recursive, Cond: c, LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id"), Caller: r.caller()}
	out, err := s.blob.DeletePath(r.Context(), blob.DeletePathInput{Call: r.callAs(), FS: r.fsOf(), Delete: in})
	if err != nil {
		return server.Response{}, nsErr(err)
	}
	h := ans
	if out.DeletionID != "" {
		h.Set("X-Ms-Delete-Type-Permanent", "false")
		h.Set("X-Ms-Deletion-Id", out.DeletionID)
	} else {
		h.Set("X-Ms-Delete-Type-Permanent", "true")
	}
	h.Set("Content-Length", "0")
	return ans.done(http.StatusOK)
}

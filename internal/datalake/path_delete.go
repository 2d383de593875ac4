package datalake

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/dfs/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// deletePath is Path - Delete
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/path/delete):
// 200. A non-empty directory needs recursive=true (409
// DirectoryNotEmpty); the conditions apply to the path. The path and
// everything under it become unreachable in one transaction (ns.Delete
// detaches the subtree; the collector reclaims it), so the answer never
// carries a continuation: a paginated delete is done in its first call.
func (s *Service) deletePath(w http.ResponseWriter, r *req) error {
	recursive, err := parseBool(r, "recursive", false)
	if err != nil {
		return err
	}
	if _, err := parseBool(r, "paginated", false); err != nil {
		return err
	}
	c, err := cond.Parse(r.Header)
	if err != nil {
		return err
	}
	if !s.hier(r.Account) {
		return s.deletePathFlat(w, r, recursive, c)
	}
	in := ns.DeleteInput{Path: r.path, Recursive: recursive, Cond: c, LeaseID: r.Header.Get("x-ms-lease-id"), Caller: r.caller()}
	err = s.store.Update(r.Context(), func(tx kv.Tx) error {
		_, err := s.ns.Delete(tx, r.fsOf(), in)
		return err
	})
	if err != nil {
		return nsErr(err)
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

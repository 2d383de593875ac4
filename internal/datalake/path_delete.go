package datalake

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
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
// A file with snapshots is 409 SnapshotsPresent (blob.RefuseSnapshots);
// a directory goes with the snapshots of the files below it.
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
		retain, err := blob.DeleteRetention(tx, r.Account)
		if err != nil {
			return err
		}
		in.Retain = retain
		in.Vet = blob.RefuseSnapshots(tx, r.Account, "file")
		_, err = s.ns.Delete(tx, r.fsOf(), in)
		return err
	})
	if err != nil {
		return nsErr(err)
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

// undeletePath is Path - Undelete: PUT ?comp=undelete with
// x-ms-undelete-source "?deletionid={id}" (what the C++ and Python
// datalake SDKs send for UndeletePath; a path before the "?" must name
// the request's path) restores the soft-deleted path of that deletion id
// at the request's path (ns.Undelete): 200 with x-ms-resource-type. 404
// PathNotFound for a deletion that is not retained or a parent that does
// not exist, 409 PathAlreadyExists when the path exists again.
func (s *Service) undeletePath(w http.ResponseWriter, r *req) error {
	id, err := parseUndeleteSource(r.Header.Get("x-ms-undelete-source"), r.filesystem, r.path)
	if err != nil {
		return err
	}
	var n *ns.Node
	err = s.store.Update(r.Context(), func(tx kv.Tx) error {
		var err error
		n, err = s.ns.Undelete(tx, r.fsOf(), r.path, id, r.caller())
		return err
	})
	if err != nil {
		return nsErr(err)
	}
	typ := "file"
	if n.Dir {
		typ = "directory"
	}
	w.Header().Set("x-ms-resource-type", typ)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

// parseUndeleteSource reads x-ms-undelete-source: an optional path (the
// request's, alone or after its filesystem, with or without a leading
// "/", URL-encoded or not), then "?deletionid=" and the id.
func parseUndeleteSource(v, filesystem, path string) (string, error) {
	bad := azerr.InvalidHeader("x-ms-undelete-source", v)
	src, query, ok := strings.Cut(v, "?")
	if !ok {
		return "", bad
	}
	q, err := url.ParseQuery(query)
	id := q.Get("deletionid")
	if err != nil || id == "" {
		return "", bad
	}
	if src != "" {
		if u, err := url.PathUnescape(src); err == nil {
			src = u
		}
		src = strings.TrimPrefix(src, "/")
		if src != path && src != filesystem+"/"+path {
			return "", bad
		}
	}
	return id, nil
}

package datalake

import (
	"unicode/utf8"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
)

// checkNames checks the names every dfs request may carry, before its
// handler runs:
//   - its filesystem and path (and Path - List's directory),
//     percent-decoded, must be UTF-8 (%FF, %C3%28 are not): else 400
//     InvalidResourceName, as the Blob service refuses such a blob name
//     (wire.ValidBlobName), so no path operation stores, looks up or
//     answers a name no JSON body or x-ms-continuation can carry. (The
//     rules of a path being created or moved, its length and depth, are
//     the namespace's: ns.CheckNewPath.)
//   - x-ms-owner and x-ms-group (Path Create, setAccessControl) name an
//     object id or user principal name, so at most acl.MaxIDLen
//     characters, as the ids of x-ms-acl: else 400 InvalidHeaderValue
//     naming the header, instead of a value of any size stored in the
//     path's record and sent back with every read.
func checkNames(r *req) error {
	if !utf8.ValidString(r.filesystem) || !utf8.ValidString(r.path) || !utf8.ValidString(r.q.Get("directory")) {
		return azerr.New(azerr.InvalidResourceName)
	}
	for _, h := range []string{"x-ms-owner", "x-ms-group"} {
		if v := r.Header.Get(h); len(v) > acl.MaxIDLen {
			return azerr.InvalidHeader(h, v)
		}
	}
	return nil
}

package datalake

import (
	"unicode/utf8"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// checkUTF8 refuses a request whose filesystem or path (or Path - List's
// directory), percent-decoded, is not UTF-8 (%FF, %C3%28): 400 InvalidResourceName, as the Blob
// service refuses such a blob name (wire.ValidBlobName), on every Data
// Lake operation, so no path operation stores, looks up or answers a
// name no JSON body or x-ms-continuation can carry. (The name rules of
// a path being created or moved, its length and depth, are the
// namespace's: ns.CheckNewPath.)
func checkUTF8(r *req) error {
	if !utf8.ValidString(r.filesystem) || !utf8.ValidString(r.path) || !utf8.ValidString(r.q.Get("directory")) {
		return azerr.New(azerr.InvalidResourceName)
	}
	return nil
}

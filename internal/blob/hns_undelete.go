package blob

import (
	"net/url"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// ParseUndeleteSource reads x-ms-undelete-source: an optional path (the
// request's, alone or after its container, with or without a leading
// "/", URL-encoded or not), then "?deletionid=" and the id; anything
// else is 400 InvalidHeaderValue.
func ParseUndeleteSource(v, container, path string) (string, error) {
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
		if src != path && src != container+"/"+path {
			return "", bad
		}
	}
	return id, nil
}

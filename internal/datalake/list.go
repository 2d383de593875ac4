package datalake

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// pathJSON is one path of Path - List's body. Azure sends numbers and
// booleans as strings ("contentLength":"0", "isDirectory":"true"), and
// isDirectory only for directories; times are RFC 1123 (lastModified)
// and Windows file times (creationTime, expiryTime, "0" for none), as
// the azdatalake SDK's generated Path model reads them.
type pathJSON struct {
	Name          string `json:"name"`
	IsDirectory   string `json:"isDirectory,omitempty"`
	ContentLength string `json:"contentLength"`
	LastModified  string `json:"lastModified"`
	CreationTime  string `json:"creationTime"`
	ExpiryTime    string `json:"expiryTime"`
	ETag          string `json:"etag"`
	Owner         string `json:"owner"`
	Group         string `json:"group"`
	Permissions   string `json:"permissions"`
}

func toPathJSON(p string, n *ns.Node) pathJSON {
	j := pathJSON{Name: p, ContentLength: strconv.FormatInt(n.Size, 10), LastModified: wire.FormatHTTPDate(n.Modified),
		CreationTime: fileTime(n.Created), ExpiryTime: fileTime(n.Expiry), ETag: unquote(n.ETag), Owner: n.Owner, Group: n.Group, Permissions: n.Permissions()}
	if n.Dir {
		j.IsDirectory, j.ContentLength = "true", "0"
	}
	return j
}

// parseBool reads a boolean query parameter: absent is def, anything but
// true or false (any case) is 400 InvalidQueryParameterValue.
func parseBool(r *req, name string, def bool) (bool, error) {
	switch v := r.q.Get(name); {
	case v == "":
		return def, nil
	case strings.EqualFold(v, "true"):
		return true, nil
	case strings.EqualFold(v, "false"):
		return false, nil
	default:
		return false, azerr.InvalidQuery(name, v)
	}
}

// listPaths is Path - List
// (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/path/list):
// the paths under directory (the root when absent), one level or, with
// recursive=true, the whole subtree, depth first; at most maxResults per
// page, the next page's token in x-ms-continuation. recursive is
// required (400 MissingRequiredQueryParameter). A directory that does
// not exist is 404 PathNotFound; a file lists as itself (ns.List).
// beginFrom (the SDKs' StartFrom, sent by that name on every page by
// azure-storage-file-datalake's list_paths and Java's FileSystemsImpl)
// is a path relative to directory the listing starts from, inclusive, in
// the listing's order; a one-level listing takes one name only (400
// InvalidQueryParameterValue otherwise). upn=true asks for user
// principal names instead of object ids: owners and groups are named
// through the directory learned from bearer tokens (blob.Service.ListPaths).
func (s *Service) listPaths(r *req) (server.Response, error) {
	ans := &answer{}
	if !r.q.Has("recursive") {
		return server.Response{}, azerr.New(azerr.MissingRequiredQueryParameter).With("QueryParameterName", "recursive")
	}
	recursive, err := parseBool(r, "recursive", false)
	if err != nil {
		return server.Response{}, err
	}
	upn, err := parseBool(r, "upn", false)
	if err != nil {
		return server.Response{}, err
	}
	n, err := parseMaxResults(r)
	if err != nil {
		return server.Response{}, err
	}
	if !s.hier(r.Account) {
		return s.listPathsFlat(r, recursive, n)
	}
	in := ns.ListInput{Dir: r.q.Get("directory"), Recursive: recursive, MaxResults: n, Continuation: r.q.Get("continuation"), From: r.q.Get("beginFrom"), Caller: r.caller()}
	out, err := s.blob.ListPaths(r.Context(), blob.ListPathsInput{FS: r.fsOf(), List: in, UPN: upn})
	if err != nil {
		return server.Response{}, nsErr(err)
	}
	body := struct {
		Paths []pathJSON `json:"paths"`
	}{make([]pathJSON, 0, len(out.Paths))}
	for _, p := range out.Paths {
		j := toPathJSON(p.Path, p.Node)
		j.Owner, j.Group = p.Owner, p.Group
		body.Paths = append(body.Paths, j)
	}
	if out.Continuation != "" {
		ans.Set("X-Ms-Continuation", out.Continuation)
	}
	return ans.json(http.StatusOK, body)
}

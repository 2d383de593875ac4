package datalake

import (
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob/blobrest"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// The resource levels of a dfs URL: /{account}, /{account}/{filesystem},
// /{account}/{filesystem}/{path}.
const (
	lAccount server.Level = 1 << iota
	lFilesystem
	lPath
)

// dfsPaths splits a dfs URL into its level and names; slashes around a
// path are not part of it ("fs/dir/" is the directory "dir").
var dfsPaths = &server.Paths{Account: lAccount, First: lFilesystem, Rest: lPath, Trim: true}

// Route flags.
const (
	// fHierarchical: the operation needs a hierarchical namespace; on a
	// flat account it is 400 HierarchicalNamespaceNotEnabled. (Path
	// Create, List, Delete and getStatus serve flat accounts over their
	// blobs: flat.go.)
	fHierarchical uint32 = 1 << iota
	// fACLLetters: a SAS needs p for the permission and ACL headers the
	// request sends and o for the owner and group ones (checkACLLetters).
	fACLLetters
)

// dfsRoutes is the dfs endpoint's route table (Data Lake Storage Gen2
// REST API,
// https://learn.microsoft.com/en-us/rest/api/storageservices/data-lake-storage-gen2).
// Only requests IsDFS accepts reach it; the rest are the Blob service's.
var dfsRoutes *server.Routes[handler]

// routeList is dfsRoutes' entries.
var routeList []route

func init() {
	const (
		get, head, del, patch, put = server.GET, server.HEAD, server.DELETE, server.PATCH, server.PUT
		fsOrPath                   = lFilesystem | lPath
		hier                       = fHierarchical
	)
	routeList = []route{
		// Filesystem - List (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/filesystem/list).
		{Methods: get, Levels: lAccount, Resource: "account", Name: "listFilesystems", Handler: (*Service).listFilesystems, SAS: sasList},
		// Filesystem - Create, Delete, Get Properties, Set Properties.
		// Path - List (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/path/list).
		{Methods: get, Levels: lFilesystem, Resource: "filesystem", Name: "listPaths", Handler: (*Service).listPaths, SAS: sasPaths},
		{Methods: put, Levels: lFilesystem, Resource: "filesystem", Name: "createFilesystem", Handler: (*Service).createFilesystem, SAS: sasFSCreate},
		{Methods: del, Levels: lFilesystem, Resource: "filesystem", Name: "deleteFilesystem", Handler: (*Service).deleteFilesystem, SAS: sasFSDelete},
		{Methods: head, Levels: lFilesystem, Resource: "filesystem", Name: "getFilesystemProperties", Handler: (*Service).getFilesystemProperties, SAS: sasFSRead},
		{Methods: patch, Levels: lFilesystem, Resource: "filesystem", Name: "setFilesystemProperties", Handler: (*Service).setFilesystemProperties, SAS: sasFSWrite},
		// Path - Create: a rename (x-ms-rename-source) whatever the
		// resource, else a file or a directory.
		{Methods: put, Levels: lPath, Headers: []server.Cond{server.Has("x-ms-rename-source")}, Name: "renamePath", Handler: (*Service).renamePath, SAS: sasMove, Flags: hier},
		{Methods: put, Levels: lPath, Resource: "file", Name: "createPath", Handler: (*Service).createPath, SAS: sasCreate},
		{Methods: put, Levels: lPath, Resource: "directory", Name: "createPath", Handler: (*Service).createPath, SAS: sasCreate},
		// Path - Delete, told from Delete Blob by its parameters.
		{Methods: del, Levels: lPath, Query: []server.Cond{server.Has("recursive")}, Name: "deletePath", Handler: (*Service).deletePath, SAS: sasDelete},
		{Methods: del, Levels: lPath, Query: []server.Cond{server.Has("paginated")}, Name: "deletePath", Handler: (*Service).deletePath, SAS: sasDelete},
		{Methods: del, Levels: lPath, Query: []server.Cond{server.Has("continuation")}, Name: "deletePath", Handler: (*Service).deletePath, SAS: sasDelete},
		// Path - Get Properties' actions; on the filesystem URL, of its
		// root directory.
		{Methods: head, Levels: fsOrPath, Action: "getStatus", Name: "getPathStatus", Handler: (*Service).getPathStatus, SAS: sasStatus},
		{Methods: head, Levels: fsOrPath, Action: "getAccessControl", Name: "getPathAccessControl", Handler: (*Service).getPathStatus, SAS: sasGetACL, Flags: hier},
		// Path - Update's access control actions.
		{Methods: patch, Levels: fsOrPath, Action: "setAccessControl", Name: "setAccessControl", Handler: (*Service).setAccessControl, SAS: sasSetACL, Flags: hier | fACLLetters},
		{Methods: patch, Levels: fsOrPath, Action: "setAccessControlRecursive", Name: "setAccessControlRecursive", Handler: (*Service).setAccessControlRecursive, SAS: sasSetACL, Flags: hier | fACLLetters},
		// Path - Update's content actions (path_content.go).
		{Methods: patch, Levels: lPath, Action: "append", Name: "appendData", Handler: (*Service).appendData, SAS: sasWrite, Flags: hier, Structured: server.StructuredRequest},
		{Methods: patch, Levels: lPath, Action: "flush", Name: "flushData", Handler: (*Service).flushData, SAS: sasWrite, Flags: hier},
		// Path - Lease (path_lease.go): POST without comp.
		{Methods: server.POST, Levels: lPath, Name: "leasePath", Handler: (*Service).leasePath, SAS: sasLease, Flags: hier},
	}
	dfsRoutes = server.NewRoutes(routeList)
}

// Operations lists the dfs operations, for metrics.
func Operations() []string { return dfsRoutes.Names() }

// ServeAzure routes a request of the dfs endpoint: an operation of the
// Data Lake Storage Gen2 API to its handler (dfsDoor), anything else to
// the Blob service.
func (s *Service) ServeAzure(w http.ResponseWriter, sr *server.Request) error {
	if !IsDFS(sr.Request) {
		return s.rest.ServeAzure(w, sr)
	}
	return dfsDoor.Serve(s, w, sr)
}

// dfsDoor is the dfs endpoint's part of the dispatch. The dfs API takes
// no anonymous request, refused once routed (a request no operation
// takes keeps its routing error); the extras are the path names, the
// hierarchical namespace an operation needs and the customer-provided
// key.
var dfsDoor = &server.Door[*Service, *req]{
	Paths: dfsPaths,
	Parse: newReq,
	Route: (*Service).route,
	Target: func(s *Service, r *req) (server.SASTarget, auth.PolicyLookup) {
		return server.SASTarget{Container: r.filesystem, Path: r.path}, s.policies(r)
	},
	AuthorizeSAS: (*Service).authorizeSAS,
	Anonymous: func(*Service, *req) error {
		return azerr.New(azerr.NoAuthenticationInformation)
	},
	Extras: (*Service).extras,
}

// extras checks an authorized dfs request's names and whether its
// operation needs a hierarchical namespace, and reads its
// customer-provided key.
func (s *Service) extras(w http.ResponseWriter, r *req) (http.ResponseWriter, error) {
	if err := checkNames(r); err != nil {
		return nil, err
	}
	if r.route.Flags&fHierarchical != 0 && !s.hier(r.Account) {
		return nil, azerr.New(azerr.HierarchicalNamespaceNotEnabled)
	}
	var err error
	if r.cpk, err = blobrest.ParseCPK(r.Header, r.HTTPS); err != nil {
		return nil, err
	}
	return w, nil
}

// newReq reads what routing needs from sr: the level, filesystem and
// path dfsPaths found.
func newReq(sr *server.Request, p server.Path) *req {
	return &req{Request: sr, q: sr.URL.Query(), level: p.Level, filesystem: p.First, path: p.Rest}
}

// route finds r's operation. A dfs request no entry matches is 400
// InvalidQueryParameterValue naming the resource or action it gave, or
// 405 UnsupportedHttpVerb.
func (s *Service) route(r *req) (*route, error) {
	sel := dfsRoutes.Selectors(r.q)
	rt := dfsRoutes.Match(server.MethodOf(r.method()), r.level, &sel, r.Header, r.q)
	if rt == nil {
		switch {
		case sel.Action != "":
			return nil, azerr.InvalidQuery("action", sel.Action)
		case sel.Resource != "":
			return nil, azerr.InvalidQuery("resource", sel.Resource)
		}
		return nil, azerr.New(azerr.UnsupportedHTTPVerb)
	}
	r.route, r.Op = rt, rt.Name
	return rt, nil
}

// method is the HTTP method that selects r's operation: PATCH for a PUT
// carrying X-HTTP-Method-Override: PATCH, the form in which Hadoop's ABFS
// driver sends Path Update (hadoop-azure AbfsDfsClient.append, flush and
// setAcl: its HttpURLConnection cannot send PATCH). Shared Key was
// checked by the middleware over the verb as sent.
func (r *req) method() string {
	if r.Method == http.MethodPut && strings.EqualFold(strings.TrimSpace(wire.Field(r.Header, "X-Http-Method-Override")), http.MethodPatch) {
		return http.MethodPatch
	}
	return r.Method
}

// authorizeSAS checks r's SAS against the route's rule and the
// filesystem's stored access policies (Shared Key and bearer tokens were
// verified by the middleware).
func (s *Service) authorizeSAS(r *req) error {
	rule, ok := r.route.Rule()
	eff, err := r.AuthorizeSAS(server.SASTarget{Container: r.filesystem, Path: r.path}, s.policies(r), rule, ok)
	if err != nil {
		return err
	}
	if r.route.Flags&fACLLetters != 0 {
		return checkACLLetters(eff, r)
	}
	return nil
}

// policies resolves signed identifiers in the stored access policies of
// r's filesystem (its container's ACL).
func (s *Service) policies(r *req) auth.PolicyLookup { return s.policiesOf(r, r.filesystem) }

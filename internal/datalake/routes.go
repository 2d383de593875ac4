package datalake

import (
	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// handler is one dfs operation: a method of Service.
type handler = func(s *Service, r *req) (server.Response, error)

// route is one entry of the dfs route table.
type route = server.Route[handler]

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

// SAS rules, as the Blob service's for the same resources (Create an
// account SAS, "Permissions by operation"; Create a service SAS,
// "Permissions for a directory, container, or blob"): a filesystem is a
// container, reached by an account SAS only.
var (
	sasFSCreate = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "cw", AccountOnly: true}
	sasFSRead   = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "r", AccountOnly: true}
	sasFSWrite  = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "w", AccountOnly: true}
	sasFSDelete = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "d", AccountOnly: true}
	sasList     = server.SASRule{Resource: auth.ServiceLevel, AnyOf: "l"}
	sasPaths    = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "l"}
	// Paths (Create a service SAS, "Permissions for a directory,
	// container, or blob": m moves, e reads access control, o and p
	// change owner, group, permissions and ACL).
	sasCreate = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "cw"}
	sasMove   = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "mw"}
	sasDelete = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "d"}
	sasStatus = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "r"}
	sasGetACL = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "re"}
	sasSetACL = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "op"}
	// Append and flush write a file's content: Add or Write.
	sasWrite = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "aw"}
	// A lease takes Write, as Lease Blob does.
	sasLease = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "w"}
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

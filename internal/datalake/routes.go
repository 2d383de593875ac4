package datalake

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// handler is one dfs operation: a method of Service.
type handler = func(s *Service, w http.ResponseWriter, r *req) error

// route is one entry of the dfs route table.
type route = server.Route[handler]

// The resource levels of a dfs URL: /{account}, /{account}/{filesystem},
// /{account}/{filesystem}/{path}.
const (
	lAccount server.Level = 1 << iota
	lFilesystem
	lPath
)

// Route flags.
const (
	// fHierarchical: the operation needs a hierarchical namespace; on a
	// flat account it is 400 HierarchicalNamespaceNotEnabled.
	fHierarchical uint32 = 1 << iota
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
	)
	routeList = []route{
		// Filesystem - List (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/filesystem/list).
		{Methods: get, Levels: lAccount, Resource: "account", Name: "listFilesystems", Handler: (*Service).listFilesystems, SAS: sasList},
		// Filesystem - Create, Delete, Get Properties, Set Properties.
		// Path - List (https://learn.microsoft.com/en-us/rest/api/storageservices/datalakestoragegen2/path/list).
		{Methods: get, Levels: lFilesystem, Resource: "filesystem", Name: "listPaths", Handler: (*Service).listPaths, SAS: sasPaths, Flags: fHierarchical},
		{Methods: put, Levels: lFilesystem, Resource: "filesystem", Name: "createFilesystem", Handler: (*Service).createFilesystem, SAS: sasFSCreate},
		{Methods: del, Levels: lFilesystem, Resource: "filesystem", Name: "deleteFilesystem", Handler: (*Service).deleteFilesystem, SAS: sasFSDelete},
		{Methods: head, Levels: lFilesystem, Resource: "filesystem", Name: "getFilesystemProperties", Handler: (*Service).getFilesystemProperties, SAS: sasFSRead},
		{Methods: patch, Levels: lFilesystem, Resource: "filesystem", Name: "setFilesystemProperties", Handler: (*Service).setFilesystemProperties, SAS: sasFSWrite},
	}
	dfsRoutes = server.NewRoutes(routeList)
}

// Operations lists the dfs operations, for metrics.
func Operations() []string { return dfsRoutes.Names() }

package filerest

import (
	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcpropsrest"
)

// handler is one REST operation: a method of Service.
type handler = func(s *Service, r *req) (server.Response, error)

// route is one entry of the File route table.
type route = server.Route[handler]

// The resource levels of a File URL: /{account}, /{account}/{share}
// (the share, or its root directory), /{account}/{share}/{path} (a
// directory or a file). restype tells share, directory and file apart.
const (
	lAccount server.Level = 1 << iota
	lShare
	lPath
)

// filePaths splits a File URL into its level and names.
var filePaths = &server.Paths{Account: lAccount, First: lShare, Rest: lPath}

// Route flags.
const (
	// fOnShareSnapshot: the operation may run against a share snapshot
	// (?sharesnapshot=); any other is refused (400
	// ShareSnapshotOperationNotSupported).
	fOnShareSnapshot uint32 = 1 << iota
	// fNoShareSnapshot: ?sharesnapshot= is ignored. Create Share
	// Snapshot of a share client bound to a snapshot is a snapshot of the
	// share (azfile TestShareCreateSnapshotNegativeSnapshotOfSnapshot,
	// recorded).
	fNoShareSnapshot
)

// SAS rules (Create a service SAS,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas:
// sr=s share, sr=f file; permissions r c w d l; Create an account SAS,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas:
// share operations are container level, directories and files object
// level; w creates shares as c does; the service properties are read and
// written with r and w at srt=s). Share operations other than listing its
// content take only an account SAS.
var (
	sasShareRead  = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "r", AccountOnly: true}
	sasShareWrite = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "w", AccountOnly: true}
	sasRead       = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "r"}
	sasCreate     = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "cw"}
	sasWrite      = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "w"}
	sasDelete     = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "d"}
	sasList       = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "l"}
)

// fileUnsupported lists the File operations Azure has and this server
// does not serve (yet), by restype/comp: each answers 501 NotImplemented
// naming it (server.NotSupported).
var fileUnsupported = server.Unsupported{}

// fileRoutes is the File service's route table (Azure Files REST API,
// https://learn.microsoft.com/en-us/rest/api/storageservices/file-service-rest-api),
// tried in order. Built in init, as the handlers reach the service that
// reads it.
//
// The entries carry no handle, share-mode or read-only rules: those
// belong to the domain operation a handler calls (file.fileOp, one value
// per operation in internal/file/domain.go), because SMB calls the same
// operations and must meet the same rules; a REST entry naming them would
// be a second description that could disagree with the domain's.
var fileRoutes *server.Routes[handler]

func init() {
	const (
		get, head, put, del = server.GET, server.HEAD, server.PUT, server.DELETE
		post                = server.POST
		star                = server.Any
		snap                = fOnShareSnapshot
	)
	copySource := []server.Cond{server.Has("x-ms-copy-source")}
	noCopySource := []server.Cond{server.Lacks("x-ms-copy-source")}
	fileRoutes = server.NewRoutes([]route{
		// Account.
		{Methods: get, Levels: lAccount, Restype: star, Comp: "list", Name: "listShares", Handler: (*Service).listShares,
			SAS: server.SASRule{Resource: auth.ServiceLevel, AnyOf: "l"}},
		{Methods: get, Levels: lAccount, Restype: "service", Comp: "properties", Name: "getServiceProperties", Handler: svcpropsrest.GetProperties[*Service, *req],
			SAS: server.SASRule{Resource: auth.ServiceLevel, AnyOf: "r", AccountOnly: true}},
		{Methods: put, Levels: lAccount, Restype: "service", Comp: "properties", Name: "setServiceProperties", Handler: svcpropsrest.SetProperties[*Service, *req],
			SAS: server.SASRule{Resource: auth.ServiceLevel, AnyOf: "w", AccountOnly: true}},
		// Get User Delegation Key on the File endpoint (from 2026-02-06),
		// for Azure Files user delegation SAS: bearer tokens only.
		{Methods: post, Levels: lAccount, Restype: "service", Comp: "userdelegationkey", Name: "getUserDelegationKey", Handler: (*Service).getUserDelegationKey, SharedKeyOnly: true, BearerOnly: true},

		// Share (restype=share).
		{Methods: put, Levels: lShare, Restype: "share", Name: "createShare", Handler: (*Service).createShare,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "cw", AccountOnly: true}},
		{Methods: get | head, Levels: lShare, Restype: "share", Name: "getShareProperties", Handler: (*Service).getShareProperties, SAS: sasShareRead, Flags: snap},
		{Methods: get | head, Levels: lShare, Restype: "share", Comp: "metadata", Name: "getShareProperties", Handler: (*Service).getShareProperties, SAS: sasShareRead, Flags: snap},
		// Restore Share: the share is created again, as Create Share
		// does (account SAS, c or w).
		{Methods: put, Levels: lShare, Restype: "share", Comp: "undelete", Name: "restoreShare", Handler: (*Service).restoreShare,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "cw", AccountOnly: true}, Flags: fNoShareSnapshot},
		// Deletes the snapshot itself.
		{Methods: del, Levels: lShare, Restype: "share", Name: "deleteShare", Handler: (*Service).deleteShare,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "d", AccountOnly: true}, Flags: snap},
		{Methods: put, Levels: lShare, Restype: "share", Comp: "metadata", Name: "setShareMetadata", Handler: (*Service).setShareMetadata, SAS: sasShareWrite},
		{Methods: put, Levels: lShare, Restype: "share", Comp: "properties", Name: "setShareProperties", Handler: (*Service).setShareProperties, SAS: sasShareWrite},
		{Methods: put, Levels: lShare, Restype: "share", Comp: "snapshot", Name: "snapshotShare", Handler: (*Service).snapshotShare, SAS: sasShareWrite, Flags: fNoShareSnapshot},
		// Share ACLs are Shared Key only (an account SAS does not reach
		// Get or Set Share ACL).
		{Methods: get | head, Levels: lShare, Restype: "share", Comp: "acl", Name: "getShareACL", Handler: (*Service).getShareACL, SharedKeyOnly: true},
		{Methods: put, Levels: lShare, Restype: "share", Comp: "acl", Name: "setShareACL", Handler: (*Service).setShareACL, SharedKeyOnly: true},
		{Methods: get, Levels: lShare, Restype: "share", Comp: "stats", Name: "getShareStats", Handler: (*Service).getShareStats, SAS: sasShareRead},
		{Methods: put, Levels: lShare, Restype: "share", Comp: "filepermission", Name: "createPermission", Handler: (*Service).createPermission,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "cw", AccountOnly: true}},
		{Methods: get, Levels: lShare, Restype: "share", Comp: "filepermission", Name: "getPermission", Handler: (*Service).getPermission, SAS: sasShareRead},
		// Leases the snapshot (Lease Share,
		// https://learn.microsoft.com/en-us/rest/api/storageservices/lease-share).
		{Methods: put, Levels: lShare, Restype: "share", Comp: "lease", Name: "leaseShare", Handler: (*Service).leaseShare, SAS: sasShareWrite, Flags: snap},

		// Directory (restype=directory; the share URL is its root).
		{Methods: put, Levels: lShare | lPath, Restype: "directory", Name: "createDirectory", Handler: (*Service).createDirectory, SAS: sasCreate},
		{Methods: get | head, Levels: lShare | lPath, Restype: "directory", Name: "getDirectoryProperties", Handler: (*Service).getDirectoryProperties, SAS: sasRead, Flags: snap},
		{Methods: get | head, Levels: lShare | lPath, Restype: "directory", Comp: "metadata", Name: "getDirectoryProperties", Handler: (*Service).getDirectoryProperties, SAS: sasRead, Flags: snap},
		{Methods: del, Levels: lShare | lPath, Restype: "directory", Name: "deleteDirectory", Handler: (*Service).deleteDirectory, SAS: sasDelete},
		{Methods: put, Levels: lShare | lPath, Restype: "directory", Comp: "properties", Name: "setDirectoryProperties", Handler: (*Service).setDirectoryProperties, SAS: sasWrite},
		{Methods: put, Levels: lShare | lPath, Restype: "directory", Comp: "metadata", Name: "setDirectoryMetadata", Handler: (*Service).setDirectoryMetadata, SAS: sasWrite},
		{Methods: get, Levels: lShare | lPath, Restype: "directory", Comp: "list", Name: "listFilesAndDirectories", Handler: (*Service).listFilesAndDirectories,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "l"}, Flags: snap},
		{Methods: get, Levels: lShare | lPath, Restype: "directory", Comp: "listhandles", Name: "listHandles", Handler: (*Service).listHandles, SAS: sasList, Flags: snap},
		{Methods: put, Levels: lShare | lPath, Restype: "directory", Comp: "forceclosehandles", Name: "forceCloseHandles", Handler: (*Service).forceCloseHandles, SAS: sasWrite},
		{Methods: put, Levels: lShare | lPath, Restype: "directory", Comp: "rename", Name: "renameDirectory", Handler: (*Service).renameDirectory, SAS: sasWrite},

		// Handles of the root directory, whose client sends no restype
		// (azfile DirectoryClient.ListHandles / ForceCloseHandles), or of
		// a file.
		{Methods: get, Levels: lShare | lPath, Comp: "listhandles", Name: "listHandles", Handler: (*Service).listHandles, SAS: sasList, Flags: snap},
		{Methods: put, Levels: lShare | lPath, Comp: "forceclosehandles", Name: "forceCloseHandles", Handler: (*Service).forceCloseHandles, SAS: sasWrite},

		// File (no restype).
		{Methods: put, Levels: lPath, Headers: copySource, Name: "copyFile", Handler: (*Service).copyFile, SAS: sasCreate},
		{Methods: put, Levels: lPath, Headers: noCopySource, Name: "createFile", Handler: (*Service).createFile, SAS: sasCreate},
		{Methods: get, Levels: lPath, Name: "getFile", Handler: (*Service).getFile, SAS: sasRead, Flags: snap, Structured: server.StructuredResponse},
		{Methods: head, Levels: lPath, Name: "getFileProperties", Handler: (*Service).getFileProperties, SAS: sasRead, Flags: snap},
		{Methods: get | head, Levels: lPath, Comp: "metadata", Name: "getFileProperties", Handler: (*Service).getFileProperties, SAS: sasRead, Flags: snap},
		{Methods: del, Levels: lPath, Name: "deleteFile", Handler: (*Service).deleteFile, SAS: sasDelete},
		{Methods: put, Levels: lPath, Comp: "properties", Name: "setFileProperties", Handler: (*Service).setFileProperties, SAS: sasWrite},
		{Methods: put, Levels: lPath, Comp: "metadata", Name: "setFileMetadata", Handler: (*Service).setFileMetadata, SAS: sasWrite},
		{Methods: put, Levels: lPath, Comp: "range", Headers: copySource, Name: "putRangeFromURL", Handler: (*Service).putRangeFromURL, SAS: sasWrite},
		{Methods: put, Levels: lPath, Comp: "range", Headers: noCopySource, Name: "putRange", Handler: (*Service).putRange, SAS: sasWrite, Structured: server.StructuredRequest},
		{Methods: get, Levels: lPath, Comp: "rangelist", Name: "listRanges", Handler: (*Service).listRanges, SAS: sasRead, Flags: snap},
		{Methods: put, Levels: lPath, Comp: "copy", Name: "abortCopyFile", Handler: (*Service).abortCopyFile, SAS: sasWrite},
		{Methods: put, Levels: lPath, Comp: "lease", Name: "leaseFile", Handler: (*Service).leaseFile, SAS: sasWrite},
		{Methods: put, Levels: lPath, Comp: "rename", Name: "renameFile", Handler: (*Service).renameFile, SAS: sasWrite},
	})
}

// Operations returns the File service's operation names (the metrics
// labels), each once.
func Operations() []string { return fileRoutes.Names() }

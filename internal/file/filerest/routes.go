package filerest

import (
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcpropsrest"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// filePaths splits a File URL into its level and names.
var filePaths = &server.Paths{Account: lAccount, First: lShare, Rest: lPath}

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

// ServeAzure routes a File REST request to its operation (fileDoor).
func (s *Service) ServeAzure(w http.ResponseWriter, sr *server.Request) error {
	return fileDoor.Serve(s, w, sr)
}

// fileDoor is the File front end's part of the dispatch: the File service
// has no anonymous access (no Anonymous); routing includes the checks
// that need no store (prepare), and a handler's error is answered in
// Azure's codes (Answer).
var fileDoor = &server.Door[*Service, *req]{
	Paths: filePaths,
	Parse: newReq,
	Route: (*Service).prepare,
	Target: func(s *Service, r *req) (server.SASTarget, auth.PolicyLookup) {
		return server.SASTarget{Container: r.share, Path: r.path}, s.policies(r, r.share)
	},
	AuthorizeSAS: (*Service).authorizeSAS,
	Answer:       Answer,
}

// newReq parses what routing needs from sr: the share and the path.
func newReq(sr *server.Request, p server.Path) *req {
	return &req{Request: sr, q: sr.URL.Query(), level: p.Level, share: p.First, path: p.Rest}
}

// prepare routes r and checks what needs no store: conditional headers
// (refused), the share name, the path and the share snapshot.
func (s *Service) prepare(r *req) (*route, error) {
	if err := checkConditions(r.Header); err != nil {
		return nil, err
	}
	rt, err := s.route(r)
	if err != nil {
		return nil, err
	}
	if r.share != "" {
		if err := wire.ValidShareName(r.share); err != nil {
			return nil, err
		}
	}
	if r.path != "" {
		allowDot := strings.EqualFold(wire.Field(r.Header, "X-Ms-Allow-Trailing-Dot"), "true")
		if r.comps, err = splitPath(r.path, allowDot); err != nil {
			return nil, err
		}
		r.path = strings.Join(r.comps, "/")
	}
	// Create Share Snapshot ignores ?sharesnapshot= (fNoShareSnapshot).
	if v := r.q.Get("sharesnapshot"); v != "" && rt.Flags&fNoShareSnapshot == 0 {
		t, err := wire.ParseSnapshot(v)
		if err != nil {
			return nil, azerr.InvalidQuery("sharesnapshot", v)
		}
		r.snap = wire.FormatISO7(t)
		if rt.Flags&fOnShareSnapshot == 0 {
			return nil, azerr.New(azerr.ShareSnapshotOperationNotSupported)
		}
	}
	return rt, nil
}

// route finds r's operation in fileRoutes and records it on r. A request
// no entry matches keeps the error of its URL: an unknown restype, a
// share or root directory URL without one.
func (s *Service) route(r *req) (*route, error) {
	sel := fileRoutes.Selectors(r.q)
	level := r.level
	rt := fileRoutes.Match(server.MethodOf(r.Method), level, &sel, r.Header, r.q)
	if rt == nil {
		restype := sel.Restype
		switch {
		case level == lAccount:
			if restype == "share" {
				return nil, azerr.InvalidQuery("restype", restype)
			}
		case level == lShare && restype == "share", restype == "directory":
		case restype != "":
			return nil, azerr.InvalidQuery("restype", restype)
		case level == lShare:
			return nil, azerr.New(azerr.InvalidURI)
		}
		return nil, fileUnsupported.NoRoute(sel)
	}
	r.route, r.Op = rt, rt.Name
	return rt, nil
}

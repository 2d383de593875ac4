package file

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// op is one REST operation handler.
type op func(w http.ResponseWriter, r *req) error

// req is a parsed File request.
type req struct {
	*server.Request
	q      url.Values
	share  string
	path   string   // share-relative path, "" for the share (root directory)
	comps  []string // path split on "/"
	snap   string   // ?sharesnapshot=, normalized; "" for the live share
	opName string   // the routed operation (see sasRules)
	sas    *auth.SAS
}

// ServeAzure routes a File REST request to its operation.
func (s *Service) ServeAzure(w http.ResponseWriter, sr *server.Request) error {
	if !sr.Authenticated && sr.SAS == nil {
		// The File service has no anonymous access.
		return azerr.New(azerr.NoAuthenticationInformation)
	}
	r := &req{Request: sr, q: sr.URL.Query()}
	// The path is /{account}[/{share}[/{path}]]; the middleware took the
	// account.
	p := strings.TrimPrefix(sr.URL.Path, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		rest := p[i+1:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			r.share, r.path = rest[:j], rest[j+1:]
		} else {
			r.share = rest
		}
	}
	o, err := s.prepare(r)
	if err != nil {
		// A forged or expired SAS is answered as such, whatever else is
		// wrong with the request.
		return r.SASFirst(err, server.SASTarget{Container: r.share, Path: r.path}, s.policies(r, r.share))
	}
	if r.SAS != nil {
		if err := s.authorizeSAS(r); err != nil {
			return err
		}
	}
	return o(w, r)
}

// prepare routes r and checks what needs no store: conditional headers
// (refused), the share name, the path and the share snapshot.
func (s *Service) prepare(r *req) (op, error) {
	if err := checkConditions(r.Header); err != nil {
		return nil, err
	}
	o, err := s.route(r)
	if err != nil {
		return nil, err
	}
	if r.share != "" {
		if err := wire.ValidShareName(r.share); err != nil {
			return nil, err
		}
	}
	if r.path != "" {
		allowDot := strings.EqualFold(r.Header.Get("x-ms-allow-trailing-dot"), "true")
		if r.comps, err = splitPath(r.path, allowDot); err != nil {
			return nil, err
		}
		r.path = strings.Join(r.comps, "/")
	}
	// Create Share Snapshot ignores ?sharesnapshot= (a snapshot of a share
	// client bound to a snapshot is a snapshot of the share) (azfile
	// TestShareCreateSnapshotNegativeSnapshotOfSnapshot, recorded).
	if v := r.q.Get("sharesnapshot"); v != "" && r.opName != "snapshotShare" {
		t, err := wire.ParseSnapshot(v)
		if err != nil {
			return nil, azerr.InvalidQuery("sharesnapshot", v)
		}
		r.snap = wire.FormatISO7(t)
		if !readOnlyOps[r.opName] {
			return nil, azerr.New(azerr.ShareSnapshotOperationNotSupported)
		}
	}
	return o, nil
}

// checkConditions refuses the HTTP conditional headers: File REST has no
// optimistic concurrency (Azure Files error codes,
// https://learn.microsoft.com/en-us/rest/api/storageservices/file-service-error-codes,
// ConditionHeadersNotSupported).
func checkConditions(h http.Header) error {
	for _, name := range []string{"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"} {
		if h.Get(name) != "" {
			return azerr.New(azerr.ConditionHeadersNotSupported)
		}
	}
	return nil
}

// readOnlyOps may run against a share snapshot.
var readOnlyOps = map[string]bool{
	"getShareProperties": true, "getDirectoryProperties": true, "listFilesAndDirectories": true,
	"getFile": true, "getFileProperties": true, "listRanges": true, "listHandles": true,
	"deleteShare": true, // deletes the snapshot itself
	"leaseShare":  true, // leases the snapshot (Lease Share, https://learn.microsoft.com/en-us/rest/api/storageservices/lease-share)
}

func (r *req) as(name string, o op) (op, error) {
	r.opName = name
	r.Op = name
	return o, nil
}

func (s *Service) route(r *req) (op, error) {
	comp := r.q.Get("comp")
	restype := r.q.Get("restype")
	m := r.Method
	get := m == http.MethodGet || m == http.MethodHead
	bad := func() (op, error) { return nil, server.NoRoute(comp) }
	switch {
	case r.share == "":
		switch {
		case comp == "list" && m == http.MethodGet:
			return r.as("listShares", s.listShares)
		case restype == "service" && comp == "properties" && m == http.MethodGet:
			return r.as("getServiceProperties", s.getServiceProperties)
		case restype == "service" && comp == "properties" && m == http.MethodPut:
			return r.as("setServiceProperties", s.setServiceProperties)
		case restype == "share":
			return nil, azerr.InvalidQuery("restype", restype)
		}
		return bad()
	case r.path == "" && restype == "share":
		switch {
		case comp == "" && m == http.MethodPut:
			return r.as("createShare", s.createShare)
		case comp == "" && get, comp == "metadata" && get:
			return r.as("getShareProperties", s.getShareProperties)
		case comp == "" && m == http.MethodDelete:
			return r.as("deleteShare", s.deleteShare)
		case comp == "metadata" && m == http.MethodPut:
			return r.as("setShareMetadata", s.setShareMetadata)
		case comp == "properties" && m == http.MethodPut:
			return r.as("setShareProperties", s.setShareProperties)
		case comp == "snapshot" && m == http.MethodPut:
			return r.as("snapshotShare", s.snapshotShare)
		case comp == "acl" && get:
			return r.as("getShareACL", s.getShareACL)
		case comp == "acl" && m == http.MethodPut:
			return r.as("setShareACL", s.setShareACL)
		case comp == "stats" && m == http.MethodGet:
			return r.as("getShareStats", s.getShareStats)
		case comp == "filepermission" && m == http.MethodPut:
			return r.as("createPermission", s.createPermission)
		case comp == "filepermission" && m == http.MethodGet:
			return r.as("getPermission", s.getPermission)
		case comp == "lease" && m == http.MethodPut:
			return r.as("leaseShare", s.leaseShare)
		}
		return bad()
	case restype == "directory":
		switch {
		case comp == "" && m == http.MethodPut:
			return r.as("createDirectory", s.createDirectory)
		case comp == "" && get, comp == "metadata" && get:
			return r.as("getDirectoryProperties", s.getDirectoryProperties)
		case comp == "" && m == http.MethodDelete:
			return r.as("deleteDirectory", s.deleteDirectory)
		case comp == "properties" && m == http.MethodPut:
			return r.as("setDirectoryProperties", s.setDirectoryProperties)
		case comp == "metadata" && m == http.MethodPut:
			return r.as("setDirectoryMetadata", s.setDirectoryMetadata)
		case comp == "list" && m == http.MethodGet:
			return r.as("listFilesAndDirectories", s.listFilesAndDirectories)
		case comp == "listhandles" && m == http.MethodGet:
			return r.as("listHandles", s.listHandles)
		case comp == "forceclosehandles" && m == http.MethodPut:
			return r.as("forceCloseHandles", s.forceCloseHandles)
		case comp == "rename" && m == http.MethodPut:
			return r.as("renameDirectory", s.renameDirectory)
		}
		return bad()
	case restype != "":
		return nil, azerr.InvalidQuery("restype", restype)
	case r.path == "" && comp == "listhandles" && m == http.MethodGet:
		// The root directory's client sends no restype (azfile
		// DirectoryClient.ListHandles / ForceCloseHandles).
		return r.as("listHandles", s.listHandles)
	case r.path == "" && comp == "forceclosehandles" && m == http.MethodPut:
		return r.as("forceCloseHandles", s.forceCloseHandles)
	case r.path == "":
		return nil, azerr.New(azerr.InvalidURI)
	}
	switch {
	case comp == "" && m == http.MethodPut:
		if r.Header.Get("x-ms-copy-source") != "" {
			return r.as("copyFile", s.copyFile)
		}
		return r.as("createFile", s.createFile)
	case comp == "" && m == http.MethodGet:
		return r.as("getFile", s.getFile)
	case comp == "" && m == http.MethodHead:
		return r.as("getFileProperties", s.getFileProperties)
	case comp == "metadata" && get:
		return r.as("getFileProperties", s.getFileProperties)
	case comp == "" && m == http.MethodDelete:
		return r.as("deleteFile", s.deleteFile)
	case comp == "properties" && m == http.MethodPut:
		return r.as("setFileProperties", s.setFileProperties)
	case comp == "metadata" && m == http.MethodPut:
		return r.as("setFileMetadata", s.setFileMetadata)
	case comp == "range" && m == http.MethodPut:
		if r.Header.Get("x-ms-copy-source") != "" {
			return r.as("putRangeFromURL", s.putRangeFromURL)
		}
		return r.as("putRange", s.putRange)
	case comp == "rangelist" && m == http.MethodGet:
		return r.as("listRanges", s.listRanges)
	case comp == "copy" && m == http.MethodPut:
		return r.as("abortCopyFile", s.abortCopyFile)
	case comp == "lease" && m == http.MethodPut:
		return r.as("leaseFile", s.leaseFile)
	case comp == "listhandles" && m == http.MethodGet:
		return r.as("listHandles", s.listHandles)
	case comp == "forceclosehandles" && m == http.MethodPut:
		return r.as("forceCloseHandles", s.forceCloseHandles)
	case comp == "rename" && m == http.MethodPut:
		return r.as("renameFile", s.renameFile)
	}
	return bad()
}

// splitPath validates a share-relative path and splits it into its components
// (Naming and referencing shares, directories, files, and metadata,
// https://learn.microsoft.com/en-us/rest/api/storageservices/naming-and-referencing-shares--directories--files--and-metadata):
// components are 1–255 characters without control characters or any of " \ /
// : | < > * ?, and are not "." or ".."; the whole path is at most 2,048
// characters and 250 levels deep. Trailing dots are trimmed from each
// component unless the client sent x-ms-allow-trailing-dot: true (azfile's
// ShareClientOptions.AllowTrailingDot, version 2022-11-02; azfile recorded
// test TestFileCreateDeleteTrailingDot).
func splitPath(p string, allowTrailingDot bool) ([]string, error) {
	if len(p) > maxPathLen {
		return nil, azerr.New(azerr.InvalidFileOrDirectoryPathName)
	}
	comps := strings.Split(p, "/")
	if len(comps) > maxPathDepth {
		return nil, azerr.New(azerr.InvalidFileOrDirectoryPathName)
	}
	for i, c := range comps {
		if !allowTrailingDot && c != "." && c != ".." {
			c = strings.TrimRight(c, ".")
			comps[i] = c
		}
		if err := validName(c); err != nil {
			return nil, err
		}
	}
	return comps, nil
}

// validName checks one path component.
func validName(c string) error {
	if c == "" || c == "." || c == ".." || len([]rune(c)) > maxNameLen {
		return azerr.New(azerr.InvalidResourceName)
	}
	for _, ch := range c {
		if ch < 0x20 || ch == 0x7f || strings.ContainsRune(`"\/:|<>*?`, ch) {
			return azerr.New(azerr.InvalidResourceName)
		}
	}
	return nil
}

// sourceAllowsTrailingDot reads x-ms-source-allow-trailing-dot, the
// trailing-dot rule for the source path of a copy or rename.
func sourceAllowsTrailingDot(h http.Header) bool {
	return strings.EqualFold(h.Get("x-ms-source-allow-trailing-dot"), "true")
}

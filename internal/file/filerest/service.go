// Package filerest is the File service's REST front end: the route table
// (routes.go), the parsing of requests into the typed inputs of the
// internal/file domain, SAS authorization, copy sources, and the XML and
// header rendering of its outputs. Every operation is one call of a
// file.Service method, which owns its transaction.
package filerest

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/copysrc"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
	"github.com/cerulean-storage/cerulean/internal/xcopy"
)

// Service serves the File REST API (a server.AzureHandler and
// server.CORSRuler) over one file.Service, and is the File side of the
// copies between Blob and File (xcopy.Source).
type Service struct {
	f *file.Service
	// blobPeer is the Blob service copies may read from (SetBlobPeer).
	blobPeer atomic.Pointer[xcopy.Peer]
}

// New returns the REST front end of f.
func New(f *file.Service) *Service { return &Service{f: f} }

// CORSRules returns the account's File CORS rules (server.CORSRuler).
func (s *Service) CORSRules(ctx context.Context, account string) ([]svcprops.CORSRule, error) {
	return s.f.CORSRules(ctx, account)
}

// Log is the File service's logger, to which server.Typed reports a
// read whose streaming failed.
func (s *Service) Log() *slog.Logger { return s.f.Log() }

// ServiceProperties returns the File Service Properties, which the route
// table's service-level entries serve through svcpropsrest.
func (s *Service) ServiceProperties() *svcprops.Service { return s.f.ServiceProperties() }

// req is a parsed File request.
type req struct {
	*server.Request
	q     url.Values
	level server.Level // lAccount, lShare or lPath (filePaths)
	share string
	path  string   // share-relative path, "" for the share (root directory)
	comps []string // path split on "/"
	snap  string   // ?sharesnapshot=, normalized; "" for the live share
	route *route   // the routed operation (fileRoutes)
	sas   *auth.SAS
}

// Answer is the REST answer of an error of a file.Service call, what
// ServeAzure renders: it answers in Azure error codes what the domain
// leaves to the door: a refusal without an answer (file.Refusal.Err nil) by a
// byte-range lock is 409 FileLockConflict ("A portion of the specified
// file is locked by an SMB client", File service error codes,
// https://learn.microsoft.com/en-us/rest/api/storageservices/file-service-error-codes),
// by the quota 403 ShareSizeLimitReached (azfile recording
// TestNegativeFileSizeMoreThanShareQuota), the read-only attribute 409
// ReadOnlyAttribute (see the domain's readOnlyREST for the evidence), a
// missing parent of the target path 404 ParentNotFound, an
// existing rename target, or a directory one, 409 ResourceAlreadyExists
// (azfile TestFileRenameNegativeDestinationExists-style recordings; the
// REST rename cannot overwrite a directory), a directory with children
// 409 DirectoryNotEmpty (Delete Directory), the share root 400 InvalidUri
// (Delete Directory on the root: no source names the code; the root is
// the share itself, which only Delete Share removes), a directory moved
// into its own subtree 400 InvalidInput (inferred); the refusal keeps
// its check.
// A failure to read a copy source (file.SourceError) is answered as the
// service reports one (asSourceFailure). Other errors pass unchanged.
func Answer(err error) error {
	var se *file.SourceError
	if errors.As(err, &se) {
		return copysrc.AsFailure(Answer(se.Err))
	}
	var rf *file.Refusal
	if !errors.As(err, &rf) || rf.Err != nil {
		return err
	}
	var answer *azerr.Error
	switch rf.By {
	case file.ByLock:
		answer = azerr.New(azerr.FileLockConflict)
	case file.ByQuota:
		answer = azerr.New(azerr.ShareSizeLimitReached)
	case file.ByReadOnly:
		answer = azerr.New(azerr.ReadOnlyAttribute)
	case file.ByParent:
		answer = azerr.New(azerr.ParentNotFound)
	case file.ByExists, file.ByReplaceDir:
		answer = azerr.New(azerr.ResourceAlreadyExists)
	case file.ByNotEmpty:
		answer = azerr.New(azerr.DirectoryNotEmpty)
	case file.ByShareRoot:
		answer = azerr.New(azerr.InvalidURI)
	case file.BySubtree:
		answer = azerr.Newf(azerr.InvalidInput, "A directory cannot be moved into itself or its subtree.")
	default:
		return err
	}
	return &file.Refusal{By: rf.By, Err: answer, Detail: rf.Detail}
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
	if len(p) > file.MaxPathLen {
		return nil, azerr.New(azerr.InvalidFileOrDirectoryPathName)
	}
	comps := strings.Split(p, "/")
	if len(comps) > file.MaxPathDepth {
		return nil, azerr.New(azerr.InvalidFileOrDirectoryPathName)
	}
	for i, c := range comps {
		if !allowTrailingDot && c != "." && c != ".." {
			c = strings.TrimRight(c, ".")
			comps[i] = c
		}
		if err := file.ValidName(c); err != nil {
			return nil, err
		}
	}
	return comps, nil
}

// sourceAllowsTrailingDot reads x-ms-source-allow-trailing-dot, the
// trailing-dot rule for the source path of a copy or rename.
func sourceAllowsTrailingDot(h http.Header) bool {
	return strings.EqualFold(h.Get("X-Ms-Source-Allow-Trailing-Dot"), "true")
}

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

// refOf is the Ref of REST request r, what its domain call acts on: its
// share, snapshot, path, x-ms-lease-id and time (Ref.caller makes it the
// domain's open-less caller).
func refOf(r *req) file.Ref {
	return file.Ref{Account: r.Account, Share: r.share, Snapshot: r.snap, Path: r.comps, LeaseID: r.Header.Get(lease.HeaderLeaseID), Now: r.Now}
}

// requireEmptyBody refuses a body on operations that take none.
func requireEmptyBody(r *req) error {
	if r.ContentLength > 0 {
		return azerr.InvalidHeader("Content-Length", strconv.FormatInt(r.ContentLength, 10))
	}
	return nil
}

// flagHeader parses an optional boolean header (absent: false).
func flagHeader(h http.Header, name string) (bool, error) {
	v := h.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, azerr.InvalidHeader(name, v)
	}
	return b, nil
}

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
	"strings"
	"sync/atomic"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/copysrc"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
	"github.com/cerulean-storage/cerulean/internal/wire"
	"github.com/cerulean-storage/cerulean/internal/xcopy"
)

// Service serves the File REST API (a server.Handler and
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
		allowDot := strings.EqualFold(r.Header.Get("X-Ms-Allow-Trailing-Dot"), "true")
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

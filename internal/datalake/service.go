// Package datalake is the Data Lake Storage Gen2 front end: the dfs
// endpoint's REST operations (Data Lake Storage Gen2 REST API,
// https://learn.microsoft.com/en-us/rest/api/storageservices/data-lake-storage-gen2)
// parsed into typed calls of the Blob domain (filesystems are containers;
// the hierarchical namespace's operations are Blob domain methods over
// internal/hns/ns), and rendered back. It opens no transaction and
// imports no kv store. The dfs port
// also answers the Blob API of the same accounts: the datalake SDKs send
// a path's reads, properties and metadata, and a filesystem's container
// operations, to the Blob URL they derive from the dfs URL (".dfs." made
// ".blob." in the host), which for a path-style URL is the dfs port
// itself. Requests that are not of the dfs API go to the Blob service.
package datalake

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/blob/blobrest"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// Config is what the dfs front end needs. Which accounts are
// hierarchical is the Blob domain's to know (blob.Service.Hierarchical,
// wired by internal/app).
type Config struct {
	Blob *blob.Service
	// BlobREST is the Blob REST front end over Blob, which serves the
	// Blob API on the dfs endpoint; nil: one made here.
	BlobREST *blobrest.Service
	Clock    clock.Clock
	Logger   *slog.Logger
}

// Service serves the dfs endpoint.
type Service struct {
	blob  *blob.Service
	rest  *blobrest.Service
	clock clock.Clock
	log   *slog.Logger
}

// New returns the dfs front end over cfg's Blob service.
func New(cfg Config) *Service {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.BlobREST == nil && cfg.Blob != nil {
		cfg.BlobREST = blobrest.New(cfg.Blob)
	}
	return &Service{blob: cfg.Blob, rest: cfg.BlobREST, clock: cfg.Clock, log: cfg.Logger}
}

// hier reports whether account has a hierarchical namespace.
func (s *Service) hier(account string) bool { return s.blob.Hierarchical(account) }

// req is a parsed dfs request.
type req struct {
	*server.Request
	q          url.Values
	level      server.Level // lAccount, lFilesystem or lPath (dfsPaths)
	filesystem string       // "" at account level
	path       string       // "" at filesystem level
	route      *route
	// cpk is the request's customer-provided key (nil: none), which
	// Path - Create, append and flush write and check under
	// (internal/blob/cpk.go, parsed by internal/blob/blobrest/cpk.go).
	cpk *blob.CPK
}

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

// IsDFS reports whether hr is a request of the Data Lake Storage Gen2
// API rather than of the Blob API, from what tells the two apart on the
// same URL: the resource and action query parameters (Filesystem and
// Path operations, Path Get Properties' getStatus and getAccessControl,
// Path Update's actions), the PATCH method (Path Update, Filesystem Set
// Properties), POST without comp (Path Lease; Blob's POSTs all carry a
// comp), x-ms-rename-source (Path Create as a rename), Path Delete's
// recursive, paginated and continuation parameters (the SDKs always send
// recursive). Everything else is the Blob API, answered by the Blob
// service: the datalake SDKs read a path (Get Blob, Get Blob
// Properties), set its metadata and headers, list directories and
// deleted paths, undelete paths (x-ms-undelete-source, which Azure
// answers from the Blob endpoint: azure-sdk-for-net's recorded
// FileSystemClientTests.UndeletePathAsync_Error) and manage filesystems
// as containers through it.
func IsDFS(hr *http.Request) bool {
	if hr.Method == http.MethodPatch {
		return true
	}
	q := hr.URL.Query()
	if q.Has("resource") || q.Has("action") || hr.Header.Get("X-Ms-Rename-Source") != "" {
		return true
	}
	switch hr.Method {
	case http.MethodPost:
		return !q.Has("comp")
	case http.MethodDelete:
		return q.Has("recursive") || q.Has("paginated") || q.Has("continuation")
	}
	return false
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
	if r.Method == http.MethodPut && strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Http-Method-Override")), http.MethodPatch) {
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

func (r *req) call() blob.Call { return blob.Call{Now: r.Now, CPK: r.cpk} }

func (r *req) containerRef() blob.ContainerRef {
	return blob.ContainerRef{Account: r.Account, Container: r.filesystem}
}

// fsErr turns the Blob domain's container errors into the dfs
// endpoint's filesystem errors.
func fsErr(err error) error {
	e, ok := azerr.As(err)
	if !ok {
		return err
	}
	switch e.Code {
	case azerr.ContainerNotFound:
		return azerr.New(azerr.FilesystemNotFound)
	case azerr.ContainerAlreadyExists:
		return azerr.New(azerr.FilesystemAlreadyExists)
	case azerr.ContainerBeingDeleted:
		return azerr.New(azerr.FilesystemBeingDeleted)
	}
	return err
}

// CORSRules returns the account's Blob CORS rules (server.CORSRuler): the
// dfs endpoint shares the Blob service's properties.
func (s *Service) CORSRules(ctx context.Context, account string) ([]svcprops.CORSRule, error) {
	return s.rest.CORSRules(ctx, account)
}

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

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/blob/blobrest"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
	"github.com/cerulean-storage/cerulean/internal/wire"
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

// handler is one dfs operation: a method of Service.
type handler = func(s *Service, r *req) (server.Response, error)

// route is one entry of the dfs route table.
type route = server.Route[handler]

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
	if q.Has("resource") || q.Has("action") || wire.Field(hr.Header, "X-Ms-Rename-Source") != "" {
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

package svcprops

import (
	"context"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// String names the service of k, as its REST reference does (Get Blob
// Service Properties, Get Queue Service Stats, ...).
func (k Kind) String() string {
	switch k {
	case Blob:
		return "Blob"
	case Queue:
		return "Queue"
	case Table:
		return "Table"
	case File:
		return "File"
	}
	return "unknown"
}

// HasStats reports whether the service of k has Get Service Stats.
func (k Kind) HasStats() bool { return k.elements().stats }

// Service is the Service Properties and Stats of one service kind: the
// one implementation of Get/Set Service Properties, Get Service Stats and
// the CORS rules that Blob, Queue, Table and File share, parameterised
// by the kind (which elements the document has, whether stats exist) and
// by where the kind keeps an account's document.
type Service struct {
	kind  Kind
	store kv.Store
	keyOf func(account string) []byte
	// overlay, when set (SetOverlay), adjusts what Load and
	// GetProperties return for an account.
	overlay func(account string, p *Properties)
}

// SetOverlay makes fn adjust the properties Load and GetProperties
// return (not what is stored): a server setting that applies to every
// account on top of its stored document, such as the File service's
// --share-soft-delete. Call it before serving.
func (s *Service) SetOverlay(fn func(account string, p *Properties)) { s.overlay = fn }

// over applies the overlay to p.
func (s *Service) over(account string, p *Properties) {
	if s.overlay != nil {
		s.overlay(account, p)
	}
}

// New returns the service properties of kind k, kept in store under
// keyOf(account).
func New(k Kind, store kv.Store, keyOf func(account string) []byte) *Service {
	return &Service{kind: k, store: store, keyOf: keyOf}
}

// Kind is the service kind s serves.
func (s *Service) Kind() Kind { return s.kind }

// Load reads account's properties inside tx (defaults when never set),
// for domain operations that decide by them (Blob's delete retention).
func (s *Service) Load(tx kv.Tx, account string) (Properties, error) {
	p, err := Load(tx, s.keyOf(account), s.kind)
	if err == nil {
		s.over(account, &p)
	}
	return p, err
}

// GetPropertiesInput is Get Service Properties.
type GetPropertiesInput struct {
	Account string
}

// GetPropertiesOutput is the account's service properties, as last set
// (defaults otherwise), with the elements of the kind only.
type GetPropertiesOutput struct {
	Properties Properties
}

// GetProperties is Get Blob/Queue/Table/File Service Properties (e.g.
// https://learn.microsoft.com/en-us/rest/api/storageservices/get-blob-service-properties).
func (s *Service) GetProperties(ctx context.Context, in GetPropertiesInput) (GetPropertiesOutput, error) {
	p, err := Get(ctx, s.store, s.keyOf(in.Account), s.kind)
	if err == nil {
		s.over(in.Account, &p)
	}
	return GetPropertiesOutput{Properties: p}, err
}

// SetPropertiesInput is Set Service Properties.
type SetPropertiesInput struct {
	Account string
	// Properties, as Parse returns them for the kind, are merged into
	// the stored ones: what the request leaves out is kept.
	Properties Properties
}

// SetPropertiesOutput is the outcome of Set Service Properties (nothing
// beyond success).
type SetPropertiesOutput struct{}

// SetProperties is Set Blob/Queue/Table/File Service Properties: the
// elements present replace the stored ones in one transaction; last
// writer wins (e.g.
// https://learn.microsoft.com/en-us/rest/api/storageservices/set-queue-service-properties).
func (s *Service) SetProperties(ctx context.Context, in SetPropertiesInput) (SetPropertiesOutput, error) {
	return SetPropertiesOutput{}, SetParsed(ctx, s.store, s.keyOf(in.Account), s.kind, in.Properties)
}

// GetStatsInput is Get Service Stats.
type GetStatsInput struct {
	Account string
	// Now is the request's time (from the injected clock).
	Now time.Time
}

// GetStatsOutput is the replication status.
type GetStatsOutput struct {
	Stats Stats
}

// GetStats is Get Blob/Queue/Table Service Stats: a single-site server is
// always in sync with itself, so replication is "live" and last synced
// at in.Now (Get Blob Service Stats,
// https://learn.microsoft.com/en-us/rest/api/storageservices/get-blob-service-stats).
// A kind without stats (File) answers as for an operation it does not
// have: 400 InvalidQueryParameterValue naming comp=stats.
func (s *Service) GetStats(ctx context.Context, in GetStatsInput) (GetStatsOutput, error) {
	if !s.kind.HasStats() {
		return GetStatsOutput{}, azerr.InvalidQuery("comp", "stats")
	}
	return GetStatsOutput{Stats: LiveStats(in.Now)}, nil
}

// CORSRules returns account's CORS rules, the Cors part of its service
// properties, from the short-lived per-account copy (see the package
// function CORSRules): the front end's server.CORSRuler.
func (s *Service) CORSRules(ctx context.Context, account string) ([]CORSRule, error) {
	return CORSRules(ctx, s.store, s.keyOf(account), s.kind)
}

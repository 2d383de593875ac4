// Package queuerest is the Queue service's REST front end: the route
// table (routes.go), the parsing of requests into the typed inputs of
// the internal/queue domain, SAS authorization, and the XML and header
// rendering of its outputs. Nothing here opens a kv transaction; every
// operation is one call of a queue.Service method.
package queuerest

import (
	"context"
	"net/url"

	"github.com/cerulean-storage/cerulean/internal/queue"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// Service serves the Queue REST API (a server.AzureHandler and
// server.CORSRuler) over one queue.Service.
type Service struct {
	q *queue.Service
}

// New returns the REST front end of q.
func New(q *queue.Service) *Service { return &Service{q: q} }

// CORSRules returns the account's Queue CORS rules (server.CORSRuler).
func (s *Service) CORSRules(ctx context.Context, account string) ([]svcprops.CORSRule, error) {
	return s.q.ServiceProperties().CORSRules(ctx, account)
}

// ServiceProperties returns the Queue Service Properties and Stats, which
// the route table's service-level entries serve through svcpropsrest.
func (s *Service) ServiceProperties() *svcprops.Service { return s.q.ServiceProperties() }

// req is a parsed Queue request.
type req struct {
	*server.Request
	q url.Values
	// level is lAccount, lQueue, lMessages or lMessage; 0 for a path
	// below the queue that is none of them (queuePaths).
	level server.Level
	queue string // "" for account-level requests
	msgID string // raw message id from the path
	// route is the routed operation's entry in queueRoutes (its name
	// is Op).
	route *route
}

// handler is one REST operation: a method of Service.
type handler = func(s *Service, r *req) (server.Response, error)

// route is one entry of the Queue route table.
type route = server.Route[handler]

// id is the queue the request addresses.
func (r *req) id() queue.QueueID { return queue.QueueID{Account: r.Account, Name: r.queue} }

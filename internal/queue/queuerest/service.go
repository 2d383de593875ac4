// Package queuerest is the Queue service's REST front end: the route
// table (routes.go), the parsing of requests into the typed inputs of
// the internal/queue domain, SAS authorization, and the XML and header
// rendering of its outputs. Nothing here opens a kv transaction; every
// operation is one call of a queue.Service method.
package queuerest

import (
	"context"
	"net/http"
	"net/url"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/queue"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Service serves the Queue REST API (a server.Handler and
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

// ServeAzure routes a Queue REST request to its operation (queueDoor).
func (s *Service) ServeAzure(w http.ResponseWriter, sr *server.Request) error {
	return queueDoor.Serve(s, w, sr)
}

// queueDoor is the Queue front end's part of the dispatch. Anonymous
// requests are refused before anything is read (no Anonymous): the Queue
// service has no public access.
var queueDoor = &server.Door[*Service, *req]{
	Paths: queuePaths,
	Parse: newReq,
	Route: (*Service).route,
	Target: func(s *Service, r *req) (server.SASTarget, auth.PolicyLookup) {
		return server.SASTarget{Container: r.queue}, s.policies(r)
	},
	AuthorizeSAS: (*Service).authorizeSAS,
}

// newReq parses what routing needs from sr: the queue and what follows it.
func newReq(sr *server.Request, p server.Path) *req {
	return &req{Request: sr, q: sr.URL.Query(), level: p.Level, queue: p.First, msgID: p.Item}
}

// route finds r's operation in queueRoutes and records it on r. The
// queue name, the message path and peekonly are checked first, with
// their own errors.
func (s *Service) route(r *req) (*route, error) {
	sel := queueRoutes.Selectors(r.q)
	m := server.MethodOf(r.Method)
	level := r.level
	if r.queue != "" {
		if err := wire.ValidQueueName(r.queue); err != nil {
			return nil, err
		}
	}
	switch level {
	case 0:
		return nil, azerr.New(azerr.InvalidURI)
	case lMessages:
		if m == server.GET {
			if _, err := parsePeekOnly(r.q); err != nil {
				return nil, err
			}
		}
	}
	rt := queueRoutes.Match(m, level, &sel, r.Header, r.q)
	if rt == nil {
		return nil, server.NoRoute(sel.Comp)
	}
	r.route, r.Op = rt, rt.Name
	return rt, nil
}

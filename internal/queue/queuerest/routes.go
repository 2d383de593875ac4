package queuerest

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcpropsrest"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// The resource levels of a Queue URL: /{account}, /{account}/{queue},
// /{account}/{queue}/messages, /{account}/{queue}/messages/{id}.
const (
	lAccount server.Level = 1 << iota
	lQueue
	lMessages
	lMessage
)

// queuePaths splits a Queue URL into its level and names; any other path
// below a queue is 400 InvalidUri.
var queuePaths = &server.Paths{Account: lAccount, First: lQueue,
	Subs: []server.SubPath{{Name: "messages", Level: lMessages, Item: lMessage}}}

// queueRoutes is the Queue service's route table (Queue service REST API,
// https://learn.microsoft.com/en-us/rest/api/storageservices/queue-service-rest-api),
// tried in order, with each operation's SAS rule (Create an account SAS,
// "Permissions by operation",
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas;
// Create a service SAS,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas).
// An account SAS creates queues with c or w (srt=c) and reads and writes
// the service properties and stats with r and w (srt=s); a service SAS
// for a queue carries r, a, u and p. Built in init, as the handlers reach
// the service that reads it.
var queueRoutes *server.Routes[handler]

func init() {
	const (
		get, head, put, post, del = server.GET, server.HEAD, server.PUT, server.POST, server.DELETE
		star                      = server.Any
	)
	queueRoutes = server.NewRoutes([]route{
		// Account.
		{Methods: get, Levels: lAccount, Restype: star, Comp: "list", Name: "listQueues", Handler: (*Service).listQueues,
			SAS: server.SASRule{Resource: auth.ServiceLevel, AnyOf: "l"}},
		{Methods: get, Levels: lAccount, Restype: "service", Comp: "properties", Name: "getQueueServiceProperties", Handler: svcpropsrest.GetProperties[*Service, *req],
			SAS: server.SASRule{Resource: auth.ServiceLevel, AnyOf: "r", AccountOnly: true}},
		{Methods: put, Levels: lAccount, Restype: "service", Comp: "properties", Name: "setQueueServiceProperties", Handler: svcpropsrest.SetProperties[*Service, *req],
			SAS: server.SASRule{Resource: auth.ServiceLevel, AnyOf: "w", AccountOnly: true}},
		{Methods: get, Levels: lAccount, Restype: "service", Comp: "stats", Name: "getQueueServiceStats", Handler: svcpropsrest.GetStats[*Service, *req],
			SAS: server.SASRule{Resource: auth.ServiceLevel, AnyOf: "r", AccountOnly: true}},
		// Get User Delegation Key on the Queue endpoint (from 2026-02-06),
		// for Queue user delegation SAS: bearer tokens only.
		{Methods: post, Levels: lAccount, Restype: "service", Comp: "userdelegationkey", Name: "getUserDelegationKey", Handler: (*Service).getUserDelegationKey, SharedKeyOnly: true, BearerOnly: true},

		// Queue (restype is not consulted).
		{Methods: put, Levels: lQueue, Restype: star, Name: "createQueue", Handler: (*Service).createQueue,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "cw", AccountOnly: true}},
		{Methods: del, Levels: lQueue, Restype: star, Name: "deleteQueue", Handler: (*Service).deleteQueue,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "d", AccountOnly: true}},
		{Methods: get | head, Levels: lQueue, Restype: star, Comp: "metadata", Name: "getQueueMetadata", Handler: (*Service).getQueueMetadata,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "r"}},
		{Methods: put, Levels: lQueue, Restype: star, Comp: "metadata", Name: "setQueueMetadata", Handler: (*Service).setQueueMetadata,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "w"}},
		// Queue ACLs are Shared Key only (an account SAS does not reach
		// Get or Set Queue ACL).
		{Methods: get | head, Levels: lQueue, Restype: star, Comp: "acl", Name: "getQueueACL", Handler: (*Service).getQueueACL, SharedKeyOnly: true},
		{Methods: put, Levels: lQueue, Restype: star, Comp: "acl", Name: "setQueueACL", Handler: (*Service).setQueueACL, SharedKeyOnly: true},

		// Messages (comp and restype are not consulted; peekonly was
		// checked before the table).
		{Methods: post, Levels: lMessages, Restype: star, Comp: star, Name: "putMessage", Handler: (*Service).putMessage,
			SAS: server.SASRule{Resource: auth.ObjectLevel, AnyOf: "a"}},
		{Methods: get, Levels: lMessages, Restype: star, Comp: star, Query: []server.Cond{server.Is("peekonly", "true")}, Name: "peekMessages", Handler: (*Service).peekMessages,
			SAS: server.SASRule{Resource: auth.ObjectLevel, AnyOf: "r"}},
		{Methods: get, Levels: lMessages, Restype: star, Comp: star, Name: "getMessages", Handler: (*Service).getMessages,
			SAS: server.SASRule{Resource: auth.ObjectLevel, AnyOf: "p"}},
		// Clear Messages takes Delete, which only an account SAS has.
		{Methods: del, Levels: lMessages, Restype: star, Comp: star, Name: "clearMessages", Handler: (*Service).clearMessages,
			SAS: server.SASRule{Resource: auth.ObjectLevel, AnyOf: "d", AccountPermission: true}},

		// One message.
		{Methods: del, Levels: lMessage, Restype: star, Comp: star, Name: "deleteMessage", Handler: (*Service).deleteMessage,
			SAS: server.SASRule{Resource: auth.ObjectLevel, AnyOf: "p"}},
		{Methods: put, Levels: lMessage, Restype: star, Comp: star, Name: "updateMessage", Handler: (*Service).updateMessage,
			SAS: server.SASRule{Resource: auth.ObjectLevel, AnyOf: "u"}},
	})
}

// Operations returns the Queue service's operation names (the metrics
// labels), each once.
func Operations() []string { return queueRoutes.Names() }

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

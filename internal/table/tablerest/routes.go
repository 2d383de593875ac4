package tablerest

import (
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcpropsrest"
)

// tableRoutes is the Table service's route table (Table service REST API,
// https://learn.microsoft.com/en-us/rest/api/storageservices/table-service-rest-api),
// tried in order, on the method after X-HTTP-Method. SAS rules: Create an
// account SAS, "Permissions by operation",
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas,
// and Create a service SAS. Tables take an account SAS only: Query Tables
// with List at srt=c, Create Table with c or w (srt=c), Delete Table with
// d; the service properties and stats r and w at srt=s. Built in init, as
// the handlers reach the service that reads it.
var tableRoutes *server.Routes[handler]

func init() {
	const (
		get, head, put, post, del, merge = server.GET, server.HEAD, server.PUT, server.POST, server.DELETE, server.MERGE
		star                             = server.Any
	)
	noIfMatch, ifMatch := []server.Cond{server.Lacks("If-Match")}, []server.Cond{server.Has("If-Match")}
	tableRoutes = server.NewRoutes([]route{
		// Service (restype=service, checked before the table).
		{Methods: get, Levels: lService, Restype: "service", Comp: "properties", Name: "getServiceProperties", Handler: svcpropsrest.GetProperties[*Service, *req],
			SAS: server.SASRule{Resource: auth.ServiceLevel, AnyOf: "r", AccountOnly: true}},
		{Methods: put, Levels: lService, Restype: "service", Comp: "properties", Name: "setServiceProperties", Handler: svcpropsrest.SetProperties[*Service, *req],
			SAS: server.SASRule{Resource: auth.ServiceLevel, AnyOf: "w", AccountOnly: true}},
		{Methods: get, Levels: lService, Restype: "service", Comp: "stats", Name: "getServiceStats", Handler: svcpropsrest.GetStats[*Service, *req],
			SAS: server.SASRule{Resource: auth.ServiceLevel, AnyOf: "r", AccountOnly: true}},

		// An entity group transaction: each part is checked (checkBatchSAS).
		{Methods: post, Levels: lBatch, Restype: star, Comp: star, Name: "batch", Handler: (*Service).batch,
			SAS: server.SASRule{Resource: auth.ObjectLevel}, Flags: fSASTokenTable},

		// Tables (comp and restype are not consulted).
		{Methods: get, Levels: lTables, Restype: star, Comp: star, Name: "queryTables", Handler: (*Service).queryTables,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "l", AccountOnly: true}},
		{Methods: post, Levels: lTables, Restype: star, Comp: star, Name: "createTable", Handler: (*Service).createTable,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "cw", AccountOnly: true}},
		{Methods: del, Levels: lTable, Restype: star, Comp: star, Name: "deleteTable", Handler: (*Service).deleteTable,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "d", AccountOnly: true}},
		// Tables('name') read is Query Tables for one table.
		{Methods: get, Levels: lTable, Restype: star, Comp: star, Name: "getTable", Handler: (*Service).getTable,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "l", AccountOnly: true}},

		// Table ACLs are Shared Key only (an account SAS does not reach
		// Get or Set Table ACL).
		{Methods: get | head, Levels: lEntities, Restype: star, Comp: "acl", Name: "getTableACL", Handler: (*Service).getTableACL, SharedKeyOnly: true},
		{Methods: put, Levels: lEntities, Restype: star, Comp: "acl", Name: "setTableACL", Handler: (*Service).setTableACL, SharedKeyOnly: true},

		// Entities (comp must be absent).
		{Methods: get, Levels: lEntity, Restype: star, Name: "getEntity", Handler: (*Service).getEntity, SAS: sasEntityRead},
		{Methods: put, Levels: lEntity, Restype: star, Headers: noIfMatch, Name: "updateEntity", Handler: (*Service).updateEntity, SAS: sasEntityUpsert},
		{Methods: put, Levels: lEntity, Restype: star, Headers: ifMatch, Name: "updateEntity", Handler: (*Service).updateEntity, SAS: sasEntityUpdate},
		{Methods: merge, Levels: lEntity, Restype: star, Headers: noIfMatch, Name: "mergeEntity", Handler: (*Service).mergeEntity, SAS: sasEntityUpsert},
		{Methods: merge, Levels: lEntity, Restype: star, Headers: ifMatch, Name: "mergeEntity", Handler: (*Service).mergeEntity, SAS: sasEntityUpdate},
		{Methods: del, Levels: lEntity, Restype: star, Name: "deleteEntity", Handler: (*Service).deleteEntity, SAS: sasEntityDelete},
		{Methods: get, Levels: lEntities | lEntitiesAll, Restype: star, Name: "queryEntities", Handler: (*Service).queryEntities, SAS: sasEntityRead},
		{Methods: post, Levels: lEntities, Restype: star, Name: "insertEntity", Handler: (*Service).insertEntity, SAS: sasEntityInsert},
	})
}

// Operations returns the Table service's operation names (the metrics
// labels), each once.
func Operations() []string { return tableRoutes.Names() }

// ServeAzure routes a Table REST request to its operation (tableDoor).
func (s *Service) ServeAzure(w http.ResponseWriter, sr *server.Request) error {
	return tableDoor.Serve(s, w, sr)
}

// tableDoor is the Table front end's part of the dispatch: the Table
// service has no anonymous access (no Anonymous); the method that routes
// is the one X-HTTP-Method names (routeMethod).
var tableDoor = &server.Door[*Service, *req]{
	Parse: func(sr *server.Request, _ server.Path) *req {
		return &req{Request: sr, q: parseQuery(sr.URL.RawQuery)}
	},
	Route:        (*Service).routeMethod,
	Target:       (*Service).sasTarget,
	AuthorizeSAS: (*Service).authorizeSAS,
}

// routeMethod applies X-HTTP-Method, then routes r.
func (s *Service) routeMethod(r *req) (*route, error) {
	m, err := effectiveMethod(r.Request.Request)
	if err != nil {
		return nil, err
	}
	r.method = m
	return s.route(r)
}

// route finds r's operation in tableRoutes and records it on r. The URL
// forms, names and key predicates are parsed first, and a request no
// entry matches keeps the error of its URL form.
func (s *Service) route(r *req) (*route, error) {
	rest := resourcePath(r.Request)
	sel := tableRoutes.Selectors(r.q)
	comp := sel.Comp
	var level server.Level
	switch {
	case rest == "":
		if sel.Restype != "service" {
			return nil, azerr.Newf(azerr.InvalidURI, "The requested URI does not represent any resource on the server.")
		}
		level = lService
	case rest == "$batch":
		level = lBatch
	case strings.EqualFold(rest, "Tables") || strings.EqualFold(rest, "Tables()"):
		level = lTables
	case len(rest) > len("Tables(") && strings.EqualFold(rest[:len("Tables(")], "Tables("):
		name, ok := parseTablesPredicate(rest[len("Tables"):])
		if !ok {
			return nil, azerr.Newf(azerr.InvalidInput, "The table name in '%s' could not be parsed.", rest)
		}
		r.table = name
		level = lTable
	default:
		name, pred, hasPred := strings.Cut(rest, "(")
		r.table = name
		if err := checkTableName(name); err != nil {
			return nil, err
		}
		level = lEntities
		if hasPred {
			level = lEntitiesAll
			pred = "(" + pred
			if pred != "()" {
				pk, rk, ok := parseKeyPredicate(pred)
				if !ok {
					return nil, azerr.Newf(azerr.InvalidInput, "The entity key predicate '%s' could not be parsed.", pred)
				}
				r.pk, r.rk, r.keyed = pk, rk, true
				level = lEntity
			}
		}
	}
	rt := tableRoutes.Match(server.MethodOf(r.method), level, &sel, r.Header, r.q)
	if rt == nil {
		switch {
		case level == lService && comp != "properties" && comp != "stats":
			return nil, azerr.InvalidQuery("comp", comp)
		case level >= lEntities && comp != "" && (comp != "acl" || level != lEntities):
			// comp=acl is for a table without a key predicate.
			return nil, azerr.InvalidQuery("comp", comp)
		}
		return nil, azerr.New(azerr.MethodNotAllowed)
	}
	r.route, r.Op = rt, rt.Name
	return rt, nil
}

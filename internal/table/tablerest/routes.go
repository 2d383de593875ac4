package tablerest

import (
	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcpropsrest"
)

// handler is one REST operation: a method of Service.
type handler = func(s *Service, r *req) (server.Response, error)

// route is one entry of the Table route table.
type route = server.Route[handler]

// The resource levels of a Table URL (after the account):
const (
	lService     server.Level = 1 << iota // "" (with restype=service)
	lBatch                                // $batch
	lTables                               // Tables, Tables()
	lTable                                // Tables('name')
	lEntities                             // name
	lEntitiesAll                          // name()
	lEntity                               // name(PartitionKey='…',RowKey='…')
)

// Route flags.
const (
	// fSASTokenTable: the URL names no table, its parts do (an entity
	// group transaction); a service SAS is checked for the table it is
	// for (an account SAS for none), and each part's table against the
	// token's (checkBatchSAS).
	fSASTokenTable uint32 = 1 << iota
)

// Entity SAS rules, which an entity group transaction also checks part
// by part (checkBatchSAS). Insert Or Replace and Insert Or Merge (Update
// or Merge Entity without If-Match) take both Add and Update (Create an
// account SAS, "Table service", note 1).
var (
	sasEntityRead   = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "r"}
	sasEntityInsert = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "a"}
	sasEntityUpdate = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "u"}
	sasEntityUpsert = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "a", AllOf: "u"}
	sasEntityDelete = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "d"}
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

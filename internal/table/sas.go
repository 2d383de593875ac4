package table

import (
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// as records the routed operation's name (the key of sasRules).
func (r *req) as(name string, o op) (op, error) {
	r.opName = name
	r.Op = name
	return o, nil
}

// sasRules is what each Table operation needs from a SAS (Create an
// account SAS, "Permissions by operation",
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas;
// Create a service SAS). Table operations take an account SAS only: it
// creates tables with c or w (srt=c) and reads and writes the service
// properties and stats with r and w (srt=s). Operations not listed (table
// ACL) are Shared Key only. An entity group transaction is checked part by
// part (checkBatchSAS).
var sasRules = map[string]server.SASRule{
	"getServiceProperties": {Resource: auth.ServiceLevel, AnyOf: "r", AccountOnly: true},
	"setServiceProperties": {Resource: auth.ServiceLevel, AnyOf: "w", AccountOnly: true},
	"getServiceStats":      {Resource: auth.ServiceLevel, AnyOf: "r", AccountOnly: true},

	"queryTables":   {Resource: auth.ServiceLevel, AnyOf: "l", AccountOnly: true},
	"getTable":      {Resource: auth.ServiceLevel, AnyOf: "l", AccountOnly: true},
	"createTable":   {Resource: auth.ContainerLevel, AnyOf: "cw", AccountOnly: true},
	"deleteTable":   {Resource: auth.ContainerLevel, AnyOf: "d", AccountOnly: true},
	"queryEntities": {Resource: auth.ObjectLevel, AnyOf: "r"},
	"getEntity":     {Resource: auth.ObjectLevel, AnyOf: "r"},
	"insertEntity":  {Resource: auth.ObjectLevel, AnyOf: "a"},
	"updateEntity":  {Resource: auth.ObjectLevel, AnyOf: "u"},
	"mergeEntity":   {Resource: auth.ObjectLevel, AnyOf: "u"},
	"deleteEntity":  {Resource: auth.ObjectLevel, AnyOf: "d"},
	"upsertEntity":  {Resource: auth.ObjectLevel, AnyOf: "a", AllOf: "u"},
	"batch":         {Resource: auth.ObjectLevel},
}

// authorizeSAS verifies the request's SAS for the routed operation; the
// stored access policies come from the table's ACL, read now. Entity
// operations addressed by key must fall in the SAS's key range.
func (s *Service) authorizeSAS(r *req) error {
	name := r.opName
	// Update and Merge without If-Match are Insert Or Replace / Insert
	// Or Merge: they need both add and update.
	if (name == "updateEntity" || name == "mergeEntity") && r.Header.Get("If-Match") == "" {
		name = "upsertEntity"
	}
	rule, ok := sasRules[name]
	table := r.table
	if name == "batch" {
		// The parts name the table; a service SAS must be for it, which
		// checkBatchSAS checks for each part.
		table = r.SAS.TableName
		if r.SAS.IsAccount() {
			table = ""
		}
	}
	eff, err := r.AuthorizeSAS(server.SASTarget{Container: table}, s.policies(r, table), rule, ok)
	if err != nil {
		return err
	}
	r.sas = eff
	if r.keyed {
		return checkEntityRange(r, r.pk, r.rk)
	}
	return nil
}

// policies resolves signed identifiers in the ACL of table, read when
// the SAS names one.
func (s *Service) policies(r *req, table string) auth.PolicyLookup {
	return server.Policies(func() ([]server.StoredPolicy, error) {
		var acl []server.StoredPolicy
		err := s.store.View(r.Context(), func(tx kv.Tx) error {
			t, err := activeTable(tx, r.Account, table)
			if err == nil {
				acl = t.ACL
			}
			return err
		})
		return acl, err
	})
}

// sasFirst is server.Request.SASFirst for an error found before the
// operation was known: the SAS is checked against the table the path
// names, or (for a path without one, such as $batch) the table a service
// SAS is for.
func (s *Service) sasFirst(r *req, err error) error {
	if r.SAS == nil {
		return err
	}
	table := r.table
	if table == "" && !r.SAS.IsAccount() {
		table = r.SAS.TableName
	}
	return r.SASFirst(err, server.SASTarget{Container: table}, s.policies(r, table))
}

// checkEntityRange refuses (403 AuthorizationFailure) an entity outside
// the SAS's partition/row key range.
func checkEntityRange(r *req, pk, rk string) error {
	if r.sas != nil && !r.sas.AllowsEntity(pk, rk) {
		return azerr.New(azerr.AuthorizationFailure)
	}
	return nil
}

// checkBatchSAS checks one part of an entity group transaction against
// the request's SAS: the table the SAS is for, the operation's
// permissions and the key range.
func checkBatchSAS(r *req, kind opKind, ifMatch, table, pk, rk string) error {
	if r.sas == nil {
		return nil
	}
	if !r.sas.IsAccount() && !strings.EqualFold(table, r.sas.TableName) {
		return azerr.New(azerr.AuthorizationFailure)
	}
	name := "getEntity"
	switch kind {
	case opInsert:
		name = "insertEntity"
	case opReplace, opMerge:
		name = "updateEntity"
		if ifMatch == "" {
			name = "upsertEntity"
		}
	case opDelete:
		name = "deleteEntity"
	}
	if err := server.CheckSASRule(r.sas, auth.Table, sasRules[name]); err != nil {
		return err
	}
	return checkEntityRange(r, pk, rk)
}

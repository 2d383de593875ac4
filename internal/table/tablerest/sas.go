package tablerest

import (
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/table"
)

// authorizeSAS verifies the request's SAS for the routed operation; the
// stored access policies come from the table's ACL, read now. Entity
// operations addressed by key must fall in the SAS's key range.
func (s *Service) authorizeSAS(r *req) error {
	rule, ok := r.route.Rule()
	tbl := r.table
	if r.route.Flags&fSASTokenTable != 0 {
		tbl = r.SAS.TableName
		if r.SAS.IsAccount() {
			tbl = ""
		}
	}
	eff, err := r.AuthorizeSAS(server.SASTarget{Container: tbl}, s.policies(r, tbl), rule, ok)
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
func (s *Service) policies(r *req, tbl string) auth.PolicyLookup {
	return server.Policies(func() ([]policy.Stored, error) {
		out, err := s.t.GetTableACL(r.Context(), table.GetTableACLInput{Account: r.Account, Table: tbl})
		return out.Policies, err
	})
}

// sasTarget is what a SAS is checked against for an error found before
// the operation was known (server.Request.SASFirst): the table the path
// names, or (for a path without one, such as $batch) the table a service
// SAS is for.
func (s *Service) sasTarget(r *req) (server.SASTarget, auth.PolicyLookup) {
	tbl := r.table
	if tbl == "" && !r.SAS.IsAccount() {
		tbl = r.SAS.TableName
	}
	return server.SASTarget{Container: tbl}, s.policies(r, tbl)
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
func checkBatchSAS(r *req, kind table.OpKind, ifMatch, tbl, pk, rk string) error {
	if r.sas == nil {
		return nil
	}
	if !r.sas.IsAccount() && !strings.EqualFold(tbl, r.sas.TableName) {
		return azerr.New(azerr.AuthorizationFailure)
	}
	rule := sasEntityRead
	switch kind {
	case table.OpInsert:
		rule = sasEntityInsert
	case table.OpReplace, table.OpMerge:
		rule = sasEntityUpdate
		if ifMatch == "" {
			rule = sasEntityUpsert
		}
	case table.OpDelete:
		rule = sasEntityDelete
	}
	if err := server.CheckSASRule(r.sas, auth.Table, rule); err != nil {
		return err
	}
	return checkEntityRange(r, pk, rk)
}

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

package table

import (
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// authorizeSAS verifies the request's SAS for the routed operation; the
// stored access policies come from the table's ACL, read now. Entity
// operations addressed by key must fall in the SAS's key range.
func (s *Service) authorizeSAS(r *req) error {
	rule, ok := r.route.Rule()
	table := r.table
	if r.opName == "batch" {
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
	return server.Policies(func() ([]policy.Stored, error) {
		var acl []policy.Stored
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
	rule := sasEntityRead
	switch kind {
	case opInsert:
		rule = sasEntityInsert
	case opReplace, opMerge:
		rule = sasEntityUpdate
		if ifMatch == "" {
			rule = sasEntityUpsert
		}
	case opDelete:
		rule = sasEntityDelete
	}
	if err := server.CheckSASRule(r.sas, auth.Table, rule); err != nil {
		return err
	}
	return checkEntityRange(r, pk, rk)
}

package table

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/table/odata"
)

// purgeChunk is how many keys one purge transaction deletes, so that
// deleting a large table never holds the writer for long.
const purgeChunk = 2000

// createTable is Create Table.
func (s *Service) createTable(w http.ResponseWriter, r *req) error {
	f, err := r.format()
	if err != nil {
		return err
	}
	if err := checkContentType(r.Header); err != nil {
		return err
	}
	body, err := readBody(r.Request.Request, 64<<10)
	if err != nil {
		return err
	}
	var in struct {
		TableName *string `json:"TableName"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return invalidJSON(err)
	}
	if in.TableName == nil {
		return azerr.Newf(azerr.PropertiesNeedValue, "The TableName property is required.")
	}
	name := *in.TableName
	if err := checkTableName(name); err != nil {
		return err
	}
	if err := s.CreateTable(r.Context(), r.Account, name); err != nil {
		return err
	}
	h := w.Header()
	loc := baseURL(r) + "/Tables('" + name + "')"
	h.Set("Location", loc)
	h.Set("DataServiceId", loc)
	switch preference(r.Header) {
	case "return-no-content":
		h.Set("Preference-Applied", "return-no-content")
		w.WriteHeader(http.StatusNoContent)
		return nil
	case "return-content":
		h.Set("Preference-Applied", "return-content")
	}
	out := &jsonOut{f: f, base: baseURL(r), account: r.Account}
	return writeJSON(w, f, http.StatusCreated, out.appendTable(nil, name, true))
}

// deleteTable is Delete Table: 204 once the table and its entities are
// gone (DeleteTable).
func (s *Service) deleteTable(w http.ResponseWriter, r *req) error {
	if err := checkTableName(r.table); err != nil {
		return err
	}
	if err := s.DeleteTable(r.Context(), r.Account, r.table); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// purge deletes the entities and partition marks of generation gen of a
// table being deleted, purgeChunk keys per transaction, folding their
// timestamps into the record's Floor, and finally turns
// the record into a tombstone. It stops as soon as the record is no
// longer that generation being deleted.
func (s *Service) purge(ctx context.Context, acct, name string, gen uint64) error {
	for {
		done := false
		err := s.store.Update(ctx, func(tx kv.Tx) (err error) {
			done, err = purgeStep(tx, acct, name, gen, purgeChunk)
			return err
		})
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// purgeStep deletes up to budget entity and partition-mark keys of
// generation gen (0: whichever is being deleted) of table name in tx;
// done once the record is a tombstone (or no longer that generation
// being deleted).
func purgeStep(tx kv.Tx, acct, name string, gen uint64, budget int) (bool, error) {
	t, err := loadTable(tx, acct, name)
	if err != nil {
		return false, err
	}
	if t == nil || t.State != stateDeleting || (gen != 0 && t.Gen != gen) {
		return true, nil
	}
	for i, prefix := range [][]byte{entityPrefix(acct, name), hwmPrefix(acct, name)} {
		marks := i == 1
		var keys [][]byte
		err := tx.Scan(prefix, kv.PrefixEnd(prefix), budget, false, func(k, v []byte) bool {
			keys = append(keys, append([]byte(nil), k...))
			// Fold every timestamp (marks, and entities, whose
			// timestamp follows the format byte) into the floor.
			var ts int64
			switch {
			case marks && len(v) == 8:
				ts = int64(binary.BigEndian.Uint64(v))
			case !marks && len(v) >= 9:
				ts = int64(binary.BigEndian.Uint64(v[1:9]))
			}
			t.Floor = max(t.Floor, ts)
			return true
		})
		if err != nil {
			return false, err
		}
		for _, k := range keys {
			if err := tx.Delete(k); err != nil {
				return false, err
			}
		}
		budget -= len(keys)
		if budget <= 0 {
			return false, putTable(tx, acct, t)
		}
	}
	t.State, t.ACL = stateDeleted, nil
	return true, putTable(tx, acct, t)
}

// getTable is Query Tables addressed to one table: Tables('name').
func (s *Service) getTable(w http.ResponseWriter, r *req) error {
	f, err := r.format()
	if err != nil {
		return err
	}
	name, err := s.GetTable(r.Context(), r.Account, r.table)
	if err != nil {
		return err
	}
	out := &jsonOut{f: f, base: baseURL(r), account: r.Account}
	return writeJSON(w, f, http.StatusOK, out.appendTable(nil, name, true))
}

type signedIdentifiers struct {
	XMLName xml.Name   `xml:"SignedIdentifiers"`
	Items   []signedID `xml:"SignedIdentifier"`
}

// getTableACL is Get Table ACL.
func (s *Service) getTableACL(w http.ResponseWriter, r *req) error {
	acl, err := s.GetTableACL(r.Context(), r.Account, r.table)
	if err != nil {
		return err
	}
	return server.WriteXML(w, http.StatusOK, signedIdentifiers{Items: acl})
}

// setTableACL is Set Table ACL.
func (s *Service) setTableACL(w http.ResponseWriter, r *req) error {
	body, err := readBody(r.Request.Request, 64<<10)
	if err != nil {
		return err
	}
	acl, err := parseTableACL(body)
	if err != nil {
		return err
	}
	if err := s.SetTableACL(r.Context(), r.Account, r.table, acl); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// parseTableACL validates a Set Table ACL body: up to five stored access
// policies whose permissions are drawn from "raud" (query, add, update,
// delete) (Set Table ACL,
// https://learn.microsoft.com/en-us/rest/api/storageservices/set-table-acl).
// An empty body clears the ACL.
func parseTableACL(body []byte) ([]signedID, error) {
	var acl signedIdentifiers
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := xml.Unmarshal(body, &acl); err != nil {
			return nil, azerr.New(azerr.InvalidXMLDocument)
		}
	}
	if len(acl.Items) > maxACLPolicies {
		return nil, azerr.Newf(azerr.InvalidXMLDocument, "At most five stored access policies may be set.")
	}
	seen := map[string]bool{}
	for i := range acl.Items {
		it := &acl.Items[i]
		if it.ID == "" || len(it.ID) > maxSignedIDLength || seen[it.ID] {
			return nil, azerr.Newf(azerr.InvalidXMLDocument, "Signed identifier ids must be unique and 1 to 64 characters long.")
		}
		seen[it.ID] = true
		for _, t := range []*string{&it.Start, &it.Expiry} {
			if *t == "" {
				continue
			}
			tm, err := odata.ParseDateTime(strings.TrimSpace(*t))
			if err != nil {
				return nil, azerr.Newf(azerr.InvalidXMLNodeValue, "The access policy time '%s' is not a valid ISO 8601 time.", *t)
			}
			*t = odata.FormatDateTime(tm)
		}
		for _, ch := range it.Permission {
			if !strings.ContainsRune("raud", ch) {
				return nil, azerr.Newf(azerr.InvalidXMLNodeValue, "The permission '%s' is not valid for a table; use r, a, u and d.", it.Permission)
			}
		}
	}
	return acl.Items, nil
}

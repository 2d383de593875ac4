package tablerest

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/table"
	"github.com/cerulean-storage/cerulean/internal/table/odata"
)

// createTable is Create Table.
func (s *Service) createTable(r *req) (server.Response, error) {
	f, err := r.format()
	if err != nil {
		return server.Response{}, err
	}
	if err := checkContentType(r.Header); err != nil {
		return server.Response{}, err
	}
	body, err := readBody(r.Request.Request, 64<<10)
	if err != nil {
		return server.Response{}, err
	}
	var in struct {
		TableName *string `json:"TableName"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return server.Response{}, invalidJSON(err)
	}
	if in.TableName == nil {
		return server.Response{}, azerr.Newf(azerr.PropertiesNeedValue, "The TableName property is required.")
	}
	name := *in.TableName
	if err := checkTableName(name); err != nil {
		return server.Response{}, err
	}
	if _, err := s.t.CreateTable(r.Context(), table.CreateTableInput{Account: r.Account, Name: name}); err != nil {
		return server.Response{}, err
	}
	loc := baseURL(r) + "/Tables('" + name + "')"
	head := []server.HeaderField{{Name: "Location", Value: loc}, {Name: "Dataserviceid", Value: loc}}
	switch preference(r.Header) {
	case "return-no-content":
		resp := server.Response{Status: http.StatusNoContent, Header: head}
		return resp.With("Preference-Applied", "return-no-content"), nil
	case "return-content":
		head = append(head, server.HeaderField{Name: "Preference-Applied", Value: "return-content"})
	}
	out := &jsonOut{f: f, base: baseURL(r), account: r.Account}
	return jsonResponse(f, http.StatusCreated, out.appendTable(nil, name, true), head...), nil
}

// deleteTable is Delete Table: 204 once the table and its entities are
// gone (DeleteTable).
func (s *Service) deleteTable(r *req) (server.Response, error) {
	if err := checkTableName(r.table); err != nil {
		return server.Response{}, err
	}
	if _, err := s.t.DeleteTable(r.Context(), table.DeleteTableInput{Account: r.Account, Name: r.table}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusNoContent), nil
}

// getTable is Query Tables addressed to one table: Tables('name').
func (s *Service) getTable(r *req) (server.Response, error) {
	f, err := r.format()
	if err != nil {
		return server.Response{}, err
	}
	got, err := s.t.GetTable(r.Context(), table.GetTableInput{Account: r.Account, Name: r.table})
	if err != nil {
		return server.Response{}, err
	}
	name := got.Name
	out := &jsonOut{f: f, base: baseURL(r), account: r.Account}
	return jsonResponse(f, http.StatusOK, out.appendTable(nil, name, true)), nil
}

type signedIdentifiers struct {
	XMLName xml.Name        `xml:"SignedIdentifiers"`
	Items   []policy.Stored `xml:"SignedIdentifier"`
}

// getTableACL is Get Table ACL.
func (s *Service) getTableACL(r *req) (server.Response, error) {
	got, err := s.t.GetTableACL(r.Context(), table.GetTableACLInput{Account: r.Account, Table: r.table})
	if err != nil {
		return server.Response{}, err
	}
	acl := got.Policies
	return server.XML(http.StatusOK, signedIdentifiers{Items: acl})
}

// setTableACL is Set Table ACL.
func (s *Service) setTableACL(r *req) (server.Response, error) {
	body, err := readBody(r.Request.Request, 64<<10)
	if err != nil {
		return server.Response{}, err
	}
	acl, err := parseTableACL(body)
	if err != nil {
		return server.Response{}, err
	}
	if _, err := s.t.SetTableACL(r.Context(), table.SetTableACLInput{Account: r.Account, Table: r.table, Policies: acl}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusNoContent), nil
}

// parseTableACL validates a Set Table ACL body: up to five stored access
// policies whose permissions are drawn from "raud" (query, add, update,
// delete) (Set Table ACL,
// https://learn.microsoft.com/en-us/rest/api/storageservices/set-table-acl).
// An empty body clears the ACL.
func parseTableACL(body []byte) ([]policy.Stored, error) {
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

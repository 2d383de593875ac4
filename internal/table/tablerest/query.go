package tablerest

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/server"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/table"
	"github.com/cerulean-storage/cerulean/internal/table/odata"
)

func parseFilter(s string) (*odata.Filter, error) {
	f, err := odata.Parse(s)
	if err != nil {
		var se *odata.SyntaxError
		if errors.As(err, &se) {
			return nil, azerr.Newf(azerr.InvalidInput, "%s", se.Error())
		}
		return nil, azerr.New(azerr.InvalidInput)
	}
	return f, nil
}

// parseSelect reads $select: nil means every property.
func parseSelect(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" || strings.TrimSpace(s) == "*" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "*" {
			return nil, nil
		}
		if p == "" || len(p) > maxPropNameLen || strings.ContainsAny(p, " ()'/") {
			return nil, azerr.Newf(azerr.InvalidInput, "The $select value '%s' is not a valid property list.", s)
		}
		dup := false
		for _, q := range out {
			if q == p {
				dup = true
			}
		}
		if !dup {
			out = append(out, p)
		}
	}
	return out, nil
}

// parseTop reads $top: 1 to 1000, default 1000.
func parseTop(s string) (int, error) {
	if s == "" {
		return maxPageSize, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxPageSize {
		return 0, azerr.Newf(azerr.InvalidInput, "The $top value '%s' must be an integer between 1 and %d.", s, maxPageSize)
	}
	return n, nil
}

// queryEntities is Query Entities over a table.
func (s *Service) queryEntities(r *req) (server.Response, error) {
	f, err := r.format()
	if err != nil {
		return server.Response{}, err
	}
	sel, err := parseSelect(r.q.Get("$select"))
	if err != nil {
		return server.Response{}, err
	}
	in := table.QueryEntitiesInput{Account: r.Account, Table: r.table}
	if in.Top, err = parseTop(r.q.Get("$top")); err != nil {
		return server.Response{}, err
	}
	if fs := r.q.Get("$filter"); fs != "" {
		if in.Filter, err = parseFilter(fs); err != nil {
			return server.Response{}, err
		}
	}
	npk, hasNPK := r.q["NextPartitionKey"]
	nrk := r.q.Get("NextRowKey")
	if hasNPK && npk[0] != "" {
		pk, ok := decodeToken(npk[0])
		if !ok {
			return server.Response{}, azerr.InvalidQuery("NextPartitionKey", npk[0])
		}
		rk := ""
		if nrk != "" {
			if rk, ok = decodeToken(nrk); !ok {
				return server.Response{}, azerr.InvalidQuery("NextRowKey", nrk)
			}
		}
		in.From = &table.Continuation{PartitionKey: pk, RowKey: rk}
	}
	if r.sas != nil {
		// A SAS with a key range sees only the entities in it.
		in.Allows = r.sas.AllowsEntity
	}
	page, err := s.t.QueryEntities(r.Context(), in)
	if err != nil {
		return server.Response{}, err
	}
	var head []server.HeaderField
	if page.Next != nil {
		head = append(head, server.HeaderField{Name: "X-Ms-Continuation-Nextpartitionkey", Value: encodeToken(page.Next.PartitionKey)},
			server.HeaderField{Name: "X-Ms-Continuation-Nextrowkey", Value: encodeToken(page.Next.RowKey)})
	}
	out := &jsonOut{f: f, base: baseURL(r), account: r.Account, table: r.table, sel: sel}
	b := make([]byte, 0, 256*len(page.Entities)+128)
	b = append(b, '{')
	if f != noMeta {
		b = append(b, `"odata.metadata":`...)
		b = appendJSONString(b, out.base+"/$metadata#"+r.table)
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i, e := range page.Entities {
		if i > 0 {
			b = append(b, ',')
		}
		b = out.appendEntity(b, e, false)
	}
	b = append(b, "]}"...)
	return jsonResponse(f, http.StatusOK, b, head...), nil
}

// queryTables is Query Tables.
func (s *Service) queryTables(r *req) (server.Response, error) {
	f, err := r.format()
	if err != nil {
		return server.Response{}, err
	}
	in := table.QueryTablesInput{Account: r.Account}
	if in.Top, err = parseTop(r.q.Get("$top")); err != nil {
		return server.Response{}, err
	}
	if fs := r.q.Get("$filter"); fs != "" {
		if in.Filter, err = parseFilter(fs); err != nil {
			return server.Response{}, err
		}
	}
	if tok := r.q.Get("NextTableName"); tok != "" {
		name, ok := decodeToken(tok)
		if !ok {
			return server.Response{}, azerr.InvalidQuery("NextTableName", tok)
		}
		in.From, in.HasFrom = name, true
	}
	page, err := s.t.QueryTables(r.Context(), in)
	if err != nil {
		return server.Response{}, err
	}
	var head []server.HeaderField
	if page.Next != "" {
		head = append(head, server.HeaderField{Name: "X-Ms-Continuation-Nexttablename", Value: encodeToken(page.Next)})
	}
	out := &jsonOut{f: f, base: baseURL(r), account: r.Account}
	b := []byte{'{'}
	if f != noMeta {
		b = append(b, `"odata.metadata":`...)
		b = appendJSONString(b, out.base+"/$metadata#Tables")
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i, n := range page.Names {
		if i > 0 {
			b = append(b, ',')
		}
		b = out.appendTable(b, n, false)
	}
	b = append(b, "]}"...)
	return jsonResponse(f, http.StatusOK, b, head...), nil
}

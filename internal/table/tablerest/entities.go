package tablerest

import (
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/server"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/table"
	"github.com/cerulean-storage/cerulean/internal/table/odata"
)

// parseIfMatch validates If-Match (and the absence of If-None-Match) for
// a write of kind.
func parseIfMatch(h http.Header, kind table.OpKind) (table.Condition, error) {
	if h.Get("If-None-Match") != "" {
		return table.Condition{}, azerr.Newf(azerr.InvalidInput, "If-None-Match HTTP header cannot be specified for PUT, MERGE or DELETE operations.")
	}
	v := h.Get("If-Match")
	switch {
	case v == "" && kind == table.OpDelete:
		return table.Condition{}, azerr.MissingHeader("If-Match")
	case v == "":
		return table.Condition{}, nil
	case v == "*":
		return table.Condition{Set: true, Any: true}, nil
	}
	ts, ok := parseETag(v)
	if !ok && len(v) > 3 && strings.EqualFold(v[:3], `W/"`) && strings.HasSuffix(v, `"`) {
		// A weak ETag the service never issued (another timestamp form,
		// another service's value, a lower-case w/ prefix, which
		// HTTP clients may send and Azure answers as it answers W/) is
		// well formed: it matches no entity, so the write fails its
		// condition (412 UpdateConditionNotSatisfied, or 404 when there
		// is no entity), as on Azure. Only a value that is no ETag at
		// all is 400.
		return table.Condition{Set: true, ETag: table.NoETag}, nil
	}
	if !ok {
		return table.Condition{}, azerr.Newf(azerr.InvalidInput, "The etag value '%s' specified in one of the request headers is not valid. Please make sure only one etag value is specified and is valid.", v)
	}
	return table.Condition{Set: true, ETag: ts}, nil
}

// buildWriteOp turns a request's parts into an EntityWrite for
// table/pk/rk: the If-Match (parsed first, as its errors come first) and
// the OData JSON body (none for a delete). For inserts the keys come from
// the body.
func buildWriteOp(kind table.OpKind, tbl, pk, rk string, keyed bool, h http.Header, body []byte) (*table.EntityWrite, error) {
	o := &table.EntityWrite{Kind: kind, Table: tbl, PartitionKey: pk, RowKey: rk}
	if kind != table.OpInsert {
		var err error
		if o.If, err = parseIfMatch(h, kind); err != nil {
			return nil, err
		}
	}
	if kind == table.OpDelete {
		if err := table.CheckKey("PartitionKey", pk); err != nil {
			return nil, err
		}
		return o, table.CheckKey("RowKey", rk)
	}
	props, bpk, brk, err := parseEntityBody(body)
	if err != nil {
		return nil, err
	}
	o.Props = props
	if !keyed {
		if bpk == nil || brk == nil {
			return nil, azerr.Newf(azerr.PropertiesNeedValue, "The PartitionKey and RowKey properties are required.")
		}
		o.PartitionKey, o.RowKey = *bpk, *brk
	}
	if err := table.CheckKey("PartitionKey", o.PartitionKey); err != nil {
		return nil, err
	}
	if err := table.CheckKey("RowKey", o.RowKey); err != nil {
		return nil, err
	}
	if err := table.CheckEntity(o.PartitionKey, o.RowKey, props); err != nil {
		return nil, err
	}
	return o, nil
}

func (s *Service) insertEntity(r *req) (server.Response, error) {
	f, err := r.format()
	if err != nil {
		return server.Response{}, err
	}
	if err := checkContentType(r.Header); err != nil {
		return server.Response{}, err
	}
	body, err := readBody(r.Request.Request, maxBodySize)
	if err != nil {
		return server.Response{}, err
	}
	o, err := buildWriteOp(table.OpInsert, r.table, "", "", false, r.Header, body)
	if err != nil {
		return server.Response{}, err
	}
	if err := checkEntityRange(r, o.PartitionKey, o.RowKey); err != nil {
		return server.Response{}, err
	}
	prefer := preference(r.Header)
	written, err := s.t.WriteEntity(r.Context(), table.WriteEntityInput{Account: r.Account, Write: o})
	if err != nil {
		return server.Response{}, err
	}
	e, ts := written.Entity, written.Timestamp
	loc := baseURL(r) + "/" + r.table + keyPredicate(o.PartitionKey, o.RowKey)
	head := []server.HeaderField{{Name: "Etag", Value: formatETag(ts)}, {Name: "Location", Value: loc}, {Name: "Dataserviceid", Value: loc}}
	if prefer == "return-no-content" {
		resp := server.Response{Status: http.StatusNoContent, Header: head}
		return resp.With("Preference-Applied", "return-no-content").With("Dataserviceversion", "3.0;"), nil
	}
	if prefer == "return-content" {
		head = append(head, server.HeaderField{Name: "Preference-Applied", Value: "return-content"})
	}
	out := &jsonOut{f: f, base: baseURL(r), account: r.Account, table: r.table}
	return jsonResponse(f, http.StatusCreated, out.appendEntity(nil, e, true), head...), nil
}

func (s *Service) writeOp(r *req, kind table.OpKind) (server.Response, error) {
	var body []byte
	if kind != table.OpDelete {
		if err := checkContentType(r.Header); err != nil {
			return server.Response{}, err
		}
		var err error
		if body, err = readBody(r.Request.Request, maxBodySize); err != nil {
			return server.Response{}, err
		}
	}
	o, err := buildWriteOp(kind, r.table, r.pk, r.rk, true, r.Header, body)
	if err != nil {
		return server.Response{}, err
	}
	written, err := s.t.WriteEntity(r.Context(), table.WriteEntityInput{Account: r.Account, Write: o})
	if err != nil {
		return server.Response{}, err
	}
	resp := server.Bodiless(http.StatusNoContent)
	if kind != table.OpDelete {
		resp = resp.With("Etag", formatETag(written.Timestamp))
	}
	return resp.With("Dataserviceversion", "1.0;"), nil
}

// updateEntity is Update Entity (PUT with If-Match) and Insert Or
// Replace Entity (PUT without).
func (s *Service) updateEntity(r *req) (server.Response, error) {
	return s.writeOp(r, table.OpReplace)
}

// mergeEntity is Merge Entity (MERGE with If-Match) and Insert Or Merge
// Entity (MERGE without).
func (s *Service) mergeEntity(r *req) (server.Response, error) {
	return s.writeOp(r, table.OpMerge)
}

func (s *Service) deleteEntity(r *req) (server.Response, error) {
	return s.writeOp(r, table.OpDelete)
}

// getEntity is Query Entities addressed to one entity.
func (s *Service) getEntity(r *req) (server.Response, error) {
	f, err := r.format()
	if err != nil {
		return server.Response{}, err
	}
	sel, err := parseSelect(r.q.Get("$select"))
	if err != nil {
		return server.Response{}, err
	}
	var filter *odata.Filter
	if fs := r.q.Get("$filter"); fs != "" {
		if filter, err = parseFilter(fs); err != nil {
			return server.Response{}, err
		}
	}
	got, err := s.t.GetEntity(r.Context(), table.GetEntityInput{EntityKey: table.EntityKey{Account: r.Account, Table: r.table, PartitionKey: r.pk, RowKey: r.rk}, Filter: filter})
	if err != nil {
		return server.Response{}, err
	}
	e := got.Entity
	out := &jsonOut{f: f, base: baseURL(r), account: r.Account, table: r.table, sel: sel}
	return jsonResponse(f, http.StatusOK, out.appendEntity(nil, e, true), server.HeaderField{Name: "Etag", Value: formatETag(e.Timestamp())}), nil
}

package table

import (
	"context"
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/table/odata"
)

// opKind is an entity write.
type opKind int

const (
	opInsert  opKind = iota // Insert Entity
	opReplace               // Update Entity, or Insert Or Replace without If-Match
	opMerge                 // Merge Entity, or Insert Or Merge without If-Match
	opDelete                // Delete Entity
)

// entityOp is one validated entity write, from a request or a batch
// part. It is immutable once built, so a transaction that runs it again
// gets the same result.
type entityOp struct {
	kind   opKind
	table  string
	pk, rk string
	props  []property
	// ifMatch is "" (none: upsert for replace/merge), "*" or an ETag
	// whose timestamp is etag.
	ifMatch string
	etag    int64
	// prefer is the Prefer header of an insert.
	prefer string
}

// noETag is the timestamp of a weak ETag no entity has.
const noETag = -1

// parseIfMatch validates If-Match for op and returns the ETag timestamp.
func parseIfMatch(h http.Header, kind opKind) (string, int64, error) {
	if h.Get("If-None-Match") != "" {
		return "", 0, azerr.Newf(azerr.InvalidInput, "If-None-Match HTTP header cannot be specified for PUT, MERGE or DELETE operations.")
	}
	v := h.Get("If-Match")
	switch {
	case v == "" && kind == opDelete:
		return "", 0, azerr.MissingHeader("If-Match")
	case v == "" || v == "*":
		return v, 0, nil
	}
	ts, ok := parseETag(v)
	if !ok && len(v) > 3 && strings.HasPrefix(v, `W/"`) && strings.HasSuffix(v, `"`) {
		// A weak ETag the service never issued (another timestamp form,
		// another service's value) is well formed: it matches no
		// entity, so the write fails its condition (412
		// UpdateConditionNotSatisfied, or 404 when there is no entity),
		// as on Azure. Only a value that is no ETag at all is 400.
		return v, noETag, nil
	}
	if !ok {
		return "", 0, azerr.Newf(azerr.InvalidInput, "The etag value '%s' specified in one of the request headers is not valid. Please make sure only one etag value is specified and is valid.", v)
	}
	return v, ts, nil
}

// buildWriteOp turns a parsed body into an entityOp for table/pk/rk. For
// inserts the keys come from the body.
func buildWriteOp(kind opKind, table, pk, rk string, keyed bool, h http.Header, body []byte) (*entityOp, error) {
	o := &entityOp{kind: kind, table: table, pk: pk, rk: rk}
	if kind != opInsert {
		var err error
		if o.ifMatch, o.etag, err = parseIfMatch(h, kind); err != nil {
			return nil, err
		}
	} else {
		o.prefer = preference(h)
	}
	if kind == opDelete {
		if err := checkKey("PartitionKey", pk); err != nil {
			return nil, err
		}
		return o, checkKey("RowKey", rk)
	}
	props, bpk, brk, err := parseEntityBody(body)
	if err != nil {
		return nil, err
	}
	o.props = props
	if !keyed {
		if bpk == nil || brk == nil {
			return nil, azerr.Newf(azerr.PropertiesNeedValue, "The PartitionKey and RowKey properties are required.")
		}
		o.pk, o.rk = *bpk, *brk
	}
	if err := checkKey("PartitionKey", o.pk); err != nil {
		return nil, err
	}
	if err := checkKey("RowKey", o.rk); err != nil {
		return nil, err
	}
	if err := checkEntity(&entity{pk: o.pk, rk: o.rk, props: props}); err != nil {
		return nil, err
	}
	return o, nil
}

// load reads the entity the operation addresses (nil when absent).
func (o *entityOp) load(tx kv.Tx, acct string) (*entity, error) {
	return loadEntity(tx, acct, o.table, o.pk, o.rk)
}

// apply runs the operation in tx against old (the entity as loaded) with
// timestamp ts. It returns the stored entity (nil after a delete).
func (o *entityOp) apply(tx kv.Tx, acct string, old *entity, ts int64) (*entity, error) {
	key := entityKey(acct, o.table, o.pk, o.rk)
	if o.kind == opInsert {
		if old != nil {
			return nil, azerr.New(azerr.EntityAlreadyExists)
		}
	} else if o.ifMatch != "" {
		if old == nil {
			return nil, azerr.New(azerr.ResourceNotFound)
		}
		if o.ifMatch != "*" && old.ts != o.etag {
			return nil, azerr.New(azerr.UpdateConditionNotSatisfied)
		}
	}
	if o.kind == opDelete {
		if old == nil {
			return nil, azerr.New(azerr.ResourceNotFound)
		}
		if err := retire(tx, acct, o.table, o.pk, old.ts); err != nil {
			return nil, err
		}
		return nil, tx.Delete(key)
	}
	e := &entity{pk: o.pk, rk: o.rk, ts: ts}
	if o.kind == opMerge && old != nil {
		e.props = mergeProps(old.props, o.props)
		if err := checkEntity(e); err != nil {
			return nil, err
		}
	} else {
		e.props = o.props
	}
	return e, tx.Put(key, encodeEntity(e))
}

// lastTS is the timestamp a new write must exceed for old.
func lastTS(old *entity) int64 {
	if old == nil {
		return 0
	}
	return old.ts
}

// mergeProps overlays upd on old: existing properties keep their place,
// new ones are appended.
func mergeProps(old, upd []property) []property {
	out := make([]property, len(old), len(old)+len(upd))
	copy(out, old)
	for _, p := range upd {
		replaced := false
		for i := range out {
			if out[i].name == p.name {
				out[i] = p
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, p)
		}
	}
	return out
}

// runSingle applies one entity operation in its own transaction.
func (s *Service) runSingle(ctx context.Context, r *req, o *entityOp) (*entity, int64, error) {
	var stored *entity
	var ts int64
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		// The table, the entity and the partition's high-water mark: one
		// round trip on a backend where reads are remote.
		if err := kv.Prefetch(tx, tableKey(r.Account, o.table), entityKey(r.Account, o.table, o.pk, o.rk), hwmKey(r.Account, o.table, o.pk)); err != nil {
			return err
		}
		t, err := activeTable(tx, r.Account, o.table)
		if err != nil {
			return err
		}
		old, err := o.load(tx, r.Account)
		if err != nil {
			return err
		}
		if ts, err = nextTimestamp(tx, r.Account, t, o.pk, r.Now, lastTS(old)); err != nil {
			return err
		}
		stored, err = o.apply(tx, r.Account, old, ts)
		return err
	})
	return stored, ts, err
}

func (s *Service) insertEntity(w http.ResponseWriter, r *req) error {
	f, err := r.format()
	if err != nil {
		return err
	}
	if err := checkContentType(r.Header); err != nil {
		return err
	}
	body, err := readBody(r.Request.Request, maxBodySize)
	if err != nil {
		return err
	}
	o, err := buildWriteOp(opInsert, r.table, "", "", false, r.Header, body)
	if err != nil {
		return err
	}
	if err := checkEntityRange(r, o.pk, o.rk); err != nil {
		return err
	}
	e, ts, err := s.runSingle(r.Context(), r, o)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("ETag", formatETag(ts))
	loc := baseURL(r) + "/" + r.table + keyPredicate(o.pk, o.rk)
	h.Set("Location", loc)
	h.Set("DataServiceId", loc)
	if o.prefer == "return-no-content" {
		h.Set("Preference-Applied", "return-no-content")
		h.Set("DataServiceVersion", "3.0;")
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if o.prefer == "return-content" {
		h.Set("Preference-Applied", "return-content")
	}
	out := &jsonOut{f: f, base: baseURL(r), account: r.Account, table: r.table}
	return writeJSON(w, f, http.StatusCreated, out.appendEntity(nil, e, true))
}

func (s *Service) writeOp(w http.ResponseWriter, r *req, kind opKind) error {
	var body []byte
	if kind != opDelete {
		if err := checkContentType(r.Header); err != nil {
			return err
		}
		var err error
		if body, err = readBody(r.Request.Request, maxBodySize); err != nil {
			return err
		}
	}
	o, err := buildWriteOp(kind, r.table, r.pk, r.rk, true, r.Header, body)
	if err != nil {
		return err
	}
	_, ts, err := s.runSingle(r.Context(), r, o)
	if err != nil {
		return err
	}
	h := w.Header()
	if kind != opDelete {
		h.Set("ETag", formatETag(ts))
	}
	h.Set("DataServiceVersion", "1.0;")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// updateEntity is Update Entity (PUT with If-Match) and Insert Or
// Replace Entity (PUT without).
func (s *Service) updateEntity(w http.ResponseWriter, r *req) error {
	return s.writeOp(w, r, opReplace)
}

// mergeEntity is Merge Entity (MERGE with If-Match) and Insert Or Merge
// Entity (MERGE without).
func (s *Service) mergeEntity(w http.ResponseWriter, r *req) error {
	return s.writeOp(w, r, opMerge)
}

func (s *Service) deleteEntity(w http.ResponseWriter, r *req) error {
	return s.writeOp(w, r, opDelete)
}

// getEntity is Query Entities addressed to one entity.
func (s *Service) getEntity(w http.ResponseWriter, r *req) error {
	f, err := r.format()
	if err != nil {
		return err
	}
	sel, err := parseSelect(r.q.Get("$select"))
	if err != nil {
		return err
	}
	var filter *odata.Filter
	if fs := r.q.Get("$filter"); fs != "" {
		if filter, err = parseFilter(fs); err != nil {
			return err
		}
	}
	var e *entity
	err = s.store.View(r.Context(), func(tx kv.Tx) error {
		// Table and entity in one round trip on PostgreSQL.
		if err := kv.Prefetch(tx, tableKey(r.Account, r.table), entityKey(r.Account, r.table, r.pk, r.rk)); err != nil {
			return err
		}
		if _, err := activeTable(tx, r.Account, r.table); err != nil {
			return err
		}
		var err error
		e, err = loadEntity(tx, r.Account, r.table, r.pk, r.rk)
		return err
	})
	if err != nil {
		return err
	}
	if e == nil || (filter != nil && !filter.Match(e)) {
		return azerr.New(azerr.ResourceNotFound)
	}
	w.Header().Set("ETag", formatETag(e.ts))
	out := &jsonOut{f: f, base: baseURL(r), account: r.Account, table: r.table, sel: sel}
	return writeJSON(w, f, http.StatusOK, out.appendEntity(nil, e, true))
}

package table

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/table/odata"
)

// The Table service's domain API. Every operation is one method of the
// shape (ctx, XxxInput) (XxxOutput, error). The REST front end
// (internal/table/tablerest) parses a request into typed values (names,
// an EntityWrite with its Condition, an odata.Filter, $top, continuation
// tokens), calls one of these methods and renders its typed result as
// OData JSON or its azerr error. Nothing in this package sees an
// *http.Request, a header name or a ResponseWriter. Each method runs its
// checks and writes in kv transactions and takes its time from the
// service's injected clock.

// CreateTableInput is Create Table.
type CreateTableInput struct {
	Account string
	// Name is the table's name as created, valid by Azure's rules (the
	// front end checks them).
	Name string
}

// CreateTableOutput is the outcome of Create Table (nothing beyond
// success).
type CreateTableOutput struct{}

// CreateTable creates the table. A delete of the same name that is still
// purging (or was cut short by a crash) is finished first; if another
// delete intervenes, 409 TableBeingDeleted. The work finishes even when
// ctx is cancelled, so that a client hanging up never leaves half a
// table.
func (s *Service) CreateTable(ctx context.Context, in CreateTableInput) (CreateTableOutput, error) {
	return CreateTableOutput{}, s.createTable(ctx, in.Account, in.Name)
}

func (s *Service) createTable(ctx context.Context, account, name string) error {
	ctx = context.WithoutCancel(ctx)
	now := s.clock.Now()
	for attempt := 0; ; attempt++ {
		var deleting bool
		var gen uint64
		err := s.store.Update(ctx, func(tx kv.Tx) error {
			deleting = false
			t, err := loadTable(tx, account, name)
			if err != nil {
				return err
			}
			nt := &tableRecord{Name: name, Created: now, Gen: 1}
			if t != nil {
				switch t.State {
				case stateActive:
					return azerr.New(azerr.TableAlreadyExists)
				case stateDeleting:
					deleting, gen = true, t.Gen
					if s.reclaimer != nil {
						// Reclaimed in the background: 409 until it
						// is done (the tombstone is written again for
						// a delete from before the reclaimer).
						return markTableDeleting(tx, account, name)
					}
					return nil
				}
				nt.Gen, nt.Floor = t.Gen+1, t.Floor
			}
			return putTable(tx, account, nt)
		})
		if err != nil {
			return err
		}
		if !deleting {
			return nil
		}
		if s.reclaimer != nil {
			s.reclaimer.Kick()
			return azerr.New(azerr.TableBeingDeleted)
		}
		// A delete of this name is unfinished (in progress, or cut short
		// by a crash): finish it, then create.
		if attempt > 0 {
			return azerr.New(azerr.TableBeingDeleted)
		}
		if err := s.purge(ctx, account, name, gen); err != nil {
			return err
		}
	}
}

// DeleteTableInput is Delete Table.
type DeleteTableInput struct {
	Account string
	Name    string
}

// DeleteTableOutput is the outcome of Delete Table (nothing beyond
// success).
type DeleteTableOutput struct{}

// DeleteTable deletes the table. The table disappears at once (its
// record is marked deleting in one transaction); its entities are then
// removed in bounded transactions by the background reclaimer
// (SetReclaimer, as the server runs; Create Table of the name answers 409
// TableBeingDeleted meanwhile), or without one in chunks before
// DeleteTable returns, even when ctx is cancelled.
func (s *Service) DeleteTable(ctx context.Context, in DeleteTableInput) (DeleteTableOutput, error) {
	return DeleteTableOutput{}, s.deleteTable(ctx, in.Account, in.Name)
}

func (s *Service) deleteTable(ctx context.Context, account, name string) error {
	var gen uint64
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		t, err := loadTable(tx, account, name)
		if err != nil {
			return err
		}
		if t == nil || t.State == stateDeleted {
			return azerr.New(azerr.ResourceNotFound)
		}
		if t.State == stateDeleting && s.reclaimer != nil {
			// Already deleted; the reclaimer is purging it (as Delete
			// Container of a container being reclaimed, 404).
			return azerr.New(azerr.ResourceNotFound)
		}
		gen = t.Gen
		if s.reclaimer != nil {
			if err := markTableDeleting(tx, account, name); err != nil {
				return err
			}
		}
		if t.State == stateDeleting {
			return nil // finish an interrupted delete
		}
		t.State = stateDeleting
		return putTable(tx, account, t)
	})
	if err != nil {
		return err
	}
	if s.reclaimer != nil {
		// A small table is purged before the answer (reclaim.Inline);
		// the rest in the background.
		gone, err := s.reclaimer.Finish(context.WithoutCancel(ctx), reclaimKindTable, account, strings.ToLower(name))
		if err != nil {
			s.log.Warn("table: purging a deleted table", "account", account, "table", name, "err", err)
		}
		if !gone {
			s.reclaimer.Kick()
		}
		return nil
	}
	return s.purge(context.WithoutCancel(ctx), account, name, gen)
}

// GetTableInput is Query Tables addressed to one table.
type GetTableInput struct {
	Account string
	// Name is the table's name in any case (table names are
	// case-insensitive).
	Name string
}

// GetTableOutput is the table found.
type GetTableOutput struct {
	// Name is the table's name as created.
	Name string
}

// GetTable returns the name of the table as created; 404
// ResourceNotFound when there is no such table.
func (s *Service) GetTable(ctx context.Context, in GetTableInput) (GetTableOutput, error) {
	account, name := in.Account, in.Name
	var stored string
	err := s.store.View(ctx, func(tx kv.Tx) error {
		t, err := loadTable(tx, account, name)
		if err != nil {
			return err
		}
		if t == nil || t.State != stateActive {
			return azerr.New(azerr.ResourceNotFound)
		}
		stored = t.Name
		return nil
	})
	return GetTableOutput{Name: stored}, err
}

// QueryTablesInput is Query Tables.
type QueryTablesInput struct {
	Account string
	// Filter, when not nil, selects tables by TableName.
	Filter *odata.Filter
	// Top is the page size, at least 1 (the front end allows up to
	// 1,000).
	Top int
	// From, when HasFrom, is the decoded NextTableName of the previous
	// page: the listing resumes at that name.
	From    string
	HasFrom bool
}

// QueryTablesOutput is one page of Query Tables.
type QueryTablesOutput struct {
	Names []string
	// Next is the NextTableName continuation (lower case), "" on the
	// last page.
	Next string
}

// tableView is what a Query Tables filter sees.
type tableView struct{ name string }

func (t tableView) Property(name string) (odata.Value, bool) {
	if name == "TableName" {
		return odata.StringValue(t.name), true
	}
	return odata.Value{}, false
}

// QueryTables lists the account's tables in (case-insensitive) name
// order.
func (s *Service) QueryTables(ctx context.Context, in QueryTablesInput) (QueryTablesOutput, error) {
	prefix := tablesPrefix(in.Account)
	start := prefix
	if in.HasFrom {
		start = kv.AppendComponent(append([]byte(nil), prefix...), in.From)
	}
	var out QueryTablesOutput
	err := s.store.View(ctx, func(tx kv.Tx) error {
		out = QueryTablesOutput{Names: out.Names[:0]}
		var ierr error
		err := tx.Scan(start, kv.PrefixEnd(prefix), 0, false, func(k, v []byte) bool {
			t, err := decodeTable(v)
			if err != nil {
				ierr = err
				return false
			}
			if t.State != stateActive {
				return true
			}
			if len(out.Names) == in.Top {
				out.Next = strings.ToLower(t.Name)
				return false
			}
			if in.Filter == nil || in.Filter.Match(tableView{t.Name}) {
				out.Names = append(out.Names, t.Name)
			}
			return true
		})
		if err != nil {
			return err
		}
		return ierr
	})
	return out, err
}

// GetTableACLInput is Get Table ACL.
type GetTableACLInput struct {
	Account string
	Table   string
}

// GetTableACLOutput is the table's ACL.
type GetTableACLOutput struct {
	// Policies are the stored access policies, in the order set.
	Policies []policy.Stored
}

// GetTableACL returns the table's stored access policies; 404
// TableNotFound when there is no such table.
func (s *Service) GetTableACL(ctx context.Context, in GetTableACLInput) (GetTableACLOutput, error) {
	var out GetTableACLOutput
	err := s.store.View(ctx, func(tx kv.Tx) error {
		t, err := activeTable(tx, in.Account, in.Table)
		if err != nil {
			return err
		}
		out.Policies = t.ACL
		return nil
	})
	return out, err
}

// SetTableACLInput is Set Table ACL.
type SetTableACLInput struct {
	Account string
	Table   string
	// Policies replace the stored access policies whole; the caller has
	// validated them (at most five, ids of 1–64 characters, ISO 8601
	// times, permissions from "raud").
	Policies []policy.Stored
}

// SetTableACLOutput is the outcome of Set Table ACL (nothing beyond
// success).
type SetTableACLOutput struct{}

// SetTableACL replaces the table's stored access policies; last writer
// wins.
func (s *Service) SetTableACL(ctx context.Context, in SetTableACLInput) (SetTableACLOutput, error) {
	return SetTableACLOutput{}, s.store.Update(ctx, func(tx kv.Tx) error {
		t, err := activeTable(tx, in.Account, in.Table)
		if err != nil {
			return err
		}
		t.ACL = in.Policies
		return putTable(tx, in.Account, t)
	})
}

// OpKind is the kind of an entity write.
type OpKind int

// The entity writes.
const (
	OpInsert  OpKind = iota // Insert Entity
	OpReplace               // Update Entity, or Insert Or Replace without If-Match
	OpMerge                 // Merge Entity, or Insert Or Merge without If-Match
	OpDelete                // Delete Entity
)

// Condition is an entity write's If-Match, parsed by the front end.
type Condition struct {
	// Set is true when an If-Match was given. Delete requires one;
	// without one, a replace or merge inserts the entity when it is
	// absent (Insert Or Replace Entity, Insert Or Merge Entity).
	Set bool
	// Any is If-Match: *, any existing entity.
	Any bool
	// ETag is the timestamp the entity must carry: the ETag's, or NoETag,
	// which no entity has.
	ETag int64
}

// EntityWrite is one validated entity write, from a request or a batch
// part: the typed input of WriteEntity and WriteBatch. It is immutable
// once built, so a transaction that runs it again gets the same result.
type EntityWrite struct {
	Kind         OpKind
	Table        string
	PartitionKey string
	RowKey       string
	// Props are the entity's custom properties (not for a delete).
	Props []Property
	If    Condition
}

// NoETag is the timestamp of a weak ETag no entity has: a Condition
// with it fails on every entity.
const NoETag = -1

// load reads the entity the operation addresses (nil when absent).
func (o *EntityWrite) load(tx kv.Tx, acct string) (*Entity, error) {
	return loadEntity(tx, acct, o.Table, o.PartitionKey, o.RowKey)
}

// apply runs the operation in tx against old (the entity as loaded) with
// timestamp ts. It returns the stored entity (nil after a delete).
func (o *EntityWrite) apply(tx kv.Tx, acct string, old *Entity, ts int64) (*Entity, error) {
	key := entityKey(acct, o.Table, o.PartitionKey, o.RowKey)
	if o.Kind == OpInsert {
		if old != nil {
			return nil, azerr.New(azerr.EntityAlreadyExists)
		}
	} else if o.If.Set {
		if old == nil {
			return nil, azerr.New(azerr.ResourceNotFound)
		}
		if !o.If.Any && old.ts != o.If.ETag {
			return nil, azerr.New(azerr.UpdateConditionNotSatisfied)
		}
	}
	if o.Kind == OpDelete {
		if old == nil {
			return nil, azerr.New(azerr.ResourceNotFound)
		}
		if err := retire(tx, acct, o.Table, o.PartitionKey, old.ts); err != nil {
			return nil, err
		}
		return nil, tx.Delete(key)
	}
	e := &Entity{pk: o.PartitionKey, rk: o.RowKey, ts: ts}
	if o.Kind == OpMerge && old != nil {
		e.props = mergeProps(old.props, o.Props)
		if err := checkEntity(e); err != nil {
			return nil, err
		}
	} else {
		e.props = o.Props
	}
	return e, tx.Put(key, encodeEntity(e))
}

// lastTS is the timestamp a new write must exceed for old.
func lastTS(old *Entity) int64 {
	if old == nil {
		return 0
	}
	return old.ts
}

// mergeProps overlays upd on old: existing properties keep their place,
// new ones are appended.
func mergeProps(old, upd []Property) []Property {
	out := make([]Property, len(old), len(old)+len(upd))
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

// applyWrites runs ops, which address distinct rows of one partition of
// table t, in tx: loading every entity first is the same as loading each
// just before its operation, and one timestamp newer than all of them
// (and than the partition's high-water mark) covers them all. It fills
// olds and results (len(ops) each; results[i] is nil after a delete) and
// returns the timestamp. An operation refused with an azerr error fails
// as *OpError naming its index.
func applyWrites(tx kv.Tx, acct string, t *tableRecord, ops []*EntityWrite, now time.Time, olds, results []*Entity) (int64, error) {
	after := int64(0)
	for i, o := range ops {
		old, err := o.load(tx, acct)
		if err != nil {
			return 0, err
		}
		olds[i] = old
		after = max(after, lastTS(old))
	}
	ts, err := nextTimestamp(tx, acct, t, ops[0].PartitionKey, now, after)
	if err != nil {
		return 0, err
	}
	for i, o := range ops {
		e, err := o.apply(tx, acct, olds[i], ts)
		if err != nil {
			if _, ok := azerr.As(err); ok {
				return 0, &OpError{Index: i, Err: err}
			}
			return 0, err
		}
		results[i] = e
	}
	return ts, nil
}

// WriteEntityInput is one entity write: Insert, Update, Merge or Delete
// Entity, Insert Or Replace or Insert Or Merge Entity.
type WriteEntityInput struct {
	Account string
	Write   *EntityWrite
}

// WriteEntityOutput is the outcome of an entity write.
type WriteEntityOutput struct {
	// Entity is the stored entity, nil after a delete.
	Entity *Entity
	// Timestamp is the write's timestamp in ticks, which is also the
	// entity's ETag.
	Timestamp int64
}

// WriteEntity applies one entity write in its own transaction.
func (s *Service) WriteEntity(ctx context.Context, in WriteEntityInput) (WriteEntityOutput, error) {
	e, ts, err := s.writeEntity(ctx, in.Account, in.Write)
	return WriteEntityOutput{Entity: e, Timestamp: ts}, err
}

func (s *Service) writeEntity(ctx context.Context, account string, o *EntityWrite) (*Entity, int64, error) {
	now := s.clock.Now()
	var res [1]*Entity
	var ts int64
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		// The table, the entity and the partition's high-water mark: one
		// round trip on a backend where reads are remote.
		if kv.Prefetches(tx) { // the keys are built only for a store that reads ahead
			if err := kv.Prefetch(tx, tableKey(account, o.Table), entityKey(account, o.Table, o.PartitionKey, o.RowKey), hwmKey(account, o.Table, o.PartitionKey)); err != nil {
				return err
			}
		}
		t, err := activeTable(tx, account, o.Table)
		if err != nil {
			return err
		}
		var olds [1]*Entity
		ts, err = applyWrites(tx, account, t, []*EntityWrite{o}, now, olds[:], res[:])
		return err
	})
	if oe, ok := err.(*OpError); ok {
		err = oe.Err
	}
	return res[0], ts, err
}

// WriteBatchInput is the writes of an entity group transaction. They
// address one table and one partition, each row at most once (the front
// end checks).
type WriteBatchInput struct {
	Account string
	Writes  []*EntityWrite
}

// WriteBatchOutput is the outcome of an entity group transaction.
type WriteBatchOutput struct {
	// Entities are the stored entities, one per write (nil for a
	// delete).
	Entities []*Entity
	// Timestamp is the timestamp, and ETag, every written entity shares.
	Timestamp int64
}

// WriteBatch applies the writes of an entity group transaction in one
// transaction: all of them or none. A failure that belongs to one write
// is *OpError naming its index (a missing table names the first).
func (s *Service) WriteBatch(ctx context.Context, in WriteBatchInput) (WriteBatchOutput, error) {
	es, ts, err := s.writeBatch(ctx, in.Account, in.Writes)
	return WriteBatchOutput{Entities: es, Timestamp: ts}, err
}

func (s *Service) writeBatch(ctx context.Context, account string, ops []*EntityWrite) ([]*Entity, int64, error) {
	now := s.clock.Now()
	results := make([]*Entity, len(ops))
	olds := make([]*Entity, len(ops))
	var ts int64
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		t, err := activeTable(tx, account, ops[0].Table)
		if err != nil {
			return &OpError{Index: 0, Err: err}
		}
		ts, err = applyWrites(tx, account, t, ops, now, olds, results)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return results, ts, nil
}

// EntityKey names one entity.
type EntityKey struct {
	Account      string
	Table        string
	PartitionKey string
	RowKey       string
}

// GetEntityInput is Query Entities addressed to one entity.
type GetEntityInput struct {
	EntityKey
	// Filter, when not nil, must match the entity.
	Filter *odata.Filter
}

// GetEntityOutput is the entity read.
type GetEntityOutput struct {
	Entity *Entity
}

// GetEntity reads one entity. A missing entity, or one the filter (when
// not nil) does not match, is 404 ResourceNotFound.
func (s *Service) GetEntity(ctx context.Context, in GetEntityInput) (GetEntityOutput, error) {
	e, err := s.getEntity(ctx, in.EntityKey, in.Filter)
	return GetEntityOutput{Entity: e}, err
}

func (s *Service) getEntity(ctx context.Context, k EntityKey, filter *odata.Filter) (*Entity, error) {
	var e *Entity
	err := s.store.View(ctx, func(tx kv.Tx) error {
		// Table and entity in one round trip on PostgreSQL.
		if kv.Prefetches(tx) { // the keys are built only for a store that reads ahead
			if err := kv.Prefetch(tx, tableKey(k.Account, k.Table), entityKey(k.Account, k.Table, k.PartitionKey, k.RowKey)); err != nil {
				return err
			}
		}
		if _, err := activeTable(tx, k.Account, k.Table); err != nil {
			return err
		}
		var err error
		e, err = loadEntity(tx, k.Account, k.Table, k.PartitionKey, k.RowKey)
		return err
	})
	if err != nil {
		return nil, err
	}
	if e == nil || (filter != nil && !filter.Match(e)) {
		return nil, azerr.New(azerr.ResourceNotFound)
	}
	return e, nil
}

// Continuation is where a query page ends and the next begins
// (x-ms-continuation-NextPartitionKey / NextRowKey, decoded).
type Continuation struct {
	PartitionKey string
	RowKey       string
}

// QueryEntitiesInput is Query Entities over a table.
type QueryEntitiesInput struct {
	Account string
	Table   string
	// Filter, when not nil, selects the entities; it also narrows the
	// scan to the key ranges it allows.
	Filter *odata.Filter
	// Top is the page size, at least 1 (the front end allows up to
	// 1,000).
	Top int
	// From, when not nil, resumes a query at a continuation.
	From *Continuation
	// Allows, when not nil, hides the entities it refuses (a SAS's key
	// range).
	Allows func(pk, rk string) bool
}

// QueryEntitiesOutput is one page of Query Entities.
type QueryEntitiesOutput struct {
	Entities []*Entity
	// Next is where the next page starts; nil on the last page.
	Next *Continuation
}

// QueryEntities returns one page of a table's entities in key order. A
// page ends after Top entities, or early (possibly empty, with a
// continuation) when scanning it took longer than scanBudget, as Azure's
// pages do (Query timeout and pagination,
// https://learn.microsoft.com/en-us/rest/api/storageservices/query-timeout-and-pagination).
// The budget is wall time spent, not the request's time, so it is
// measured with the real clock.
func (s *Service) QueryEntities(ctx context.Context, in QueryEntitiesInput) (QueryEntitiesOutput, error) {
	prefix := entityPrefix(in.Account, in.Table)
	start, end, empty := scanBounds(prefix, in.Filter)
	if in.From != nil {
		from := kv.AppendComponent(kv.AppendComponent(append([]byte(nil), prefix...), in.From.PartitionKey), in.From.RowKey)
		if bytes.Compare(from, start) > 0 {
			start = from
		}
	}
	var results []*Entity
	var nextPK, nextRK string
	more := false
	err := s.store.View(ctx, func(tx kv.Tx) error {
		results, more = results[:0], false
		if _, err := activeTable(tx, in.Account, in.Table); err != nil {
			return err
		}
		if empty || bytes.Compare(start, end) >= 0 {
			return nil
		}
		began := time.Now()
		scanned := 0
		var ierr error
		view := &entityView{}
		err := tx.Scan(start, end, 0, false, func(k, v []byte) bool {
			pk, rk, ok := splitEntityKey(k[len(prefix):])
			if !ok {
				ierr = errCorrupt
				return false
			}
			if len(results) == in.Top {
				nextPK, nextRK, more = string(pk), string(rk), true
				return false
			}
			scanned++
			if scanned%4096 == 0 && time.Since(began) > scanBudget {
				nextPK, nextRK, more = string(pk), string(rk), true
				return false
			}
			if in.Allows != nil && !in.Allows(string(pk), string(rk)) {
				return true
			}
			view.pk, view.rk, view.raw = pk, rk, v
			if in.Filter != nil && !in.Filter.Match(view) {
				return true
			}
			e, err := decodeEntity(string(pk), string(rk), v)
			if err != nil {
				ierr = err
				return false
			}
			results = append(results, e)
			return true
		})
		if err != nil {
			return err
		}
		return ierr
	})
	if err != nil {
		return QueryEntitiesOutput{}, err
	}
	out := QueryEntitiesOutput{Entities: results}
	if more {
		out.Next = &Continuation{PartitionKey: nextPK, RowKey: nextRK}
	}
	return out, nil
}

// OpError is the failure of one write of an entity group transaction:
// Index is the write's position in the batch (WriteBatch), Err its azerr
// error. The front end reports it as the failed part of the changeset.
type OpError struct {
	Index int
	Err   error
}

func (e *OpError) Error() string { return strconv.Itoa(e.Index) + ":" + e.Err.Error() }

// Unwrap returns Err.
func (e *OpError) Unwrap() error { return e.Err }

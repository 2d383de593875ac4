package table

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
	"github.com/cerulean-storage/cerulean/internal/table/odata"
)

func newDomainService(t *testing.T) (*Service, *clock.Fake) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "meta.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	return New(db, clk, slog.New(slog.NewTextHandler(io.Discard, nil))), clk
}

func write(kind OpKind, pk, rk string, cond Condition, props ...Property) *EntityWrite {
	return &EntityWrite{Kind: kind, Table: "dom", PartitionKey: pk, RowKey: rk, Props: props, If: cond}
}

// TestDomainAPIWithoutHTTP drives tables and entities through the typed
// domain methods alone, with time from the injected fake clock.
func TestDomainAPIWithoutHTTP(t *testing.T) {
	s, clk := newDomainService(t)
	ctx := context.Background()
	if _, err := s.CreateTable(ctx, CreateTableInput{Account: "acct", Name: "Dom"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTable(ctx, CreateTableInput{Account: "acct", Name: "dom"}); !azerr.Has(err, azerr.TableAlreadyExists) {
		t.Fatalf("second CreateTable: %v", err)
	}
	if got, err := s.GetTable(ctx, GetTableInput{Account: "acct", Name: "DOM"}); err != nil || got.Name != "Dom" {
		t.Fatalf("GetTable = %q, %v", got.Name, err)
	}

	n := Property{name: "N", val: odata.Int32Value(1)}
	ins, err := s.WriteEntity(ctx, WriteEntityInput{Account: "acct", Write: write(OpInsert, "p", "a", Condition{}, n)})
	if err != nil {
		t.Fatal(err)
	}
	e, ts := ins.Entity, ins.Timestamp
	if want := odata.Ticks(clk.Now()); ts != want || e.ts != want {
		t.Fatalf("insert timestamp %d (entity %d), want the clock's %d", ts, e.ts, want)
	}
	if _, err := s.WriteEntity(ctx, WriteEntityInput{Account: "acct", Write: write(OpInsert, "p", "a", Condition{}, n)}); !azerr.Has(err, azerr.EntityAlreadyExists) {
		t.Fatalf("insert again: %v", err)
	}
	// Same clock tick: the next write still gets a newer timestamp.
	stale := Condition{Set: true, ETag: ts}
	merged, err := s.WriteEntity(ctx, WriteEntityInput{Account: "acct", Write: write(OpMerge, "p", "a", stale, Property{name: "S", val: odata.StringValue("x")})})
	ts2 := merged.Timestamp
	if err != nil || ts2 <= ts {
		t.Fatalf("merge = %d, %v; want a timestamp after %d", ts2, err, ts)
	}
	if _, err := s.WriteEntity(ctx, WriteEntityInput{Account: "acct", Write: write(OpReplace, "p", "a", stale)}); !azerr.Has(err, azerr.UpdateConditionNotSatisfied) {
		t.Fatalf("replace with a stale ETag: %v", err)
	}
	read, err := s.GetEntity(ctx, GetEntityInput{EntityKey: EntityKey{Account: "acct", Table: "dom", PartitionKey: "p", RowKey: "a"}})
	got := read.Entity
	if err != nil || len(got.props) != 2 || got.ts != ts2 {
		t.Fatalf("GetEntity = %+v, %v", got, err)
	}
	f, err := odata.Parse("N eq 2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetEntity(ctx, GetEntityInput{EntityKey: EntityKey{Account: "acct", Table: "dom", PartitionKey: "p", RowKey: "a"}, Filter: f}); !azerr.Has(err, azerr.ResourceNotFound) {
		t.Fatalf("GetEntity with a filter it fails: %v", err)
	}

	// A batch applies each write as WriteEntity would, all or nothing:
	// the failing write is named by its index and nothing is applied.
	clk.Advance(time.Second)
	_, err = s.WriteBatch(ctx, WriteBatchInput{Account: "acct", Writes: []*EntityWrite{
		write(OpInsert, "p", "b", Condition{}, n),
		write(OpDelete, "p", "a", stale),
	}})
	var oe *OpError
	if !errors.As(err, &oe) || oe.Index != 1 || !azerr.Has(err, azerr.UpdateConditionNotSatisfied) {
		t.Fatalf("failing batch: %v", err)
	}
	if _, err := s.GetEntity(ctx, GetEntityInput{EntityKey: EntityKey{Account: "acct", Table: "dom", PartitionKey: "p", RowKey: "b"}}); !azerr.Has(err, azerr.ResourceNotFound) {
		t.Fatalf("a failed batch left its insert: %v", err)
	}
	batch, err := s.WriteBatch(ctx, WriteBatchInput{Account: "acct", Writes: []*EntityWrite{
		write(OpInsert, "p", "b", Condition{}, n),
		write(OpDelete, "p", "a", Condition{Set: true, Any: true}),
	}})
	results, bts := batch.Entities, batch.Timestamp
	if err != nil || len(results) != 2 || results[0].ts != bts || results[1] != nil || bts != odata.Ticks(clk.Now()) {
		t.Fatalf("batch = %+v, %d, %v", results, bts, err)
	}

	// Pages and continuations.
	for _, rk := range []string{"c", "d"} {
		if _, err := s.WriteEntity(ctx, WriteEntityInput{Account: "acct", Write: write(OpReplace, "p", rk, Condition{}, n)}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.QueryEntities(ctx, QueryEntitiesInput{Account: "acct", Table: "dom", Top: 2})
	if err != nil || len(page.Entities) != 2 || page.Next == nil || *page.Next != (Continuation{PartitionKey: "p", RowKey: "d"}) {
		t.Fatalf("first page = %+v, %v", page, err)
	}
	page, err = s.QueryEntities(ctx, QueryEntitiesInput{Account: "acct", Table: "dom", Top: 2, From: page.Next})
	if err != nil || len(page.Entities) != 1 || page.Entities[0].rk != "d" || page.Next != nil {
		t.Fatalf("second page = %+v, %v", page, err)
	}
	hidden, err := s.QueryEntities(ctx, QueryEntitiesInput{Account: "acct", Table: "dom", Top: 10, Allows: func(pk, rk string) bool { return rk != "c" }})
	if err != nil || len(hidden.Entities) != 2 {
		t.Fatalf("query with a key range = %+v, %v", hidden, err)
	}

	if _, err := s.CreateTable(ctx, CreateTableInput{Account: "acct", Name: "other"}); err != nil {
		t.Fatal(err)
	}
	tables, err := s.QueryTables(ctx, QueryTablesInput{Account: "acct", Top: 1})
	if err != nil || len(tables.Names) != 1 || tables.Names[0] != "Dom" || tables.Next != "other" {
		t.Fatalf("QueryTables = %+v, %v", tables, err)
	}
	if _, err := s.DeleteTable(ctx, DeleteTableInput{Account: "acct", Name: "dom"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteEntity(ctx, WriteEntityInput{Account: "acct", Write: write(OpInsert, "p", "z", Condition{}, n)}); !azerr.Has(err, azerr.TableNotFound) {
		t.Fatalf("insert into a deleted table: %v", err)
	}
}

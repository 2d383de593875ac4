package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// tableAfterDelete creates table name, just deleted: while its entities
// are purged in the background Create Table answers 409
// TableBeingDeleted (as Azure does), so it tries again until the purge
// is over.
func (e *tbEnv) tableAfterDelete(name string) *aztables.Client {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := e.svc.CreateTable(e.ctx, name, nil)
		if err == nil {
			return e.svc.NewClient(name)
		}
		tbWant(e.t, err, http.StatusConflict, aztables.TableBeingDeleted)
		if time.Now().After(deadline) {
			e.t.Fatalf("table %s still being deleted after 10 s", name)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTableBeingDeleted: through the SDK, Delete Table answers 204 at
// once and the entities are purged in the background (held here before
// its first step); meanwhile Create Table of the name (in any case) is
// 409 TableBeingDeleted, the table's entities are 404 and Query Tables
// does not list it; released, the name can be created again, empty. It
// fails before the change: the purge ran in the request, so the create
// succeeded at once.
func TestTableBeingDeleted(t *testing.T) {
	e := tbStart(t)
	held, release := holdReclaim(t, e.app.Blob.Reclaimer())
	c := e.table("doomed")
	e.table("kept")
	for i := 0; i < 50; i++ {
		e.tbAdd(c, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%03d", i)})
	}
	_, err := c.Delete(e.ctx, nil)
	tbMust(t, err)
	held()
	_, err = e.svc.CreateTable(e.ctx, "DOOMED", nil)
	tbWant(t, err, http.StatusConflict, aztables.TableBeingDeleted)
	// Deleting it again: gone already, 404 (not a second success).
	_, err = e.svc.DeleteTable(e.ctx, "Doomed", nil)
	tbWant(t, err, http.StatusNotFound, aztables.ResourceNotFound)
	_, err = c.GetEntity(e.ctx, "p", "001", nil)
	tbWant(t, err, http.StatusNotFound, "")
	var names []string
	p := e.svc.NewListTablesPager(nil)
	for p.More() {
		page, err := p.NextPage(e.ctx)
		tbMust(t, err)
		for _, tb := range page.Tables {
			names = append(names, *tb.Name)
		}
	}
	if strings.Join(names, ",") != "kept" {
		t.Fatalf("tables while one is being deleted: %v", names)
	}
	release()
	c = e.tableAfterDelete("doomed")
	if all, _ := e.tbList(c, nil); len(all) != 0 {
		t.Fatalf("%d entities survived the delete", len(all))
	}
}

package e2e

import (
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// An Edm.Boolean given as the JSON string "true" or "false" is stored
// as a boolean, and boolean literals in $filter are matched in any case
// ("eq True").
func TestFidSvcTableBooleans(t *testing.T) {
	e := tbStart(t)
	c := e.table("fidbool")
	for _, body := range []string{
		`{"PartitionKey":"p","RowKey":"s1","Flag":"false","Flag@odata.type":"Edm.Boolean","Up":"TRUE","Up@odata.type":"Edm.Boolean"}`,
		`{"PartitionKey":"p","RowKey":"s2","Flag":true,"Flag@odata.type":"Edm.Boolean","Up":false}`,
	} {
		r := e.raw(http.MethodPost, "fidbool", map[string]string{"Content-Type": "application/json", "Accept": "application/json;odata=minimalmetadata"}, []byte(body))
		if r.status != http.StatusCreated {
			t.Fatalf("insert %s: %d %s", body, r.status, r.body)
		}
	}
	got, _ := e.tbGet(c, "p", "s1")
	if got["Flag"] != false || got["Up"] != true {
		t.Fatalf("string booleans read back as %#v / %#v", got["Flag"], got["Up"])
	}
	for _, bad := range []string{`"yes"`, `"1"`, `""`, `1`} {
		r := e.raw(http.MethodPost, "fidbool", map[string]string{"Content-Type": "application/json"},
			[]byte(`{"PartitionKey":"p","RowKey":"bad","Flag":`+bad+`,"Flag@odata.type":"Edm.Boolean"}`))
		if r.status != http.StatusBadRequest || r.errCode(t) != "InvalidInput" {
			t.Fatalf("Edm.Boolean %s: %d %s", bad, r.status, r.body)
		}
	}
	for filter, want := range map[string]string{
		"Flag eq False":                "s1",
		"Flag eq TRUE":                 "s2",
		"Up eq True and Flag eq fAlSe": "s1",
		"Flag ne false":                "s2",
		"not (Up eq False)":            "s1",
	} {
		ents, _ := e.tbList(c, &aztables.ListEntitiesOptions{Filter: to.Ptr(filter)})
		if got := tbRowKeys(ents); got != want {
			t.Errorf("%s: %q, want %q", filter, got, want)
		}
	}
	// Property names stay case-sensitive.
	if ents, _ := e.tbList(c, &aztables.ListEntitiesOptions{Filter: to.Ptr("flag eq true")}); len(ents) != 0 {
		t.Fatalf("flag (lower case) matched %s", tbRowKeys(ents))
	}
}

// A weak ETag in If-Match that is not the entity's fails the condition
// (412 UpdateConditionNotSatisfied), whatever its inner form and whatever
// the case of its W/ prefix; only a value that is no ETag at all is 400.
func TestFidSvcTableWeakETag(t *testing.T) {
	e := tbStart(t)
	c := e.table("fidetag")
	e.tbAdd(c, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 1})
	_, cur := e.tbGet(c, "p", "r")
	ent := tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 2})
	for _, etag := range []azcore.ETag{
		`W/"datetime'2001-02-03T04%3A05%3A06.7000000Z'"`, // another timestamp
		`W/"datetime'2001-02-30T04%3A05%3A06Z'"`,         // no such day
		`W/"0x8D9F0A1B2C3D4E5"`,                          // a Blob-style value
		`W/""`,
		`w/"datetime'2001-02-03T04%3A05%3A06.7000000Z'"`, // lower-case weak prefix
		`w/"0x8D9F0A1B2C3D4E5"`,
	} {
		_, err := c.UpdateEntity(e.ctx, ent, &aztables.UpdateEntityOptions{IfMatch: to.Ptr(etag), UpdateMode: aztables.UpdateModeReplace})
		tbWant(t, err, http.StatusPreconditionFailed, aztables.UpdateConditionNotSatisfied)
		_, err = c.UpdateEntity(e.ctx, ent, &aztables.UpdateEntityOptions{IfMatch: to.Ptr(etag), UpdateMode: aztables.UpdateModeMerge})
		tbWant(t, err, http.StatusPreconditionFailed, aztables.UpdateConditionNotSatisfied)
		_, err = c.DeleteEntity(e.ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: to.Ptr(etag)})
		tbWant(t, err, http.StatusPreconditionFailed, aztables.UpdateConditionNotSatisfied)
		// No entity: 404, as for any ETag.
		_, err = c.DeleteEntity(e.ctx, "p", "missing", &aztables.DeleteEntityOptions{IfMatch: to.Ptr(etag)})
		tbWant(t, err, http.StatusNotFound, aztables.ResourceNotFound)
	}
	// Not an ETag: 400.
	_, err := c.DeleteEntity(e.ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: to.Ptr(azcore.ETag(`"datetime'x'`))})
	tbWant(t, err, http.StatusBadRequest, aztables.InvalidInput)
	// Nothing changed; the entity's own ETag still works.
	if got, now := e.tbGet(c, "p", "r"); got["V"] != float64(1) || now != cur {
		t.Fatalf("entity after refused writes: %v %s", got, now)
	}
	_, err = c.DeleteEntity(e.ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: to.Ptr(cur)})
	tbMust(t, err)
}

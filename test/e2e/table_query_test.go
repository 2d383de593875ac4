package e2e

import (
	"fmt"
	"math/rand"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// tbQueryFixture fills table "query" with 3 partitions of 10 rows,
// inserted in random order.
func tbQueryFixture(e *tbEnv) *aztables.Client {
	c := e.table("query")
	type row struct{ p, r int }
	var rows []row
	for p := 0; p < 3; p++ {
		for r := 0; r < 10; r++ {
			rows = append(rows, row{p, r})
		}
	}
	rand.New(rand.NewSource(1)).Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	for _, x := range rows {
		m := map[string]any{
			"PartitionKey":     fmt.Sprint("p", x.p),
			"RowKey":           fmt.Sprintf("r%02d", x.r),
			"N":                x.r,
			"Big":              fmt.Sprint(int64(x.r) << 40),
			"Big@odata.type":   "Edm.Int64",
			"F":                float64(x.r) + 0.5,
			"Even":             x.r%2 == 0,
			"Name":             fmt.Sprintf("name-%d", x.r),
			"When":             fmt.Sprintf("2024-01-%02dT00:00:00Z", x.r+1),
			"When@odata.type":  "Edm.DateTime",
			"Id":               fmt.Sprintf("00000000-0000-0000-0000-0000000000%02d", x.r),
			"Id@odata.type":    "Edm.Guid",
			"Bytes":            []byte{byte(x.r)},
			"Bytes@odata.type": "Edm.Binary",
		}
		if x.r == 3 {
			m["Only3"] = "yes"
		}
		e.tbAdd(c, m)
	}
	return c
}

func TestTableQueryFilters(t *testing.T) {
	e := tbStart(t)
	c := tbQueryFixture(e)
	keys := func(filter string) string {
		t.Helper()
		got, _ := e.tbList(c, &aztables.ListEntitiesOptions{Filter: to.Ptr(filter)})
		var ks []string
		for _, m := range got {
			ks = append(ks, fmt.Sprintf("%s/%s", m["PartitionKey"], m["RowKey"]))
		}
		return strings.Join(ks, ",")
	}
	for _, tc := range []struct{ filter, want string }{
		{"PartitionKey eq 'p1' and RowKey lt 'r03'", "p1/r00,p1/r01,p1/r02"},
		{"PartitionKey eq 'p1' and RowKey gt 'r07'", "p1/r08,p1/r09"},
		{"PartitionKey ge 'p2' and N le 1", "p2/r00,p2/r01"},
		{"'p0' eq PartitionKey and 2 gt N", "p0/r00,p0/r01"},
		{"PartitionKey eq 'p0' and (N eq 1 or N eq 8)", "p0/r01,p0/r08"},
		{"PartitionKey eq 'p0' and not (N ge 2)", "p0/r00,p0/r01"},
		{"PartitionKey eq 'p0' and not Even and N lt 5", "p0/r01,p0/r03"},
		{"PartitionKey eq 'p0' and Even eq false and N gt 6", "p0/r07,p0/r09"},
		{"PartitionKey eq 'p2' and Big ge 8796093022208L", "p2/r08,p2/r09"},
		{"PartitionKey eq 'p2' and Big ge 8", ""}, // Int32 literal vs Int64 property: no match
		{"PartitionKey eq 'p2' and N eq 1L", ""},  // Int64 literal vs Int32 property
		{"PartitionKey eq 'p2' and F eq 2.5", "p2/r02"},
		{"PartitionKey eq 'p2' and F eq 2", ""}, // Int32 literal vs Double property
		{"PartitionKey eq 'p1' and When ge datetime'2024-01-09T00:00:00Z'", "p1/r08,p1/r09"},
		{"PartitionKey eq 'p1' and Id eq guid'00000000-0000-0000-0000-000000000004'", "p1/r04"},
		{"PartitionKey eq 'p1' and Bytes eq X'05'", "p1/r05"},
		{"PartitionKey eq 'p1' and Bytes eq binary'06'", "p1/r06"},
		{"Only3 eq 'yes'", "p0/r03,p1/r03,p2/r03"},
		{"Only3 ne 'no' and PartitionKey eq 'p0'", "p0/r03"}, // a missing property matches nothing
		{"Name eq 'name-4' and PartitionKey lt 'p1'", "p0/r04"},
		{"Name eq 4", ""},
		{"PartitionKey eq 'p0' and RowKey eq 'r05' or PartitionKey eq 'p2' and RowKey eq 'r00'", "p0/r05,p2/r00"},
		{"PartitionKey eq 'p0' and Timestamp gt datetime'2000-01-01T00:00:00Z' and N eq 9", "p0/r09"},
		{"PartitionKey eq 'nope'", ""},
		{"true and PartitionKey eq 'p0' and N eq 0", "p0/r00"},
		{"false or (PartitionKey eq 'p0' and N eq 0)", "p0/r00"},
		// 15 comparisons are allowed (Azure's documented limit).
		{"PartitionKey eq 'p0'" + strings.Repeat(" and N ne 99", 13) + " and N eq 3", "p0/r03"},
	} {
		if got := keys(tc.filter); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.filter, got, tc.want)
		}
	}

	// Malformed filters are 400 InvalidInput naming the position.
	for _, f := range []string{"PartitionKey eq", "PartitionKey eq 'x", "(N eq 1", "N eq 1)", "N eq 99999999999", "A eq B", "N == 1", "N eq 1 and", "not", "N Eq 1",
		// A 16th comparison.
		"PartitionKey eq 'p0'" + strings.Repeat(" and N ne 99", 14) + " and N eq 3"} {
		_, err := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr(f)}).NextPage(e.ctx)
		re := tbWant(t, err, http.StatusBadRequest, aztables.InvalidInput)
		if !strings.Contains(re.Error(), "position") {
			t.Fatalf("%s: error lacks the position: %v", f, re)
		}
	}
	_, err := e.svc.NewClient("nosuch").NewListEntitiesPager(nil).NextPage(e.ctx)
	tbWant(t, err, http.StatusNotFound, aztables.TableNotFound)
}

func TestTableQueryOrderSelectTop(t *testing.T) {
	e := tbStart(t)
	c := tbQueryFixture(e)
	all, pages := e.tbList(c, nil)
	if len(all) != 30 || pages != 1 {
		t.Fatalf("%d entities in %d pages", len(all), pages)
	}
	for i := 1; i < len(all); i++ {
		a := fmt.Sprint(all[i-1]["PartitionKey"], "/", all[i-1]["RowKey"])
		b := fmt.Sprint(all[i]["PartitionKey"], "/", all[i]["RowKey"])
		if a >= b {
			t.Fatalf("order: %s before %s", a, b)
		}
	}
	// $top pages through everything, in order, across partitions.
	got, pages := e.tbList(c, &aztables.ListEntitiesOptions{Top: to.Ptr[int32](7), Filter: to.Ptr("N ge 5")})
	if len(got) != 15 || pages != 3 {
		t.Fatalf("top 7: %d entities in %d pages", len(got), pages)
	}
	if tbRowKeys(got[:6]) != "r05,r06,r07,r08,r09,r05" {
		t.Fatalf("paged order %s", tbRowKeys(got))
	}
	// $select returns only the named properties (plus odata.etag).
	got, _ = e.tbList(c, &aztables.ListEntitiesOptions{Select: to.Ptr("RowKey,Name, Big"), Filter: to.Ptr("PartitionKey eq 'p0' and RowKey eq 'r01'")})
	if len(got) != 1 {
		t.Fatalf("select: %v", got)
	}
	tbSameMap(t, "select", got[0], map[string]any{"odata.etag": got[0]["odata.etag"], "RowKey": "r01", "Name": "name-1", "Big@odata.type": "Edm.Int64", "Big": "1099511627776"})

	// Continuation tokens can be replayed as they were returned.
	p := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](11)})
	first, err := p.NextPage(e.ctx)
	tbMust(t, err)
	if first.NextPartitionKey == nil || first.NextRowKey == nil {
		t.Fatal("no continuation after a full page")
	}
	resumed, _ := e.tbList(c, &aztables.ListEntitiesOptions{NextPartitionKey: first.NextPartitionKey, NextRowKey: first.NextRowKey})
	if len(resumed) != 19 || resumed[0]["PartitionKey"] != "p1" || resumed[0]["RowKey"] != "r01" {
		t.Fatalf("resumed at %v/%v with %d entities", resumed[0]["PartitionKey"], resumed[0]["RowKey"], len(resumed))
	}
	r := e.raw(http.MethodGet, "query()?NextPartitionKey=garbage", nil, nil)
	if r.status != http.StatusBadRequest {
		t.Fatalf("bad continuation: %d %s", r.status, r.body)
	}

	for _, top := range []string{"0", "1001", "-1", "x"} {
		r := e.raw(http.MethodGet, "query()?$top="+top, map[string]string{"Accept": "application/json;odata=nometadata"}, nil)
		if r.status != http.StatusBadRequest || r.errCode(t) != "InvalidInput" {
			t.Fatalf("$top=%s: %d %s", top, r.status, r.body)
		}
	}
	// The table name without parentheses, a filter with spaces as %20.
	r = e.raw(http.MethodGet, "query?$filter="+url.PathEscape("RowKey eq 'r09' and PartitionKey eq 'p2'"), map[string]string{"Accept": "application/json;odata=nometadata"}, nil)
	if v := r.json(t)["value"].([]any); r.status != http.StatusOK || len(v) != 1 {
		t.Fatalf("GET /query: %d %s", r.status, r.body)
	}
}

func TestTableQueryLargePartition(t *testing.T) {
	e := tbStart(t)
	c := e.table("large")
	const n = 2500
	for i := 0; i < n; i += 100 {
		var batch []aztables.TransactionAction
		for j := i; j < i+100; j++ {
			batch = append(batch, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%06d", j), "N": j})})
		}
		_, err := c.SubmitTransaction(e.ctx, batch, nil)
		tbMust(t, err)
	}
	// Default page size is 1000.
	all, pages := e.tbList(c, nil)
	if len(all) != n || pages != 3 {
		t.Fatalf("%d entities in %d pages", len(all), pages)
	}
	got, _ := e.tbList(c, &aztables.ListEntitiesOptions{Filter: to.Ptr("N ge 1200 and N lt 1210")})
	if len(got) != 10 || got[0]["RowKey"] != "001200" {
		t.Fatalf("filtered: %s", tbRowKeys(got))
	}
	got, _ = e.tbList(c, &aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p' and RowKey ge '002490'")})
	if tbRowKeys(got) != "002490,002491,002492,002493,002494,002495,002496,002497,002498,002499" {
		t.Fatalf("key range: %s", tbRowKeys(got))
	}
}

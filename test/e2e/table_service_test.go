package e2e

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/cerulean-storage/cerulean/internal/app"
)

func TestTableCreateListDelete(t *testing.T) {
	e := tbStart(t)
	for _, n := range []string{"Alpha", "beta", "Gamma1", "delta"} {
		resp, err := e.svc.CreateTable(e.ctx, n, nil)
		tbMust(t, err)
		if resp.TableName == nil || *resp.TableName != n {
			t.Fatalf("create %s: TableName %v", n, resp.TableName)
		}
	}
	// Names are case-insensitive but case-preserving.
	_, err := e.svc.CreateTable(e.ctx, "ALPHA", nil)
	tbWant(t, err, http.StatusConflict, aztables.TableAlreadyExists)

	list := func(o *aztables.ListTablesOptions) ([]string, int) {
		var names []string
		pages := 0
		p := e.svc.NewListTablesPager(o)
		for p.More() {
			page, err := p.NextPage(e.ctx)
			tbMust(t, err)
			pages++
			for _, tb := range page.Tables {
				names = append(names, *tb.Name)
			}
		}
		return names, pages
	}
	names, _ := list(nil)
	if got := strings.Join(names, ","); got != "Alpha,beta,delta,Gamma1" {
		t.Fatalf("tables %s", got)
	}
	names, pages := list(&aztables.ListTablesOptions{Top: to.Ptr[int32](3)})
	if len(names) != 4 || pages != 2 {
		t.Fatalf("top 3: %v in %d pages", names, pages)
	}
	names, _ = list(&aztables.ListTablesOptions{Filter: to.Ptr("TableName eq 'beta' or TableName ge 'delta'")})
	if got := strings.Join(names, ","); got != "beta,delta" { // ordinal: 'G' < 'd'
		t.Fatalf("filtered tables %s", got)
	}
	_, err = e.svc.NewListTablesPager(&aztables.ListTablesOptions{Filter: to.Ptr("TableName eq")}).NextPage(e.ctx)
	tbWant(t, err, http.StatusBadRequest, aztables.InvalidInput)

	_, err = e.svc.DeleteTable(e.ctx, "BETA", nil)
	tbMust(t, err)
	_, err = e.svc.DeleteTable(e.ctx, "beta", nil)
	tbWant(t, err, http.StatusNotFound, aztables.ResourceNotFound)
	names, _ = list(nil)
	if got := strings.Join(names, ","); got != "Alpha,delta,Gamma1" {
		t.Fatalf("after delete %s", got)
	}
	// Operations on a deleted table fail with TableNotFound.
	_, err = e.svc.NewClient("beta").AddEntity(e.ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
	tbWant(t, err, http.StatusNotFound, aztables.TableNotFound)
}

func TestTableNames(t *testing.T) {
	e := tbStart(t)
	for _, n := range []string{"1abc", "ab-c", "a_bc", "tables", "Tables"} {
		_, err := e.svc.CreateTable(e.ctx, n, nil)
		tbWant(t, err, http.StatusBadRequest, "InvalidResourceName")
	}
	for _, n := range []string{"ab", strings.Repeat("a", 64)} {
		_, err := e.svc.CreateTable(e.ctx, n, nil)
		tbWant(t, err, http.StatusBadRequest, aztables.OutOfRangeInput)
	}
	for _, n := range []string{"abc", strings.Repeat("Z", 63), "a1b2c3"} {
		_, err := e.svc.CreateTable(e.ctx, n, nil)
		tbMust(t, err)
	}
}

func TestTableDeleteRemovesEntities(t *testing.T) {
	e := tbStart(t)
	c := e.table("purge")
	// More entities than one purge transaction removes.
	for p := 0; p < 3; p++ {
		var batch []aztables.TransactionAction
		for i := 0; i < 100; i++ {
			batch = append(batch, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: tbJSON(t, map[string]any{"PartitionKey": fmt.Sprint("p", p), "RowKey": fmt.Sprintf("%04d", i), "V": i})})
		}
		for j := 0; j < 8; j++ {
			for i := range batch {
				batch[i].Entity = tbJSON(t, map[string]any{"PartitionKey": fmt.Sprint("p", p), "RowKey": fmt.Sprintf("%04d", j*100+i), "V": i})
			}
			_, err := c.SubmitTransaction(e.ctx, batch, nil)
			tbMust(t, err)
		}
	}
	all, _ := e.tbList(c, nil)
	if len(all) != 2400 {
		t.Fatalf("%d entities before delete", len(all))
	}
	_, etag := e.tbGet(c, "p0", "0000")
	_, err := c.Delete(e.ctx, nil)
	tbMust(t, err)
	// Re-created under another case once the background purge is over
	// (409 TableBeingDeleted until then): empty, and old ETags never
	// match.
	c = e.tableAfterDelete("PURGE")
	all, _ = e.tbList(c, nil)
	if len(all) != 0 {
		t.Fatalf("%d entities survived the delete", len(all))
	}
	e.tbAdd(c, map[string]any{"PartitionKey": "p0", "RowKey": "0000"})
	_, etag2 := e.tbGet(c, "p0", "0000")
	if etag2 == etag {
		t.Fatalf("ETag %s reissued after delete and re-create", etag)
	}
	_, err = c.UpdateEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p0", "RowKey": "0000"}), &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
	tbWant(t, err, http.StatusPreconditionFailed, aztables.UpdateConditionNotSatisfied)
	names := []string{}
	p := e.svc.NewListTablesPager(nil)
	for p.More() {
		page, err := p.NextPage(e.ctx)
		tbMust(t, err)
		for _, tb := range page.Tables {
			names = append(names, *tb.Name)
		}
	}
	if strings.Join(names, ",") != "PURGE" {
		t.Fatalf("tables %v", names)
	}
}

func TestTableCreatePreferAndFormats(t *testing.T) {
	e := tbStart(t)
	r := e.raw(http.MethodPost, "Tables", map[string]string{"Content-Type": "application/json", "Accept": "application/json;odata=minimalmetadata", "Prefer": "return-no-content"}, []byte(`{"TableName":"quiet"}`))
	if r.status != http.StatusNoContent || r.header.Get("Preference-Applied") != "return-no-content" || len(r.body) != 0 {
		t.Fatalf("return-no-content: %d %v %q", r.status, r.header, r.body)
	}
	r = e.raw(http.MethodPost, "Tables", map[string]string{"Content-Type": "application/json", "Accept": "application/json;odata=fullmetadata", "Prefer": "return-content"}, []byte(`{"TableName":"loud"}`))
	if r.status != http.StatusCreated || r.header.Get("Preference-Applied") != "return-content" {
		t.Fatalf("return-content: %d %v", r.status, r.header)
	}
	m := r.json(t)
	base := e.app.TableURL
	want := map[string]any{
		"odata.metadata": base + "/$metadata#Tables/@Element",
		"odata.type":     "devstoreaccount1.Tables",
		"odata.id":       base + "/Tables('loud')",
		"odata.editLink": "Tables('loud')",
		"TableName":      "loud",
	}
	tbSameMap(t, "full metadata create", m, want)
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json;odata=fullmetadata") {
		t.Fatalf("content type %s", r.header.Get("Content-Type"))
	}
	r = e.raw(http.MethodGet, "Tables", map[string]string{"Accept": "application/json;odata=nometadata"}, nil)
	tbSameMap(t, "nometadata list", r.json(t), map[string]any{"value": []any{map[string]any{"TableName": "loud"}, map[string]any{"TableName": "quiet"}}})
	r = e.raw(http.MethodGet, "Tables?$format=application/json;odata=minimalmetadata", map[string]string{"Accept": "application/json;odata=nometadata"}, nil)
	tbSameMap(t, "$format wins", r.json(t), map[string]any{"odata.metadata": base + "/$metadata#Tables", "value": []any{map[string]any{"TableName": "loud"}, map[string]any{"TableName": "quiet"}}})
	r = e.raw(http.MethodGet, "Tables('Quiet')", map[string]string{"Accept": "application/json;odata=minimalmetadata"}, nil)
	tbSameMap(t, "get one table", r.json(t), map[string]any{"odata.metadata": base + "/$metadata#Tables/@Element", "TableName": "quiet"})
	r = e.raw(http.MethodGet, "Tables", map[string]string{"Accept": "application/atom+xml"}, nil)
	if r.status != http.StatusUnsupportedMediaType || r.errCode(t) != "AtomFormatNotSupported" {
		t.Fatalf("atom: %d %s", r.status, r.body)
	}
	r = e.raw(http.MethodPost, "Tables", map[string]string{"Content-Type": "application/json"}, []byte(`{"TableName":`))
	if r.status != http.StatusBadRequest || r.errCode(t) != "InvalidInput" {
		t.Fatalf("bad json: %d %s", r.status, r.body)
	}
}

// tbSameMap compares decoded JSON documents.
func tbSameMap(t testing.TB, what string, got, want map[string]any) {
	t.Helper()
	g, w := string(tbJSON(t, got)), string(tbJSON(t, want))
	if g != w {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func TestTableServicePropertiesAndStats(t *testing.T) {
	e := tbStart(t)
	props, err := e.svc.GetProperties(e.ctx, nil)
	tbMust(t, err)
	if props.Logging == nil || *props.Logging.Version != "1.0" || *props.Logging.Read || props.HourMetrics == nil || *props.HourMetrics.Enabled {
		t.Fatalf("default properties %+v", props.ServiceProperties)
	}
	_, err = e.svc.SetProperties(e.ctx, aztables.ServiceProperties{
		HourMetrics: &aztables.Metrics{Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true), Version: to.Ptr("1.0"), RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr[int32](7)}},
		Cors:        []*aztables.CorsRule{{AllowedOrigins: to.Ptr("https://example.com"), AllowedMethods: to.Ptr("GET,PUT"), AllowedHeaders: to.Ptr("x-ms-*"), ExposedHeaders: to.Ptr("*"), MaxAgeInSeconds: to.Ptr[int32](60)}},
	}, nil)
	tbMust(t, err)
	props, err = e.svc.GetProperties(e.ctx, nil)
	tbMust(t, err)
	hm := props.HourMetrics
	if !*hm.Enabled || !*hm.IncludeAPIs || *hm.RetentionPolicy.Days != 7 || len(props.Cors) != 1 || *props.Cors[0].AllowedOrigins != "https://example.com" || *props.Cors[0].MaxAgeInSeconds != 60 {
		t.Fatalf("properties after set %+v %+v", hm, props.Cors)
	}
	if *props.Logging.Version != "1.0" || *props.MinuteMetrics.Enabled {
		t.Fatalf("unset sections changed: %+v", props.ServiceProperties)
	}
	_, err = e.svc.SetProperties(e.ctx, aztables.ServiceProperties{
		MinuteMetrics: &aztables.Metrics{Enabled: to.Ptr(true), Version: to.Ptr("1.0"), RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr[int32](400)}},
	}, nil)
	tbWant(t, err, http.StatusBadRequest, aztables.InvalidXmlDocument)

	// Served on the secondary endpoint only (Get Table Service Stats).
	_, err = e.svc.GetStatistics(e.ctx, nil)
	tbWant(t, err, http.StatusBadRequest, aztables.TableErrorCode("InvalidQueryParameterValue"))
	stats, err := tbService(t, e.app.TableURL+"-secondary", app.DevKey).GetStatistics(e.ctx, nil)
	tbMust(t, err)
	if stats.GeoReplication == nil || *stats.GeoReplication.Status != aztables.GeoReplicationStatusLive || stats.GeoReplication.LastSyncTime.IsZero() {
		t.Fatalf("stats %+v", stats.GeoReplication)
	}
}

func TestTableACL(t *testing.T) {
	e := tbStart(t)
	c := e.table("acl")
	got, err := c.GetAccessPolicy(e.ctx, nil)
	tbMust(t, err)
	if len(got.SignedIdentifiers) != 0 {
		t.Fatalf("fresh table has policies %v", got.SignedIdentifiers)
	}
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	expiry := start.Add(48 * time.Hour)
	_, err = c.SetAccessPolicy(e.ctx, &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{
		{ID: to.Ptr("read"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: to.Ptr("r")}},
		{ID: to.Ptr("all"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: to.Ptr("raud")}},
	}})
	tbMust(t, err)
	got, err = c.GetAccessPolicy(e.ctx, nil)
	tbMust(t, err)
	var ids []string
	for _, si := range got.SignedIdentifiers {
		ids = append(ids, *si.ID+":"+*si.AccessPolicy.Permission)
		if !si.AccessPolicy.Start.Equal(start) || !si.AccessPolicy.Expiry.Equal(expiry) {
			t.Fatalf("policy times %v %v", si.AccessPolicy.Start, si.AccessPolicy.Expiry)
		}
	}
	sort.Strings(ids)
	if strings.Join(ids, ",") != "all:raud,read:r" {
		t.Fatalf("policies %v", ids)
	}
	// Too many policies, bad permission, missing table.
	var six []*aztables.SignedIdentifier
	for i := 0; i < 6; i++ {
		six = append(six, &aztables.SignedIdentifier{ID: to.Ptr(fmt.Sprint("id", i)), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: to.Ptr("r")}})
	}
	_, err = c.SetAccessPolicy(e.ctx, &aztables.SetAccessPolicyOptions{TableACL: six})
	if err == nil {
		t.Fatal("six policies accepted")
	}
	r := e.raw(http.MethodPut, "acl?comp=acl", map[string]string{"Content-Type": "application/xml"}, []byte(`<SignedIdentifiers><SignedIdentifier><Id>x</Id><AccessPolicy><Permission>rwx</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`))
	if r.status != http.StatusBadRequest || r.errCode(t) != "InvalidXmlNodeValue" {
		t.Fatalf("bad permission: %d %s", r.status, r.body)
	}
	_, err = e.svc.NewClient("nosuch").GetAccessPolicy(e.ctx, nil)
	tbWant(t, err, http.StatusNotFound, aztables.TableNotFound)
	// Clearing.
	_, err = c.SetAccessPolicy(e.ctx, nil)
	tbMust(t, err)
	got, err = c.GetAccessPolicy(e.ctx, nil)
	tbMust(t, err)
	if len(got.SignedIdentifiers) != 0 {
		t.Fatalf("cleared table has policies %v", got.SignedIdentifiers)
	}
}

func TestTableAuthRequired(t *testing.T) {
	e := tbStart(t)
	e.table("secret")
	req, err := http.NewRequest(http.MethodGet, e.app.TableURL+"/Tables", nil)
	tbMust(t, err)
	req.Header.Set("x-ms-version", "2019-02-02")
	resp, err := e.hc.Do(req)
	tbMust(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("x-ms-error-code") != "NoAuthenticationInformation" {
		t.Fatalf("anonymous: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	_, err = tbService(t, e.app.TableURL, "AAAA"+strings.Repeat("A", 84)).CreateTable(e.ctx, "other", nil)
	tbWant(t, err, http.StatusForbidden, "AuthenticationFailed")
}

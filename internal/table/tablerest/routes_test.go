package tablerest

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/server/routetest"
)

// TestRoutesTable checks the route table's invariants: a SAS rule or
// Shared Key only for every entry, names shared only by variants of one
// operation, and no entry shadowed by an earlier one.
func TestRoutesTable(t *testing.T) {
	for _, err := range tableRoutes.Verify() {
		t.Error(err)
	}
	routetest.Rules(t, tableRoutes, nil)
}

// routeDispatch checks the cases against the Table route table.
func routeDispatch(t *testing.T, cases []routetest.Case) {
	routetest.Dispatch(t, "127.0.0.1:10002", Operations(), func(hr *http.Request) (string, error) {
		r := &req{Request: &server.Request{Request: hr}, q: parseQuery(hr.URL.RawQuery)}
		m, err := effectiveMethod(hr)
		if err != nil {
			return "", err
		}
		r.method = m
		rt, err := (*Service)(nil).route(r)
		if err != nil {
			return "", err
		}
		if r.Op != rt.Name || r.route != rt {
			return "", errors.New("operation not recorded")
		}
		return rt.Name, nil
	}, cases)
}

// TestRoutesDispatch: a representative request of every operation
// dispatches to it, and the URLs no operation takes keep their errors.
func TestRoutesDispatch(t *testing.T) {
	const a = "/devstoreaccount1"
	ifMatch := map[string]string{"If-Match": "*"}
	c := routetest.C
	cases := []routetest.Case{
		c("GET", a+"/?restype=service&comp=properties", nil, "getServiceProperties", ""),
		c("PUT", a+"/?restype=service&comp=properties", nil, "setServiceProperties", ""),
		c("GET", a+"/?restype=service&comp=stats", nil, "getServiceStats", ""),
		c("POST", a+"/$batch", nil, "batch", ""),
		c("GET", a+"/Tables", nil, "queryTables", ""),
		c("GET", a+"/Tables()?$filter=TableName%20eq%20'x'", nil, "queryTables", ""),
		c("GET", a+"/tables?comp=x", nil, "queryTables", ""),
		c("POST", a+"/Tables", nil, "createTable", ""),
		c("DELETE", a+"/Tables('tb1')", nil, "deleteTable", ""),
		c("GET", a+"/Tables('tb1')", nil, "getTable", ""),
		c("GET", a+"/tb1?comp=acl", nil, "getTableACL", ""),
		c("HEAD", a+"/tb1?comp=acl", nil, "getTableACL", ""),
		c("PUT", a+"/tb1?comp=acl", nil, "setTableACL", ""),
		c("GET", a+"/tb1(PartitionKey='p',RowKey='r')", nil, "getEntity", ""),
		c("PUT", a+"/tb1(PartitionKey='p',RowKey='r')", ifMatch, "updateEntity", ""),
		c("PUT", a+"/tb1(PartitionKey='p',RowKey='r')", nil, "updateEntity", ""),
		c("MERGE", a+"/tb1(PartitionKey='p',RowKey='r')", ifMatch, "mergeEntity", ""),
		c("PATCH", a+"/tb1(PartitionKey='p',RowKey='r')", nil, "mergeEntity", ""),
		c("POST", a+"/tb1(PartitionKey='p',RowKey='r')", map[string]string{"X-HTTP-Method": "MERGE"}, "mergeEntity", ""),
		c("DELETE", a+"/tb1(PartitionKey='p',RowKey='r')", ifMatch, "deleteEntity", ""),
		c("GET", a+"/tb1", nil, "queryEntities", ""),
		c("GET", a+"/tb1()?$filter=PartitionKey%20eq%20'p'", nil, "queryEntities", ""),
		c("POST", a+"/tb1", nil, "insertEntity", ""),

		// No operation: the errors of the URL.
		c("GET", a+"/", nil, "", azerr.InvalidURI),
		c("GET", a+"/?restype=service&comp=nothing", nil, "", azerr.InvalidQueryParameterValue),
		c("DELETE", a+"/?restype=service&comp=properties", nil, "", azerr.MethodNotAllowed),
		c("GET", a+"/$batch", nil, "", azerr.MethodNotAllowed),
		c("PUT", a+"/Tables", nil, "", azerr.MethodNotAllowed),
		c("GET", a+"/Tables('t1", nil, "", azerr.InvalidInput),
		c("POST", a+"/Tables('tb1')", nil, "", azerr.MethodNotAllowed),
		c("GET", a+"/1tb", nil, "", azerr.InvalidResourceName),
		c("GET", a+"/ab", nil, "", azerr.OutOfRangeInput),
		c("GET", a+"/tb1(PartitionKey='p')", nil, "", azerr.InvalidInput),
		c("GET", a+"/tb1()?comp=acl", nil, "", azerr.InvalidQueryParameterValue),
		c("GET", a+"/tb1(PartitionKey='p',RowKey='r')?comp=acl", nil, "", azerr.InvalidQueryParameterValue),
		c("POST", a+"/tb1?comp=acl", nil, "", azerr.MethodNotAllowed),
		c("GET", a+"/tb1?comp=list", nil, "", azerr.InvalidQueryParameterValue),
		c("HEAD", a+"/tb1(PartitionKey='p',RowKey='r')", nil, "", azerr.MethodNotAllowed),
		c("POST", a+"/tb1()", nil, "", azerr.MethodNotAllowed),
		c("PUT", a+"/tb1", nil, "", azerr.MethodNotAllowed),
		c("PUT", a+"/tb1", map[string]string{"X-HTTP-Method": "MERGE"}, "", azerr.XMethodNotUsingPost),
	}
	routeDispatch(t, cases)
}

// TestRoutesUpsertRule: Update and Merge Entity without If-Match are
// Insert Or Replace / Insert Or Merge and take the upsert rule (Add and
// Update), with If-Match the update rule.
func TestRoutesUpsertRule(t *testing.T) {
	for _, m := range []string{"PUT", "MERGE"} {
		for _, ifm := range []string{"", "*"} {
			hr := httptest.NewRequest(m, "http://127.0.0.1:10002/devstoreaccount1/tb1(PartitionKey='p',RowKey='r')", nil)
			if ifm != "" {
				hr.Header.Set("If-Match", ifm)
			}
			r := &req{Request: &server.Request{Request: hr}, q: parseQuery(hr.URL.RawQuery), method: m}
			rt, err := (*Service)(nil).route(r)
			if err != nil {
				t.Fatal(err)
			}
			want := sasEntityUpdate
			if ifm == "" {
				want = sasEntityUpsert
			}
			if rt.SAS != want {
				t.Errorf("%s If-Match %q: rule %+v, want %+v", m, ifm, rt.SAS, want)
			}
		}
	}
}

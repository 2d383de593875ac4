package table

import (
	"net/http/httptest"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// TestRoutesTable checks the route table's invariants: a SAS rule or
// Shared Key only for every entry, names shared only by variants of one
// operation, and no entry shadowed by an earlier one.
func TestRoutesTable(t *testing.T) {
	for _, err := range tableRoutes.Verify() {
		t.Error(err)
	}
}

// routeOf routes a request as ServeAzure does and returns the
// operation's name or the error code.
func routeOf(method, target string, h map[string]string) (string, string) {
	hr := httptest.NewRequest(method, "http://127.0.0.1:10002"+target, nil)
	for k, v := range h {
		hr.Header.Set(k, v)
	}
	r := &req{Request: &server.Request{Request: hr}, q: parseQuery(hr.URL.RawQuery)}
	m, err := effectiveMethod(hr)
	if err == nil {
		r.method = m
		var rt *route
		rt, err = (*Service)(nil).route(r)
		if err == nil {
			if r.Op != rt.Name || r.opName != rt.Name || r.route != rt {
				return "", "operation not recorded"
			}
			return rt.Name, ""
		}
	}
	e, _ := azerr.As(err)
	if e == nil {
		return "", err.Error()
	}
	return "", e.Code
}

// TestRoutesDispatch: a representative request of every operation
// dispatches to it, and the URLs no operation takes keep their errors.
func TestRoutesDispatch(t *testing.T) {
	const a = "/devstoreaccount1"
	ifMatch := map[string]string{"If-Match": "*"}
	cases := []struct {
		method, target string
		h              map[string]string
		op, code       string
	}{
		{"GET", a + "/?restype=service&comp=properties", nil, "getServiceProperties", ""},
		{"PUT", a + "/?restype=service&comp=properties", nil, "setServiceProperties", ""},
		{"GET", a + "/?restype=service&comp=stats", nil, "getServiceStats", ""},
		{"POST", a + "/$batch", nil, "batch", ""},
		{"GET", a + "/Tables", nil, "queryTables", ""},
		{"GET", a + "/Tables()?$filter=TableName%20eq%20'x'", nil, "queryTables", ""},
		{"GET", a + "/tables?comp=x", nil, "queryTables", ""},
		{"POST", a + "/Tables", nil, "createTable", ""},
		{"DELETE", a + "/Tables('tb1')", nil, "deleteTable", ""},
		{"GET", a + "/Tables('tb1')", nil, "getTable", ""},
		{"GET", a + "/tb1?comp=acl", nil, "getTableACL", ""},
		{"HEAD", a + "/tb1?comp=acl", nil, "getTableACL", ""},
		{"PUT", a + "/tb1?comp=acl", nil, "setTableACL", ""},
		{"GET", a + "/tb1(PartitionKey='p',RowKey='r')", nil, "getEntity", ""},
		{"PUT", a + "/tb1(PartitionKey='p',RowKey='r')", ifMatch, "updateEntity", ""},
		{"PUT", a + "/tb1(PartitionKey='p',RowKey='r')", nil, "updateEntity", ""},
		{"MERGE", a + "/tb1(PartitionKey='p',RowKey='r')", ifMatch, "mergeEntity", ""},
		{"PATCH", a + "/tb1(PartitionKey='p',RowKey='r')", nil, "mergeEntity", ""},
		{"POST", a + "/tb1(PartitionKey='p',RowKey='r')", map[string]string{"X-HTTP-Method": "MERGE"}, "mergeEntity", ""},
		{"DELETE", a + "/tb1(PartitionKey='p',RowKey='r')", ifMatch, "deleteEntity", ""},
		{"GET", a + "/tb1", nil, "queryEntities", ""},
		{"GET", a + "/tb1()?$filter=PartitionKey%20eq%20'p'", nil, "queryEntities", ""},
		{"POST", a + "/tb1", nil, "insertEntity", ""},

		// No operation: the errors of the URL.
		{"GET", a + "/", nil, "", azerr.InvalidURI},
		{"GET", a + "/?restype=service&comp=nothing", nil, "", azerr.InvalidQueryParameterValue},
		{"DELETE", a + "/?restype=service&comp=properties", nil, "", azerr.MethodNotAllowed},
		{"GET", a + "/$batch", nil, "", azerr.MethodNotAllowed},
		{"PUT", a + "/Tables", nil, "", azerr.MethodNotAllowed},
		{"GET", a + "/Tables('t1", nil, "", azerr.InvalidInput},
		{"POST", a + "/Tables('tb1')", nil, "", azerr.MethodNotAllowed},
		{"GET", a + "/1tb", nil, "", azerr.InvalidResourceName},
		{"GET", a + "/ab", nil, "", azerr.OutOfRangeInput},
		{"GET", a + "/tb1(PartitionKey='p')", nil, "", azerr.InvalidInput},
		{"GET", a + "/tb1()?comp=acl", nil, "", azerr.InvalidQueryParameterValue},
		{"GET", a + "/tb1(PartitionKey='p',RowKey='r')?comp=acl", nil, "", azerr.InvalidQueryParameterValue},
		{"POST", a + "/tb1?comp=acl", nil, "", azerr.MethodNotAllowed},
		{"GET", a + "/tb1?comp=list", nil, "", azerr.InvalidQueryParameterValue},
		{"HEAD", a + "/tb1(PartitionKey='p',RowKey='r')", nil, "", azerr.MethodNotAllowed},
		{"POST", a + "/tb1()", nil, "", azerr.MethodNotAllowed},
		{"PUT", a + "/tb1", nil, "", azerr.MethodNotAllowed},
		{"PUT", a + "/tb1", map[string]string{"X-HTTP-Method": "MERGE"}, "", azerr.XMethodNotUsingPost},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		op, code := routeOf(c.method, c.target, c.h)
		if op != c.op || code != c.code {
			t.Errorf("%s %s %v: got %q %q, want %q %q", c.method, c.target, c.h, op, code, c.op, c.code)
		}
		seen[c.op] = true
	}
	for _, name := range Operations() {
		if !seen[name] {
			t.Errorf("no dispatch case for %s", name)
		}
	}
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

package queue

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
	for _, err := range queueRoutes.Verify() {
		t.Error(err)
	}
}

// routeOf routes a request as ServeAzure does and returns the
// operation's name or the error code.
func routeOf(method, target string) (string, string) {
	hr := httptest.NewRequest(method, "http://127.0.0.1:10001"+target, nil)
	r := newReq(&server.Request{Request: hr})
	rt, err := (*Service)(nil).route(r)
	if err != nil {
		e, _ := azerr.As(err)
		if e == nil {
			return "", err.Error()
		}
		return "", e.Code
	}
	if r.Op != rt.Name || r.opName != rt.Name || r.route != rt {
		return "", "operation not recorded"
	}
	return rt.Name, ""
}

// TestRoutesDispatch: a representative request of every operation
// dispatches to it, and the URLs no operation takes keep their errors.
func TestRoutesDispatch(t *testing.T) {
	const a = "/devstoreaccount1"
	cases := []struct{ method, target, op, code string }{
		{"GET", a + "/?comp=list", "listQueues", ""},
		{"GET", a + "/?comp=list&restype=service", "listQueues", ""},
		{"GET", a + "/?restype=service&comp=properties", "getQueueServiceProperties", ""},
		{"PUT", a + "/?restype=service&comp=properties", "setQueueServiceProperties", ""},
		{"GET", a + "/?restype=service&comp=stats", "getQueueServiceStats", ""},
		{"PUT", a + "/qu1", "createQueue", ""},
		{"DELETE", a + "/qu1", "deleteQueue", ""},
		{"GET", a + "/qu1?comp=metadata", "getQueueMetadata", ""},
		{"HEAD", a + "/qu1?comp=metadata", "getQueueMetadata", ""},
		{"PUT", a + "/qu1?comp=metadata", "setQueueMetadata", ""},
		{"GET", a + "/qu1?comp=acl", "getQueueACL", ""},
		{"HEAD", a + "/qu1?comp=acl", "getQueueACL", ""},
		{"PUT", a + "/qu1?comp=acl", "setQueueACL", ""},
		{"POST", a + "/qu1/messages", "putMessage", ""},
		{"POST", a + "/qu1/messages?comp=x", "putMessage", ""},
		{"GET", a + "/qu1/messages?peekonly=true", "peekMessages", ""},
		{"GET", a + "/qu1/messages?peekonly=TRUE", "peekMessages", ""},
		{"GET", a + "/qu1/messages", "getMessages", ""},
		{"GET", a + "/qu1/messages?peekonly=false&numofmessages=3", "getMessages", ""},
		{"DELETE", a + "/qu1/messages", "clearMessages", ""},
		{"DELETE", a + "/qu1/messages/id1?popreceipt=p", "deleteMessage", ""},
		{"PUT", a + "/qu1/messages/id1?popreceipt=p&visibilitytimeout=0", "updateMessage", ""},

		// No operation: the errors of the URL.
		{"GET", a + "/", "", azerr.UnsupportedHTTPVerb},
		{"GET", a + "/?comp=nothing", "", azerr.InvalidQueryParameterValue},
		{"GET", a + "/Bad_Name", "", azerr.InvalidResourceName},
		{"GET", a + "/qu1", "", azerr.UnsupportedHTTPVerb},
		{"POST", a + "/qu1?comp=metadata", "", azerr.InvalidQueryParameterValue},
		{"GET", a + "/qu1/messages?peekonly=maybe", "", azerr.InvalidQueryParameterValue},
		{"HEAD", a + "/qu1/messages", "", azerr.UnsupportedHTTPVerb},
		{"GET", a + "/qu1/messages/", "", azerr.InvalidURI},
		{"GET", a + "/qu1/messages/id1", "", azerr.UnsupportedHTTPVerb},
		{"DELETE", a + "/qu1/messages/id1/x", "", azerr.InvalidURI},
		{"GET", a + "/qu1/other", "", azerr.InvalidURI},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		op, code := routeOf(c.method, c.target)
		if op != c.op || code != c.code {
			t.Errorf("%s %s: got %q %q, want %q %q", c.method, c.target, op, code, c.op, c.code)
		}
		seen[c.op] = true
	}
	for _, name := range Operations() {
		if !seen[name] {
			t.Errorf("no dispatch case for %s", name)
		}
	}
}

// Package routetest drives a service's route table with requests, for
// the services' route tests: each case is a request a client sends and
// the operation it must reach or the error code it must get, and every
// operation of the table must have a case.
package routetest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// Case is one request (method, path and query after the host, headers)
// and what routing it gives: the operation's name, or the error code of
// a URL no operation takes.
type Case struct {
	Method, Target string
	Header         map[string]string
	Op, Code       string
}

// Route routes a request as the service's ServeAzure does and returns
// the operation's name, or the error that answers the request.
type Route func(*http.Request) (string, error)

// Dispatch routes every case on host with route and checks its outcome,
// then that each of ops has a case.
func Dispatch(t *testing.T, host string, ops []string, route Route, cases []Case) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range cases {
		hr := httptest.NewRequest(c.Method, "http://"+host+c.Target, nil)
		for k, v := range c.Header {
			hr.Header.Set(k, v)
		}
		op, err := route(hr)
		code := ""
		if err != nil {
			op = ""
			code = err.Error()
			if e, _ := azerr.As(err); e != nil {
				code = e.Code
			}
		}
		if op != c.Op || code != c.Code {
			t.Errorf("%s %s %v: got %q %q, want %q %q", c.Method, c.Target, c.Header, op, code, c.Op, c.Code)
		}
		seen[c.Op] = true
	}
	for _, name := range ops {
		if !seen[name] {
			t.Errorf("no dispatch case for %s", name)
		}
	}
}

// C makes a case: the request's method, target and headers, and the
// operation or error code it must route to.
func C(method, target string, header map[string]string, op, code string) Case {
	return Case{Method: method, Target: target, Header: header, Op: op, Code: code}
}

// NotSupported routes every case on host with route and checks that it
// answers 501 NotImplemented with a message naming the operation (the
// case's Op).
func NotSupported(t *testing.T, host string, route Route, cases []Case) {
	t.Helper()
	for _, c := range cases {
		hr := httptest.NewRequest(c.Method, "http://"+host+c.Target, nil)
		for k, v := range c.Header {
			hr.Header.Set(k, v)
		}
		_, err := route(hr)
		e, ok := azerr.As(err)
		if !ok || e.Code != azerr.NotImplemented || e.Status != 501 || !strings.Contains(e.Message, c.Op+" is not supported") {
			t.Errorf("%s %s: %v; want 501 NotImplemented naming %s", c.Method, c.Target, err, c.Op)
		}
	}
}

// Rules checks the per-operation rules of a route table's entries that
// the dispatcher reads (server.Door) against the service's reference:
// structured maps each operation that takes x-ms-structured-body to what
// it does with it (every other refuses it), bearerOnly names the
// operations only a bearer token may call. Every operation named must
// be in the table.
func Rules[H any](t *testing.T, routes *server.Routes[H], structured map[string]server.Structured, bearerOnly ...string) {
	t.Helper()
	bearer := map[string]bool{}
	for _, n := range bearerOnly {
		bearer[n] = true
	}
	seen := map[string]bool{}
	for _, rt := range routes.All() {
		seen[rt.Name] = true
		if rt.Structured != structured[rt.Name] {
			t.Errorf("%s (%s level %#x ?restype=%s&comp=%s): x-ms-structured-body rule %d, want %d", rt.Name, rt.Methods, rt.Levels, rt.Restype, rt.Comp, rt.Structured, structured[rt.Name])
		}
		if rt.BearerOnly != bearer[rt.Name] {
			t.Errorf("%s: bearer only %v, want %v", rt.Name, rt.BearerOnly, bearer[rt.Name])
		}
	}
	for name := range structured {
		if !seen[name] {
			t.Errorf("no route %q", name)
		}
	}
	for name := range bearer {
		if !seen[name] {
			t.Errorf("no route %q", name)
		}
	}
}

package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// doorSvc and doorReq are a toy service for Door: every stage records
// itself in the request's trace.
type doorSvc struct {
	routes *Routes[func(*doorSvc, *doorReq) (Response, error)]
}

type doorReq struct {
	*Request
	trace []string
}

func (r *doorReq) mark(s string) { r.trace = append(r.trace, s) }

var errRefusedByExtras = errors.New("extras refused")

func testDoor(anonymous bool) (*Door[*doorSvc, *doorReq], *doorSvc, *[]*doorReq) {
	handler := func(_ *doorSvc, r *doorReq) (Response, error) {
		r.mark("handler")
		if r.Header.Get("fail") != "" {
			return Response{}, errors.New("handler failed")
		}
		return Bodiless(http.StatusOK), nil
	}
	s := &doorSvc{routes: NewRoutes([]Route[func(*doorSvc, *doorReq) (Response, error)]{
		{Methods: POST, Levels: 1, Comp: "key", Name: "key", Handler: handler, SharedKeyOnly: true, BearerOnly: true},
		{Methods: PUT, Levels: 1, Name: "put", Handler: handler, SAS: SASRule{Resource: auth.ObjectLevel, AnyOf: "w"}, Structured: StructuredRequest},
		{Methods: GET, Levels: 1, Name: "get", Handler: handler, SAS: SASRule{Resource: auth.ObjectLevel, AnyOf: "r"}, Structured: StructuredResponse},
		{Methods: HEAD, Levels: 1, Name: "head", Handler: handler, SAS: SASRule{Resource: auth.ObjectLevel, AnyOf: "r"}},
	})}
	var seen []*doorReq
	d := &Door[*doorSvc, *doorReq]{
		Parse: func(sr *Request, _ Path) *doorReq {
			r := &doorReq{Request: sr}
			r.mark("parse")
			seen = append(seen, r)
			return r
		},
		Route: func(s *doorSvc, r *doorReq) (*Route[func(*doorSvc, *doorReq) (Response, error)], error) {
			r.mark("route")
			sel := s.routes.Selectors(r.URL.Query())
			rt := s.routes.Match(MethodOf(r.Method), 1, &sel, r.Header, r.URL.Query())
			if rt == nil {
				return nil, azerr.New(azerr.InvalidURI)
			}
			return rt, nil
		},
		Target: func(*doorSvc, *doorReq) (SASTarget, auth.PolicyLookup) { return SASTarget{}, nil },
		AuthorizeSAS: func(_ *doorSvc, r *doorReq) error {
			r.mark("sas")
			return nil
		},
		Extras: func(_ *doorSvc, w http.ResponseWriter, r *doorReq) (http.ResponseWriter, error) {
			r.mark("extras")
			if r.Header.Get("refuse") != "" {
				return nil, errRefusedByExtras
			}
			return w, nil
		},
		Answer: func(err error) error {
			if err != nil && err.Error() == "handler failed" {
				return azerr.New(azerr.InternalError)
			}
			return err
		},
	}
	if anonymous {
		d.Anonymous = func(_ *doorSvc, r *doorReq) error {
			r.mark("anonymous")
			return nil
		}
	}
	return d, s, &seen
}

// TestDoorOrder: Door.Serve runs the stages in the one order every front
// end had: no anonymous access refuses before parsing; a routing error or
// a refused x-ms-structured-body ends before authorization; a SAS on a
// bearer-only operation is refused without its rule; anonymous
// authorization, extras, handler, then Answer.
func TestDoorOrder(t *testing.T) {
	sas := &auth.SAS{}
	for _, c := range []struct {
		name      string
		anonymous bool
		method    string
		target    string
		header    map[string]string
		authn     bool
		sas       *auth.SAS
		code      string
		trace     string
	}{
		{"no anonymous access", false, "GET", "/a/x", nil, false, nil, azerr.NoAuthenticationInformation, ""},
		{"anonymous access decided after routing", true, "GET", "/a/x", nil, false, nil, "", "parse,route,anonymous,extras,handler"},
		{"anonymous, routing error first", true, "DELETE", "/a/x", nil, false, nil, azerr.InvalidURI, "parse,route"},
		{"shared key", false, "GET", "/a/x", nil, true, nil, "", "parse,route,extras,handler"},
		{"sas", false, "GET", "/a/x", nil, false, sas, "", "parse,route,sas,extras,handler"},
		{"bearer only refuses a sas", false, "POST", "/a/x?comp=key", nil, false, sas, azerr.AuthenticationFailed, "parse,route"},
		{"bearer only under shared key", false, "POST", "/a/x?comp=key", nil, true, nil, "", "parse,route,extras,handler"},
		{"structured response taken", false, "GET", "/a/x", map[string]string{"x-ms-structured-body": "XSM/1.0; properties=crc64"}, true, nil, "", "parse,route,extras,handler"},
		{"structured body refused", false, "HEAD", "/a/x", map[string]string{"x-ms-structured-body": "XSM/1.0; properties=crc64"}, true, nil, azerr.UnsupportedHeader, "parse,route"},
		{"structured request decoded", false, "PUT", "/a/x", map[string]string{"x-ms-structured-body": "XSM/1.0; properties=crc64"}, true, nil, azerr.MissingRequiredHeader, "parse,route,extras"},
		{"extras refuse", false, "GET", "/a/x", map[string]string{"refuse": "1"}, true, nil, "extras refused", "parse,route,extras"},
		{"answer maps the handler's error", false, "GET", "/a/x", map[string]string{"fail": "1"}, true, nil, azerr.InternalError, "parse,route,extras,handler"},
	} {
		d, s, seen := testDoor(c.anonymous)
		hr := httptest.NewRequest(c.method, "http://h"+c.target, nil)
		for k, v := range c.header {
			hr.Header.Set(k, v)
		}
		err := d.Serve(s, httptest.NewRecorder(), &Request{Request: hr, Authenticated: c.authn, SAS: c.sas})
		code := ""
		if err != nil {
			code = err.Error()
			if e, ok := azerr.As(err); ok {
				code = e.Code
			}
		}
		trace := ""
		if len(*seen) == 1 {
			trace = strings.Join((*seen)[0].trace, ",")
		}
		if code != c.code || trace != c.trace {
			t.Errorf("%s: got %q after %q, want %q after %q", c.name, code, trace, c.code, c.trace)
		}
	}
}

package server

import (
	"context"
	"net/http"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

type corsHandler struct {
	rules  []svcprops.CORSRule
	called bool
}

func (c *corsHandler) ServeAzure(w http.ResponseWriter, r *Request) error {
	c.called = true
	w.WriteHeader(http.StatusOK)
	return nil
}

func (c *corsHandler) CORSRules(context.Context, string) ([]svcprops.CORSRule, error) {
	return c.rules, nil
}

func TestCORS(t *testing.T) {
	h := &corsHandler{rules: []svcprops.CORSRule{
		{AllowedOrigins: "https://app.example", AllowedMethods: "GET,PUT", AllowedHeaders: "x-ms-meta-*,content-type", ExposedHeaders: "x-ms-meta-*, etag", MaxAgeInSeconds: 60},
		{AllowedOrigins: "*", AllowedMethods: "GET", AllowedHeaders: "*", MaxAgeInSeconds: 5},
	}}
	hs := New(Config{Accounts: testAccounts}).Wrap(Service{Name: "blob", Handler: h})

	for _, tc := range []struct {
		name, origin, method, headers string
		status                        int
		allowOrigin, maxAge           string
	}{
		{"exact origin", "https://app.example", "PUT", "x-ms-meta-color, Content-Type", 200, "https://app.example", "60"},
		{"wildcard origin", "https://other.example", "GET", "x-anything", 200, "*", "5"},
		{"method not allowed", "https://other.example", "DELETE", "", 403, "", ""},
		{"header not allowed", "https://app.example", "PUT", "x-ms-blob-type", 403, "", ""},
		{"no request method", "https://app.example", "", "", 403, "", ""},
	} {
		w := do(hs, http.MethodOptions, "/devstoreaccount1/c/b", map[string]string{"Origin": tc.origin, "Access-Control-Request-Method": tc.method, "Access-Control-Request-Headers": tc.headers})
		if w.Code != tc.status {
			t.Fatalf("%s: status %d, want %d (%s)", tc.name, w.Code, tc.status, w.Body.String())
		}
		if tc.status == 403 {
			if w.Header().Get("x-ms-error-code") != "CorsPreflightFailure" {
				t.Fatalf("%s: code %q", tc.name, w.Header().Get("x-ms-error-code"))
			}
			continue
		}
		if got := w.Header().Get("Access-Control-Allow-Origin"); got != tc.allowOrigin {
			t.Fatalf("%s: allow origin %q", tc.name, got)
		}
		if w.Header().Get("Access-Control-Max-Age") != tc.maxAge || w.Header().Get("Access-Control-Allow-Methods") != tc.method {
			t.Fatalf("%s: headers %v", tc.name, w.Header())
		}
	}
	if h.called {
		t.Fatal("a preflight reached the service handler")
	}
	// An actual request with an allowed Origin gets the response headers.
	w := do(hs, http.MethodGet, "/devstoreaccount1/c/b", map[string]string{"Origin": "https://app.example"})
	if w.Header().Get("Access-Control-Allow-Origin") != "https://app.example" || w.Header().Get("Access-Control-Allow-Credentials") != "true" ||
		w.Header().Get("Access-Control-Expose-Headers") != "x-ms-meta-*,etag" || !h.called {
		t.Fatalf("actual request headers: %v", w.Header())
	}
	// A disallowed origin gets none, and the request is still served.
	h.called = false
	w = do(hs, http.MethodPut, "/devstoreaccount1/c/b", map[string]string{"Origin": "https://evil.example"})
	if w.Header().Get("Access-Control-Allow-Origin") != "" || !h.called {
		t.Fatalf("disallowed origin: %v", w.Header())
	}
}

package server

import (
	"context"
	"net/http"
	"strings"
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
		{"no request method", "https://app.example", "", "", 400, "", ""},
		{"no origin", "", "GET", "", 400, "", ""},
	} {
		w := do(hs, http.MethodOptions, "/devstoreaccount1/c/b", map[string]string{"Origin": tc.origin, "Access-Control-Request-Method": tc.method, "Access-Control-Request-Headers": tc.headers})
		if w.Code != tc.status {
			t.Fatalf("%s: status %d, want %d (%s)", tc.name, w.Code, tc.status, w.Body.String())
		}
		if tc.status >= 400 {
			want := "CorsPreflightFailure"
			if tc.status == 400 {
				want = "InvalidHeaderValue"
			}
			if w.Header().Get("x-ms-error-code") != want {
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

func TestCORSSubdomainMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, origin string
		want            bool
	}{
		{"http://*.contoso.com", "http://www.contoso.com", true},
		{"http://*.contoso.com", "http://a.b.contoso.com", true},
		{"http://*.contoso.com", "HTTP://Www.Contoso.Com", true},
		{"http://*.contoso.com", "http://contoso.com", false},
		{"http://*.contoso.com", "http://.contoso.com", false},
		{"http://*.contoso.com", "https://www.contoso.com", false},
		{"http://*.contoso.com", "http://www.contoso.com:81", false},
		{"http://*.contoso.com", "http://x.com/.contoso.com", false},
		{"http://*.contoso.com", "http://u@x.contoso.com", false},
		{"http://*.contoso.com", "http://www.contoso.com.evil", false},
		{"http://*.contoso.com:8080", "http://www.contoso.com:8080", true},
		{"http://www.contoso.com", "http://www.contoso.com", false}, // no star: exact matching elsewhere
		{"http://*contoso.com", "http://evilcontoso.com", false},
		{"http://*.*.com", "http://a.b.com", false},
	} {
		if got := subdomainMatch(tc.pattern, tc.origin); got != tc.want {
			t.Errorf("subdomainMatch(%q, %q) = %v", tc.pattern, tc.origin, got)
		}
	}
}

func TestCORSVary(t *testing.T) {
	h := &corsHandler{rules: []svcprops.CORSRule{{AllowedOrigins: "https://app.example", AllowedMethods: "GET,PUT", MaxAgeInSeconds: 1}}}
	hs := New(Config{Accounts: testAccounts}).Wrap(Service{Name: "blob", Handler: h})
	vary := func(method string, hdr map[string]string) bool {
		return do(hs, method, "/devstoreaccount1/c/b", hdr).Header().Get("Vary") == "Origin"
	}
	if !vary(http.MethodGet, nil) || !vary(http.MethodHead, nil) || !vary(http.MethodGet, map[string]string{"Origin": "https://app.example"}) ||
		!vary(http.MethodGet, map[string]string{"Origin": "https://other.example"}) {
		t.Fatal("GET/HEAD to a service with rules: no Vary: Origin")
	}
	if vary(http.MethodPut, map[string]string{"Origin": "https://app.example"}) || vary(http.MethodPut, nil) {
		t.Fatal("PUT carries Vary")
	}
	h.rules = nil
	if vary(http.MethodGet, nil) {
		t.Fatal("Vary without rules")
	}
}

// FuzzCORSOrigin: matching an origin against an allowed-origin pattern
// never panics, and a wildcard match keeps the pattern's scheme/prefix
// and domain suffix, with a star standing for whole host labels only.
func FuzzCORSOrigin(f *testing.F) {
	for _, s := range [][2]string{
		{"http://*.contoso.com", "http://www.contoso.com"}, {"http://*.contoso.com", "http://contoso.com"},
		{"https://*.a.b:8443", "https://x.y.a.b:8443"}, {"*", "http://x"}, {"http://*.c", "http://u@x.c"},
		{"http://*", "http://x"}, {"**.c", "a.c"}, {"", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, origin string) {
		if !subdomainMatch(pattern, origin) {
			return
		}
		prefix, suffix, _ := strings.Cut(pattern, "*")
		if len(origin) <= len(prefix)+len(suffix) || !strings.EqualFold(origin[:len(prefix)], prefix) ||
			!strings.EqualFold(origin[len(origin)-len(suffix):], suffix) || !strings.HasPrefix(suffix, ".") {
			t.Fatalf("%q matched %q", pattern, origin)
		}
		if mid := origin[len(prefix) : len(origin)-len(suffix)]; strings.ContainsAny(mid, "/:@") {
			t.Fatalf("%q matched %q across %q", pattern, origin, mid)
		}
	})
}

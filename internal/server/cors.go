package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// CORSRuler is implemented by services whose Set Service Properties
// carries CORS rules. The front end answers preflight requests and adds
// CORS headers to responses from those rules, so browser apps work.
type CORSRuler interface {
	CORSRules(ctx context.Context, account string) ([]svcprops.CORSRule, error)
}

// splitList splits a comma-separated rule field, trimming blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// originAllowed matches origin against the rule's allowed origins: "*"
// (any origin, answered with Access-Control-Allow-Origin: *), an exact
// origin, or one with a wildcard subdomain such as http://*.contoso.com,
// which admits any host under contoso.com with that scheme and port (
// Cross-Origin Resource Sharing (CORS) support for Azure Storage,
// "AllowedOrigins"). Both are answered with the request's origin.
func originAllowed(rule svcprops.CORSRule, origin string) (wildcard, ok bool) {
	for _, o := range splitList(rule.AllowedOrigins) {
		if o == "*" {
			return true, true
		}
		if strings.EqualFold(o, origin) || subdomainMatch(o, origin) {
			return false, true
		}
	}
	return false, false
}

// subdomainMatch reports whether origin matches pattern, an allowed
// origin with one "*" standing for one or more host labels
// ("https://*.contoso.com"): the text before and after the star must
// match (case-insensitively) and the labels it covers may hold no "/",
// ":" or "@", so the star cannot reach into the scheme, port or path.
func subdomainMatch(pattern, origin string) bool {
	prefix, suffix, ok := strings.Cut(pattern, "*")
	if !ok || strings.Contains(suffix, "*") || !strings.HasPrefix(suffix, ".") {
		return false
	}
	if len(origin) <= len(prefix)+len(suffix) ||
		!strings.EqualFold(origin[:len(prefix)], prefix) ||
		!strings.EqualFold(origin[len(origin)-len(suffix):], suffix) {
		return false
	}
	labels := origin[len(prefix) : len(origin)-len(suffix)]
	return !strings.ContainsAny(labels, "/:@") && !strings.HasPrefix(labels, ".") && !strings.HasSuffix(labels, ".")
}

func methodAllowed(rule svcprops.CORSRule, method string) bool {
	for _, m := range splitList(rule.AllowedMethods) {
		if strings.EqualFold(m, method) {
			return true
		}
	}
	return false
}

// headerAllowed matches a header name against the rule's allowed headers:
// exact names, prefixes ending in "*" (x-ms-meta-*), or "*".
func headerAllowed(rule svcprops.CORSRule, name string) bool {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, a := range splitList(rule.AllowedHeaders) {
		a = strings.ToLower(a)
		if a == "*" || a == name || (strings.HasSuffix(a, "*") && strings.HasPrefix(name, strings.TrimSuffix(a, "*"))) {
			return true
		}
	}
	return false
}

// matchCORS returns the first rule allowing origin, method and headers.
func matchCORS(rules []svcprops.CORSRule, origin, method string, headers []string) (svcprops.CORSRule, bool, bool) {
	for _, r := range rules {
		wild, ok := originAllowed(r, origin)
		if !ok || !methodAllowed(r, method) {
			continue
		}
		all := true
		for _, h := range headers {
			if !headerAllowed(r, h) {
				all = false
				break
			}
		}
		if all {
			return r, wild, true
		}
	}
	return svcprops.CORSRule{}, false, false
}

func setAllowOrigin(h http.Header, origin string, wildcard bool) {
	if wildcard {
		h.Set("Access-Control-Allow-Origin", "*")
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
}

// preflight answers an OPTIONS request from the service's CORS rules:
// 200 with the Access-Control-Allow-* headers when a rule matches, 403
// CorsPreflightFailure otherwise; a request without Origin or
// Access-Control-Request-Method is 400, whatever the rules (
// Cross-Origin Resource Sharing (CORS) support for Azure Storage,
// "Preflight request": "If the OPTIONS request doesn't contain the
// required CORS headers (the Origin and Access-Control-Request-Method
// headers), the service will respond with status code 400 (Bad
// request)"). Preflights are not authenticated.
func preflight(w http.ResponseWriter, r *http.Request, rules []svcprops.CORSRule) error {
	origin := wire.Field(r.Header, "Origin")
	method := wire.Field(r.Header, "Access-Control-Request-Method")
	if origin == "" || method == "" {
		name := "Origin"
		if origin != "" {
			name = "Access-Control-Request-Method"
		}
		return azerr.Newf(azerr.InvalidHeaderValue, "A required CORS header is not present.").With("HeaderName", name).With("HeaderValue", "")
	}
	headers := splitList(wire.Field(r.Header, "Access-Control-Request-Headers"))
	rule, wild, ok := matchCORS(rules, origin, method, headers)
	if !ok {
		return azerr.New(azerr.CorsPreflightFailure)
	}
	h := w.Header()
	setAllowOrigin(h, origin, wild)
	if !wild {
		h.Add("Vary", "Origin")
	}
	h.Set("Access-Control-Allow-Methods", method)
	if len(headers) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(headers, ","))
	}
	h.Set("Access-Control-Max-Age", strconv.Itoa(rule.MaxAgeInSeconds))
	w.WriteHeader(http.StatusOK)
	return nil
}

// corsHeaders adds the CORS response headers to a request that carries an
// Origin its service's rules allow (errors included, so a browser app can
// read them). A GET or HEAD to a service with CORS rules carries Vary:
// Origin unless a rule allowing any origin ("*") matched, with or
// without an Origin header, so a cache does not serve one origin's answer
// to another (Cross-Origin Resource Sharing (CORS) support for Azure
// Storage, "Understanding the Vary header"); responses to other methods,
// which user agents do not cache, never carry it.
func corsHeaders(w http.ResponseWriter, r *http.Request, rules []svcprops.CORSRule) {
	if len(rules) == 0 {
		return
	}
	origin := wire.Field(r.Header, "Origin")
	var rule svcprops.CORSRule
	wild, ok := false, false
	if origin != "" {
		rule, wild, ok = matchCORS(rules, origin, r.Method, nil)
	}
	h := w.Header()
	if !wild && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		h.Add("Vary", "Origin")
	}
	if !ok {
		return
	}
	setAllowOrigin(h, origin, wild)
	if rule.ExposedHeaders != "" {
		h.Set("Access-Control-Expose-Headers", strings.Join(splitList(rule.ExposedHeaders), ","))
	}
}

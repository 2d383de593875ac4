package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
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

func originAllowed(rule svcprops.CORSRule, origin string) (wildcard, ok bool) {
	for _, o := range splitList(rule.AllowedOrigins) {
		if o == "*" {
			return true, true
		}
		if strings.EqualFold(o, origin) {
			return false, true
		}
	}
	return false, false
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
	h.Add("Vary", "Origin")
}

// preflight answers an OPTIONS request from the service's CORS rules:
// 200 with the Access-Control-Allow-* headers when a rule matches, 403
// CorsPreflightFailure otherwise. Preflights are not authenticated.
func preflight(w http.ResponseWriter, r *http.Request, rules []svcprops.CORSRule) error {
	origin := r.Header.Get("Origin")
	method := r.Header.Get("Access-Control-Request-Method")
	if origin == "" || method == "" {
		return azerr.Newf(azerr.CorsPreflightFailure, "A CORS preflight request needs the Origin and Access-Control-Request-Method headers.")
	}
	headers := splitList(r.Header.Get("Access-Control-Request-Headers"))
	rule, wild, ok := matchCORS(rules, origin, method, headers)
	if !ok {
		return azerr.New(azerr.CorsPreflightFailure)
	}
	h := w.Header()
	setAllowOrigin(h, origin, wild)
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
// read them).
func corsHeaders(w http.ResponseWriter, r *http.Request, rules []svcprops.CORSRule) {
	origin := r.Header.Get("Origin")
	rule, wild, ok := matchCORS(rules, origin, r.Method, nil)
	if !ok {
		return
	}
	h := w.Header()
	setAllowOrigin(h, origin, wild)
	if rule.ExposedHeaders != "" {
		h.Set("Access-Control-Expose-Headers", strings.Join(splitList(rule.ExposedHeaders), ","))
	}
}

// Package wire holds pure parsers and formatters for the Azure Storage REST
// wire formats used by the Blob service (and shared by File and Queue):
// byte ranges, resource names, metadata headers, block IDs, block-list XML,
// dates, ETags and common query parameters.
//
// Every function here is side-effect free. Parse errors are *azerr.Error
// values from the catalog, so handlers can return them unchanged.
//
// Comments name the source of each rule: the Azure Storage REST reference
// (https://learn.microsoft.com/en-us/rest/api/storageservices/), responses
// of the real service recorded by the Azure SDKs' tests or quoted in
// GitHub issues, the Go SDKs' source, or Azurite where it matches Azure.
// "(inferred)" marks Cerulean's own reading where no source says; the
// comment gives the reasoning.
package wire

import (
	"net/textproto"
	"strings"
)

// Header is the shape of an HTTP header map (net/http's http.Header, which
// is assignable to it), so that the parsers here take request headers
// without this package depending on net/http: the domain packages use its
// formats (ETags, ranges, dates) below the HTTP line.
type Header = map[string][]string

// httpTimeFormat is net/http's TimeFormat, the RFC 1123 GMT layout of
// HTTP dates.
const httpTimeFormat = "Mon, 02 Jan 2006 15:04:05 GMT"

// headerValue returns the first value of header name in h. It first tries
// the canonical key (what net/http servers produce) and then falls back to a
// case-insensitive scan, because the Go SDKs set some keys directly in the
// map in lower case (req.Header["x-ms-meta-"+k]), which matters when a
// request is handed to a handler in-process without going over the wire.
func headerValue(h Header, name string) (string, bool) {
	if v, ok := h[textproto.CanonicalMIMEHeaderKey(name)]; ok && len(v) > 0 {
		return v[0], true
	}
	for k, v := range h {
		if len(v) > 0 && strings.EqualFold(k, name) {
			return v[0], true
		}
	}
	return "", false
}

// Field returns the first value of the header field k in h, as
// http.Header.Get does, but without canonicalising k on every call: k must
// already be in canonical form (textproto.CanonicalMIMEHeaderKey), which
// TestFieldNamesCanonical checks for every literal passed here. net/http
// stores a request's fields under canonical keys, so the lookup is one map
// index, where Get first validates and folds the name byte by byte.
func Field(h Header, k string) string {
	if v := h[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

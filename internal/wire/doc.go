// Package wire holds pure parsers and formatters for the Azure Storage REST
// wire formats used by the Blob service (and shared by File and Queue):
// byte ranges, resource names, metadata headers, block IDs, block-list XML,
// dates, ETags and common query parameters.
//
// Every function here is side-effect free. Parse errors are *azerr.Error
// values from the catalog, so handlers can return them unchanged.
//
// Evidence tags used in comments follow /work/shared/reference/azure-rest-digest.md:
// [T] .NET client tests against the real service, [D] documentation,
// [R] recorded real-service responses or maintainer reports, [S] Go SDK
// source, [A] Azurite, [I] inference.
package wire

import (
	"net/http"
	"strings"
)

// headerValue returns the first value of header name in h. It first tries
// the canonical key (what net/http servers produce) and then falls back to a
// case-insensitive scan, because the Go SDKs set some keys directly in the
// map in lower case (req.Header["x-ms-meta-"+k]), which matters when a
// request is handed to a handler in-process without going over the wire.
func headerValue(h http.Header, name string) (string, bool) {
	if v, ok := h[http.CanonicalHeaderKey(name)]; ok && len(v) > 0 {
		return v[0], true
	}
	for k, v := range h {
		if len(v) > 0 && strings.EqualFold(k, name) {
			return v[0], true
		}
	}
	return "", false
}

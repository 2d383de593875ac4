package blobrest

import (
	"net/http"
	"strings"
)

// Expect: 100-continue (server/expect.go): a write whose client holds
// the body back until asked is checked once before the body is read, by
// the same functions its transaction applies, so that a refused write is
// answered at once. The checks are applied again, authoritatively, in the
// write's transaction.

// expectsContinue reports whether the request sent Expect: 100-continue.
func expectsContinue(h http.Header) bool {
	return strings.EqualFold(strings.TrimSpace(h.Get("Expect")), "100-continue")
}

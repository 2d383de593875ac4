package file

import (
	"net/http"
	"net/http/httptest"
)

// asClientSees canonicalizes the header names of w as an HTTP client's
// parser does (metadata headers are written as x-ms-meta-{name}, not in
// canonical form), so that tests can look them up with Header.Get.
func asClientSees(w *httptest.ResponseRecorder) *httptest.ResponseRecorder {
	h := w.Header()
	for k, v := range h {
		if ck := http.CanonicalHeaderKey(k); ck != k {
			delete(h, k)
			h[ck] = append(h[ck], v...)
		}
	}
	return w
}

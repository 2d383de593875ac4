package server

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Expect: 100-continue. A client sending it (azblob 1.8.0+ does after a
// 429, 500 or 503, "ExpectContinueBehavior") holds the body back until
// the server answers 100 Continue, which net/http sends on the handler's
// first read of the body. A request refused before its body is read
// (authentication, a missing container, a condition, a bad header) must
// then get its final 4xx at once: drainBody, which reads a refused
// body so that the error reaches a client that is still sending it,
// would itself make net/http send the 100 Continue and wait for a body
// the client need not send. continueBody records whether the body was
// read; while it was not, the error is answered without draining and
// net/http closes the connection after it (the unsent body cannot be
// told from a next request).

// continueBody is the body of a request that expects 100-continue.
type continueBody struct {
	io.ReadCloser
	read atomic.Bool
}

func (b *continueBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.ReadCloser.Read(p)
}

// trackContinue returns r, or for a request that expects 100-continue a
// shallow copy whose body is a continueBody. The request net/http holds
// keeps its own body: net/http closes the connection after the answer
// only when that body is still its expectContinueReader, unread; given
// any other body it would wait to discard one the client never sends.
func trackContinue(r *http.Request) *http.Request {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return r
	}
	if !strings.EqualFold(strings.TrimSpace(wire.Field(r.Header, "Expect")), "100-continue") {
		return r
	}
	r = r.WithContext(r.Context())
	r.Body = &continueBody{ReadCloser: r.Body}
	return r
}

// continueWithheld reports whether r expects 100-continue and its body
// has not been asked for: no 100 Continue has gone out.
func continueWithheld(r *http.Request) bool {
	b, ok := r.Body.(*continueBody)
	return ok && !b.read.Load()
}

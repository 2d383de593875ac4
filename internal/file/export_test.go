package file

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/server"
)

// SetPutRangeFromURLAttempts sets how many attempts Put Range from URL
// makes (1: the source is always read inside the write transaction) and
// returns a function restoring the previous value. Tests using it must
// not run in parallel.
func SetPutRangeFromURLAttempts(n int) (restore func()) {
	old := putRangeFromURLAttempts
	putRangeFromURLAttempts = n
	return func() { putRangeFromURLAttempts = old }
}

// ServeREST answers a File REST request through the REST front end
// (internal/file/filerest) over s. The domain's tests drive both doors,
// REST and SMB; filerest imports this package, so the hook is set by
// the external test package (resthook_test.go), which may import it.
var ServeREST func(s *Service, w http.ResponseWriter, r *server.Request) error

// serveREST is ServeREST for the tests of this package.
func serveREST(s *Service, w http.ResponseWriter, r *server.Request) error {
	if ServeREST == nil {
		panic("file: ServeREST is not set (resthook_test.go)")
	}
	return ServeREST(s, w, r)
}

// RESTAnswer is filerest.Answer, the REST answer of a domain error, set
// by the external test package (resthook_test.go) as ServeREST is.
var RESTAnswer func(error) error

// restAnswer is RESTAnswer for the tests of this package.
func restAnswer(err error) error {
	if RESTAnswer == nil {
		panic("file: RESTAnswer is not set (resthook_test.go)")
	}
	return RESTAnswer(err)
}

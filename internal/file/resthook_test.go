package file_test

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/file/filerest"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// The tests of package file send REST requests through the front end,
// which they cannot import (filerest imports file): this external test
// package, built into the same test binary, hands it to them before any
// test runs.
func init() {
	file.ServeREST = func(s *file.Service, w http.ResponseWriter, r *server.Request) error {
		return filerest.New(s).ServeAzure(w, r)
	}
	file.RESTAnswer = filerest.Answer
}

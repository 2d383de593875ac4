package file_test

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/file/filerest"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/smb/smbfs"
)

// The tests of package file drive both doors, the REST front end and the
// SMB view, which they cannot import (filerest and smbfs import file):
// this external test package, built into the same test binary, hands
// them over before any test runs.
func init() {
	file.ServeREST = func(s *file.Service, w http.ResponseWriter, r *server.Request) error {
		return filerest.New(s).ServeAzure(w, r)
	}
	file.RESTAnswer = filerest.Answer
	file.NewVFS = func(s *file.Service, owner string) file.VFS { return smbfs.New(s, owner) }
}

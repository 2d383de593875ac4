package file

import (
	"context"
	"net/http"
	"time"

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

// VFS is the SMB view (internal/smb/smbfs.VFS, over Opens) as the tests
// of this package drive it: they cannot import it (it imports this
// package), so the external test package hands it over (NewVFS).
type VFS interface {
	Owner() string
	Now() time.Time
	Heartbeat(ctx context.Context, until time.Time) error
	Retire(ctx context.Context) error
	ShareExists(ctx context.Context, acct, sh string) (bool, error)
	Shares(ctx context.Context, acct string) ([]string, error)
	FSInfo(ctx context.Context, acct, sh string) (FSInfo, error)
	Read(ctx context.Context, o *Open, off int64, n int) ([]byte, error)
	Write(ctx context.Context, o *Open, off int64, data []byte) error
	SetEndOfFile(ctx context.Context, o *Open, size int64) error
	SetAllocation(ctx context.Context, o *Open, size int64) error
	Lock(ctx context.Context, o *Open, ranges []LockRange) error
	Unlock(ctx context.Context, o *Open, ranges []LockRange) error
	Locks(ctx context.Context, o *Open) ([]LockRange, error)
	SetBasic(ctx context.Context, o *Open, b BasicInfo) (Info, error)
	SetDisposition(ctx context.Context, o *Open, deletePending bool) error
	Rename(ctx context.Context, o *Open, newPath []string, replaceIfExists bool) error
	ReadDir(ctx context.Context, o *Open, after string, limit int) ([]Info, error)
	Lookup(ctx context.Context, o *Open, name string) (Info, error)
	ParentInfo(ctx context.Context, o *Open) (Info, error)
	Open(ctx context.Context, r OpenRequest) (*Open, error)
	Info(ctx context.Context, o *Open) (Info, error)
	Path(ctx context.Context, o *Open) ([]string, error)
	Close(ctx context.Context, o *Open) (Info, error)
	CloseSession(ctx context.Context, sessionID string) (int, error)
}

// NewVFS returns the SMB view of s for owner (smbfs.New), set by the
// external test package (resthook_test.go).
var NewVFS func(s *Service, owner string) VFS

// VFS returns the SMB view of s for owner, as the SMB server gets it.
func (s *Service) VFS(owner string) VFS {
	if NewVFS == nil {
		panic("file: NewVFS is not set (resthook_test.go)")
	}
	return NewVFS(s, owner)
}

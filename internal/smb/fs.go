package smb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"time"

	"github.com/cerulean-storage/cerulean/internal/file"
)

// FileSystem is what the SMB front end needs from the File service: the
// VFS of one owner (smbfs.VFS, the SMB view over the File domain's
// file.Opens, satisfies it; internal/app passes one). It
// lists only the calls this package makes, so the front end does not
// depend on the VFS's whole surface. Handles (*file.Open) live in the
// store's global open table, so share modes, delete-pending and
// List/Force Close Handles hold across the REST and SMB front ends.
type FileSystem interface {
	// Owner is the liveness identity of the handles opened through
	// this FileSystem; Heartbeat renews it and Retire ends it.
	Owner() string
	// Now is the service clock's time, the time every VFS decision uses.
	Now() time.Time
	Heartbeat(ctx context.Context, until time.Time) error
	Retire(ctx context.Context) error

	ShareExists(ctx context.Context, acct, share string) (bool, error)
	FSInfo(ctx context.Context, acct, share string) (file.FSInfo, error)

	Open(ctx context.Context, r file.OpenRequest) (*file.Open, error)
	Close(ctx context.Context, o *file.Open) (file.Info, error)
	CloseSession(ctx context.Context, sessionID string) (int, error)
	Info(ctx context.Context, o *file.Open) (file.Info, error)
	ParentInfo(ctx context.Context, o *file.Open) (file.Info, error)
	Path(ctx context.Context, o *file.Open) ([]string, error)
	Lookup(ctx context.Context, o *file.Open, name string) (file.Info, error)
	ReadDir(ctx context.Context, o *file.Open, after string, limit int) ([]file.Info, error)

	Read(ctx context.Context, o *file.Open, off int64, n int) ([]byte, error)
	Write(ctx context.Context, o *file.Open, off int64, data []byte) error
	SetEndOfFile(ctx context.Context, o *file.Open, size int64) error
	SetAllocation(ctx context.Context, o *file.Open, size int64) error
	SetBasic(ctx context.Context, o *file.Open, b file.BasicInfo) (file.Info, error)
	SetDisposition(ctx context.Context, o *file.Open, deletePending bool) error
	Rename(ctx context.Context, o *file.Open, newPath []string, replaceIfExists bool) error

	Lock(ctx context.Context, o *file.Open, ranges []file.LockRange) error
	Unlock(ctx context.Context, o *file.Open, ranges []file.LockRange) error
}

// DefaultOwner returns a fresh owner id for a server's FileSystem,
// "smb-<hostname>-<random>": unique among live servers.
func DefaultOwner() string {
	host, _ := os.Hostname()
	return "smb-" + host + "-" + randomHex(8)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

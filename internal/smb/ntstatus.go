package smb

import (
	"errors"
	"io"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// fileStatuses maps the File service's errors (the sentinels of
// FileSystem calls, and the domain's refusals of an SMB caller, which
// wrap them: the SMB view, smbfs, answers a refusal the domain leaves
// to the door with its sentinel) to the NTSTATUS this front end answers
// with. The File service names which rule refused; the SMB vocabulary
// for it lives here and in smbfs, as the REST vocabulary lives in
// filerest.
var fileStatuses = []struct {
	err    error
	status smb2.Status
}{
	{file.ErrNotFound, smb2.StatusObjectNameNotFound},
	{file.ErrPathNotFound, smb2.StatusObjectPathNotFound},
	{file.ErrExists, smb2.StatusObjectNameCollision},
	{file.ErrIsDirectory, smb2.StatusFileIsADirectory},
	{file.ErrNotDirectory, smb2.StatusNotADirectory},
	{file.ErrSharingViolation, smb2.StatusSharingViolation},
	{file.ErrDeletePending, smb2.StatusDeletePending},
	{file.ErrAccessDenied, smb2.StatusAccessDenied},
	{file.ErrCannotDelete, smb2.StatusCannotDelete},
	{file.ErrDirectoryNotEmpty, smb2.StatusDirectoryNotEmpty},
	{file.ErrInvalidName, smb2.StatusObjectNameInvalid},
	{file.ErrInvalidParameter, smb2.StatusInvalidParameter},
	{file.ErrDiskFull, smb2.StatusDiskFull},
	{file.ErrFileClosed, smb2.StatusFileClosed},
	// At TREE_CONNECT; statusOf turns it into STATUS_NETWORK_NAME_DELETED
	// for a share deleted while connected.
	{file.ErrShareNotFound, smb2.StatusBadNetworkName},
	// The VFS's owner has no live heartbeat: a server fault.
	{file.ErrOwnerNotLive, smb2.StatusInsufficientResources},
	{file.ErrLockNotGranted, smb2.StatusLockNotGranted},
	{file.ErrFileLockConflict, smb2.StatusFileLockConflict},
	{file.ErrRangeNotLocked, smb2.StatusRangeNotLocked},
	{file.ErrInvalidLockRange, smb2.StatusInvalidLockRange},
}

// fileStatus returns the NTSTATUS for an error of a FileSystem call: the
// status of its sentinel (errors.Is: wrapped and refusal errors too),
// STATUS_END_OF_FILE for io.EOF (a read at or past the end), and ok false
// for anything else (a storage fault).
func fileStatus(err error) (status smb2.Status, ok bool) {
	if errors.Is(err, io.EOF) {
		return smb2.StatusEndOfFile, true
	}
	for _, m := range fileStatuses {
		if errors.Is(err, m.err) {
			return m.status, true
		}
	}
	return 0, false
}

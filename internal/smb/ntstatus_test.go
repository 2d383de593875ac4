package smb

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// TestFileStatus checks the File service's error catalog as the SMB
// front end answers it: every sentinel its NTSTATUS (MS-ERREF 2.3.1, the
// values the sentinels document), wrapped errors too, io.EOF
// STATUS_END_OF_FILE and a storage fault no status. (Moved here from
// internal/file's TestVFSNTStatus and TestVFSLocks with the mapping.)
func TestFileStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want uint32
		ok   bool
	}{
		{file.ErrNotFound, 0xC0000034, true},
		{file.ErrPathNotFound, 0xC000003A, true},
		{file.ErrExists, 0xC0000035, true},
		{file.ErrIsDirectory, 0xC00000BA, true},
		{file.ErrNotDirectory, 0xC0000103, true},
		{fmt.Errorf("wrapped: %w", file.ErrSharingViolation), 0xC0000043, true},
		{file.ErrDeletePending, 0xC0000056, true},
		{file.ErrAccessDenied, 0xC0000022, true},
		{file.ErrCannotDelete, 0xC0000121, true},
		{file.ErrDirectoryNotEmpty, 0xC0000101, true},
		{file.ErrInvalidName, 0xC0000033, true},
		{file.ErrInvalidParameter, 0xC000000D, true},
		{file.ErrDiskFull, 0xC000007F, true},
		{file.ErrFileClosed, 0xC0000128, true},
		{file.ErrShareNotFound, 0xC00000CC, true},
		{file.ErrOwnerNotLive, 0xC000009A, true},
		{file.ErrLockNotGranted, 0xC0000055, true},
		{file.ErrFileLockConflict, 0xC0000054, true},
		{file.ErrRangeNotLocked, 0xC000007E, true},
		{file.ErrInvalidLockRange, 0xC00001A1, true},
		{io.EOF, 0xC0000011, true},
		{errors.New("disk on fire"), 0, false},
	} {
		if got, ok := fileStatus(tc.err); uint32(got) != tc.want || ok != tc.ok {
			t.Errorf("fileStatus(%v) = %#x %v, want %#x %v", tc.err, uint32(got), ok, tc.want, tc.ok)
		}
	}
	seen := map[smb2.Status]bool{}
	for _, m := range fileStatuses {
		if seen[m.status] {
			t.Errorf("status %#x twice", uint32(m.status))
		}
		seen[m.status] = true
	}
}

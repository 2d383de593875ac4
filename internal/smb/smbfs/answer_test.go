package smbfs

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/file"
)

// TestAnswerRefusals: the refusals the domain leaves to the
// door are answered with the VFS sentinels (and so the NTSTATUS codes)
// and keep their check; those the domain answered itself, and other
// errors, pass unchanged.
func TestAnswerRefusals(t *testing.T) {
	for _, tc := range []struct {
		by   file.Check
		want error
	}{
		{file.ByLock, file.ErrFileLockConflict},
		{file.ByQuota, file.ErrDiskFull},
		{file.ByReadOnly, file.ErrAccessDenied},
		{file.ByParent, file.ErrPathNotFound},
		{file.ByExists, file.ErrExists},
		{file.ByReplaceDir, file.ErrAccessDenied},
		{file.ByNotEmpty, file.ErrDirectoryNotEmpty},
		{file.ByShareRoot, file.ErrAccessDenied},
		{file.BySubtree, file.ErrInvalidParameter},
	} {
		err := answer(fmt.Errorf("wrapped: %w", &file.Refusal{By: tc.by, Detail: "d"}))
		if !errors.Is(err, tc.want) || file.RefusedBy(err) != tc.by {
			t.Errorf("%v: got %v (refused by %v), want %v", tc.by, err, file.RefusedBy(err), tc.want)
		}
	}
	answered := &file.Refusal{By: file.ByReadOnly, Err: file.ErrCannotDelete}
	if err := answer(answered); err != answered {
		t.Errorf("an answered refusal became %v", err)
	}
	other := errors.New("storage fault")
	if err := answer(other); err != other {
		t.Errorf("a storage fault became %v", err)
	}
}

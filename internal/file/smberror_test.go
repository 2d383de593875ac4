package file

import (
	"errors"
	"fmt"
	"testing"
)

// TestSMBErrorAnswersRefusals: the refusals the domain leaves to the
// door are answered with the VFS sentinels (and so the NTSTATUS codes)
// and keep their check; those the domain answered itself, and other
// errors, pass unchanged.
func TestSMBErrorAnswersRefusals(t *testing.T) {
	for _, tc := range []struct {
		by   Check
		want error
	}{
		{ByLock, ErrFileLockConflict},
		{ByQuota, ErrDiskFull},
		{ByReadOnly, ErrAccessDenied},
		{ByParent, ErrPathNotFound},
		{ByExists, ErrExists},
		{ByReplaceDir, ErrAccessDenied},
		{ByNotEmpty, ErrDirectoryNotEmpty},
		{ByShareRoot, ErrAccessDenied},
		{BySubtree, ErrInvalidParameter},
	} {
		err := smbError(fmt.Errorf("wrapped: %w", &Refusal{By: tc.by, Detail: "d"}))
		if !errors.Is(err, tc.want) || RefusedBy(err) != tc.by {
			t.Errorf("%v: got %v (refused by %v), want %v", tc.by, err, RefusedBy(err), tc.want)
		}
	}
	answered := &Refusal{By: ByReadOnly, Err: ErrCannotDelete}
	if err := smbError(answered); err != answered {
		t.Errorf("an answered refusal became %v", err)
	}
	other := errors.New("storage fault")
	if err := smbError(other); err != other {
		t.Errorf("a storage fault became %v", err)
	}
}

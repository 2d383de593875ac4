package smb

import (
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// TestBasicInfo: SET_INFO FileBasicInformation's special FILETIMEs reach
// the VFS as "leave" (0), freeze (-1) and thaw (-2); anything below -2 is
// refused.
func TestBasicInfo(t *testing.T) {
	wt := time.Date(2031, 2, 3, 4, 5, 6, 700, time.UTC)
	bi, ok := basicInfo(smb2.FileBasicInformation{
		CreationTime:   smb2.FiletimeStopUpdates,
		LastAccessTime: smb2.FiletimeResumeUpdate,
		LastWriteTime:  smb2.FiletimeOf(wt),
		ChangeTime:     smb2.FiletimeUnchanged,
		FileAttributes: smb2.AttrHidden,
	})
	want := file.BasicInfo{LastWrite: wt, Attributes: file.AttrHidden, Freeze: file.TimeCreated, Thaw: file.TimeLastAccess}
	if !ok || bi != want {
		t.Fatalf("got %+v %v, want %+v", bi, ok, want)
	}
	for _, ft := range []smb2.Filetime{-3, -1 << 62} {
		if _, ok := basicInfo(smb2.FileBasicInformation{ChangeTime: ft}); ok {
			t.Errorf("change time %d accepted", ft)
		}
	}
}

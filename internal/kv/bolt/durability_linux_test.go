package bolt

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/vfs/errorfs"
)

// TestOpenSyncsDirectory: the files a first Open creates are in the
// directory after a crash (power cut) that follows an acknowledged write.
func TestOpenSyncsDirectory(t *testing.T) {
	keepLog(t)
	dir := t.TempDir()
	efs, err := errorfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(filepath.Join(dir, "meta.db"), Options{FS: efs, LogSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	putKeys(t, db, 1, 3)
	img := efs.Crash()
	db.Close() // fails: the disk is gone
	if img.Files["meta.db"] == nil || img.Files["meta.db.wal"] == nil {
		t.Fatalf("after the crash the directory holds %d files, want meta.db and meta.db.wal", len(img.Files))
	}
	after := t.TempDir()
	if err := img.WriteTo(after); err != nil {
		t.Fatal(err)
	}
	db, err = Open(filepath.Join(after, "meta.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := keysIn(t, db); !slices.Equal(got, wantKeys(1, 3)) {
		t.Fatalf("acknowledged keys after the crash: %v", got)
	}
}

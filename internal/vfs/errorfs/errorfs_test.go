//go:build linux

package errorfs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCrashImage: a crash keeps exactly what was synced: file contents
// up to their last sync, directory entries up to their directory's last
// sync (creations, renames and removals alike).
func TestCrashImage(t *testing.T) {
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "old"), []byte("old content"), 0o644))
	f, err := New(root)
	must(t, err)
	p := func(name string) string { return filepath.Join(root, name) }

	// synced: created, written, synced, directory synced, then
	// overwritten in part and extended without a sync.
	a, err := f.OpenFile(p("synced"), os.O_RDWR|os.O_CREATE, 0o644)
	must(t, err)
	_, err = a.WriteAt([]byte("0123456789"), 0)
	must(t, err)
	must(t, a.Datasync())
	must(t, f.SyncDir(root))
	_, err = a.WriteAt([]byte("abcdefghijkl"), 5)
	must(t, err)
	// a directory made and synced, with a file renamed into it.
	must(t, f.MkdirAll(p("d/e"), 0o755))
	must(t, f.SyncDir(root))
	must(t, f.SyncDir(p("d")))
	// old is removed without a directory sync: it comes back.
	must(t, f.Remove(p("old")))
	// unsynced-entry: data synced, directory not (created after the
	// last sync of the root).
	b, err := f.OpenFile(p("unsynced-entry"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	must(t, err)
	_, err = b.Write([]byte("lost"))
	must(t, err)
	must(t, b.Sync())
	c, err := f.OpenFile(p("d/e/tmp"), os.O_WRONLY|os.O_CREATE, 0o644)
	must(t, err)
	_, err = c.Write([]byte("chunk"))
	must(t, err)
	must(t, f.Rename(p("d/e/tmp"), p("d/e/final")))
	must(t, c.Sync())
	must(t, f.SyncDir(p("d/e")))

	img := f.Crash()
	want := map[string]string{"synced": "0123456789", "old": "old content", "d/e/final": "chunk"}
	if len(img.Files) != len(want) {
		t.Errorf("image files %v", keys(img.Files))
	}
	for name, w := range want {
		if got, ok := img.Files[name]; !ok || string(got) != w {
			t.Errorf("%s = %q (present %v), want %q", name, got, ok, w)
		}
	}
	// After the crash nothing more happens.
	if _, err := a.WriteAt([]byte("x"), 0); !errors.Is(err, ErrCrashed) {
		t.Errorf("write after the crash: %v", err)
	}
	if err := f.SyncDir(root); !errors.Is(err, ErrCrashed) {
		t.Errorf("sync after the crash: %v", err)
	}
	out := t.TempDir()
	must(t, img.WriteTo(out))
	if got, err := os.ReadFile(filepath.Join(out, "d/e/final")); err != nil || string(got) != "chunk" {
		t.Errorf("written image: %q %v", got, err)
	}
}

func keys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestHookFaults: the hook fails an operation, shortens a write, or
// crashes before one; an OpenOSFile file is read-only after a crash.
func TestHookFaults(t *testing.T) {
	root := t.TempDir()
	f, err := New(root)
	must(t, err)
	name := filepath.Join(root, "f")
	w, err := f.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	must(t, err)
	writes := 0
	f.SetHook(func(op Op, path string) Action {
		switch {
		case op == OpWrite:
			writes++
			if writes == 1 {
				return Action{Short: true, Err: syscall.ENOSPC}
			}
		case op == OpSync:
			return Action{Err: syscall.EIO}
		case op == OpRename:
			return Action{Crash: true}
		}
		return Action{}
	})
	if n, err := w.WriteAt([]byte("abcd"), 0); n != 2 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("short write: %d %v", n, err)
	}
	if err := w.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("sync: %v", err)
	}
	ext, err := f.OpenOSFile(filepath.Join(root, "ext"), os.O_RDWR|os.O_CREATE, 0o644)
	must(t, err)
	defer ext.Close()
	_, err = ext.WriteAt([]byte("before"), 0)
	must(t, err)
	if err := f.Rename(name, name+"2"); !errors.Is(err, ErrCrashed) {
		t.Fatalf("rename: %v", err)
	}
	if _, err := ext.WriteAt([]byte("after!"), 0); err == nil {
		t.Fatal("a write through the OpenOSFile file succeeded after the crash")
	}
	buf := make([]byte, 6)
	if _, err := ext.ReadAt(buf, 0); err != nil || string(buf) != "before" {
		t.Fatalf("read after the crash: %q %v", buf, err)
	}
	if f.Crashed() == nil {
		t.Fatal("no crash image")
	}
}

// TestFailedSyncLosesWrites: the writes a failed sync covered are not
// made durable by a later sync; rewriting them is.
func TestFailedSyncLosesWrites(t *testing.T) {
	root := t.TempDir()
	f, err := New(root)
	must(t, err)
	name := filepath.Join(root, "f")
	w, err := f.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	must(t, err)
	must(t, f.SyncDir(root))
	_, err = w.WriteAt([]byte("aaaaaaaaaa"), 0)
	must(t, err)
	must(t, w.Sync())
	_, err = w.WriteAt([]byte("bbbbbbbbbb"), 0)
	must(t, err)
	fail := true
	f.SetHook(func(op Op, path string) Action {
		if op == OpSync && fail {
			return Action{Err: syscall.EIO}
		}
		return Action{}
	})
	if err := w.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("sync: %v", err)
	}
	fail = false
	_, err = w.WriteAt([]byte("ccc"), 2) // rewrites part of the lost range
	must(t, err)
	must(t, w.Sync())
	img := f.Crash()
	if got := string(img.Files["f"]); got != "aacccaaaaa" {
		t.Fatalf("after a failed sync and a good one: %q, want %q", got, "aacccaaaaa")
	}
}

// TestCrashKeepsChosenPages: a crash keeps the latest bytes of the
// unsynced pages KeepPage picks, and the durable bytes of the others.
func TestCrashKeepsChosenPages(t *testing.T) {
	root := t.TempDir()
	f, err := New(root)
	must(t, err)
	name := filepath.Join(root, "f")
	w, err := f.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	must(t, err)
	must(t, f.SyncDir(root))
	old := bytes.Repeat([]byte{'o'}, 3*PageSize)
	_, err = w.WriteAt(old, 0)
	must(t, err)
	must(t, w.Sync())
	_, err = w.WriteAt(bytes.Repeat([]byte{'n'}, 3*PageSize), 0)
	must(t, err)
	f.SetKeep(func(path string, page int64) bool { return path == name && page == 1 })
	got := f.Crash().Files["f"]
	want := append(append(bytes.Clone(old[:PageSize]), bytes.Repeat([]byte{'n'}, PageSize)...), old[:PageSize]...)
	if !bytes.Equal(got, want) {
		t.Fatalf("crash image: %q...", got[:16])
	}
}

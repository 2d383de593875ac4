//go:build linux

// Package errorfs is a vfs.FS for tests that injects faults into the
// files under one root directory and simulates crashes, after pebble's
// vfs/errorfs and its strict in-memory filesystem.
//
// Files are real files under the root: whoever opens them sees their
// current bytes. Beside them errorfs keeps what a power cut would leave:
// for each file the size at its last sync and the earlier bytes of every
// range written since (an undo log), and for each directory the entries
// as of its last sync. Crash returns that durable image: files whose
// directory entry was never synced are gone, and files hold exactly what
// their last Sync or Datasync covered. Directory syncs are the only way
// an entry becomes durable (no filesystem is assumed to sync it along
// with the file).
//
// A hook, called before every operation, decides its fate: proceed, fail
// with an error, write only half (writes), or crash before it. A failed
// sync loses the writes it covered for good (until they are rewritten),
// as a failed fsync may on Linux. SetKeep lets a crash keep chosen
// unsynced pages with their latest bytes, as the kernel's writeback may
// have flushed them. After a crash every operation fails with
// ErrCrashed, and the files opened with OpenOSFile (bbolt's, whose
// writes go through its own descriptor) are switched to read-only
// descriptors so their later writes fail too; their durable content is
// taken to be their content at the crash, which holds for bbolt: it
// writes its file only inside a commit, which ends with an fdatasync.
package errorfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cerulean-storage/cerulean/internal/vfs"
)

// Op is the kind of an operation.
type Op int

const (
	OpCreate  Op = iota // OpenFile or OpenOSFile creating a file, Mkdir
	OpOpen              // OpenFile or OpenOSFile of an existing file
	OpWrite             // Write or WriteAt
	OpSync              // Sync or Datasync of a file
	OpSyncDir           // SyncDir
	OpRename            // Rename
	OpRemove            // Remove
)

func (o Op) String() string {
	return [...]string{"create", "open", "write", "sync", "syncdir", "rename", "remove"}[o]
}

// Action is a hook's decision; the zero value lets the operation run.
type Action struct {
	Err   error // fail with this error
	Short bool  // writes: write the first half, then fail with Err (EIO if nil)
	Crash bool  // crash before the operation runs (it fails with ErrCrashed)
}

// ErrCrashed is returned by every operation after a crash.
var ErrCrashed = errors.New("errorfs: crashed")

// Hook decides the fate of each operation; path is the file's or the
// directory's (for Rename, the old path).
type Hook func(op Op, path string) Action

// FS is the fault-injecting filesystem over the directory root.
type FS struct {
	root string

	mu       sync.Mutex
	hook     Hook
	keepPage KeepPage
	cur      map[string]*node // path → node, as the files are now
	durable  map[string]*node // path → node, as a crash would leave them
	ext      []*os.File       // OpenOSFile files, cut off by a crash
	crashed  bool
	image    *Image
}

type node struct {
	dir      bool
	external bool   // opened with OpenOSFile: content at the crash counts
	path     string // current path; "" once removed
	size     int64  // durable size (files)
	undo     []undo // pre-images of ranges below size written since the last sync
	lost     []undo // pre-images of ranges a failed sync lost, until rewritten
	saved    []byte // durable content, kept when the file was unlinked while durable
	hasSaved bool
}

type undo struct {
	off int64
	old []byte
}

// New returns an FS over root, whose current contents are taken as
// durable.
func New(root string) (*FS, error) {
	root = filepath.Clean(root)
	f := &FS{root: root, cur: map[string]*node{}, durable: map[string]*node{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		n := &node{dir: d.IsDir(), path: p}
		if !n.dir {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n.size = info.Size()
		}
		f.cur[p], f.durable[p] = n, n
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

var _ vfs.FS = (*FS)(nil)

// KeepPage decides, at a crash, whether a page (PageSize bytes at
// page*PageSize) of the file at path that was written but not synced
// reached the disk anyway, with its latest content, as the kernel's
// writeback may have flushed it.
type KeepPage func(path string, page int64) bool

// PageSize is the unit KeepPage decides on.
const PageSize = 4096

// SetKeep installs k (nil: a crash keeps no unsynced page).
func (f *FS) SetKeep(k KeepPage) {
	f.mu.Lock()
	f.keepPage = k
	f.mu.Unlock()
}

// SetHook installs h (nil: every operation proceeds).
func (f *FS) SetHook(h Hook) {
	f.mu.Lock()
	f.hook = h
	f.mu.Unlock()
}

func (f *FS) inside(p string) bool {
	return strings.HasPrefix(p, f.root+string(filepath.Separator))
}

// decide runs the hook for an operation on p; the caller holds mu. A
// crash action crashes here.
func (f *FS) decide(op Op, p string) Action {
	if f.crashed {
		return Action{Err: ErrCrashed}
	}
	if f.hook == nil {
		return Action{}
	}
	a := f.hook(op, p)
	if a.Crash {
		f.crashLocked()
		return Action{Err: ErrCrashed}
	}
	if a.Short && a.Err == nil {
		a.Err = syscall.EIO
	}
	return a
}

func pathErr(op, p string, err error) error { return &os.PathError{Op: op, Path: p, Err: err} }

// OpenFile implements vfs.FS.
func (f *FS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	name = filepath.Clean(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.open(name, flag, perm)
	if err != nil {
		return nil, err
	}
	// Opened read-write underneath, so that writes can save the bytes
	// they overwrite.
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		flag = flag&^os.O_WRONLY | os.O_RDWR
	}
	of, err := os.OpenFile(name, flag&^(os.O_CREATE|os.O_EXCL|os.O_TRUNC), perm)
	if err != nil {
		return nil, err
	}
	return &file{fs: f, f: of, n: n}, nil
}

// OpenOSFile implements vfs.FS.
func (f *FS) OpenOSFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	name = filepath.Clean(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.open(name, flag, perm)
	if err != nil {
		return nil, err
	}
	if n != nil {
		n.external = true
	}
	of, err := os.OpenFile(name, flag&^(os.O_CREATE|os.O_EXCL|os.O_TRUNC), perm)
	if err != nil {
		return nil, err
	}
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		f.ext = append(f.ext, of)
	}
	return of, nil
}

// open creates or truncates name as flag asks and returns its node (nil
// outside the root); the caller holds mu and opens the file itself.
func (f *FS) open(name string, flag int, perm os.FileMode) (*node, error) {
	_, statErr := os.Lstat(name)
	exists := statErr == nil
	op := OpOpen
	if !exists && flag&os.O_CREATE != 0 {
		op = OpCreate
	}
	if a := f.decide(op, name); a.Err != nil {
		return nil, pathErr("open", name, a.Err)
	}
	if !f.inside(name) {
		if exists || flag&os.O_CREATE == 0 {
			return nil, nil
		}
		of, err := os.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		return nil, of.Close()
	}
	if exists {
		if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
			return nil, pathErr("open", name, fs.ErrExist)
		}
		n := f.cur[name]
		if n == nil { // appeared behind our back: take it as durable
			n = &node{path: name}
			if info, err := os.Stat(name); err == nil {
				n.size = info.Size()
			}
			f.cur[name], f.durable[name] = n, n
		}
		if flag&os.O_TRUNC != 0 && flag&(os.O_WRONLY|os.O_RDWR) != 0 {
			old, err := os.ReadFile(name)
			if err != nil {
				return nil, err
			}
			n.undo = append(n.undo, undo{off: 0, old: old[:min(int64(len(old)), n.size)]})
			if err := os.Truncate(name, 0); err != nil {
				return nil, err
			}
		}
		return n, nil
	}
	if flag&os.O_CREATE == 0 {
		return nil, pathErr("open", name, fs.ErrNotExist)
	}
	of, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	if err := of.Close(); err != nil {
		return nil, err
	}
	n := &node{path: name}
	f.cur[name] = n
	return n, nil
}

// Remove implements vfs.FS.
func (f *FS) Remove(name string) error {
	name = filepath.Clean(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if a := f.decide(OpRemove, name); a.Err != nil {
		return pathErr("remove", name, a.Err)
	}
	n := f.cur[name]
	if n != nil {
		if err := f.keep(n); err != nil {
			return err
		}
	}
	if err := os.Remove(name); err != nil {
		return err
	}
	if n != nil {
		delete(f.cur, name)
		n.path = ""
	}
	return nil
}

// keep saves n's durable content before its last current name goes, if
// a crash could still bring it back.
func (f *FS) keep(n *node) error {
	if n.dir || n.hasSaved || !f.isDurable(n) {
		return nil
	}
	b, err := f.durableContent(n)
	if err != nil {
		return err
	}
	n.saved, n.hasSaved = b, true
	return nil
}

func (f *FS) isDurable(n *node) bool {
	for _, d := range f.durable {
		if d == n {
			return true
		}
	}
	return false
}

// Rename implements vfs.FS.
func (f *FS) Rename(oldpath, newpath string) error {
	oldpath, newpath = filepath.Clean(oldpath), filepath.Clean(newpath)
	f.mu.Lock()
	defer f.mu.Unlock()
	if a := f.decide(OpRename, oldpath); a.Err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: a.Err}
	}
	n, over := f.cur[oldpath], f.cur[newpath]
	if over != nil && over != n {
		if err := f.keep(over); err != nil {
			return err
		}
	}
	if err := os.Rename(oldpath, newpath); err != nil {
		return err
	}
	if over != nil && over != n {
		over.path = ""
		delete(f.cur, newpath)
	}
	if n != nil {
		delete(f.cur, oldpath)
		f.cur[newpath] = n
		n.path = newpath
		if n.dir {
			f.moveChildren(oldpath, newpath)
		}
	}
	return nil
}

func (f *FS) moveChildren(oldp, newp string) {
	pre := oldp + string(filepath.Separator)
	for p, n := range f.cur {
		if strings.HasPrefix(p, pre) {
			np := newp + p[len(oldp):]
			delete(f.cur, p)
			f.cur[np] = n
			n.path = np
		}
	}
}

// Mkdir implements vfs.FS.
func (f *FS) Mkdir(name string, perm os.FileMode) error {
	name = filepath.Clean(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mkdir(name, perm)
}

func (f *FS) mkdir(name string, perm os.FileMode) error {
	if a := f.decide(OpCreate, name); a.Err != nil {
		return pathErr("mkdir", name, a.Err)
	}
	if err := os.Mkdir(name, perm); err != nil {
		return err
	}
	if f.inside(name) {
		f.cur[name] = &node{dir: true, path: name}
	}
	return nil
}

// MkdirAll implements vfs.FS.
func (f *FS) MkdirAll(name string, perm os.FileMode) error {
	name = filepath.Clean(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	var missing []string
	for p := name; ; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		if err == nil {
			if !info.IsDir() {
				return pathErr("mkdir", p, syscall.ENOTDIR)
			}
			break
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := f.mkdir(missing[i], perm); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// Stat implements vfs.FS.
func (f *FS) Stat(name string) (os.FileInfo, error) {
	f.mu.Lock()
	crashed := f.crashed
	f.mu.Unlock()
	if crashed {
		return nil, pathErr("stat", name, ErrCrashed)
	}
	return os.Stat(name)
}

// SyncDir implements vfs.FS: the directory's current entries become its
// durable ones.
func (f *FS) SyncDir(name string) error {
	name = filepath.Clean(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if a := f.decide(OpSyncDir, name); a.Err != nil {
		return pathErr("sync", name, a.Err)
	}
	if _, err := os.Stat(name); err != nil {
		return err
	}
	for p := range f.durable {
		if filepath.Dir(p) == name {
			delete(f.durable, p)
		}
	}
	for p, n := range f.cur {
		if filepath.Dir(p) == name {
			f.durable[p] = n
		}
	}
	return nil
}

// durableContent is what a crash would leave of n now; the caller holds
// mu.
func (f *FS) durableContent(n *node) ([]byte, error) {
	if n.hasSaved {
		return n.saved, nil
	}
	if n.path == "" {
		return nil, fmt.Errorf("errorfs: lost the content of a durable file")
	}
	b, err := os.ReadFile(n.path)
	if err != nil {
		return nil, err
	}
	if n.external {
		return b, nil
	}
	if int64(len(b)) < n.size {
		b = append(b, make([]byte, n.size-int64(len(b)))...)
	}
	b = b[:n.size]
	applyUndo(b, n.undo)
	applyUndo(b, n.lost)
	if f.keepPage != nil && f.crashed && n.path != "" {
		// Unsynced pages that reached the disk anyway hold their latest
		// bytes (below the durable size: the size itself was not synced).
		cur, err := os.ReadFile(n.path)
		if err != nil {
			return nil, err
		}
		for _, us := range [][]undo{n.undo, n.lost} {
			for _, u := range us {
				for pg := u.off / PageSize; pg*PageSize < u.off+int64(len(u.old)); pg++ {
					lo, hi := pg*PageSize, min((pg+1)*PageSize, int64(len(b)), int64(len(cur)))
					if lo < hi && f.keepPage(n.path, pg) {
						copy(b[lo:hi], cur[lo:hi])
					}
				}
			}
		}
	}
	return b, nil
}

// applyUndo writes the pre-images of us into b, newest first, so that
// the oldest wins where they overlap.
func applyUndo(b []byte, us []undo) {
	for i := len(us) - 1; i >= 0; i-- {
		u := us[i]
		if u.off < int64(len(b)) {
			copy(b[u.off:], u.old)
		}
	}
}

// trimUndo removes the range [off, end) from us.
func trimUndo(us []undo, off, end int64) []undo {
	var out []undo
	for _, u := range us {
		uend := u.off + int64(len(u.old))
		if uend <= off || u.off >= end {
			out = append(out, u)
			continue
		}
		if u.off < off {
			out = append(out, undo{off: u.off, old: u.old[:off-u.off]})
		}
		if uend > end {
			out = append(out, undo{off: end, old: u.old[end-u.off:]})
		}
	}
	return out
}

// Image is the durable state of the root at a crash: directories and
// file contents by path relative to the root.
type Image struct {
	Dirs  []string
	Files map[string][]byte
}

// Crash simulates a power cut now: it captures the durable image (see
// Image) and makes every later operation fail. Crashing twice keeps the
// first image.
func (f *FS) Crash() *Image {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.crashLocked()
	return f.image
}

// Crashed returns the image of the crash, or nil if there was none.
func (f *FS) Crashed() *Image {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.image
}

func (f *FS) crashLocked() {
	if f.crashed {
		return
	}
	f.crashed = true
	// Cut off the files written through their own descriptors first, so
	// that nothing they write from now on counts.
	for _, of := range f.ext {
		_ = cutOff(of) // best effort: the image is taken either way
	}
	img := &Image{Files: map[string][]byte{}}
	paths := make([]string, 0, len(f.durable))
	for p := range f.durable {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if !f.reachable(p) {
			continue
		}
		rel, _ := filepath.Rel(f.root, p)
		n := f.durable[p]
		if n.dir {
			img.Dirs = append(img.Dirs, rel)
			continue
		}
		b, err := f.durableContent(n)
		if err != nil {
			panic(fmt.Sprintf("errorfs: crash image of %s: %v", p, err))
		}
		img.Files[rel] = b
	}
	f.image = img
}

// reachable: every directory between the root and p is durable.
func (f *FS) reachable(p string) bool {
	for d := filepath.Dir(p); d != f.root; d = filepath.Dir(d) {
		if n := f.durable[d]; n == nil || !n.dir {
			return false
		}
	}
	return true
}

// cutOff replaces of's descriptor with a read-only one on the same file,
// so that reads (and bbolt's memory map) keep working and writes fail.
func cutOff(of *os.File) error { return reopen(of, os.O_RDONLY) }

// reopen replaces of's descriptor with a new one on the same file (a
// closed file is left alone).
func reopen(of *os.File, flag int) error {
	fd := of.Fd()
	if fd == ^uintptr(0) {
		return nil // closed
	}
	nf, err := os.OpenFile(of.Name(), flag, 0)
	if err != nil {
		return err
	}
	defer nf.Close()
	return unix.Dup3(int(nf.Fd()), int(fd), unix.O_CLOEXEC)
}

// FreezeOSFiles makes writes through the files opened with OpenOSFile
// fail (frozen) or work again, as a full disk would for bbolt's commits:
// their descriptors are swapped for read-only ones and back. Their file
// locks (flock) are released by the swap.
func (f *FS) FreezeOSFiles(frozen bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.crashed {
		return ErrCrashed
	}
	flag := os.O_RDWR
	if frozen {
		flag = os.O_RDONLY
	}
	for _, of := range f.ext {
		if err := reopen(of, flag); err != nil {
			return err
		}
	}
	return nil
}

// WriteTo creates the image's directories and files under dir.
func (img *Image) WriteTo(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range img.Dirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	for p, b := range img.Files {
		if err := os.WriteFile(filepath.Join(dir, p), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

type file struct {
	fs  *FS
	f   *os.File
	n   *node // nil outside the root
	pos int64 // for Write
}

func (w *file) ReadAt(p []byte, off int64) (int, error) { return w.f.ReadAt(p, off) }
func (w *file) Stat() (os.FileInfo, error)              { return w.f.Stat() }
func (w *file) Close() error                            { return w.f.Close() }
func (w *file) Fd() uintptr                             { return w.f.Fd() }

func (w *file) Write(p []byte) (int, error) {
	n, err := w.WriteAt(p, w.pos)
	w.pos += int64(n)
	return n, err
}

func (w *file) WriteAt(p []byte, off int64) (int, error) {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	a := w.fs.decide(OpWrite, w.f.Name())
	if a.Err != nil && !a.Short {
		return 0, pathErr("write", w.f.Name(), a.Err)
	}
	if a.Short {
		p = p[:len(p)/2]
	}
	if err := w.save(p, off); err != nil {
		return 0, err
	}
	n, err := w.f.WriteAt(p, off)
	if err == nil && a.Short {
		err = pathErr("write", w.f.Name(), a.Err)
	}
	return n, err
}

// save records the durable bytes that a write of p at off overwrites.
func (w *file) save(p []byte, off int64) error {
	n := w.n
	if n == nil || n.external || off >= n.size || len(p) == 0 {
		return nil
	}
	end := min(off+int64(len(p)), n.size)
	old := make([]byte, end-off)
	if _, err := w.f.ReadAt(old, off); err != nil && err != io.EOF {
		return err
	}
	// Where a failed sync lost the bytes, the durable ones are older
	// still; from now on this write's undo record keeps them.
	for _, u := range n.lost {
		lo, hi := max(u.off, off), min(u.off+int64(len(u.old)), end)
		if lo < hi {
			copy(old[lo-off:hi-off], u.old[lo-u.off:hi-u.off])
		}
	}
	n.lost = trimUndo(n.lost, off, end)
	n.undo = append(n.undo, undo{off: off, old: old})
	return nil
}

func (w *file) sync() error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if a := w.fs.decide(OpSync, w.f.Name()); a.Err != nil {
		// As Linux does after a failed fsync, the writes it should have
		// made durable may be lost for good: a later successful sync does
		// not bring them back (see PostgreSQL's "fsyncgate").
		if w.n != nil && !w.fs.crashed {
			w.n.lost = append(w.n.lost, w.n.undo...)
			w.n.undo = nil
		}
		return pathErr("sync", w.f.Name(), a.Err)
	}
	// The model is the durability: the real fsync adds nothing to it.
	if w.n != nil {
		info, err := w.f.Stat()
		if err != nil {
			return err
		}
		w.n.size, w.n.undo = info.Size(), nil
	}
	return nil
}

func (w *file) Sync() error     { return w.sync() }
func (w *file) Datasync() error { return w.sync() }

package chunk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cerulean-storage/cerulean/internal/vfs"
)

// FS is a Store that keeps one file per chunk on a local filesystem:
//
//	<dir>/chunks/<first 2 hex digits of id>/<id>       committed chunk
//	<dir>/chunks/<first 2 hex digits of id>/<id>.tmp   chunk being written
//
// Ids are 128 random bits in lowercase hex. A chunk is written under its
// .tmp name, so Open never sees a chunk that is still being written and a
// Writer whose file was swept from under it fails to Commit instead of
// committing a chunk that no longer exists. While data is written, Writer
// starts the kernel's writeback of every full MiB (sync_file_range on
// Linux) so the disk works while the caller is still producing data. Commit
// renames the file into place, then fsyncs the file and its directory: on
// ext4 the rename rides in the same journal commit as the file's fsync. The
// chunk is visible to Open from the rename on, but nobody knows its id
// until Commit returns. A crash leaves at most unreferenced files (.tmp or
// not), which Walk reports and Sweep deletes.
type FS struct {
	root string // <dir>/chunks
	fs   vfs.FS // the files' filesystem (NewFSOn)
}

var _ Store = (*FS)(nil)

const (
	idLen = 32 // hex digits of a 128-bit id
	// writebackEvery is how many bytes a Writer lets accumulate before it
	// starts their writeback; also the largest single write(2) it issues.
	writebackEvery = 1 << 20
	tmpSuffix      = ".tmp"
	dirPerm        = 0o755
	filePerm       = 0o644
)

// NewFS opens (creating if needed) the chunk store under dir/chunks.
// All 256 shard directories are created up front, so Commit only has to
// sync the shard directory.
func NewFS(dir string) (*FS, error) { return NewFSOn(dir, nil) }

// NewFSOn is NewFS with the files on fsys (nil: the operating system's);
// tests pass a fault-injecting one.
func NewFSOn(dir string, fsys vfs.FS) (*FS, error) {
	fsys = vfs.Or(fsys)
	root := filepath.Join(dir, "chunks")
	created := false
	if _, err := fsys.Stat(root); errors.Is(err, fs.ErrNotExist) {
		if err := fsys.MkdirAll(root, dirPerm); err != nil {
			return nil, fmt.Errorf("chunk: %w", err)
		}
		created = true
	} else if err != nil {
		return nil, fmt.Errorf("chunk: %w", err)
	}
	// The 256 shard directories are made as chunks first need them
	// (Create makes a missing one and syncs the root), not here: a first
	// start does not wait for 256 directories.
	if created {
		// Make the new directories themselves durable.
		for _, d := range []string{root, dir, filepath.Dir(dir)} {
			if err := fsys.SyncDir(d); err != nil {
				return nil, fmt.Errorf("chunk: %w", err)
			}
		}
	}
	return &FS{root: root, fs: fsys}, nil
}

// Create implements Store.
func (s *FS) Create(ctx context.Context) (Writer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var b [idLen / 2]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	id := hex.EncodeToString(b[:])
	dir := filepath.Join(s.root, id[:2])
	tmp := filepath.Join(dir, id+tmpSuffix)
	f, err := s.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if errors.Is(err, fs.ErrNotExist) {
		// The shard directory was deleted behind our back: recreate it.
		if err = s.fs.MkdirAll(dir, dirPerm); err == nil {
			if err = s.fs.SyncDir(s.root); err == nil {
				f, err = s.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("chunk: create: %w", err)
	}
	return &fsWriter{fs: s.fs, id: id, dir: dir, tmp: tmp, f: f}, nil
}

// Open implements Store. The Reader is the open file plus its size.
func (s *FS) Open(ctx context.Context, id string) (Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, fmt.Errorf("chunk: open %q: %w", id, ErrNotFound)
	}
	f, err := s.fs.OpenFile(s.path(id), os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("chunk: open %s: %w", id, ErrNotFound)
		}
		return nil, fmt.Errorf("chunk: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("chunk: %w", err)
	}
	return &fsReader{f: f, size: fi.Size()}, nil
}

// Remove implements Store. It deletes both the committed and the
// in-progress file of id. The directory is not synced: a removal lost in a
// crash is redone by the next Sweep.
func (s *FS) Remove(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !validID(id) {
		return nil // such a chunk cannot exist
	}
	p := s.path(id)
	for _, name := range []string{p, p + tmpSuffix} {
		if err := s.fs.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("chunk: %w", err)
		}
	}
	return nil
}

// Walk implements Store. It reads one shard directory at a time, in
// batches, so memory stays bounded however many chunks there are; files
// that are not chunks are ignored.
func (s *FS) Walk(ctx context.Context, fn func(id string, modTime time.Time) error) error {
	shards, err := os.ReadDir(s.root)
	if err != nil {
		return fmt.Errorf("chunk: walk: %w", err)
	}
	for _, sh := range shards {
		if !sh.IsDir() || len(sh.Name()) != 2 || !isHex(sh.Name()) {
			continue
		}
		if err := s.walkShard(ctx, sh.Name(), fn); err != nil {
			return err
		}
	}
	return nil
}

func (s *FS) walkShard(ctx context.Context, shard string, fn func(string, time.Time) error) error {
	d, err := os.Open(filepath.Join(s.root, shard))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("chunk: walk: %w", err)
	}
	defer d.Close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ents, rerr := d.ReadDir(512)
		for _, e := range ents {
			id, _ := parseName(e.Name())
			if id == "" || id[:2] != shard || !e.Type().IsRegular() {
				continue
			}
			info, err := e.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed since the directory was read
			} else if err != nil {
				return fmt.Errorf("chunk: walk: %w", err)
			}
			if err := fn(id, info.ModTime()); err != nil {
				return err
			}
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return nil
			}
			return fmt.Errorf("chunk: walk: %w", rerr)
		}
	}
}

func (s *FS) path(id string) string { return filepath.Join(s.root, id[:2], id) }

// parseName returns the id of a chunk file name and whether it is
// committed, or "" if name is not a chunk file.
func parseName(name string) (id string, committed bool) {
	switch {
	case len(name) == idLen && validID(name):
		return name, true
	case len(name) == idLen+len(tmpSuffix) && name[idLen:] == tmpSuffix && validID(name[:idLen]):
		return name[:idLen], false
	}
	return "", false
}

func validID(id string) bool { return len(id) == idLen && isHex(id) }

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

type fsWriter struct {
	fs      vfs.FS
	id      string
	dir     string // shard directory
	tmp     string // path while uncommitted
	f       vfs.File
	n       int64 // bytes written
	flushed int64 // bytes whose writeback was started
	err     error // sticky write error
	done    bool  // Commit or Abort was called
}

func (w *fsWriter) ID() string  { return w.id }
func (w *fsWriter) Size() int64 { return w.n }

func (w *fsWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, ErrClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	written := 0
	for len(p) > 0 {
		piece := p[:min(len(p), writebackEvery)]
		n, err := w.f.Write(piece)
		w.n += int64(n)
		written += n
		if err != nil {
			w.err = fmt.Errorf("chunk: write %s: %w", w.id, err)
			return written, w.err
		}
		p = p[n:]
		if w.n-w.flushed >= writebackEvery {
			startWriteback(w.f, w.flushed, w.n-w.flushed)
			w.flushed = w.n
		}
	}
	return written, nil
}

func (w *fsWriter) Commit() error {
	if w.done {
		return ErrClosed
	}
	w.done = true
	final := filepath.Join(w.dir, w.id)
	err := w.err
	if err == nil {
		// Rename before fsync: one journal commit covers data and name.
		err = w.fs.Rename(w.tmp, final)
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("chunk was removed while being written: %w", err)
		}
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.fs.SyncDir(w.dir)
	}
	if err != nil {
		w.fs.Remove(w.tmp)
		w.fs.Remove(final)
		return fmt.Errorf("chunk: commit %s: %w", w.id, err)
	}
	return nil
}

func (w *fsWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.f.Close()
	if err := w.fs.Remove(w.tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("chunk: abort %s: %w", w.id, err)
	}
	return nil
}

// fsReader is the chunk's open file and its size.
type fsReader struct {
	f    vfs.File
	size int64
}

func (r *fsReader) ReadAt(p []byte, off int64) (int, error) { return r.f.ReadAt(p, off) }
func (r *fsReader) Close() error                            { return r.f.Close() }
func (r *fsReader) Size() int64                             { return r.size }

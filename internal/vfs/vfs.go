// Package vfs is the filesystem the embedded store writes through: the
// write-ahead log and the bbolt file of internal/kv/bolt and the chunk
// files of internal/chunk. Default is the operating system's; tests put
// errorfs (internal/vfs/errorfs) in its place to fail or shorten a given
// write, fsync or rename and to simulate a crash that loses everything
// not yet synced, as pebble's vfs and vfs/errorfs do for its own files.
package vfs

import (
	"io"
	"os"
)

// File is an open file.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Writer
	// Sync makes the file's data and metadata durable (fsync).
	Sync() error
	// Datasync makes the file's data durable, and its size if that
	// changed (fdatasync where the system has it, else fsync).
	Datasync() error
	Stat() (os.FileInfo, error)
	Close() error
	// Fd is the descriptor, for advisory calls only (sync_file_range
	// hints): durability goes through Sync and Datasync.
	Fd() uintptr
}

// FS opens, renames and removes files and syncs directories.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// OpenOSFile opens a file that its user writes through the *os.File
	// itself (bbolt maps its file and syncs it by descriptor): a fault
	// layer can fail the open and cut the file off in a crash, but does
	// not see its writes.
	OpenOSFile(name string, flag int, perm os.FileMode) (*os.File, error)
	Remove(name string) error
	Rename(oldpath, newpath string) error
	Mkdir(name string, perm os.FileMode) error
	MkdirAll(name string, perm os.FileMode) error
	Stat(name string) (os.FileInfo, error)
	// SyncDir makes the entries created, renamed or removed in directory
	// name durable.
	SyncDir(name string) error
}

// Default is the operating system's filesystem.
var Default FS = osFS{}

// Or returns fs, or Default when fs is nil.
func Or(fs FS) FS {
	if fs == nil {
		return Default
	}
	return fs
}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) OpenOSFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) Rename(oldpath, newpath string) error         { return os.Rename(oldpath, newpath) }
func (osFS) Mkdir(name string, perm os.FileMode) error    { return os.Mkdir(name, perm) }
func (osFS) MkdirAll(name string, perm os.FileMode) error { return os.MkdirAll(name, perm) }
func (osFS) Stat(name string) (os.FileInfo, error)        { return os.Stat(name) }

func (osFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

type osFile struct{ *os.File }

func (f osFile) Datasync() error { return datasync(f.File) }

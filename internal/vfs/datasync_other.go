//go:build !linux

package vfs

import "os"

// datasync is fsync where fdatasync does not exist.
func datasync(f *os.File) error { return f.Sync() }

package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync is fdatasync(2), retried on EINTR.
func datasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

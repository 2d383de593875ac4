package bolt

import "golang.org/x/sys/unix"

// sync makes the log's written records durable. fdatasync suffices: the
// file's size and blocks never change after it is created.
func (w *wal) sync() error {
	for {
		err := unix.Fdatasync(int(w.f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}

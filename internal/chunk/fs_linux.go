package chunk

import "golang.org/x/sys/unix"

// startWriteback asks the kernel to start writing the given range of f to
// disk without waiting for it, so the final fsync has little left to do.
// It is only a hint: errors are ignored (fsync reports real ones).
func startWriteback(f interface{ Fd() uintptr }, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

//go:build !linux

package chunk

// startWriteback is a no-op where sync_file_range does not exist.
func startWriteback(interface{ Fd() uintptr }, int64, int64) {}

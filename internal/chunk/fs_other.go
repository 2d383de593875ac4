//go:build !linux

package chunk

import "os"

// startWriteback is a no-op where sync_file_range does not exist.
func startWriteback(*os.File, int64, int64) {}
